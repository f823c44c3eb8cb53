//! Side-by-side benchmarks of tinyagents-tools against a direct call (RAW),
//! rmcp and rig, all on the same "add" tool, in one run.
//!
//! `cargo run --release --manifest-path benchmarks/Cargo.toml -- --json`
//! prints one JSON object on stdout (the keys are documented in
//! BENCHMARKS.md) and the table on stderr. `--quick` shortens every case;
//! `--profile-executor N`, `--profile-rmcp-call N`, `--profile-declarations N` and
//! `--profile-rmcp-listing N` run only that loop, for a profiler;
//! `--per-call-only` runs case 1 alone and prints its table.

mod add;
mod cases;
mod contenders;
mod harness;
mod memory;
mod report;

use harness::Budget;
use report::Report;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let json = args.iter().any(|a| a == "--json");
    let quick = args.iter().any(|a| a == "--quick");
    let budget = if quick {
        Budget::quick()
    } else {
        Budget::standard()
    };

    if let Some(n) = args
        .iter()
        .position(|a| a == "--profile-executor")
        .and_then(|i| args.get(i + 1))
    {
        // Only the per-call executor loop, for `valgrind --tool=callgrind`.
        cases::per_call::profile_executor(n.parse().expect("a call count"));
        return;
    }
    if let Some(n) = args
        .iter()
        .position(|a| a == "--profile-rmcp-call")
        .and_then(|i| args.get(i + 1))
    {
        // Only rmcp's per-call loop, to compare with `--profile-executor`.
        cases::per_call::profile_rmcp(n.parse().expect("a call count"));
        return;
    }
    if let Some(n) = args
        .iter()
        .position(|a| a == "--profile-declarations")
        .and_then(|i| args.get(i + 1))
    {
        // Only cached declarations to JSON text, for a profiler.
        cases::declarations::profile_cached_json(n.parse().expect("a count"));
        return;
    }
    if let Some(n) = args
        .iter()
        .position(|a| a == "--profile-rmcp-listing")
        .and_then(|i| args.get(i + 1))
    {
        // Only rmcp's listing of 1,000 tools to JSON text, for a profiler.
        cases::declarations::profile_rmcp_listing(n.parse().expect("a count"));
        return;
    }
    let runs = if quick { 3 } else { 11 };
    let mut report = Report::default();
    machine(&mut report, quick);
    let per_call = cases::per_call::run(budget, &mut report);
    if args.iter().any(|a| a == "--per-call-only") {
        // Case 1 alone, for checking a change to the hot path.
        print!("{}", report.table());
        return;
    }

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let baseline = cases::batch::run_baseline(&rt, runs, &mut report);
    let ours_batch = cases::batch::run_ours(&rt, runs, &mut report);
    let batch_ratio = report.ratio(
        "ours_execute_batch_vs_buffer_unordered",
        "ours execute_batch / buffer_unordered",
        ours_batch,
        baseline,
    );
    report.ratio(
        "ours_execute_batch_vs_ideal",
        "ours execute_batch / ideal 100 ms",
        ours_batch,
        1e8,
    );

    let declarations = cases::declarations::run(budget, runs, &mut report);
    cases::registration::run(runs, &mut report);
    // Last: it raises the peak RSS of the process.
    cases::load::run(if quick { 100_000 } else { 1_000_000 }, &mut report);

    // The per-call verdicts use the ratios paired by round (see
    // `harness::Interleaved::paired_ratio`).
    report.target(
        "per_call_at_most_2x_raw",
        "ours per call <= 2x RAW (paired)",
        per_call.ours_vs_raw_paired <= 2.0,
    );
    report.target(
        "per_call_below_rmcp_and_rig",
        "ours per call < rmcp router (built once) and < rig (paired)",
        per_call.ours_vs_rmcp_paired < 1.0
            && (!cfg!(feature = "rig") || per_call.ours_vs_rig_paired < 1.0),
    );
    report.target(
        "cached_declarations_50x_faster_than_rmcp_listing",
        "cached 1,000 declarations (registry toolset) >= 50x faster than rmcp list_all",
        declarations.rmcp_list >= 50.0 * declarations.ours_toolset_cached,
    );
    report.target(
        "batch_at_most_1_05x_buffer_unordered",
        "batch wall time <= 1.05x buffer_unordered",
        batch_ratio <= 1.05,
    );

    if json {
        eprint!("{}", report.table());
        println!(
            "{}",
            serde_json::to_string_pretty(&report.into_json()).expect("serializes")
        );
    } else {
        print!("{}", report.table());
    }
}

/// Records the machine and the build configuration.
fn machine(report: &mut Report, quick: bool) {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines().find_map(|l| {
                l.strip_prefix("model name")
                    .map(|r| r.trim_start_matches([' ', '\t', ':']).to_owned())
            })
        })
        .unwrap_or_else(|| "unknown".to_owned());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let rustc = std::process::Command::new("rustc")
        .arg("--version")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_else(|| "unknown".to_owned());
    report.value("machine", "cpu", "cpu model", serde_json::json!(cpu));
    report.value(
        "machine",
        "cores",
        "available cores",
        serde_json::json!(cores),
    );
    report.value(
        "machine",
        "rustc",
        "rustc (on PATH)",
        serde_json::json!(rustc),
    );
    let load = std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default();
    report.value(
        "machine",
        "loadavg_at_start",
        "load average at start (1, 5, 15 min)",
        serde_json::json!(load),
    );
    report.value(
        "machine",
        "quick",
        "--quick budget",
        serde_json::json!(quick),
    );
    report.value(
        "machine",
        "serde_json_preserve_order",
        "serde_json preserve_order (on with rig)",
        serde_json::json!(cfg!(feature = "rig")),
    );
}
