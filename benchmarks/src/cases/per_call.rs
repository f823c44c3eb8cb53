//! Case 1: the cost of one call of "add", on a single-threaded runtime.
//!
//! Every contender receives, per call, a fresh owned copy of the same
//! arguments in its own input form (a JSON value for RAW and ours, a JSON
//! object for rmcp, JSON text for rig), so the copy is paid by all of them.

use std::hint::black_box;

use serde_json::Value;
use std::sync::atomic::Ordering;

use tinyagents_tools::{RunContext, ToolCall, ToolRegistry, ToolRuntime, Turn};

use crate::add::{expected_sum, raw, raw_text, sample_args};
#[cfg(feature = "rig")]
use crate::contenders::rig;
use crate::contenders::{ours, ours_exec, rmcp};
use crate::harness::{Budget, Stats, measure_async, measure_sync};
use crate::report::{Report, Unit};

/// The medians the ratios and targets need.
#[derive(Debug, Default, Clone, Copy)]
pub struct PerCall {
    /// RAW, from a JSON value.
    pub raw: f64,
    /// RAW, from JSON text.
    pub raw_text: f64,
    /// Ours: the executor around the `#[tool]` add.
    pub ours: f64,
    /// Ours: the executor around the hand-written add.
    pub ours_hand: f64,
    /// Ours: with one subscriber and one middleware.
    pub ours_observed: f64,
    /// rmcp, router built once.
    pub rmcp: f64,
    /// rmcp, router rebuilt per call.
    pub rmcp_rebuilt: f64,
    /// rig's tool set (0 when rig is left out).
    pub rig: f64,
}

/// Runs case 1 and records it.
pub fn run(budget: Budget, report: &mut Report) -> PerCall {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    rt.block_on(run_on_current_thread(budget, report))
}

async fn run_on_current_thread(budget: Budget, report: &mut Report) -> PerCall {
    let args = sample_args();
    let args_text = args.to_string();
    let args_object = args.as_object().expect("an object").clone();
    let mut out = PerCall::default();
    let mut record = |key: &str, label: &str, stats: Stats| {
        report.stats("per_call", key, label, Unit::Ns, stats);
        stats.median_ns
    };

    // RAW.
    assert_eq!(raw(args.clone()).expect("raw works"), expected_sum());
    out.raw = record(
        "raw",
        "RAW: from_value + add + to_value",
        measure_sync(budget, || raw(black_box(args.clone()))),
    );
    assert_eq!(raw_text(&args_text).expect("raw works"), expected_sum());
    out.raw_text = record(
        "raw_text",
        "RAW from text: from_str + add + to_value",
        measure_sync(budget, || raw_text(black_box(&args_text))),
    );

    // Ours, below the executor: what a call costs before lifecycle work.
    let mut registry = ToolRegistry::new();
    registry.register(ours::HandAdd).expect("registers");
    let registered = registry.get("add").expect("registered").clone();
    assert!(registered.validator().is_valid(&args));
    record(
        "validate_only",
        "ours: schema validation alone (jsonschema validator)",
        measure_sync(budget, || registered.validator().is_valid(black_box(&args))),
    );
    assert!(registered.accepts(&args));
    record(
        "accepts_only",
        "ours: the executor's check (flat schema check)",
        measure_sync(budget, || registered.accepts(black_box(&args))),
    );
    let runtime = ToolRuntime::new(RunContext::empty(), "call-1", "add");
    let direct = |args: Value| {
        let registry = &registry;
        let runtime = &runtime;
        async move {
            let tool = registry.resolve("add").expect("resolves");
            if !tool.accepts(&args) {
                panic!("arguments are valid");
            }
            tool.tool().call(&(), runtime, args).await
        }
    };
    let output = direct(args.clone()).await.expect("add works");
    assert_eq!(output.structured, Some(expected_sum()));
    record(
        "ours_tool_direct",
        "ours: resolve + validate + dyn Tool::call (hand-written)",
        measure_async(budget, || direct(black_box(args.clone()))).await,
    );

    // Ours, through the executor's whole lifecycle.
    let run = RunContext::empty();
    let turn = Turn::new(1);
    let call = ToolCall::new("call-1", "add", args.clone());
    let hand = ours_exec::plain(ours::HandAdd);
    check_ours(hand.execute(&run, &turn, call.clone()).await);
    out.ours_hand = record(
        "ours_executor_hand",
        "ours: executor, hand-written Tool impl",
        measure_async(budget, || {
            hand.execute(&run, &turn, black_box(call.clone()))
        })
        .await,
    );
    let plain = ours_exec::plain(ours::MacroAddTool);
    check_ours(plain.execute(&run, &turn, call.clone()).await);
    out.ours = record(
        "ours_executor",
        "ours: executor, #[tool] (no subscriber, no middleware)",
        measure_async(budget, || {
            plain.execute(&run, &turn, black_box(call.clone()))
        })
        .await,
    );
    let (observed, subscriber, middleware) = ours_exec::observed(ours::MacroAddTool);
    check_ours(observed.execute(&run, &turn, call.clone()).await);
    out.ours_observed = record(
        "ours_executor_observed",
        "ours: executor, #[tool], 1 inline subscriber + 1 middleware",
        measure_async(budget, || {
            observed.execute(&run, &turn, black_box(call.clone()))
        })
        .await,
    );
    let calls = middleware.calls.load(Ordering::Relaxed);
    assert!(calls > 1, "the middleware ran");
    assert!(
        subscriber.events.load(Ordering::Relaxed) >= 2 * calls,
        "the subscriber saw started and completed for every call"
    );

    // rmcp.
    let harness = rmcp::Harness::start();
    let response = harness.call(args_object.clone()).await.expect("rmcp works");
    assert_rmcp_sum(response);
    out.rmcp = record(
        "rmcp_router",
        "rmcp: ToolRouter::call, router built once",
        measure_async(budget, || harness.call(black_box(args_object.clone()))).await,
    );
    let response = harness
        .call_rebuilding(args_object.clone())
        .await
        .expect("rmcp works");
    assert_rmcp_sum(response);
    out.rmcp_rebuilt = record(
        "rmcp_router_rebuilt",
        "rmcp: router rebuilt per call (#[tool_handler] default)",
        measure_async(budget, || {
            harness.call_rebuilding(black_box(args_object.clone()))
        })
        .await,
    );

    #[cfg(feature = "rig")]
    {
        out.rig = record(
            "rig_toolset",
            "rig: ToolSet::execute (arguments as text)",
            rig_toolset(budget, &args_text).await,
        );
    }

    report.ratio(
        "ours_executor_vs_raw",
        "ours executor (#[tool]) / RAW",
        out.ours,
        out.raw,
    );
    report.ratio(
        "ours_executor_hand_vs_raw",
        "ours executor (hand-written) / RAW",
        out.ours_hand,
        out.raw,
    );
    report.ratio(
        "ours_executor_observed_vs_raw",
        "ours executor + subscriber + middleware / RAW",
        out.ours_observed,
        out.raw,
    );
    report.ratio("rmcp_router_vs_raw", "rmcp router / RAW", out.rmcp, out.raw);
    report.ratio(
        "rmcp_router_rebuilt_vs_raw",
        "rmcp router rebuilt / RAW",
        out.rmcp_rebuilt,
        out.raw,
    );
    if cfg!(feature = "rig") {
        report.ratio("rig_toolset_vs_raw", "rig tool set / RAW", out.rig, out.raw);
        report.ratio(
            "rig_toolset_vs_raw_text",
            "rig tool set / RAW from text",
            out.rig,
            out.raw_text,
        );
    }
    out
}

