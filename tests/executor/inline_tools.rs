//! Tools made by `#[tool]` on a plain (not `async`) fn: the executor answers
//! their calls at once, without a future, with the same lifecycle (events,
//! retries, middleware, panics, injections) as a tool that waits
//! (`#[tool]`'s side: `generated_inline`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tinyagents_tools::hash::canonical_hash;
use tinyagents_tools::middleware::AfterToolCtx;
use tinyagents_tools::*;
use tinyagents_tools_tests::*;

/// What the `immediate` tools of one test share through its run: how many
/// of their first calls fail with a retryable error, and how many calls
/// they answered.
struct Counts {
    fail_first: usize,
    calls: AtomicUsize,
}

impl Counts {
    /// How many calls the tools answered.
    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

/// A run whose `immediate` tools fail their first `fail_first` calls, and
/// what they count in it.
fn counting_run(fail_first: usize) -> (Arc<Counts>, RunContext) {
    let counts = Arc::new(Counts {
        fail_first,
        calls: AtomicUsize::new(0),
    });
    let run = RunContext::builder(())
        .store_arc(Arc::clone(&counts))
        .build();
    (counts, run)
}

/// The body of both `immediate` tools: fails with a retryable error until
/// the run's `fail_first` calls are used up, panics when asked to, and
/// otherwise answers with `n` doubled, the call id and the attempt.
fn double(
    counts: &Counts,
    runtime: &ToolRuntime,
    n: i64,
    panic: Option<bool>,
) -> Result<Value, ToolError> {
    let seen = counts.calls.fetch_add(1, Ordering::SeqCst);
    if panic == Some(true) {
        panic!("the immediate tool panicked");
    }
    if seen < counts.fail_first {
        return Err(ToolError::retry("not yet"));
    }
    Ok(json!({
        "double": n * 2,
        "call": runtime.call_id().as_str(),
        "attempt": runtime.attempt(),
    }))
}

/// Doubles `n` at once; up to three attempts.
#[tool(read_only, idempotent, local, retry(max_attempts = 3, backoff = "1ms"))]
fn immediate(
    /// A number.
    n: i64,
    /// Panic instead of answering.
    panic: Option<bool>,
    #[inject] counts: Store<Counts>,
    #[inject] runtime: ToolRuntime,
) -> Result<Value, ToolError> {
    double(&counts, &runtime, n, panic)
}

/// Doubles `n` at once; never retried. It takes the arguments of
/// `immediate` (the struct `#[tool]` generated for them).
#[tool(read_only, idempotent, local)]
fn immediate_once(
    args: ImmediateArgs,
    #[inject] counts: Store<Counts>,
    #[inject] runtime: ToolRuntime,
) -> Result<Value, ToolError> {
    double(&counts, &runtime, args.n, args.panic)
}

/// Runs one call of `immediate` with `args` through an executor with a
/// recorder, in a run where it fails its first `fail_first` calls, and
/// checks that it succeeded.
async fn answered(fail_first: usize, args: Value) -> (Arc<Counts>, Arc<Recorder>, ToolResult) {
    let (counts, run) = counting_run(fail_first);
    let (recorder, exec) = recorded(vec![Arc::new(ImmediateTool)]);
    let r = execute_in(&exec, &run, call("c1", "immediate", args)).await;
    assert!(!r.is_error, "{:?}", r.error);
    (counts, recorder, r)
}

#[tokio::test]
async fn a_plain_fn_tool_answers_at_once_with_the_usual_events() {
    // The executor's way to answer without a future.
    assert!(Tool::<(), ()>::__inline(&ImmediateTool).is_some());
    assert!(Tool::<(), ()>::__inline(&ImmediateOnceTool).is_some());

    let (counts, recorder, r) = answered(0, json!({"n": 21})).await;
    assert_eq!(r.tool_call_id.as_str(), "c1");
    assert_eq!(r.name, "immediate");
    assert_eq!(
        r.structured,
        Some(json!({"double": 42, "call": "c1", "attempt": 1}))
    );
    let text: Value = serde_json::from_str(&r.text()).expect("the content is the value's text");
    assert_eq!(Some(text), r.structured);
    assert_eq!(counts.calls(), 1);
    assert_eq!(
        recorder.steps(),
        [("tool.started", 1), ("tool.completed", 1)]
    );
}

#[tokio::test]
async fn a_plain_fn_tool_is_retried_like_an_async_one() {
    let (counts, recorder, r) = answered(2, json!({"n": 1})).await;
    assert_eq!(r.structured.as_ref().unwrap()["attempt"], json!(3));
    assert_eq!(counts.calls(), 3);
    assert_eq!(recorder.steps(), SUCCEEDED_ON_THE_THIRD_ATTEMPT);
}

/// Lets every call through, and sees the output afterwards.
struct Watch(Arc<AtomicUsize>);

#[async_trait]
impl Middleware for Watch {
    fn name(&self) -> &str {
        "watch"
    }

