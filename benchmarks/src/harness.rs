//! The measurement harness: warm-up, calibrated samples of many iterations,
//! medians.
//!
//! A sample times `iters` back-to-back iterations and divides; the number of
//! iterations is calibrated once per case so one sample lasts about
//! [`Budget::sample`]. The figure reported is the median over
//! [`Budget::samples`] samples, with the fastest and slowest sample beside it:
//! the machine is shared, so the median is the honest number and min/max show
//! the noise.

use std::cell::RefCell;
use std::future::Future;
use std::hint::black_box;
use std::pin::Pin;
use std::rc::Rc;
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

/// The single-threaded runtime (timers and I/O on) that every case and
/// profiling loop runs on.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
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

/// Runs `iters` iterations of one contender and returns their wall time.
type RunSample<'a> = Box<dyn FnMut(u64) -> Pin<Box<dyn Future<Output = Duration> + 'a>> + 'a>;

/// One contender of an interleaved measurement ([`measure_interleaved`]):
/// its operation, behind one dynamic call per *sample* (the iterations
/// inside a sample are a plain loop over the concrete operation).
pub struct Contender<'a> {
    run: RunSample<'a>,
}

impl<'a> Contender<'a> {
    /// An async operation, awaited in place once per iteration.
    // One contender's sample runs at a time, on one thread: the `RefCell`
    // is never borrowed twice.
    #[allow(clippy::await_holding_refcell_ref)]
    pub fn asynchronous<F, Fut, T>(op: F) -> Self
    where
        F: FnMut() -> Fut + 'a,
        Fut: Future<Output = T> + 'a,
    {
        let op = Rc::new(RefCell::new(op));
        Contender {
            run: Box::new(move |iters| {
                let op = Rc::clone(&op);
                Box::pin(async move {
                    let mut op = op.borrow_mut();
                    let t = Instant::now();
                    for _ in 0..iters {
                        black_box((*op)().await);
                    }
                    t.elapsed()
                })
            }),
        }
    }

    /// A synchronous operation: a sample is a plain loop, its time handed
    /// back in a ready future.
    pub fn synchronous<F, T>(mut op: F) -> Self
    where
        F: FnMut() -> T + 'a,
    {
        Contender {
            run: Box::new(move |iters| {
                let t = Instant::now();
                for _ in 0..iters {
                    black_box(op());
                }
                Box::pin(std::future::ready(t.elapsed()))
            }),
        }
    }

    async fn sample(&mut self, iters: u64) -> Duration {
        (self.run)(iters).await
    }
}

/// The samples of an interleaved measurement: per contender, one
/// per-iteration time per round.
pub struct Interleaved {
    samples: Vec<Vec<f64>>,
    iters: Vec<u64>,
}

impl Interleaved {
    /// The stats of contender `i`.
    pub fn stats(&self, i: usize) -> Stats {
        Stats::from_samples(self.samples[i].clone(), self.iters[i])
    }

    /// The median, over rounds, of contender `a`'s time divided by `b`'s in
    /// the same round: the two samples were taken moments apart, so a slow
    /// stretch of the machine divides out. Steadier than the ratio of the
    /// two medians when the load moves during the run.
    pub fn paired_ratio(&self, a: usize, b: usize) -> f64 {
        let ratios = self.samples[a]
            .iter()
            .zip(&self.samples[b])
            .map(|(x, y)| x / y)
            .collect();
        Stats::from_samples(ratios, 1).median_ns
    }
}

impl Interleaved {
    /// The first and third quartile, over rounds, of contender `a`'s time
    /// divided by `b`'s in the same round: the spread of
    /// [`paired_ratio`](Self::paired_ratio) within one run.
    pub fn paired_quartiles(&self, a: usize, b: usize) -> (f64, f64) {
        let ratios: Vec<f64> = self.samples[a]
            .iter()
            .zip(&self.samples[b])
            .map(|(x, y)| x / y)
            .collect();
        quartiles(ratios)
    }
}

/// The first and third quartile of `values` (nearest rank).
pub fn quartiles(mut values: Vec<f64>) -> (f64, f64) {
    assert!(!values.is_empty(), "at least one value");
    values.sort_by(f64::total_cmp);
    let at = |q: f64| values[((values.len() - 1) as f64 * q).round() as usize];
    (at(0.25), at(0.75))
}

/// Measures several contenders side by side: each is warmed up and
/// calibrated alone, then the samples are taken in rounds, one sample of
/// every contender per round (starting with a different one each round).
/// A burst of load from other processes, on a shared machine, then falls on
/// all of them alike instead of on whichever case happened to be running,
/// and [`Interleaved::paired_ratio`] compares samples taken moments apart.
pub async fn measure_interleaved(budget: Budget, contenders: &mut [Contender<'_>]) -> Interleaved {
    let mut iters = Vec::with_capacity(contenders.len());
    for contender in contenders.iter_mut() {
        let (mut spent, mut done, mut chunk) = (Duration::ZERO, 0u64, 1u64);
        while spent < budget.warmup {
            spent += contender.sample(chunk).await;
            done += chunk;
            chunk = (chunk * 2).min(1 << 16);
        }
        iters.push(calibrate(spent, done, budget.sample));
    }
    let n = contenders.len();
    let mut samples = vec![Vec::with_capacity(budget.samples); n];
    for round in 0..budget.samples {
        for k in 0..n {
            let i = (round + k) % n;
            let t = contenders[i].sample(iters[i]).await;
            samples[i].push(t.as_nanos() as f64 / iters[i] as f64);
        }
    }
    Interleaved { samples, iters }
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
    fn interleaved_contenders_are_each_measured_on_their_own_work() {
        let budget = Budget {
            sample: Duration::from_millis(2),
            samples: 5,
            warmup: Duration::from_millis(5),
        };
        let spin = |n: u64| move || (0..n).fold(0u64, |a, b| black_box(a ^ b));
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let stats = rt.block_on(async {
            let mut contenders = [
                Contender::synchronous(spin(100)),
                Contender::asynchronous(move || {
                    let work = spin(2_000);
                    async move { work() }
                }),
            ];
            measure_interleaved(budget, &mut contenders).await
        });
        let (light, heavy) = (stats.stats(0), stats.stats(1));
        assert_eq!((light.samples, heavy.samples), (5, 5));
        assert!(
            heavy.median_ns > 4.0 * light.median_ns,
            "20x the work should not look alike: {light:?} {heavy:?}"
        );
        assert!(stats.paired_ratio(1, 0) > 4.0);
        assert!(stats.paired_ratio(0, 1) < 0.25);
    }

    #[test]
    fn quartiles_are_the_values_a_quarter_and_three_quarters_in() {
        let (q1, q3) = quartiles(vec![5.0, 1.0, 4.0, 2.0, 3.0]);
        assert_eq!((q1, q3), (2.0, 4.0));
        assert_eq!(quartiles(vec![7.0]), (7.0, 7.0));
    }

    #[test]
    fn median_of_an_odd_count_is_the_middle_sample() {
        let s = Stats::from_samples(vec![9.0, 1.0, 5.0], 7);
        assert_eq!(s.median_ns, 5.0);
        assert_eq!(s.iters, 7);
    }
}
