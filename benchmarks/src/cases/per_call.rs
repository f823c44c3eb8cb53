//! Case 1: the cost of one call of "add", on a single-threaded runtime.
//!
//! Every contender receives, per call, a fresh owned copy of the same
//! arguments in its own input form (a JSON value for RAW and ours, a JSON
//! object for rmcp, JSON text for rig), so the copy is paid by all of them.
//! All contenders are measured together, their samples interleaved, so that
//! load from other processes falls on all of them alike.

use std::hint::black_box;

use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use tinyagents_tools::{RunContext, ToolCall, ToolExecutor, ToolRegistry, ToolRuntime, Turn};

use crate::add::{HandRolled, HandRolledError, expected_sum, raw, raw_text, sample_args};
#[cfg(feature = "rig")]
use crate::contenders::rig;
use crate::contenders::{ours, ours_exec, rmcp};
use crate::harness::{Budget, Contender, measure_interleaved, runtime};
use crate::report::{Report, Unit};

/// The medians the ratios and targets need.
#[derive(Debug, Default, Clone, Copy)]
pub struct PerCall {
    /// Ours (`#[tool]`) / RAW, paired by round.
    pub ours_vs_raw_paired: f64,
    /// Ours (`#[tool]`) / rmcp's router built once, paired by round.
    pub ours_vs_rmcp_paired: f64,
    /// Ours (`#[tool]`) / rig's tool set, paired by round (0 without rig).
    pub ours_vs_rig_paired: f64,
    /// Ours with one subscriber and one middleware / ours with neither,
    /// paired by round.
    pub observed_vs_ours_paired: f64,
    /// Ours with the subscriber alone / ours bare, paired by round.
    pub subscribed_vs_ours_paired: f64,
    /// Ours with the middleware alone / ours bare, paired by round.
    pub hooked_vs_ours_paired: f64,
    /// Ours (`#[tool]`, arguments as text) / the hand-rolled call, paired by
    /// round.
    pub ours_text_vs_handrolled_paired: f64,
    /// The first and third quartile, over rounds, of ours / rmcp.
    pub ours_vs_rmcp_spread: (f64, f64),
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
    let rt = runtime();
    // Shorter samples, more rounds: the same time in all, interleaved more
    // finely.
    let budget = Budget {
        sample: budget.sample / 5,
        samples: budget.samples * 5,
        ..budget
    };
    rt.block_on(run_on_current_thread(budget, report))
}

