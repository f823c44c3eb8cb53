//! Shared helpers for the integration tests: hand-written tools, a recording
//! event subscriber and small constructors.

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tinyagents_tools::artifacts::{ArtifactError, ArtifactStore};
use tinyagents_tools::call::RawArguments;
use tinyagents_tools::executor::ToolExecutorBuilder;
use tinyagents_tools::output::ArtifactRef;
use tinyagents_tools::retry::Jitter;
use tinyagents_tools::spec::{InjectedKind, ToolSpecBuilder};
use tinyagents_tools::*;

pub mod isolated_bodies;

/// A spec builder with a description and an input schema.
pub fn spec(name: &str, schema: Value) -> ToolSpecBuilder {
    ToolSpec::builder(name, format!("The `{name}` test tool."))
        .input_schema(ToolSchema::from_value(schema))
}

/// A registry of the given tools.
pub fn registry(tools: Vec<Arc<dyn Tool>>) -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    for tool in tools {
        registry.register_arc(tool).expect("a valid test tool");
    }
    registry
}

/// An executor builder over the given tools.
pub fn executor(tools: Vec<Arc<dyn Tool>>) -> ToolExecutorBuilder {
    ToolExecutor::builder(registry(tools), ())
}

/// An executor over `tools` and a [`Recorder`] of its events.
pub fn recorded(tools: Vec<Arc<dyn Tool>>) -> (Arc<Recorder>, ToolExecutor) {
    let recorder = Recorder::new();
    let exec = executor(tools)
        .subscribe_arc(recorder.clone())
        .build()
        .expect("a valid test executor");
    (recorder, exec)
}

/// The `echo` tool alone, an executor over it and a [`Recorder`] of its
/// events: the setup most refusal tests start from.
pub fn recorded_echo() -> (Arc<Echo>, Arc<Recorder>, ToolExecutor) {
    let echo = Echo::new();
    let (recorder, exec) = recorded(vec![echo.clone()]);
    (echo, recorder, exec)
}

/// Runs one call through `exec` in an empty run, in turn 1.
pub async fn execute_once(exec: &ToolExecutor, call: ToolCall) -> ToolResult {
    exec.execute(&RunContext::empty(), &Turn::new(1), call)
        .await
}

/// A call with an id, a name and arguments.
pub fn call(id: &str, name: &str, arguments: impl Into<RawArguments>) -> ToolCall {
    ToolCall::new(id, name, arguments)
}

/// The error kind of a result (`ok` when it succeeded).
pub fn kind(result: &ToolResult) -> &'static str {
    result.outcome()
}

/// `echo`: read-only; repeats `text`; `limit` is bounded 1..=50; it has a
/// hidden `cancel` parameter. Counts its runs.
pub struct Echo {
    spec: ToolSpec,
    /// How many times the body ran.
    pub runs: AtomicUsize,
}

impl Echo {
    /// A new echo tool.
    pub fn new() -> Arc<Self> {
        let spec = spec(
            "echo",
            json!({
                "type": "object",
                "properties": {
                    "text": {"type": "string"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 50}
                },
                "required": ["text"],
                "additionalProperties": false
            }),
        )
        .injected("cancel", "CancellationToken", InjectedKind::Cancellation)
        .safety(ToolSafety::pure())
        .build()
        .expect("valid spec");
        Arc::new(Echo {
            spec,
            runs: AtomicUsize::new(0),
        })
    }

    /// Runs so far.
    pub fn runs(&self) -> usize {
        self.runs.load(Ordering::SeqCst)
    }
}

#[async_trait]
impl Tool for Echo {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    async fn call(&self, _: &(), _: &ToolRuntime, args: Value) -> Result<ToolOutput, ToolError> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        Ok(ToolOutput::text(args["text"].as_str().unwrap_or_default()))
    }
}

/// `send_email`: mutating, non-idempotent, requires `to`. Counts its runs.
pub struct SendEmail {
    spec: ToolSpec,
    /// How many times the body ran.
    pub runs: AtomicUsize,
}

