//! The load run: 1,000,000 calls of "add" in one `execute_batch`, checked
//! for lost or duplicated results, with wall time and peak memory; then the
//! same batch twice more on the same executor, with resident memory read
//! after each run (results dropped) to show it stays flat.

use std::time::{Duration, Instant};

use serde_json::json;
use tinyagents_tools::{RunContext, ToolCall, ToolExecutor, Turn};

use crate::add::sample_args;
use crate::contenders::{ours, ours_exec};
use crate::harness::runtime;
use crate::memory::{heap_in_use_kib, peak_rss_kib, rss_kib, trim};
use crate::report::Report;

/// How many times the batch runs; memory is read after each.
const RUNS: usize = 3;

/// What one batch measured.
struct Measured {
    lost: usize,
    duplicated: usize,
    built: Duration,
    wall: Duration,
}

/// One batch of `calls` calls, every result checked and then dropped.
fn one_batch(rt: &tokio::runtime::Runtime, executor: &ToolExecutor, calls: usize) -> Measured {
    let run = RunContext::empty();
    let turn = Turn::new(1);
    let started = Instant::now();
    let batch: Vec<ToolCall> = (0..calls)
        .map(|i| ToolCall::new(format!("c{i}"), "add", sample_args()))
        .collect();
    let built = started.elapsed();
    let results = rt.block_on(executor.execute_batch(&run, &turn, batch));
    let wall = started.elapsed();

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
    Measured {
        lost,
        duplicated,
        built,
        wall,
    }
}

/// Runs the load case with `calls` calls and records it.
pub fn run(calls: usize, report: &mut Report) {
    let rt = runtime();
    let executor = ours_exec::with_concurrency(ours::MacroAddTool, 100);
    let peak_before = peak_rss_kib();
    let rss_before = rss_kib();
    let heap_before = heap_in_use_kib();

    let first = one_batch(&rt, &executor, calls);
    let peak_after = peak_rss_kib();
    // After each run (its calls and results dropped): what the program still
    // holds, then what stays resident once the allocator gave back what it
    // kept for reuse.
    let mut heap_after = vec![heap_in_use_kib()];
    let mut rss_after = vec![rss_kib()];
    trim();
    let mut rss_trimmed = vec![rss_kib()];
    let (mut lost, mut duplicated) = (first.lost, first.duplicated);
    for _ in 1..RUNS {
        let again = one_batch(&rt, &executor, calls);
        lost += again.lost;
        duplicated += again.duplicated;
        heap_after.push(heap_in_use_kib());
        rss_after.push(rss_kib());
        trim();
        rss_trimmed.push(rss_kib());
    }
    let Measured { built, wall, .. } = first;
    // Growth from the first run's end to the last run's: what a leak would
    // add up.
    let growth = |series: &[Option<u64>]| match (series.first(), series.last()) {
        (Some(Some(a)), Some(Some(b))) => Some(b.saturating_sub(*a)),
        _ => None,
    };

    let rows = [
        ("calls", "calls in one execute_batch", json!(calls)),
        ("runs", "batches run", json!(RUNS)),
        ("lost", "lost results (all runs)", json!(lost)),
        (
            "duplicated",
            "duplicated results (all runs)",
            json!(duplicated),
        ),
        (
            "wall_ms",
            "first run: wall time, building the calls included (ms)",
            json!(wall.as_millis() as u64),
        ),
        (
            "build_calls_ms",
            "of which building the ToolCalls (ms)",
            json!(built.as_millis() as u64),
        ),
        (
            "ns_per_call",
            "wall time per call, batch only (ns)",
            json!(((wall - built).as_nanos() / calls as u128) as u64),
        ),
        ("rss_before_kib", "VmRSS before (KiB)", json!(rss_before)),
        (
            "peak_rss_before_kib",
            "VmHWM before (KiB)",
            json!(peak_before),
        ),
        (
            "peak_rss_after_kib",
            "VmHWM after the first run (KiB)",
            json!(peak_after),
        ),
        (
            "heap_before_kib",
            "heap in use before (KiB, mallinfo2)",
            json!(heap_before),
        ),
        (
            "heap_after_runs_kib",
            "heap in use after each run (KiB)",
            json!(heap_after),
        ),
        (
            "heap_growth_kib",
            "heap in use, growth first run to last (KiB)",
            json!(growth(&heap_after)),
        ),
        (
            "rss_after_runs_kib",
            "VmRSS after each run, before malloc_trim (KiB)",
            json!(rss_after),
        ),
        (
            "rss_trimmed_after_runs_kib",
            "VmRSS after each run, after malloc_trim (KiB)",
            json!(rss_trimmed),
        ),
        (
            "rss_trimmed_growth_kib",
            "VmRSS after malloc_trim, growth first run to last (KiB)",
            json!(growth(&rss_trimmed)),
        ),
    ];
    report.values("load", rows);
}
