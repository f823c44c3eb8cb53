//! The load run: 1,000,000 calls of "add" in one `execute_batch`, checked
//! for lost or duplicated results, with wall time and peak memory.

use std::time::Instant;

use tinyagents_tools::{RunContext, ToolCall, Turn};

use crate::add::sample_args;
use crate::contenders::{ours, ours_exec};
use crate::memory::{peak_rss_kib, rss_kib};
use crate::report::Report;

/// Runs the load case with `calls` calls and records it.
pub fn run(calls: usize, report: &mut Report) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let executor = ours_exec::with_concurrency(ours::MacroAddTool, 100);
    let run = RunContext::empty();
    let turn = Turn::new(1);
    let peak_before = peak_rss_kib();
    let rss_before = rss_kib();

    let started = Instant::now();
    let batch: Vec<ToolCall> = (0..calls)
        .map(|i| ToolCall::new(format!("c{i}"), "add", sample_args()))
        .collect();
    let built = started.elapsed();
    let results = rt.block_on(executor.execute_batch(&run, &turn, batch));
    let wall = started.elapsed();
    let peak_after = peak_rss_kib();

    // Every call answered exactly once, in call order, and correctly.
    let mut seen = vec![false; calls];
    let mut ok = 0usize;
    let mut duplicated = 0usize;
    for (position, result) in results.iter().enumerate() {
        let index: usize = result.tool_call_id.as_str()[1..]
            .parse()
            .expect("an id this run made");
        if std::mem::replace(&mut seen[index], true) {
            duplicated += 1;
        }
        assert_eq!(index, position, "results come back in call order");
        if !result.is_error && result.structured == Some(crate::add::expected_sum()) {
            ok += 1;
        }
    }
    let lost = seen.iter().filter(|s| !**s).count();
    assert_eq!(
        (lost, duplicated, ok),
        (0, 0, calls),
        "no lost, duplicated or failed result"
    );
    drop(results);

    let kib = |v: Option<u64>| serde_json::json!(v);
    report.value(
        "load",
        "calls",
        "calls in one execute_batch",
        serde_json::json!(calls),
    );
    report.value("load", "lost", "lost results", serde_json::json!(lost));
    report.value(
        "load",
        "duplicated",
        "duplicated results",
        serde_json::json!(duplicated),
    );
    report.value(
        "load",
        "wall_ms",
        "wall time, building the calls included (ms)",
        serde_json::json!(wall.as_millis() as u64),
    );
    report.value(
        "load",
        "build_calls_ms",
        "of which building the ToolCalls (ms)",
        serde_json::json!(built.as_millis() as u64),
    );
    report.value(
        "load",
        "ns_per_call",
        "wall time per call, batch only (ns)",
        serde_json::json!(((wall - built).as_nanos() / calls as u128) as u64),
    );
    report.value(
        "load",
        "rss_before_kib",
        "VmRSS before (KiB)",
        kib(rss_before),
    );
    report.value(
        "load",
        "peak_rss_before_kib",
        "VmHWM before (KiB)",
        kib(peak_before),
    );
    report.value(
        "load",
        "peak_rss_after_kib",
        "VmHWM after (KiB)",
        kib(peak_after),
    );
}
