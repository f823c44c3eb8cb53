//! Case 7: memory per call in flight. 10,000 calls of "sleepy_add" (each
//! awaits a timer) run at once in one `execute_batch` (concurrency bound
//! 10,000); while every call waits, the heap in use (glibc `mallinfo2`) is
//! read and the growth since just before the batch started (the calls
//! already built) is divided by the number of calls. The size of the
//! executor's call future (`ToolExecutor::execute`, not polled) is reported
//! beside it.

use std::time::Duration;

use serde_json::json;
use tinyagents_tools::prelude::{RunContext, ToolCall, Turn};

use crate::add::sample_args;
use crate::contenders::ours::NamedAdd;
use crate::contenders::ours_exec::with_concurrency;
use crate::harness::runtime;
use crate::memory::{heap_in_use_bytes, trim};
use crate::report::Report;

/// Calls in flight at once.
pub const CALLS: usize = 10_000;
/// What every call awaits: long enough for every call to be started and
/// waiting when the heap is read.
const DELAY: Duration = Duration::from_millis(400);

/// The figures the targets need.
#[derive(Debug, Default, Clone, Copy)]
pub struct Inflight {
    /// Heap in use per call in flight (bytes); `None` off glibc.
    pub heap_per_call: Option<f64>,
}

/// Runs case 7 `runs` times (the median is the figure) and records it.
pub fn run(runs: usize, report: &mut Report) -> Inflight {
    let rt = runtime();
    let executor = with_concurrency(NamedAdd::sleepy(DELAY), CALLS);
    let run = RunContext::empty();
    let turn = Turn::new(1);

    let future_size = {
        let call = ToolCall::new("c0", "sleepy_add", sample_args());
        let future = executor.execute(&run, &turn, call);
        std::mem::size_of_val(&future)
    };
    let batch_future_size = {
        let future = executor.execute_batch(&run, &turn, Vec::new());
        std::mem::size_of_val(&future)
    };

    let mut per_call = Vec::new();
    for _ in 0..runs {
        let calls: Vec<ToolCall> = (0..CALLS)
            .map(|i| ToolCall::new(format!("c{i}"), "sleepy_add", sample_args()))
            .collect();
        trim();
        let before = heap_in_use_bytes();
        let (results, during) = rt.block_on(async {
            let batch = executor.execute_batch(&run, &turn, calls);
            let probe = async {
                // Every call has started (they all start at once) and is
                // waiting for its timer.
                tokio::time::sleep(DELAY / 2).await;
                heap_in_use_bytes()
            };
            tokio::join!(batch, probe)
        });
        let answered = results
            .iter()
            .filter(|r| !r.is_error && r.structured == Some(crate::add::expected_sum()))
            .count();
        assert_eq!(answered, CALLS, "every call answered");
        if let (Some(before), Some(during)) = (before, during) {
            per_call.push(during.saturating_sub(before) as f64 / CALLS as f64);
        }
    }
    let heap_per_call = (!per_call.is_empty())
        .then(|| crate::harness::Stats::from_samples(per_call.clone(), 1).median_ns);

    let rows = [
        (
            "inflight_calls",
            "calls in flight at once, each awaiting a timer",
            json!(CALLS),
        ),
        (
            "heap_per_inflight_call_bytes",
            "heap in use per call in flight (bytes, median of runs)",
            json!(heap_per_call.map(f64::round)),
        ),
        (
            "heap_per_inflight_call_runs_bytes",
            "heap in use per call in flight, each run (bytes)",
            json!(per_call.iter().map(|b| b.round()).collect::<Vec<_>>()),
        ),
        (
            "execute_future_bytes",
            "size_of the future of ToolExecutor::execute (bytes)",
            json!(future_size),
        ),
        (
            "execute_batch_future_bytes",
            "size_of the future of ToolExecutor::execute_batch (bytes)",
            json!(batch_future_size),
        ),
    ];
    report.values("load", rows);
    Inflight { heap_per_call }
}