impl SendEmail {
    /// A new tool.
    pub fn new() -> Arc<Self> {
        let spec = spec(
            "send_email",
            json!({
                "type": "object",
                "properties": {"to": {"type": "string"}},
                "required": ["to"],
                "additionalProperties": false
            }),
        )
        .build()
        .expect("valid spec");
        Arc::new(SendEmail {
            spec,
            runs: AtomicUsize::new(0),
        })
    }

    /// Runs so far.
    pub fn runs(&self) -> usize {
        self.runs.load(Ordering::SeqCst)
    }
}

#[async_trait]
impl Tool for SendEmail {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    async fn call(&self, _: &(), _: &ToolRuntime, _: Value) -> Result<ToolOutput, ToolError> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        Ok(ToolOutput::text("sent"))
    }
}

/// A tool with no required argument; read-only or mutating as asked.
pub struct NoArgs {
    spec: ToolSpec,
    /// How many times the body ran.
    pub runs: AtomicUsize,
}

impl NoArgs {
    /// A tool named `name`, read-only when `read_only`.
    pub fn new(name: &str, read_only: bool) -> Arc<Self> {
        let safety = if read_only {
            ToolSafety::pure()
        } else {
            ToolSafety::default()
        };
        let spec = spec(
            name,
            json!({
                "type": "object",
                "properties": {"page": {"type": "integer"}},
                "additionalProperties": false
            }),
        )
        .safety(safety)
        .build()
        .expect("valid spec");
        Arc::new(NoArgs {
            spec,
            runs: AtomicUsize::new(0),
        })
    }

    /// Runs so far.
    pub fn runs(&self) -> usize {
        self.runs.load(Ordering::SeqCst)
    }
}

#[async_trait]
impl Tool for NoArgs {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    async fn call(&self, _: &(), _: &ToolRuntime, _: Value) -> Result<ToolOutput, ToolError> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        Ok(ToolOutput::text("listed"))
    }
}

/// `sleeper`: sleeps `duration`; when `honours_cancel`, stops as soon as its
/// cancellation token fires (and records that it saw it).
pub struct Sleeper {
    spec: ToolSpec,
    duration: Duration,
    honours_cancel: bool,
    /// True once the call's token fired while it slept.
    pub saw_cancel: AtomicBool,
    /// How many times the body ran.
    pub runs: AtomicUsize,
}

impl Sleeper {
    /// A sleeper built from `spec`.
    pub fn new(spec: ToolSpec, duration: Duration, honours_cancel: bool) -> Arc<Self> {
        Arc::new(Sleeper {
            spec,
            duration,
            honours_cancel,
            saw_cancel: AtomicBool::new(false),
            runs: AtomicUsize::new(0),
        })
    }

    /// Runs so far.
    pub fn runs(&self) -> usize {
        self.runs.load(Ordering::SeqCst)
    }
}

#[async_trait]
impl Tool for Sleeper {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    async fn call(&self, _: &(), rt: &ToolRuntime, _: Value) -> Result<ToolOutput, ToolError> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        if !self.honours_cancel {
            tokio::time::sleep(self.duration).await;
            return Ok(ToolOutput::text("slept"));
        }
        tokio::select! {
            _ = rt.cancellation().cancelled() => {
                self.saw_cancel.store(true, Ordering::SeqCst);
                Err(ToolError::cancelled())
            }
            _ = tokio::time::sleep(self.duration) => Ok(ToolOutput::text("slept")),
        }
    }
}

/// `panicker`: always panics.
pub struct Panicker(ToolSpec);

impl Panicker {
    /// A new panicking tool.
    pub fn new() -> Arc<Self> {
        Arc::new(Panicker(
            spec("panicker", json!({"type": "object", "properties": {}}))
                .safety(ToolSafety::pure())
                .build()
                .expect("valid spec"),
        ))
    }
}

#[async_trait]
impl Tool for Panicker {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    async fn call(&self, _: &(), _: &ToolRuntime, _: Value) -> Result<ToolOutput, ToolError> {
        panic!("the panicker panicked");
    }
}

