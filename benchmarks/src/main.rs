//! Side-by-side benchmarks of tinyagents-tools against a direct call (RAW),
//! rmcp and rig, all on the same "add" tool, in one run.
//!
//! `cargo run --release --manifest-path benchmarks/Cargo.toml -- --json`
//! prints one JSON object on stdout (keyed by section and case, as in
//! `results/latest.json`) and the table on stderr. `--quick` shortens every
//! case;
//! `--profile-executor N`, `--profile-observed N`, `--profile-subscribed N`, `--profile-rmcp-call N`,
//! `--profile-register N`, `--profile-rmcp-router N`,
//! `--profile-declarations N`, `--profile-rmcp-listing N`, `--profile-mcp-http N`
//! and `--profile-rmcp-http N` run only that
//! loop, for a profiler; `--per-call-only` runs case 1 alone and prints its
//! table, `--mcp-http-only` case 6 alone (eight window pairs of 2 s),
//! `--stdio-only N` its stdio round trip alone (N calls each),
//! `--mcp-http-solo ours|rmcp [--seconds S]` one MCP HTTP server alone under
//! case 6's 50 clients (for a sampling profiler such as `perf record`);
//! `--serve-stdio ours|rmcp` is the child of the stdio round trip;
//! `--stream-only` runs the streaming case alone (text formats against
//! `tool-parser`, growth, the invariance corpus, the streamed turn; with
//! `--json`, its JSON), `--profile-stream-1char N` its Hermes output read
//! one character at a time `N` times (`--profile-stream-4char N`: four at a
//! time), `--profile-stream-whole N` the output
//! of each format both read, whole, `N` times (`STREAM_OUTPUT`,
//! `STREAM_BYTES`: a growth output instead, see `cases::stream`).

mod add;
mod cases;
mod contenders;
mod harness;
mod memory;
mod report;

use harness::Budget;
use report::{Bound, Report};

