//! [`FakeTool`]: a tool whose answers a test scripts, and [`Spy`]: any tool
//! with the arguments of every call it ran kept. Both let a test check what
//! reached a tool's body, and how often.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;

use crate::error::ToolError;
use crate::ids::ToolCallId;
use crate::output::ToolOutput;
use crate::runtime::ToolRuntime;
use crate::spec::ToolSpec;
use crate::tool::CallResult;
use crate::tool::Shared;
use crate::tool::{InlineCall, InlineRuntime, Tool};

/// What a [`FakeTool`] answers, from the call's id and arguments.
type Answer = Box<dyn Fn(&ToolCallId, &Value) -> CallResult + Send + Sync>;

/// How a [`FakeTool`] waits before it answers.
#[derive(Debug, Clone, Copy)]
enum Wait {
    None,
    /// Until the time is up or the call is cancelled, whichever comes first.
    Cooperative(Duration),
    /// The whole time, whatever the call's cancellation says.
    Deaf(Duration),
}

/// How many calls reached a body, and (unless told to forget them) their
/// arguments, in order.
#[derive(Debug, Default)]
struct Seen {
    runs: AtomicUsize,
    forget: bool,
    arguments: Mutex<Vec<Value>>,
}

impl Seen {
    fn lock(&self) -> MutexGuard<'_, Vec<Value>> {
        // A push either happened or not: a poisoned list is still whole.
        self.arguments
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn record(&self, arguments: &Value) {
        self.runs.fetch_add(1, Ordering::SeqCst);
        if !self.forget {
            self.lock().push(arguments.clone());
        }
    }

    fn runs(&self) -> usize {
        self.runs.load(Ordering::SeqCst)
    }
}

/// A tool whose answers the test scripts: by default it answers every call
/// with the text `ok`; it can answer from the call's arguments, fail its
/// first calls, wait (heeding cancellation or not) and panic. It keeps the
/// arguments of every call that reached it ([`seen`](FakeTool::seen)).
///
/// It implements [`Tool`] for any state and run context, so it registers
/// beside `#[tool]` tools in any registry.
///
/// ```
/// use serde_json::json;
/// use tinyagents_tools::prelude::*;
/// use tinyagents_tools::testkit::{FakeTool, ToolHarness};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let spec = ToolSpec::builder("lookup", "Look a word up.").build().unwrap();
/// let fake = FakeTool::new(spec)
///     .failing_first(1, ToolError::fatal("the index is offline"))
///     .answering(ToolOutput::text("found"));
/// let harness = ToolHarness::builder(fake).build().unwrap();
/// assert_eq!(harness.call_err(json!({})).await.message(), "the index is offline");
/// assert_eq!(harness.call_ok(json!({})).await.text(), "found");
/// # });
/// ```
pub struct FakeTool {
    spec: ToolSpec,
    answer: Answer,
    failure: Option<ToolError>,
    failures_left: AtomicU32,
    wait: Wait,
    seen: Seen,
    saw_cancel: AtomicBool,
}

impl FakeTool {
    /// A fake with `spec` that answers every call with the text `ok`.
    pub fn new(spec: ToolSpec) -> Self {
        FakeTool {
            spec,
            answer: Box::new(|_, _| Ok(ToolOutput::text("ok"))),
            failure: None,
            failures_left: AtomicU32::new(0),
            wait: Wait::None,
            seen: Seen::default(),
            saw_cancel: AtomicBool::new(false),
        }
    }

    /// Answers every call with a copy of `output`.
    pub fn answering(self, output: ToolOutput) -> Self {
        self.answering_with(move |_, _| Ok(output.clone()))
    }

    /// Answers with what `answer` makes of the call's id and arguments (a
    /// panic in it is the tool's panic).
    pub fn answering_with(
        mut self,
        answer: impl Fn(&ToolCallId, &Value) -> CallResult + Send + Sync + 'static,
    ) -> Self {
        self.answer = Box::new(answer);
        self
    }

    /// Fails its first `calls` calls with `error`, then answers.
    pub fn failing_first(mut self, calls: u32, error: ToolError) -> Self {
        self.failure = Some(error);
        self.failures_left = AtomicU32::new(calls);
        self
    }

    /// Waits `duration` before it answers; the call's cancellation ends the
    /// wait at once, with a `cancelled` error.
    pub fn waiting(mut self, duration: Duration) -> Self {
        self.wait = Wait::Cooperative(duration);
        self
    }

    /// Waits `duration` before it answers, deaf to cancellation: a tool
    /// that does not cooperate, for testing what the executor does then.
    pub fn waiting_deaf(mut self, duration: Duration) -> Self {
        self.wait = Wait::Deaf(duration);
        self
    }

    /// Keeps no arguments, only the count of calls: for load tests, where
    /// a list of every call's arguments would grow without bound.
    pub fn forgetting_arguments(mut self) -> Self {
        self.seen.forget = true;
        self
    }