    async fn after_tool(&self, ctx: &mut AfterToolCtx<'_>) {
        if ctx.outcome().is_ok() {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
}

#[tokio::test]
async fn a_plain_fn_tool_answers_under_middleware_too() {
    let (counts, run) = counting_run(0);
    let seen = Arc::new(AtomicUsize::new(0));
    let exec = executor(vec![Arc::new(ImmediateTool)])
        .middleware(Watch(Arc::clone(&seen)))
        .build()
        .unwrap();
    let r = execute_in(&exec, &run, call("c1", "immediate", json!({"n": 4}))).await;
    assert_eq!(r.structured.as_ref().unwrap()["double"], json!(8));
    assert_eq!(counts.calls(), 1);
    assert_eq!(seen.load(Ordering::SeqCst), 1, "after_tool saw the output");
}

#[tokio::test]
async fn the_arguments_a_plain_fn_tool_ran_with_are_there_after_it_answered() {
    // Without hooks, a tool that is not retried, and one that is.
    for (tool, fail_first) in [("immediate_once", 0), ("immediate", 0), ("immediate", 2)] {
        let (counts, run) = counting_run(fail_first);
        let exec = executor(vec![Arc::new(ImmediateTool), Arc::new(ImmediateOnceTool)])
            .build()
            .unwrap();
        let r = execute_in(&exec, &run, call("c1", tool, json!({"n": 1}))).await;
        assert!(!r.is_error, "{tool}: {:?}", r.error);
        assert_eq!(counts.calls(), fail_first + 1, "{tool}");
    }

    // An in-line subscriber may read the arguments' digest on any event,
    // the call's last one too: it is the digest of the arguments the tool
    // ran with.
    let args = json!({"n": 1});
    for fail_first in [0, 2] {
        let (counts, recorder, _) = answered(fail_first, args.clone()).await;
        assert_eq!(counts.calls(), fail_first + 1);
        let events = recorder.events();
        assert_eq!(events.len(), fail_first + 2, "{events:?}");
        for event in &events {
            assert_eq!(
                event.args_hash.as_deref(),
                Some(canonical_hash(&args).as_str()),
                "{event:?}"
            );
        }
    }

    // An `after_tool` hook reads the arguments the tool ran with, after
    // every attempt it made.
    for (tool, fail_first) in [("immediate_once", 0), ("immediate", 0), ("immediate", 2)] {
        let (counts, run) = counting_run(fail_first);
        let read = Arc::new(Mutex::new(Vec::new()));
        let exec = executor(vec![Arc::new(ImmediateTool), Arc::new(ImmediateOnceTool)])
            .middleware(SeesArguments(Arc::clone(&read)))
            .build()
            .unwrap();
        let r = execute_in(&exec, &run, call("c1", tool, json!({"n": 5}))).await;
        assert_eq!(
            r.structured.as_ref().unwrap()["double"],
            json!(10),
            "{tool}"
        );
        assert_eq!(counts.calls(), fail_first + 1, "{tool}");
        assert_eq!(*read.lock().unwrap(), [json!({"n": 5})], "{tool}");
    }
}

#[tokio::test]
async fn a_panic_in_a_plain_fn_tool_answers_its_call_alone() {
    let (counts, run) = counting_run(0);
    let exec = executor(vec![Arc::new(ImmediateTool)]).build().unwrap();
    let calls = vec![
        call("a", "immediate", json!({"n": 1})),
        call("b", "immediate", json!({"n": 2, "panic": true})),
        call("c", "immediate", json!({"n": 3})),
    ];
    let results = exec.execute_batch(&run, &Turn::new(1), calls).await;
    let outcomes: Vec<(&str, &str)> = results
        .iter()
        .map(|r| (r.tool_call_id.as_str(), kind(r)))
        .collect();
    assert_eq!(outcomes, [("a", "ok"), ("b", "panicked"), ("c", "ok")]);
    assert!(!results[1].text().contains("the immediate tool panicked"));
    // A panic is never retried, though the tool may be.
    assert_eq!(counts.calls(), 3);
}
