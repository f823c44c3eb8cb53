//! Case 2: 1,000 calls, each awaiting a 10 ms timer, at most 100 at once.
//! The ideal is 10 waves of 10 ms: 100 ms.

use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::Value;

use crate::add::{AddArgs, Sum, add, sample_args};
use crate::harness::Stats;
use crate::report::{Report, Unit};

/// Calls per batch.
pub const CALLS: usize = 1_000;
/// The concurrency bound.
pub const CONCURRENCY: usize = 100;
/// What every call awaits.
pub const DELAY: Duration = Duration::from_millis(10);

/// The direct call the baseline makes: RAW with the timer in the body.
async fn direct(args: Value) -> Result<Value, serde_json::Error> {
    let args: AddArgs = serde_json::from_value(args)?;
    tokio::time::sleep(DELAY).await;
    let sum: Sum = add(args);
    serde_json::to_value(sum)
}

/// The hand-written baseline: `buffer_unordered(100)` over direct calls.
pub async fn baseline(calls: Vec<Value>) -> Vec<Result<Value, serde_json::Error>> {
    futures::stream::iter(calls)
        .map(direct)
        .buffer_unordered(CONCURRENCY)
        .collect()
        .await
}

/// Times `runs` batches made by `batch` on `rt`, in nanoseconds per batch.
pub fn time_batches<F, Fut>(rt: &tokio::runtime::Runtime, runs: usize, mut batch: F) -> Stats
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = usize>,
{
    rt.block_on(async {
        assert_eq!(batch().await, CALLS, "warm-up batch answers every call");
        let mut samples = Vec::with_capacity(runs);
        for _ in 0..runs {
            let t = Instant::now();
            let answered = batch().await;
            samples.push(t.elapsed().as_nanos() as f64);
            assert_eq!(answered, CALLS, "every call answered");
        }
        Stats::from_samples(samples, 1)
    })
}

/// Runs the baseline part of case 2 and returns its median (ns).
pub fn run_baseline(rt: &tokio::runtime::Runtime, runs: usize, report: &mut Report) -> f64 {
    let stats = time_batches(rt, runs, || async {
        let calls = vec![sample_args(); CALLS];
        baseline(calls)
            .await
            .into_iter()
            .filter(|r| r.is_ok())
            .count()
    });
    report.stats(
        "batch",
        "buffer_unordered",
        "hand-written buffer_unordered(100), 1,000 x 10 ms",
        Unit::Ms,
        stats,
    );
    report.value(
        "batch",
        "ideal_ns",
        "ideal (10 waves x 10 ms), ns",
        serde_json::json!(100_000_000u64),
    );
    stats.median_ns
}

/// Runs our part of case 2 (`execute_batch`, concurrency bound 100) and
/// returns its median (ns). Checks every batch answers every call, in call
/// order.
pub fn run_ours(rt: &tokio::runtime::Runtime, runs: usize, report: &mut Report) -> f64 {
    use tinyagents_tools::{RunContext, ToolCall, Turn};

    let executor = crate::contenders::ours_exec::with_concurrency(
        crate::contenders::ours::NamedAdd::sleepy(DELAY),
        CONCURRENCY,
    );
    let run = RunContext::empty();
    let calls: Vec<ToolCall> = (0..CALLS)
        .map(|i| ToolCall::new(format!("call-{i}"), "sleepy_add", sample_args()))
        .collect();
    let stats = time_batches(rt, runs, || {
        let calls = calls.clone();
        let executor = &executor;
        let run = &run;
        async move {
            let turn = Turn::new(1);
            let results = executor.execute_batch(run, &turn, calls).await;
            results
                .iter()
                .enumerate()
                .filter(|(i, r)| {
                    !r.is_error && r.tool_call_id.as_str() == format!("call-{i}").as_str()
                })
                .count()
        }
    });
    report.stats(
        "batch",
        "ours_execute_batch",
        "ours: execute_batch, bound 100, 1,000 x 10 ms",
        Unit::Ms,
        stats,
    );
    stats.median_ns
}