    /// The fake behind an [`Arc`], as a test keeps it while a registry runs
    /// it.
    pub fn shared(self) -> Arc<Self> {
        Arc::new(self)
    }

    /// The fake's spec (as [`Tool::spec`] gives it, whatever the state and
    /// context types).
    pub fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    /// How many calls reached the body (failed and cancelled ones too).
    pub fn runs(&self) -> usize {
        self.seen.runs()
    }

    /// The arguments of every call that reached the body, in order (none
    /// after [`forgetting_arguments`](FakeTool::forgetting_arguments)).
    pub fn seen(&self) -> Vec<Value> {
        self.seen.lock().clone()
    }

    /// Whether a call's cancellation ended a [`waiting`](FakeTool::waiting)
    /// wait.
    pub fn saw_cancel(&self) -> bool {
        self.saw_cancel.load(Ordering::SeqCst)
    }
}

impl std::fmt::Debug for FakeTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeTool")
            .field("name", &self.spec.name)
            .field("runs", &self.runs())
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl<S: Shared, C: Shared> Tool<S, C> for FakeTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, _: &S, runtime: &ToolRuntime<C>, arguments: Value) -> CallResult {
        self.seen.record(&arguments);
        match self.wait {
            Wait::None => {}
            Wait::Deaf(duration) => tokio::time::sleep(duration).await,
            Wait::Cooperative(duration) => {
                tokio::select! {
                    _ = runtime.cancellation().cancelled() => {
                        self.saw_cancel.store(true, Ordering::SeqCst);
                        return Err(ToolError::cancelled());
                    }
                    _ = tokio::time::sleep(duration) => {}
                }
            }
        }
        let failing = self
            .failures_left
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok();
        match &self.failure {
            Some(error) if failing => Err(error.clone()),
            _ => (self.answer)(runtime.call_id(), &arguments),
        }
    }
}

/// Any tool, with the arguments of every call it ran kept: the spec and the
/// answers are the wrapped tool's.
///
/// ```
/// use serde_json::json;
/// use tinyagents_tools::prelude::*;
/// use tinyagents_tools::testkit::{FnTool, Spy, ToolHarness};
/// use tinyagents_tools::ToolSchema;
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let spec = ToolSpec::builder("echo", "Say the text back.")
///     .input_schema(ToolSchema::from_value(json!({
///         "type": "object",
///         "properties": {"text": {"type": "string"}},
///         "required": ["text"]
///     })))
///     .build()
///     .unwrap();
/// let echo = FnTool::new(spec, |_, args| {
///     Box::pin(async move { Ok(ToolOutput::text(args["text"].as_str().unwrap_or_default())) })
/// });
/// let spy = Spy::new(echo);
/// let harness = ToolHarness::builder(spy.clone()).build().unwrap();
/// harness.call_ok(json!({"text": "hi"})).await;
/// assert_eq!(spy.seen(), [json!({"text": "hi"})]);
/// # });
/// ```
pub struct Spy<T> {
    inner: T,
    seen: Seen,
}

impl<T> Spy<T> {
    /// Keeps the arguments of every call `inner` runs.
    pub fn new(inner: T) -> Arc<Self> {
        Arc::new(Spy {
            inner,
            seen: Seen::default(),
        })
    }

    /// How many calls reached the wrapped tool.
    pub fn runs(&self) -> usize {
        self.seen.runs()
    }

    /// The arguments of every call that reached the wrapped tool, in order.
    pub fn seen(&self) -> Vec<Value> {
        self.seen.lock().clone()
    }
}

#[async_trait]
impl<S, C, T> Tool<S, C> for Spy<T>
where
    S: Shared,
    C: Shared,
    T: Tool<S, C>,
{
    fn spec(&self) -> &ToolSpec {
        self.inner.spec()
    }

    async fn call(&self, state: &S, runtime: &ToolRuntime<C>, arguments: Value) -> CallResult {
        self.seen.record(&arguments);
        self.inner.call(state, runtime, arguments).await
    }

    /// A spied tool that answers at once is still run without a future
    /// (and its calls are still recorded).
    fn __inline(&self) -> Option<&dyn InlineCall<S, C>> {
        self.inner.__inline().map(|_| self as &dyn InlineCall<S, C>)
    }
}

impl<S, C, T> InlineCall<S, C> for Spy<T>
where
    S: Shared,
    C: Shared,
    T: Tool<S, C>,
{
    fn call_inline(
        &self,
        state: &S,
        runtime: &InlineRuntime<'_, C>,
        arguments: &Value,
    ) -> CallResult {
        self.seen.record(arguments);
        match self.inner.__inline() {
            Some(inner) => inner.call_inline(state, runtime, arguments),
            // Never asked: `__inline` offers this path only when the
            // wrapped tool has it.
            None => Err(ToolError::fatal("the spied tool answers through `call`")),
        }
    }
}