/// `flaky`: fails with `error` for its first `failures` runs, then succeeds.
pub struct Flaky {
    spec: ToolSpec,
    error: ToolError,
    failures: AtomicU32,
    /// How many times the body ran.
    pub runs: AtomicUsize,
}

impl Flaky {
    /// A flaky tool built from `spec`.
    pub fn new(spec: ToolSpec, failures: u32, error: ToolError) -> Arc<Self> {
        Arc::new(Flaky {
            spec,
            error,
            failures: AtomicU32::new(failures),
            runs: AtomicUsize::new(0),
        })
    }

    /// An idempotent `flaky` tool with up to `attempts` attempts and a 1 ms
    /// backoff, failing `failures` times with a retry-class error.
    pub fn idempotent(failures: u32, attempts: u32) -> Arc<Self> {
        let spec = spec("flaky", json!({"type": "object", "properties": {}}))
            .safety(ToolSafety::pure())
            .retry(
                RetryPolicy::attempts(attempts, Duration::from_millis(1)).with_jitter(Jitter::None),
            )
            .build()
            .expect("valid spec");
        Flaky::new(spec, failures, ToolError::retry("the backend is busy"))
    }

    /// Runs so far.
    pub fn runs(&self) -> usize {
        self.runs.load(Ordering::SeqCst)
    }
}

#[async_trait]
impl Tool for Flaky {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    async fn call(&self, _: &(), _: &ToolRuntime, _: Value) -> Result<ToolOutput, ToolError> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        let left = self.failures.load(Ordering::SeqCst);
        if left > 0 {
            self.failures.store(left - 1, Ordering::SeqCst);
            return Err(self.error.clone());
        }
        Ok(ToolOutput::text("finally"))
    }
}

/// Counts calls running at once, with a high-water mark.
#[derive(Debug, Default)]
pub struct Probe {
    current: AtomicUsize,
    high: AtomicUsize,
    /// Set when an exclusive (`sequential`) call saw another call running.
    pub overlap: AtomicBool,
}

impl Probe {
    /// The most calls seen running at once.
    pub fn high_water(&self) -> usize {
        self.high.load(Ordering::SeqCst)
    }
}

/// A tool that enters the probe, sleeps 20 ms and leaves; when `exclusive`,
/// it records any other call running while it does.
pub struct Gauge {
    spec: ToolSpec,
    probe: Arc<Probe>,
    exclusive: bool,
}

impl Gauge {
    /// A gauge named `name` sharing `probe`; `sequential` and
    /// `max_concurrency` go into its spec.
    pub fn new(
        name: &str,
        probe: Arc<Probe>,
        sequential: bool,
        max_concurrency: Option<usize>,
    ) -> Arc<Self> {
        let mut builder =
            spec(name, json!({"type": "object", "properties": {}})).safety(ToolSafety::pure());
        if sequential {
            builder = builder.sequential();
        }
        if let Some(n) = max_concurrency {
            builder = builder.max_concurrency(NonZeroUsize::new(n).expect("not zero"));
        }
        Arc::new(Gauge {
            spec: builder.build().expect("valid spec"),
            probe,
            exclusive: sequential,
        })
    }
}

#[async_trait]
impl Tool for Gauge {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    async fn call(&self, _: &(), _: &ToolRuntime, _: Value) -> Result<ToolOutput, ToolError> {
        let before = self.probe.current.fetch_add(1, Ordering::SeqCst);
        self.probe.high.fetch_max(before + 1, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(20)).await;
        let during = self.probe.current.load(Ordering::SeqCst);
        if self.exclusive && (before != 0 || during != 1) {
            self.probe.overlap.store(true, Ordering::SeqCst);
        }
        self.probe.current.fetch_sub(1, Ordering::SeqCst);
        Ok(ToolOutput::text("measured"))
    }
}

/// `big`: returns `bytes` bytes of text (or a structured value of about that
/// size when `structured`).
pub struct Big {
    spec: ToolSpec,
    bytes: usize,
    structured: bool,
}

