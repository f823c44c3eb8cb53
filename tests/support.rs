//! Shared helpers for the integration tests: the fake tools most tests start
//! from (built on the testkit's `FakeTool`), small constructors, and the few
//! fakes the testkit has no use for (a concurrency gauge, a tool that cancels
//! its own run, a broken artifact store).

use std::num::NonZeroUsize;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tinyagents_tools::artifacts::{ArtifactError, ArtifactStore};
use tinyagents_tools::call::RawArguments;
use tinyagents_tools::executor::ToolExecutorBuilder;
use tinyagents_tools::output::ArtifactRef;
use tinyagents_tools::retry::Jitter;
use tinyagents_tools::spec::{InjectedKind, ToolSpecBuilder};
use tinyagents_tools::*;

pub use tinyagents_tools::testkit::{BeforeTool, EventRecorder as Recorder, FakeTool, Spy};

pub mod isolated_bodies;

/// A spec builder with a description and an input schema.
pub fn spec(name: &str, schema: Value) -> ToolSpecBuilder {
    ToolSpec::builder(name, format!("The `{name}` test tool."))
        .input_schema(ToolSchema::from_value(schema))
}

/// The spec of a read-only tool named `name` that takes no argument.
fn pure_spec(name: &str) -> ToolSpec {
    spec(name, json!({"type": "object", "properties": {}}))
        .safety(ToolSafety::pure())
        .build()
        .expect("valid spec")
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
pub fn recorded_echo() -> (Arc<FakeTool>, Arc<Recorder>, ToolExecutor) {
    let echo = echo();
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
/// hidden `cancel` parameter.
pub fn echo() -> Arc<FakeTool> {
    echo_fake().shared()
}

/// The `echo` fake before it is shared, for a test that sets it up further.
pub fn echo_fake() -> FakeTool {
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
    FakeTool::new(spec)
        .answering_with(|_, args| Ok(ToolOutput::text(args["text"].as_str().unwrap_or_default())))
}

/// `send_email`: mutating, non-idempotent, requires `to`; answers `sent`.
pub fn send_email() -> Arc<FakeTool> {
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
    FakeTool::new(spec)
        .answering(ToolOutput::text("sent"))
        .shared()
}

/// A tool named `name` with no required argument (an optional `page`),
/// read-only or mutating as asked; answers `listed`.
pub fn no_args(name: &str, read_only: bool) -> Arc<FakeTool> {
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
    FakeTool::new(spec)
        .answering(ToolOutput::text("listed"))
        .shared()
}

/// A tool built from `spec` that sleeps `duration` and answers `slept`; when
/// `heeds_cancel`, the call's cancellation ends the sleep with a `cancelled`
/// error.
pub fn sleeper(spec: ToolSpec, duration: Duration, heeds_cancel: bool) -> Arc<FakeTool> {
    let fake = FakeTool::new(spec).answering(ToolOutput::text("slept"));
    let fake = if heeds_cancel {
        fake.waiting(duration)
    } else {
        fake.waiting_deaf(duration)
    };
    fake.shared()
}

/// `panicker`: always panics.
pub fn panicker() -> Arc<FakeTool> {
    FakeTool::new(pure_spec("panicker"))
        .answering_with(|_, _| panic!("the panicker panicked"))
        .shared()
}

/// A tool built from `spec` that fails with `error` for its first
/// `failures` runs, then answers `finally`.
pub fn flaky(spec: ToolSpec, failures: u32, error: ToolError) -> Arc<FakeTool> {
    FakeTool::new(spec)
        .failing_first(failures, error)
        .answering(ToolOutput::text("finally"))
        .shared()
}

/// An idempotent `flaky` tool with up to `attempts` attempts and a 1 ms
/// backoff, failing `failures` times with a retry-class error.
pub fn flaky_idempotent(failures: u32, attempts: u32) -> Arc<FakeTool> {
    let spec = spec("flaky", json!({"type": "object", "properties": {}}))
        .safety(ToolSafety::pure())
        .retry(RetryPolicy::attempts(attempts, Duration::from_millis(1)).with_jitter(Jitter::None))
        .build()
        .expect("valid spec");
    flaky(spec, failures, ToolError::retry("the backend is busy"))
}

/// `big`: answers `bytes` bytes of text (or a structured value of about that
/// size when `structured`).
pub fn big(bytes: usize, structured: bool) -> Arc<FakeTool> {
    let text = "abcdefghij".repeat(bytes / 10);
    let output = if structured {
        ToolOutput::structured(json!({ "data": text }))
    } else {
        ToolOutput::text(text)
    };
    FakeTool::new(pure_spec("big")).answering(output).shared()
}

/// `open`: read-only, with an open input schema (`{"type": "object"}`: any
/// key is accepted) and a hidden `cancel` parameter; answers with the call id
/// its runtime saw.
pub fn open() -> Arc<FakeTool> {
    let spec = spec("open", json!({"type": "object"}))
        .injected("cancel", "CancellationToken", InjectedKind::Cancellation)
        .safety(ToolSafety::pure())
        .build()
        .expect("valid spec");
    FakeTool::new(spec)
        .answering_with(|id, _| Ok(ToolOutput::text(id.as_str())))
        .shared()
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

/// Runs one call through `exec` in `run`, in turn 1.
pub async fn execute_in<S, C>(
    exec: &ToolExecutor<S, C>,
    run: &RunContext<C>,
    call: ToolCall,
) -> ToolResult
where
    S: Send + Sync + 'static,
    C: Send + Sync + 'static,
{
    exec.execute(run, &Turn::new(1), call).await
}
