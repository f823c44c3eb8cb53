//! Code mode's cost, side by side in one run: the sandbox's start (a
//! `run_code` call whose program returns at once), one tool call from a
//! program against the same call made directly through the executor, and
//! the 20-item program (40 calls) against the same 40 calls made directly
//! in two batches of 20.
//!
//! Both sides use the same executor (no middleware, no subscriber), the
//! same tool and arguments, and a turn advertising the same two tools
//! (`run_code`'s inner calls run in a turn advertising exactly the offered
//! tools; the direct calls are given that turn). A call from a program is
//! the time of a program making `N` calls, less the start measured in the
//! same round and nothing else, over `N` (the loop and the argument object
//! it builds each time are counted); the same figure without subtracting
//! the start is printed beside it.
//!
//! `cargo run --release --manifest-path benchmarks/code_mode/Cargo.toml`
//!
//! `--profile-start N`, `--profile-start-object N`, `--profile-calls N` and
//! `--profile-twenty N` run only one loop, for a profiler (`valgrind
//! --tool=callgrind` through `benchmarks/callgrind.sh --bin`): `N`
//! `run_code` calls of `return 1;`; `N` of `return { n: 1 };` (a program
//! holding a `}`, whose body is checked, and an object to carry out); one
//! program making `N` tool calls; `N` runs of the 20-item program.
use std::sync::Arc;
use std::time::Instant;

use serde_json::json;
use tinyagents_tools::prelude::*;
use tinyagents_tools_code_mode::{CodeMode, SandboxLimits};

// The example's two tools and its program.
#[path = "../../../tinyagents-tools-code-mode/examples/code_mode/catalog.rs"]
#[allow(dead_code)]
mod catalog;
use catalog::{LabelTool, LookupTool, PROGRAM as TWENTY};

/// Median, first and third quartile of `v` (sorted in place).
fn quartiles(v: &mut [f64]) -> (f64, f64, f64) {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    (v[v.len() / 2], v[v.len() / 4], v[v.len() * 3 / 4])
}

/// The executor of the two tools, and the model-facing one offering
/// `run_code` over it under `limits`.
fn executors(limits: SandboxLimits) -> (Arc<ToolExecutor>, ToolExecutor) {
    let mut registry = ToolRegistry::new();
    registry.register(LookupTool).unwrap();
    registry.register(LabelTool).unwrap();
    let inner = Arc::new(ToolExecutor::builder(registry, ()).build().unwrap());
    let mut outer_registry = ToolRegistry::new();
    outer_registry
        .register(CodeMode::new(Arc::clone(&inner)).limits(limits).tool())
        .unwrap();
    let outer = ToolExecutor::builder(outer_registry, ()).build().unwrap();
    (inner, outer)
}

/// A `run_code` call with `code`, as call `c{id}`.
fn program(id: u64, code: &str) -> ToolCall {
    ToolCall::new(format!("c{id}"), "run_code", json!({ "code": code }))
}

/// The model-facing turn (the outer call).
fn turn() -> Turn {
    Turn::new(1).advertising(["run_code"])
}