impl Big {
    /// A new tool.
    pub fn new(bytes: usize, structured: bool) -> Arc<Self> {
        Arc::new(Big {
            spec: spec("big", json!({"type": "object", "properties": {}}))
                .safety(ToolSafety::pure())
                .build()
                .expect("valid spec"),
            bytes,
            structured,
        })
    }
}

#[async_trait]
impl Tool for Big {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    async fn call(&self, _: &(), _: &ToolRuntime, _: Value) -> Result<ToolOutput, ToolError> {
        let text = "abcdefghij".repeat(self.bytes / 10);
        Ok(if self.structured {
            ToolOutput::structured(json!({ "data": text }))
        } else {
            ToolOutput::text(text)
        })
    }
}

/// `cancel_run`: cancels its own run, then waits for its token.
pub struct CancelsRun {
    spec: ToolSpec,
    /// True once its token fired.
    pub saw_cancel: AtomicBool,
}

impl CancelsRun {
    /// A new tool.
    pub fn new() -> Arc<Self> {
        Arc::new(CancelsRun {
            spec: spec("cancel_run", json!({"type": "object", "properties": {}}))
                .build()
                .expect("valid spec"),
            saw_cancel: AtomicBool::new(false),
        })
    }
}

#[async_trait]
impl Tool for CancelsRun {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    async fn call(&self, _: &(), rt: &ToolRuntime, _: Value) -> Result<ToolOutput, ToolError> {
        rt.run().cancel();
        rt.cancellation().cancelled().await;
        self.saw_cancel.store(true, Ordering::SeqCst);
        Err(ToolError::cancelled())
    }
}

/// The testkit's in-line recorder of every event.
pub use tinyagents_tools::testkit::EventRecorder as Recorder;

/// Wraps a tool: records every argument value its body receives, then runs
/// the wrapped tool. The spec is the wrapped tool's.
pub struct Recording {
    inner: Arc<dyn Tool>,
    seen: Mutex<Vec<Value>>,
}

impl Recording {
    /// Records the calls of `inner`.
    pub fn new(inner: Arc<dyn Tool>) -> Arc<Self> {
        Arc::new(Recording {
            inner,
            seen: Mutex::new(Vec::new()),
        })
    }

    /// Every argument value the body received, in order.
    pub fn seen(&self) -> Vec<Value> {
        self.seen.lock().expect("not poisoned").clone()
    }

    /// Runs so far.
    pub fn runs(&self) -> usize {
        self.seen.lock().expect("not poisoned").len()
    }
}

#[async_trait]
impl Tool for Recording {
    fn spec(&self) -> &ToolSpec {
        self.inner.spec()
    }
    async fn call(
        &self,
        state: &(),
        rt: &ToolRuntime,
        args: Value,
    ) -> Result<ToolOutput, ToolError> {
        self.seen.lock().expect("not poisoned").push(args.clone());
        self.inner.call(state, rt, args).await
    }
}

/// `open`: read-only, with an open input schema (`{"type": "object"}`: any
/// key is accepted) and a hidden `cancel` parameter; answers with the call id
/// its runtime saw.
pub struct Open(ToolSpec);

impl Open {
    /// A new tool.
    pub fn new() -> Arc<Self> {
        Arc::new(Open(
            spec("open", json!({"type": "object"}))
                .injected("cancel", "CancellationToken", InjectedKind::Cancellation)
                .safety(ToolSafety::pure())
                .build()
                .expect("valid spec"),
        ))
    }
}

#[async_trait]
impl Tool for Open {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    async fn call(&self, _: &(), rt: &ToolRuntime, _: Value) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(rt.call_id().as_str()))
    }
}

/// An artifact store whose every write fails ("disk full").
pub struct BrokenStore;

#[async_trait]
impl ArtifactStore for BrokenStore {
    async fn put(&self, _: Vec<u8>, _: &str) -> Result<ArtifactRef, ArtifactError> {
        Err(ArtifactError::Io(std::io::Error::other("disk full")))
    }
    async fn get(&self, _: &str) -> Result<Option<Vec<u8>>, ArtifactError> {
        Ok(None)
    }
}
