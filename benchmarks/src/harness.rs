//! The measurement harness: warm-up, calibrated samples of many iterations,
//! medians.
//!
//! A sample times `iters` back-to-back iterations and divides; the number of
//! iterations is calibrated once per case so one sample lasts about
//! [`Budget::sample`]. The figure reported is the median over
//! [`Budget::samples`] samples, with the fastest and slowest sample beside it:
//! the machine is shared, so the median is the honest number and min/max show
//! the noise.

use std::future::Future;
use std::hint::black_box;
use std::time::{Duration, Instant};

use serde::Serialize;

/// How long a case may take.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// Target wall time of one sample.
    pub sample: Duration,
    /// Number of samples.
    pub samples: usize,
    /// Warm-up time before calibration.
    pub warmup: Duration,
}

impl Budget {
    /// The default: 31 samples of about 10 ms after 100 ms of warm-up.
    pub fn standard() -> Self {
        Budget {
            sample: Duration::from_millis(10),
            samples: 31,
            warmup: Duration::from_millis(100),
        }
    }

    /// A shorter budget for `--quick`.
    pub fn quick() -> Self {
        Budget {
            sample: Duration::from_millis(3),
            samples: 11,
            warmup: Duration::from_millis(20),
        }
    }
}

/// Median, fastest and slowest sample, in nanoseconds per iteration.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Stats {
    /// Median of the samples.
    pub median_ns: f64,
    /// Fastest sample.
    pub min_ns: f64,
    /// Slowest sample.
    pub max_ns: f64,
    /// Number of samples.
    pub samples: usize,
    /// Iterations per sample.
    pub iters: u64,
}

impl Stats {
    /// Stats from per-iteration sample times.
    pub fn from_samples(mut per_iter: Vec<f64>, iters: u64) -> Self {
        assert!(!per_iter.is_empty(), "at least one sample");
        per_iter.sort_by(f64::total_cmp);
        let n = per_iter.len();
        let median = if n % 2 == 1 {
            per_iter[n / 2]
        } else {
            (per_iter[n / 2 - 1] + per_iter[n / 2]) / 2.0
        };
        Stats {
            median_ns: median,
            min_ns: per_iter[0],
            max_ns: per_iter[n - 1],
            samples: n,
            iters,
        }
    }
}

/// Measures an async operation on the current (single-threaded) runtime.
///
/// `op` is called once per iteration and its future awaited in place; its
/// output goes through [`black_box`] so it cannot be optimised away.
pub async fn measure_async<F, Fut, T>(budget: Budget, mut op: F) -> Stats
where
    F: FnMut() -> Fut,
    Fut: Future<Output = T>,
{
    // Warm-up, which also gives a first estimate of the cost.
    let start = Instant::now();
    let mut warm = 0u64;
    while start.elapsed() < budget.warmup {
        for _ in 0..16 {
            black_box(op().await);
        }
        warm += 16;
    }
    let iters = calibrate(start.elapsed(), warm, budget.sample);
    let mut samples = Vec::with_capacity(budget.samples);
    for _ in 0..budget.samples {
        let t = Instant::now();
        for _ in 0..iters {
            black_box(op().await);
        }
        samples.push(t.elapsed().as_nanos() as f64 / iters as f64);
    }
    Stats::from_samples(samples, iters)
}

/// Measures a synchronous operation.
pub fn measure_sync<F, T>(budget: Budget, mut op: F) -> Stats
where
    F: FnMut() -> T,
{
    let start = Instant::now();
    let mut warm = 0u64;
    while start.elapsed() < budget.warmup {
        black_box(op());
        warm += 1;
    }
    let iters = calibrate(start.elapsed(), warm, budget.sample);
    let mut samples = Vec::with_capacity(budget.samples);
    for _ in 0..budget.samples {
        let t = Instant::now();
        for _ in 0..iters {
            black_box(op());
        }
        samples.push(t.elapsed().as_nanos() as f64 / iters as f64);
    }
    Stats::from_samples(samples, iters)
}

/// Runs a whole, expensive operation `runs` times (no inner loop) and returns
/// stats in nanoseconds per run.
pub fn measure_runs<F, T>(runs: usize, mut op: F) -> Stats
where
    F: FnMut() -> T,
{
    black_box(op()); // one warm-up run
    let samples = (0..runs)
        .map(|_| {
            let t = Instant::now();
            black_box(op());
            t.elapsed().as_nanos() as f64
        })
        .collect();
    Stats::from_samples(samples, 1)
}

fn calibrate(elapsed: Duration, done: u64, target: Duration) -> u64 {
    let per_iter = elapsed.as_nanos() as f64 / done.max(1) as f64;
    ((target.as_nanos() as f64 / per_iter.max(1.0)) as u64).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_an_even_count_is_the_mean_of_the_middle_two() {
        let s = Stats::from_samples(vec![4.0, 1.0, 3.0, 2.0], 1);
        assert_eq!(s.median_ns, 2.5);
        assert_eq!(s.min_ns, 1.0);
        assert_eq!(s.max_ns, 4.0);
    }

    #[test]
    fn median_of_an_odd_count_is_the_middle_sample() {
        let s = Stats::from_samples(vec![9.0, 1.0, 5.0], 7);
        assert_eq!(s.median_ns, 5.0);
        assert_eq!(s.iters, 7);
    }
}