/// Runs the loop `flag` names `n` times, and nothing else.
async fn profile(flag: &str, n: usize) {
    // Bounds a profiler's slowness cannot reach: the loops, not the
    // limits, are measured.
    let limits = SandboxLimits {
        max_calls: u32::MAX,
        max_time: std::time::Duration::from_secs(3600),
        max_duration: std::time::Duration::from_secs(3600),
        ..SandboxLimits::default()
    };
    let (_, outer) = executors(limits);
    let (run, turn) = (RunContext::empty(), turn());
    let (code, runs) = match flag {
        "--profile-start" => (String::from("return 1;"), n),
        "--profile-start-object" => (String::from("return { n: 1 };"), n),
        "--profile-calls" => (
            format!(
                "let r; for (let i = 0; i < {n}; i++) r = tools.lookup({{ id: 7 }}); return r.price;"
            ),
            1,
        ),
        "--profile-twenty" => (String::from(TWENTY), n),
        other => panic!("unknown flag {other}"),
    };
    for id in 0..runs {
        let r = outer.execute(&run, &turn, program(id as u64, &code)).await;
        assert_eq!(r.outcome(), "ok", "{}", r.text());
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, n] = &args[..] {
        return profile(flag, n.parse().expect("a count")).await;
    }
    let limits = SandboxLimits {
        max_calls: 2000,
        ..SandboxLimits::default()
    };
    let (inner, outer) = executors(limits);
    let run = RunContext::empty();
    // The model-facing turn (the outer call) and the turn of the direct
    // calls: the inner calls of a program run in turn 0 advertising the
    // offered tools, so the direct calls get the same.
    let turn = turn();
    let inner_turn = Turn::new(0).advertising(["lookup", "label"]);

    let one_call_program = format!(
        "let r; for (let i = 0; i < {N}; i++) r = tools.lookup({{ id: 7 }}); return r.price;"
    );
    const N: usize = 1000;
    const ROUNDS: usize = 15;
    let mut rows: Vec<(&str, Vec<f64>)> = vec![
        ("start: run_code, program `return 1` (us/call)", vec![]),
        (
            "a tool call from a program, 1000 in one program, less the start (us/call)",
            vec![],
        ),
        ("the same, the start not subtracted (us/call)", vec![]),
        ("the same call made directly, `execute` (us/call)", vec![]),
        ("20-item program, 40 calls, one run_code call (us)", vec![]),
        ("the same 40 calls directly, two batches of 20 (us)", vec![]),
        ("ratio: program call / direct call, paired by round", vec![]),
        (
            "ratio: 20-item program / 40 direct calls, paired by round",
            vec![],
        ),
    ];
    let mut id = 0u64;
    for _ in 0..ROUNDS {
        // start
        let t = Instant::now();
        for _ in 0..200 {
            id += 1;
            let r = outer.execute(&run, &turn, program(id, "return 1;")).await;
            assert_eq!(r.outcome(), "ok");
        }
        let start = t.elapsed().as_secs_f64() * 1e6 / 200.0;
        // program with N calls, minus a start
        let t = Instant::now();
        id += 1;
        let r = outer
            .execute(&run, &turn, program(id, &one_call_program))
            .await;
        assert_eq!(r.outcome(), "ok", "{}", r.text());
        let whole = t.elapsed().as_secs_f64() * 1e6;
        let per_call = (whole - start) / N as f64;
        let amortized = whole / N as f64;
        // direct
        let t = Instant::now();
        for i in 0..N {
            let r = inner
                .execute(
                    &run,
                    &inner_turn,
                    ToolCall::new(format!("d{id}-{i}"), "lookup", json!({ "id": 7 })),
                )
                .await;
            assert_eq!(r.outcome(), "ok");
        }
        let direct = t.elapsed().as_secs_f64() * 1e6 / N as f64;
        // 20 items
        let t = Instant::now();
        for _ in 0..20 {
            id += 1;
            let r = outer.execute(&run, &turn, program(id, TWENTY)).await;
            assert_eq!(r.outcome(), "ok");
        }
        let twenty = t.elapsed().as_secs_f64() * 1e6 / 20.0;
        let t = Instant::now();
        for k in 0..20 {
            let lookups: Vec<ToolCall> = (1..=20)
                .map(|i| ToolCall::new(format!("l{k}-{i}"), "lookup", json!({ "id": i })))
                .collect();
            let items = inner.execute_batch(&run, &inner_turn, lookups).await;
            assert!(items.iter().all(|r| r.outcome() == "ok"));
            let labels: Vec<ToolCall> = items
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    let s = r.message.structured.clone().unwrap();
                    ToolCall::new(
                        format!("b{k}-{i}"),
                        "label",
                        json!({ "name": s["name"], "price": s["price"] }),
                    )
                })
                .collect();
            let labelled = inner.execute_batch(&run, &inner_turn, labels).await;
            assert!(labelled.iter().all(|r| r.outcome() == "ok"));
        }
        let direct40 = t.elapsed().as_secs_f64() * 1e6 / 20.0;
        for (row, v) in rows.iter_mut().zip([
            start,
            per_call,
            amortized,
            direct,
            twenty,
            direct40,
            per_call / direct,
            twenty / direct40,
        ]) {
            row.1.push(v);
        }
    }
    println!("code mode, {ROUNDS} rounds; median (q1 to q3)");
    for (name, mut v) in rows {
        let (m, q1, q3) = quartiles(&mut v);
        println!("{name}: {m:.2} ({q1:.2} to {q3:.2})");
    }
}
