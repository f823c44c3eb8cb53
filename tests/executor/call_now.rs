//! `Tool::call_now`: a tool that never waits answers at once, with the same
//! lifecycle (events, retries, panics, injections) as one that waits
//! (`#[tool]`'s side: `call_now_generated`).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tinyagents_tools::middleware::AfterToolCtx;
use tinyagents_tools::retry::Jitter;
use tinyagents_tools::testkit::FnTool;
use tinyagents_tools::*;
use tinyagents_tools_tests::*;

/// Answers in `call_now`, failing with a retryable error until its
/// `fail_first` calls are used up, panicking when asked to. Counts how it
/// was called.
struct Immediate {
    spec: ToolSpec,
    fail_first: usize,
    now_calls: AtomicUsize,
    async_calls: AtomicUsize,
    /// Of `now_calls`, those through `call_now_ref` (arguments borrowed).
    borrowed: AtomicUsize,
}

impl Immediate {
    fn new(name: &str, fail_first: usize) -> Arc<Self> {
        Immediate::with_attempts(name, fail_first, 3)
    }

    /// One that may make up to `attempts` attempts.
    fn with_attempts(name: &str, fail_first: usize, attempts: u32) -> Arc<Self> {
        let mut spec = spec(
            name,
            json!({
                "type": "object",
                "properties": {"n": {"type": "integer"}, "panic": {"type": "boolean"}},
                "required": ["n"],
                "additionalProperties": false
            }),
        )
        .safety(ToolSafety::pure())
        .build()
        .unwrap();
        spec.retry =
            RetryPolicy::attempts(attempts, Duration::from_millis(1)).with_jitter(Jitter::None);
        Arc::new(Immediate {
            spec,
            fail_first,
            now_calls: AtomicUsize::new(0),
            async_calls: AtomicUsize::new(0),
            borrowed: AtomicUsize::new(0),
        })
    }

    /// How many calls went through `call_now` (or `call_now_ref`), and how
    /// many through `call`.
    fn calls(&self) -> (usize, usize) {
        (
            self.now_calls.load(Ordering::SeqCst),
            self.async_calls.load(Ordering::SeqCst),
        )
    }

    /// How many calls read their arguments borrowed (`call_now_ref`).
    fn borrowed(&self) -> usize {
        self.borrowed.load(Ordering::SeqCst)
    }
}

/// Runs one call with `args` through an executor over an `Immediate` that
/// fails its first `fail_first` calls, and checks that it succeeded.
async fn answered(fail_first: usize, args: Value) -> (Arc<Immediate>, Arc<Recorder>, ToolResult) {
    let tool = Immediate::new("immediate", fail_first);
    let (recorder, exec) = recorded(vec![tool.clone()]);
    let r = execute_once(&exec, call("c1", "immediate", args)).await;
    assert!(!r.is_error, "{:?}", r.error);
    (tool, recorder, r)
}

#[async_trait]
impl Tool for Immediate {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, _: &(), _: &ToolRuntime, _: Value) -> Result<ToolOutput, ToolError> {
        self.async_calls.fetch_add(1, Ordering::SeqCst);
        Err(ToolError::fatal("call_now should have answered"))
    }

    fn never_waits(&self) -> bool {
        true
    }

    fn call_now(
        &self,
        state: &(),
        runtime: &ToolRuntime,
        args: Value,
    ) -> Result<ToolOutput, ToolError> {
        self.answer(state, runtime, &args)
    }

    fn call_now_ref(
        &self,
        state: &(),
        runtime: &ToolRuntime,
        args: &Value,
    ) -> Result<ToolOutput, ToolError> {
        self.borrowed.fetch_add(1, Ordering::SeqCst);
        self.answer(state, runtime, args)
    }
}

impl Immediate {
    fn answer(&self, _: &(), runtime: &ToolRuntime, args: &Value) -> Result<ToolOutput, ToolError> {
        let seen = self.now_calls.fetch_add(1, Ordering::SeqCst);
        if args["panic"] == json!(true) {
            panic!("the immediate tool panicked");
        }
        if seen < self.fail_first {
            return Err(ToolError::retry("not yet"));
        }
        let n = args["n"].as_i64().unwrap_or_default();
        Ok(ToolOutput::structured(json!({
            "double": n * 2,
            "call": runtime.call_id().as_str(),
            "attempt": runtime.attempt(),
        })))
    }
}

#[tokio::test]
async fn a_tool_that_claims_to_never_wait_without_call_now_fails_its_call_as_fatal() {
    let spec = spec(
        "claims",
        json!({"type": "object", "additionalProperties": false}),
    )
    .build()
    .unwrap();
    // Says it never waits but leaves `call_now` to the default.
    let claims = FnTool::new(spec, |_, _| {
        Box::pin(async { Ok(ToolOutput::text("through call")) })
    })
    .claiming_never_waits();
    let exec = executor(vec![Arc::new(claims)]).build().unwrap();
    let r = execute_once(&exec, call("c1", "claims", json!({}))).await;
    assert!(r.is_error);
    let error = r.error.as_ref().expect("an error");
    assert_eq!(error.class(), ErrorClass::Fatal);
    assert!(
        error.message().contains("tool `claims` waits"),
        "{}",
        error.message()
    );
    assert_eq!(r.tool_call_id.as_str(), "c1");
}