// The rig contender's context is borrowed by one call at a time (the
// contenders are awaited one after another); a `RefCell` keeps a lock's cost
// out of rig's figure.
#[allow(clippy::await_holding_refcell_ref)]
async fn run_on_current_thread(budget: Budget, report: &mut Report) -> PerCall {
    let args = sample_args();
    let args_text = args.to_string();
    let args_object = args.as_object().expect("an object").clone();

    // Every contender is built and checked once (the sum must be 42), then
    // all are measured together, interleaved (see `measure_interleaved`).
    assert_eq!(raw(args.clone()).expect("raw works"), expected_sum());
    assert_eq!(raw_text(&args_text).expect("raw works"), expected_sum());

    let handrolled = HandRolled::new();
    assert_eq!(
        handrolled
            .call(args_text.clone())
            .expect("hand-rolled works"),
        expected_sum().to_string()
    );
    let refused = handrolled.call(r#"{"a": 1}"#.to_owned());
    assert!(
        matches!(&refused, Err(HandRolledError::Invalid(_))),
        "the hand-rolled call validates: {}",
        refused.err().map(|e| e.to_string()).unwrap_or_default()
    );

    // Ours, below the executor: what a call costs before lifecycle work,
    // the arguments checked by a validator of the tool's input schema that
    // the benchmark compiles itself (the registry's own check is internal).
    let mut registry = ToolRegistry::new();
    registry.register(ours::HandAdd).expect("registers");
    let registered = registry.get("add").expect("registered").clone();
    let validator = input_validator(registered.spec());
    assert!(validator.is_valid(&args));
    let runtime = ToolRuntime::new(RunContext::empty(), "call-1", "add");
    let direct = |args: Value| {
        let registry = &registry;
        let runtime = &runtime;
        let validator = &validator;
        async move {
            let tool = registry.resolve("add").expect("resolves");
            if !validator.is_valid(&args) {
                panic!("arguments are valid");
            }
            tool.tool().call(&(), runtime, args).await
        }
    };
    let output = direct(args.clone()).await.expect("add works");
    assert_eq!(output.structured, Some(expected_sum()));

    // Ours, through the executor's whole lifecycle.
    let run = RunContext::empty();
    let turn = Turn::new(1);
    let call = ToolCall::new("call-1", "add", args.clone());
    let hand = ours_exec::plain(ours::HandAdd);
    check_ours(hand.execute(&run, &turn, call.clone()).await);
    let plain = ours_exec::plain(ours::MacroAddTool);
    check_ours(plain.execute(&run, &turn, call.clone()).await);
    let text_call = ToolCall::new("call-1", "add", args_text.clone());
    check_ours(plain.execute(&run, &turn, text_call.clone()).await);
    let (observed, subscriber, middleware) = ours_exec::observed(ours::MacroAddTool);
    check_ours(observed.execute(&run, &turn, call.clone()).await);
    let counting = || Some(Arc::new(ours_exec::CountingSubscriber::default()));
    let subscribed = ours_exec::attached(ours::MacroAddTool, counting(), None);
    check_ours(subscribed.execute(&run, &turn, call.clone()).await);
    let hooked = ours_exec::attached(ours::MacroAddTool, None, Some(Default::default()));
    check_ours(hooked.execute(&run, &turn, call.clone()).await);

    // rmcp.
    let harness = rmcp::Harness::start();
    let response = harness.call(args_object.clone()).await.expect("rmcp works");
    assert_rmcp_sum(response);
    let response = harness
        .call_rebuilding(args_object.clone())
        .await
        .expect("rmcp works");
    assert_rmcp_sum(response);

    // rig: one call through a `ToolSet`, arguments as JSON text.
    #[cfg(feature = "rig")]
    let rig_set = rig::toolset();
    #[cfg(feature = "rig")]
    let rig_ctx = {
        let mut ctx = rig_agent::tool::ToolContext::default();
        let result = rig::call(&rig_set, &mut ctx, args_text.clone()).await;
        assert!(result.is_success(), "rig works");
        assert_eq!(result.output().as_json(), Some(&expected_sum()));
        std::cell::RefCell::new(ctx)
    };
    #[cfg_attr(not(feature = "rig"), allow(unused_mut))]
    let mut cases: Vec<(&str, &str, Contender<'_>)> = vec![
        (
            "raw",
            "RAW: from_value + add + to_value",
            Contender::synchronous(|| raw(black_box(args.clone()))),
        ),
        (
            "raw_text",
            "RAW from text: from_str + add + to_value",
            Contender::synchronous(|| raw_text(black_box(&args_text))),
        ),
        (
            "handrolled",
            "hand-rolled: from_str + jsonschema validate + add + to_string",
            Contender::synchronous(|| handrolled.call(black_box(args_text.clone()))),
        ),
        (
            "validate_only",
            "jsonschema validator of the tool's input schema, alone",
            Contender::synchronous(|| validator.is_valid(black_box(&args))),
        ),
        (
            "ours_tool_direct",
            "ours: resolve + jsonschema validate + dyn Tool::call (hand-written)",
            Contender::asynchronous(|| direct(black_box(args.clone()))),
        ),
        (
            "ours_executor_hand",
            "ours: executor, hand-written Tool impl",
            Contender::asynchronous(|| hand.execute(&run, &turn, black_box(call.clone()))),
        ),
        (
            "ours_executor",
            "ours: executor, #[tool] (no subscriber, no middleware)",
            Contender::asynchronous(|| plain.execute(&run, &turn, black_box(call.clone()))),
        ),
        (
            "ours_executor_text",
            "ours: executor, #[tool], arguments as JSON text",
            Contender::asynchronous(|| plain.execute(&run, &turn, black_box(text_call.clone()))),
        ),
        (
            "ours_executor_observed",
            "ours: executor, #[tool], 1 inline subscriber + 1 middleware",
            Contender::asynchronous(|| observed.execute(&run, &turn, black_box(call.clone()))),
        ),
        (
            "ours_executor_subscribed",
            "ours: executor, #[tool], 1 inline subscriber only",
            Contender::asynchronous(|| subscribed.execute(&run, &turn, black_box(call.clone()))),
        ),
        (
            "ours_executor_hooked",
            "ours: executor, #[tool], 1 middleware only",
            Contender::asynchronous(|| hooked.execute(&run, &turn, black_box(call.clone()))),
        ),
        (
            "rmcp_router",
            "rmcp: ToolRouter::call, router built once",
            Contender::asynchronous(|| harness.call(black_box(args_object.clone()))),
        ),
        (
            "rmcp_router_rebuilt",
            "rmcp: router rebuilt per call (#[tool_handler] default)",
            Contender::asynchronous(|| harness.call_rebuilding(black_box(args_object.clone()))),
        ),
    ];

    #[cfg(feature = "rig")]
    cases.push((
        "rig_toolset",
        "rig: ToolSet::execute (arguments as text)",
        Contender::asynchronous(|| {
            let (set, ctx) = (&rig_set, &rig_ctx);
            let args = black_box(args_text.clone());
            async move {
                let mut ctx = ctx.borrow_mut();
                rig::call(set, &mut ctx, args).await
            }
        }),
    ));

    let mut contenders: Vec<Contender<'_>> = Vec::with_capacity(cases.len());
    let mut labels: Vec<(&str, &str)> = Vec::with_capacity(cases.len());
    for (key, label, contender) in cases {
        labels.push((key, label));
        contenders.push(contender);
    }
    let measured = measure_interleaved(budget, &mut contenders).await;
    drop(contenders);

    let mut out = PerCall::default();
    let index = |wanted: &str| labels.iter().position(|(key, _)| *key == wanted);
    for (i, (key, label)) in labels.iter().enumerate() {
        let stats = measured.stats(i);
        report.stats("per_call", key, label, Unit::Ns, stats);
        let slot = match *key {
            "raw" => &mut out.raw,
            "raw_text" => &mut out.raw_text,
            "ours_executor" => &mut out.ours,
            "ours_executor_hand" => &mut out.ours_hand,
            "ours_executor_observed" => &mut out.ours_observed,
            "rmcp_router" => &mut out.rmcp,
            "rmcp_router_rebuilt" => &mut out.rmcp_rebuilt,
            "rig_toolset" => &mut out.rig,
            _ => continue,
        };
        *slot = stats.median_ns;
    }
    let ours = index("ours_executor").expect("measured");
    let paired = |other: &str| index(other).map_or(0.0, |i| measured.paired_ratio(ours, i));
    out.ours_vs_raw_paired = paired("raw");
    out.ours_vs_rmcp_paired = paired("rmcp_router");
    out.ours_vs_rig_paired = paired("rig_toolset");
    let pair = |a: &str, b: &str| match (index(a), index(b)) {
        (Some(a), Some(b)) => measured.paired_ratio(a, b),
        _ => 0.0,
    };
    out.observed_vs_ours_paired = pair("ours_executor_observed", "ours_executor");
    out.subscribed_vs_ours_paired = pair("ours_executor_subscribed", "ours_executor");
    out.hooked_vs_ours_paired = pair("ours_executor_hooked", "ours_executor");
    out.ours_text_vs_handrolled_paired = pair("ours_executor_text", "handrolled");
    out.ours_vs_rmcp_spread =
        measured.paired_quartiles(ours, index("rmcp_router").expect("measured"));
    let calls = middleware.calls.load(Ordering::Relaxed);
    assert!(calls > 1, "the middleware ran");
    assert!(
        subscriber.events.load(Ordering::Relaxed) >= 2 * calls,
        "the subscriber saw started and completed for every call"
    );

    report.ratios(&[
        (
            "ours_executor_vs_raw",
            "ours executor (#[tool]) / RAW",
            out.ours,
            out.raw,
        ),
        (
            "ours_executor_hand_vs_raw",
            "ours executor (hand-written) / RAW",
            out.ours_hand,
            out.raw,
        ),
        (
            "ours_executor_observed_vs_raw",
            "ours executor + subscriber + middleware / RAW",
            out.ours_observed,
            out.raw,
        ),
        ("rmcp_router_vs_raw", "rmcp router / RAW", out.rmcp, out.raw),
    ]);
    report.paired(
        "ours_executor_vs_raw_paired",
        "ours executor (#[tool]) / RAW, paired by round",
        out.ours_vs_raw_paired,
    );
    report.paired(
        "ours_executor_vs_rmcp_paired",
        "ours executor (#[tool]) / rmcp router, paired by round",
        out.ours_vs_rmcp_paired,
    );
    report.quartiles(
        "ours_executor_vs_rmcp_paired_quartiles",
        "ours / rmcp router, paired: 1st and 3rd quartile over rounds",
        out.ours_vs_rmcp_spread,
    );
    report.paired(
        "ours_executor_observed_vs_ours_executor_paired",
        "ours + 1 subscriber + 1 middleware / ours bare, paired by round",
        out.observed_vs_ours_paired,
    );
    report.paired(
        "ours_executor_subscribed_vs_ours_executor_paired",
        "ours + 1 subscriber (no middleware) / ours bare, paired by round",
        out.subscribed_vs_ours_paired,
    );
    report.paired(
        "ours_executor_hooked_vs_ours_executor_paired",
        "ours + 1 middleware (no subscriber) / ours bare, paired by round",
        out.hooked_vs_ours_paired,
    );
    report.paired(
        "ours_executor_vs_handrolled_paired",
        "ours (arguments as text) / hand-rolled (text), paired by round",
        out.ours_text_vs_handrolled_paired,
    );
    report.ratio(
        "rmcp_router_rebuilt_vs_raw",
        "rmcp router rebuilt / RAW",
        out.rmcp_rebuilt,
        out.raw,
    );
    if cfg!(feature = "rig") {
        report.ratios(&[
            ("rig_toolset_vs_raw", "rig tool set / RAW", out.rig, out.raw),
            (
                "rig_toolset_vs_raw_text",
                "rig tool set / RAW from text",
                out.rig,
                out.raw_text,
            ),
        ]);
        report.paired(
            "ours_executor_vs_rig_paired",
            "ours executor (#[tool]) / rig tool set, paired by round",
            out.ours_vs_rig_paired,
        );
    }
    out
}

/// A validator of `spec`'s input schema compiled as the registry compiles
/// one (JSON Schema 2020-12, formats checked), by the benchmark itself.
fn input_validator(spec: &tinyagents_tools::ToolSpec) -> jsonschema::Validator {
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .build(spec.input_schema.as_value())
        .expect("the input schema compiles")
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
    profile_calls(n, || ours_exec::plain(ours::MacroAddTool));
}

/// Runs `n` calls of "add" through the executor with one inline subscriber
/// and one middleware, for a profiler.
pub fn profile_observed(n: u64) {
    profile_calls(n, || ours_exec::observed(ours::MacroAddTool).0);
}

/// The executor loop with one inline subscriber and no middleware.
pub fn profile_subscribed(n: u64) {
    profile_calls(n, || {
        let subscriber = Arc::new(ours_exec::CountingSubscriber::default());
        ours_exec::attached(ours::MacroAddTool, Some(subscriber), None)
    });
}

/// Runs `n` calls of "add" through the executor `build` makes (on the
/// runtime, before the loop), and nothing else.
fn profile_calls(n: u64, build: impl FnOnce() -> ToolExecutor) {
    runtime().block_on(async {
        let run = RunContext::empty();
        let turn = Turn::new(1);
        let call = ToolCall::new("call-1", "add", sample_args());
        let executor = build();
        for _ in 0..n {
            black_box(executor.execute(&run, &turn, black_box(call.clone())).await);
        }
    });
}

/// The rmcp router loop alone (router built once), for comparing
/// instruction counts with [`profile_executor`] under callgrind.
pub fn profile_rmcp(n: u64) {
    runtime().block_on(async {
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