/// A `--profile-*` flag and the loop it runs `N` times.
type Profile = (&'static str, fn(u64));

/// The `--profile-*` flags: each runs one loop `N` times and nothing else,
/// for a profiler (`valgrind --tool=callgrind`, `perf`).
const PROFILES: &[Profile] = &[
    // The streaming case's Hermes output, one character at a time.
    ("--profile-stream-1char", cases::stream::profile_one_char),
    // The same output in pieces of four characters.
    ("--profile-stream-4char", cases::stream::profile_four_chars),
    // The streaming case's output of each format both read, read whole.
    ("--profile-stream-whole", cases::stream::profile_whole),
    // The per-call executor loop.
    ("--profile-executor", cases::per_call::profile_executor),
    // The executor loop with one subscriber and one middleware.
    ("--profile-observed", cases::per_call::profile_observed),
    // The executor loop with one subscriber alone.
    ("--profile-subscribed", cases::per_call::profile_subscribed),
    // Registering 1,000 prebuilt tools.
    ("--profile-register", cases::registration::profile_register),
    // Building rmcp's router of 1,000 routes.
    (
        "--profile-rmcp-router",
        cases::registration::profile_rmcp_router,
    ),
    // rmcp's per-call loop, to compare with `--profile-executor`.
    ("--profile-rmcp-call", cases::per_call::profile_rmcp),
    // Sequential tools/call requests through our MCP HTTP server.
    ("--profile-mcp-http", cases::mcp_http::profile_ours_http),
    // The same through a server written with rmcp alone.
    ("--profile-rmcp-http", cases::mcp_http::profile_rmcp_http),
    // Cached declarations to JSON text.
    (
        "--profile-declarations",
        cases::declarations::profile_cached_json,
    ),
    // rmcp's listing of 1,000 tools to JSON text.
    (
        "--profile-rmcp-listing",
        cases::declarations::profile_rmcp_listing,
    ),
];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let json = args.iter().any(|a| a == "--json");
    let quick = args.iter().any(|a| a == "--quick");
    let budget = if quick {
        Budget::quick()
    } else {
        Budget::standard()
    };

    for (flag, profile) in PROFILES {
        if let Some(n) = flag_value(&args, flag) {
            profile(n.parse().expect("a count"));
            return;
        }
    }
    if let Some(which) = flag_value(&args, "--mcp-http-solo") {
        // One MCP HTTP server alone under the 50 clients, for a sampling
        // profiler (`--seconds S`, default 10).
        let seconds = flag_value(&args, "--seconds").map_or(10, |s| s.parse().expect("seconds"));
        cases::mcp_http::solo(which, std::time::Duration::from_secs(seconds));
        return;
    }
    if let Some(which) = flag_value(&args, "--serve-stdio") {
        // The child process of the stdio round trip (case 6).
        cases::mcp_http::serve_stdio(which);
        return;
    }
    let runs = if quick { 3 } else { 11 };
    let mut report = Report::default();
    machine(&mut report, quick);
    if let Some(calls) = flag_value(&args, "--stdio-only") {
        // The stdio round trip alone, ours and rmcp's paired by call.
        cases::mcp_http::stdio_case(calls.parse().expect("a count"), &mut report);
        print!("{}", report.table());
        return;
    }
    if args.iter().any(|a| a == "--mcp-http-only") {
        // Case 6 alone (eight window pairs), for checking a change to the
        // MCP server.
        let windows = flag_value(&args, "--windows").map_or(8, |n| n.parse().expect("a count"));
        let window_ms = flag_value(&args, "--window-ms").map_or(2_000, |n| n.parse().expect("ms"));
        let window = std::time::Duration::from_millis(window_ms);
        cases::mcp_http::run(windows, window, 500, &mut report);
        print!("{}", report.table());
        return;
    }
    if args.iter().any(|a| a == "--stream-only") {
        stream_case(budget, quick, &mut report);
        if json {
            eprint!("{}", report.table());
            println!(
                "{}",
                serde_json::to_string_pretty(&report.into_json()).expect("serializes")
            );
        } else {
            print!("{}", report.table());
        }
        return;
    }
    let per_call = cases::per_call::run(budget, &mut report);
    if args.iter().any(|a| a == "--per-call-only") {
        // Case 1 alone, for checking a change to the hot path.
        print!("{}", report.table());
        return;
    }

    let rt = harness::runtime();
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
    let registration = cases::registration::run(if quick { 11 } else { 31 }, &mut report);
    let mcp = if quick {
        cases::mcp_http::run(4, std::time::Duration::from_secs(2), 2_000, &mut report)
    } else {
        cases::mcp_http::run(8, std::time::Duration::from_secs(3), 10_000, &mut report)
    };
    stream_case(budget, quick, &mut report);
    let inflight = cases::inflight::run(if quick { 3 } else { 5 }, &mut report);
    // Last: it raises the peak RSS of the process.
    cases::load::run(if quick { 100_000 } else { 1_000_000 }, &mut report);

    // The per-call verdicts use the ratios paired by round (see
    // `harness::Interleaved::paired_ratio`).
    report.target(
        "executor_vs_rmcp",
        "ours executor / rmcp router (paired)",
        Some(per_call.ours_vs_rmcp_paired),
        Some(Bound::AtMost(0.80)),
    );
    report.target(
        "observed_vs_bare",
        "ours + 1 subscriber + 1 middleware / ours bare (paired)",
        Some(per_call.observed_vs_ours_paired),
        Some(Bound::AtMost(1.30)),
    );
    report.target(
        "executor_vs_handrolled",
        "ours (text) / hand-rolled (text), paired: reported",
        Some(per_call.ours_text_vs_handrolled_paired),
        None,
    );
    report.target(
        "register_1000_vs_rmcp_router",
        "ours register 1,000 / rmcp router of 1,000 (paired)",
        Some(registration),
        Some(Bound::AtMost(1.00)),
    );
    report.target(
        "mcp_http_rps_vs_rmcp",
        "ours / rmcp, MCP HTTP requests per second, 50 clients",
        Some(mcp.rps_ratio),
        Some(Bound::AtLeast(0.95)),
    );
    report.target(
        "heap_per_inflight_call",
        "heap per call in flight, 10,000 calls (bytes)",
        inflight.heap_per_call,
        Some(Bound::AtMost(2048.0)),
    );
    compile_time_targets(&mut report);
    if cfg!(feature = "rig") {
        report.target(
            "executor_vs_rig",
            "ours executor / rig tool set (paired)",
            Some(per_call.ours_vs_rig_paired),
            Some(Bound::AtMost(1.0)),
        );
    }
    report.target(
        "cached_declarations_vs_rmcp_listing",
        "rmcp list_all / ours cached toolset of 1,000 (speed-up)",
        Some(declarations.rmcp_list / declarations.ours_toolset_cached),
        Some(Bound::AtLeast(50.0)),
    );
    report.target(
        "batch_vs_buffer_unordered",
        "batch wall time / buffer_unordered",
        Some(batch_ratio),
        Some(Bound::AtMost(1.05)),
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

/// The streaming case (`cases::stream` and its two siblings) and its
/// targets.
fn stream_case(budget: Budget, quick: bool, report: &mut Report) {
    let throughput = cases::stream::run(budget, if quick { 5 } else { 11 }, report);
    let corpus = cases::stream_corpus::run(report);
    let turn = cases::stream_turn::run(
        if quick { 200 } else { 2_000 },
        if quick { 5 } else { 11 },
        report,
    );
    report.target(
        "stream_speedup_vs_tool_parser",
        "text formats: tool-parser time / ours, lowest of every case",
        Some(throughput.min_speedup),
        Some(Bound::AtLeast(2.0)),
    );
    report.target(
        "stream_corpus_ours_differ",
        "invariance corpus: cases where our streamed read differs",
        Some(corpus.ours_differ as f64),
        Some(Bound::AtMost(0.0)),
    );
    report.target(
        "stream_corpus_theirs_calls_differ",
        &format!(
            "invariance corpus: tool-parser cases with other calls (of {})",
            corpus.cases
        ),
        Some(corpus.theirs_calls_differ as f64),
        None,
    );
    report.target(
        "stream_turn_streamed_vs_whole",
        "4-call turn: streamed / whole response first (paired)",
        Some(turn.streamed_vs_whole),
        None,
    );
}

/// The compile-time targets, from the last `benchmarks/compile_time.sh`
/// run (`benchmarks/results/compile_time.json`; it builds three crates and
/// takes minutes, so this binary does not run it). Absent: no verdict.
fn compile_time_targets(report: &mut Report) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/results/compile_time.json");
    let figures: Option<serde_json::Value> = std::fs::read_to_string(path)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok());
    let ratio = |kind: &str, other: &str| {
        let f = figures.as_ref()?;
        Some(f[kind]["ours_macro"].as_f64()? / f[kind][other].as_f64()?)
    };
    if let Some(f) = &figures {
        report.value(
            "compile_time",
            "from_file",
            "results/compile_time.json (seconds per crate)",
            f.clone(),
        );
    }
    report.target(
        "compile_incremental_vs_hand",
        "compile, one tool body edited: #[tool] / hand-written",
        ratio("incremental_s", "ours_hand"),
        Some(Bound::AtMost(1.2)),
    );
    report.target(
        "compile_incremental_vs_rmcp",
        "compile, one tool body edited: #[tool] / rmcp",
        ratio("incremental_s", "rmcp_macro"),
        Some(Bound::AtMost(1.0)),
    );
    report.target(
        "compile_clean_vs_hand",
        "compile, clean: #[tool] / hand-written",
        ratio("clean_s", "ours_hand"),
        Some(Bound::AtMost(1.2)),
    );
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
        "serde_json preserve_order (maps keep insertion order)",
        serde_json::json!(keeps_insertion_order()),
    );
}

/// True when serde_json's maps keep insertion order (its `preserve_order`
/// feature, which tinyagents-tools turns on).
fn keeps_insertion_order() -> bool {
    let value: serde_json::Value = serde_json::from_str(r#"{"b": 1, "a": 2}"#).unwrap();
    value
        .as_object()
        .and_then(|m| m.keys().next())
        .is_some_and(|k| k == "b")
}

/// The word after `flag` in `args`, if `flag` is there.
fn flag_value<'a>(args: &'a [String], flag: &str) -> Option<&'a str> {
    let i = args.iter().position(|a| a == flag)?;
    args.get(i + 1).map(String::as_str)
}