#[tokio::test]
async fn a_tool_that_never_waits_answers_through_call_now_with_the_usual_events() {
    let (tool, recorder, r) = answered(0, json!({"n": 21})).await;
    assert_eq!(r.tool_call_id.as_str(), "c1");
    assert_eq!(r.name, "immediate");
    assert_eq!(
        r.structured,
        Some(json!({"double": 42, "call": "c1", "attempt": 1}))
    );
    let text: Value = serde_json::from_str(&r.text()).expect("the content is the value's text");
    assert_eq!(Some(text), r.structured);
    assert_eq!(tool.calls(), (1, 0));
    assert_eq!(
        recorder.steps(),
        [("tool.started", 1), ("tool.completed", 1)]
    );
}

#[tokio::test]
async fn call_now_is_retried_like_call() {
    let (tool, recorder, r) = answered(2, json!({"n": 1})).await;
    assert_eq!(r.structured.as_ref().unwrap()["attempt"], json!(3));
    assert_eq!(tool.calls(), (3, 0));
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
async fn call_now_answers_under_middleware_too() {
    let tool = Immediate::new("immediate", 0);
    let seen = Arc::new(AtomicUsize::new(0));
    let exec = executor(vec![tool.clone()])
        .middleware(Watch(Arc::clone(&seen)))
        .build()
        .unwrap();
    let r = execute_once(&exec, call("c1", "immediate", json!({"n": 4}))).await;
    assert_eq!(r.structured.as_ref().unwrap()["double"], json!(8));
    assert_eq!(tool.calls(), (1, 0));
    assert_eq!(seen.load(Ordering::SeqCst), 1, "after_tool saw the output");
}

#[tokio::test]
async fn a_tool_that_never_waits_reads_borrowed_arguments_when_they_are_needed_after() {
    // Without hooks, a tool that is not retried takes the arguments.
    let once = Immediate::with_attempts("immediate", 0, 1);
    let exec = executor(vec![once.clone()]).build().unwrap();
    let r = execute_once(&exec, call("c1", "immediate", json!({"n": 1}))).await;
    assert!(!r.is_error, "{:?}", r.error);
    assert_eq!((once.calls(), once.borrowed()), ((1, 0), 0));

    // One that may be retried borrows them for every attempt but the last
    // it may make.
    for (fail_first, borrowed) in [(0, 1), (2, 2)] {
        let tool = Immediate::new("immediate", fail_first);
        let exec = executor(vec![tool.clone()]).build().unwrap();
        let r = execute_once(&exec, call("c1", "immediate", json!({"n": 1}))).await;
        assert!(!r.is_error, "{:?}", r.error);
        let calls = (fail_first + 1, 0);
        assert_eq!((tool.calls(), tool.borrowed()), (calls, borrowed));
    }

    // With an in-line subscriber (which may read the arguments' digest on
    // any event), every attempt borrows them, the last one too.
    let (tool, _, _) = answered(0, json!({"n": 1})).await;
    assert_eq!((tool.calls(), tool.borrowed()), ((1, 0), 1));
    let (tool, _, _) = answered(2, json!({"n": 1})).await;
    assert_eq!((tool.calls(), tool.borrowed()), ((3, 0), 3));

    // With an `after_tool` hook, every attempt borrows them, and the hook
    // reads the arguments the tool ran with.
    for (fail_first, attempts) in [(0, 1), (0, 3), (2, 3)] {
        let tool = Immediate::with_attempts("immediate", fail_first, attempts);
        let read = Arc::new(std::sync::Mutex::new(Vec::new()));
        let exec = executor(vec![tool.clone()])
            .middleware(SeesArguments(Arc::clone(&read)))
            .build()
            .unwrap();
        let r = execute_once(&exec, call("c1", "immediate", json!({"n": 5}))).await;
        assert_eq!(r.structured.as_ref().unwrap()["double"], json!(10));
        let attempts = fail_first + 1;
        assert_eq!((tool.calls(), tool.borrowed()), ((attempts, 0), attempts));
        assert_eq!(*read.lock().unwrap(), [json!({"n": 5})]);
    }
}

#[tokio::test]
async fn a_panic_in_call_now_answers_its_call_alone() {
    let tool = Immediate::new("immediate", 0);
    let exec = executor(vec![tool.clone()]).build().unwrap();
    let calls = vec![
        call("a", "immediate", json!({"n": 1})),
        call("b", "immediate", json!({"n": 2, "panic": true})),
        call("c", "immediate", json!({"n": 3})),
    ];
    let results = execute_batch_once(&exec, calls).await;
    let outcomes: Vec<(&str, &str)> = results
        .iter()
        .map(|r| (r.tool_call_id.as_str(), kind(r)))
        .collect();
    assert_eq!(outcomes, [("a", "ok"), ("b", "panicked"), ("c", "ok")]);
    assert!(!results[1].text().contains("the immediate tool panicked"));
    // A panic is never retried, though the tool may be.
    assert_eq!(tool.calls(), (3, 0));
}