/// rig: one call through a `ToolSet`, arguments as JSON text.
// The harness awaits one call at a time, so the context is never borrowed
// twice; a `RefCell` keeps a lock's cost out of rig's figure.
#[cfg(feature = "rig")]
#[allow(clippy::await_holding_refcell_ref)]
async fn rig_toolset(budget: Budget, args_text: &str) -> Stats {
    let set = rig::toolset();
    let mut ctx = rig_agent::tool::ToolContext::default();
    let result = rig::call(&set, &mut ctx, args_text.to_owned()).await;
    assert!(result.is_success(), "rig works");
    assert_eq!(result.output().as_json(), Some(&expected_sum()));
    let ctx = std::cell::RefCell::new(ctx);
    measure_async(budget, || {
        let set = &set;
        let ctx = &ctx;
        let args = black_box(args_text.to_owned());
        async move {
            let mut ctx = ctx.borrow_mut();
            rig::call(set, &mut ctx, args).await
        }
    })
    .await
}

fn check_ours(result: tinyagents_tools::ToolResult) {
    assert!(!result.is_error, "ours works: {:?}", result.error);
    assert_eq!(result.structured, Some(expected_sum()));
}

fn assert_rmcp_sum(response: ::rmcp::model::CallToolResponse) {
    match response {
        ::rmcp::model::CallToolResponse::Complete(result) => {
            assert_eq!(result.structured_content, Some(expected_sum()));
        }
        _ => panic!("rmcp answered with an incomplete result"),
    }
}

/// Runs `n` calls of "add" (`#[tool]`) through the executor and nothing else,
/// for a profiler.
pub fn profile_executor(n: u64) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    rt.block_on(async {
        let run = RunContext::empty();
        let turn = Turn::new(1);
        let call = ToolCall::new("call-1", "add", sample_args());
        let executor = ours_exec::plain(ours::MacroAddTool);
        for _ in 0..n {
            black_box(executor.execute(&run, &turn, black_box(call.clone())).await);
        }
    });
}

/// The rmcp router loop alone (router built once), for comparing
/// instruction counts with [`profile_executor`] under callgrind.
pub fn profile_rmcp(n: u64) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    rt.block_on(async {
        let harness = rmcp::Harness::start();
        let args = sample_args();
        let args_object = args.as_object().expect("an object").clone();
        for _ in 0..n {
            black_box(
                harness
                    .call(black_box(args_object.clone()))
                    .await
                    .expect("rmcp works"),
            );
        }
    });
}
