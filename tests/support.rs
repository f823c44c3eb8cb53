//! Shared helpers for the integration tests: the fake tools most tests start
//! from (built on the testkit's `FakeTool` and `FnTool`), small constructors,
//! a concurrency gauge, a broken artifact store, a tool with a rendered
//! output, and the observers of `observers.rs` (a panicking subscriber, an
//! in-memory `tracing` capture, a middleware that records arguments, one
//! that pauses).

use std::num::NonZeroUsize;
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tinyagents_tools::artifacts::{ArtifactError, ArtifactStore};
use tinyagents_tools::call::RawArguments;
use tinyagents_tools::executor::ToolExecutorBuilder;
use tinyagents_tools::output::ArtifactRef;
use tinyagents_tools::prelude::{Deserialize, JsonSchema, Serialize};
use tinyagents_tools::spec::Jitter;
use tinyagents_tools::spec::{InjectedKind, ToolSpecBuilder};
use tinyagents_tools::*;

pub use tinyagents_tools::testkit::{
    BeforeTool, EventRecorder as Recorder, FakeTool, FnTool, Spy, ToolFuture,
};

pub mod isolated_bodies;
mod observers;

pub use observers::{LogCapture, PanickingSubscriber, Pause, SeesArguments};

/// The repository README's snippets, compiled and run as doctests: the
/// README is the repository's front page, in no published package.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// A spec builder with a description and an input schema.
pub fn spec(name: &str, schema: Value) -> ToolSpecBuilder {
    ToolSpec::builder(name, format!("The `{name}` test tool."))
        .input_schema(ToolSchema::from_value(schema))
}

/// The schema of an object with `properties`, of which `required` are
/// required (no `required` key when none is), and no other key.
pub fn closed_object(properties: Value, required: &[&str]) -> Value {
    let mut schema = json!({
        "type": "object",
        "properties": properties,
        "additionalProperties": false
    });
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    schema
}

/// A spec builder for a tool named `name` that takes no argument.
pub fn empty_input(name: &str) -> ToolSpecBuilder {
    spec(name, json!({"type": "object", "properties": {}}))
}

/// The spec of a read-only tool named `name` with the input schema `schema`.
pub fn read_only_spec(name: &str, schema: Value) -> ToolSpec {
    spec(name, schema)
        .safety(ToolSafety::pure())
        .build()
        .expect("valid spec")
}

/// The spec of a read-only tool named `name` that takes no argument.
pub fn pure_spec(name: &str) -> ToolSpec {
    empty_input(name)
        .safety(ToolSafety::pure())
        .build()
        .expect("valid spec")
}

/// A registry of the given tools.
pub fn registry(tools: Vec<Arc<dyn Tool>>) -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    for tool in tools {
        registry.register(tool).expect("a valid test tool");
    }
    registry
}

/// An executor builder over the given tools.
pub fn executor(tools: Vec<Arc<dyn Tool>>) -> ToolExecutorBuilder {
    ToolExecutor::builder(registry(tools), ())
}

/// An executor over `tools` and a [`Recorder`] of its events.
pub fn recorded(tools: Vec<Arc<dyn Tool>>) -> (Arc<Recorder>, ToolExecutor) {
    recorded_with(executor(tools))
}

/// The executor `builder` makes, with a [`Recorder`] of its events.
pub fn recorded_with(builder: ToolExecutorBuilder) -> (Arc<Recorder>, ToolExecutor) {
    let recorder = Recorder::new();
    let exec = builder
        .subscribe(recorder.clone())
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

/// Runs `calls` as one batch through `exec` in an empty run, in turn 1.
pub async fn execute_batch_once(exec: &ToolExecutor, calls: Vec<ToolCall>) -> Vec<ToolResult> {
    exec.execute_batch(&RunContext::empty(), &Turn::new(1), calls)
        .await
}

/// Calls of the tool `tool` without arguments, with the ids `c{i}` for each
/// `i` in `ids`.
pub fn calls_to(tool: &str, ids: Range<usize>) -> Vec<ToolCall> {
    ids.map(|i| call(&format!("c{i}"), tool, "{}")).collect()
}

/// Runs `call` through `exec` in `run`, in turn `turn`, on a task of its
/// own.
pub fn spawn_call(
    exec: &Arc<ToolExecutor>,
    run: &RunContext,
    turn: u32,
    call: ToolCall,
) -> tokio::task::JoinHandle<ToolResult> {
    let (exec, run) = (Arc::clone(exec), run.clone());
    tokio::spawn(async move { exec.execute(&run, &Turn::new(turn), call).await })
}

/// The first Rust block of `readme`'s section headed `heading`.
pub fn readme_block<'a>(readme: &'a str, heading: &str) -> &'a str {
    let section = &readme[readme.find(heading).expect("the section")..];
    let start = section.find("```rust\n").expect("a rust block") + "```rust\n".len();
    let block = &section[start..];
    &block[..block.find("```").expect("the block's end")]
}

/// A call with an id, a name and arguments.
pub fn call(id: &str, name: &str, arguments: impl Into<RawArguments>) -> ToolCall {
    ToolCall::new(id, name, arguments)
}

/// The events of a call that succeeded on its third attempt, as
/// [`Recorder::steps`] lists them.
pub const SUCCEEDED_ON_THE_THIRD_ATTEMPT: [(&str, u32); 4] = [
    ("tool.started", 1),
    ("tool.retrying", 1),
    ("tool.retrying", 2),
    ("tool.completed", 3),
];

/// Asserts that `text` contains each of `parts`, showing `text` when one
/// is missing.
#[track_caller]
pub fn assert_contains_all(text: &str, parts: &[&str]) {
    for part in parts {
        assert!(text.contains(part), "no {part:?} in: {text}");
    }
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
    let properties = json!({"to": {"type": "string"}});
    let spec = spec("send_email", closed_object(properties, &["to"]))
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
    let properties = json!({"page": {"type": "integer"}});
    let spec = spec(name, closed_object(properties, &[]))
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

impl Probe {
    /// Enters, sleeps 20 ms and leaves; when `exclusive`, records any other
    /// call running meanwhile.
    async fn measure(&self, exclusive: bool) {
        let before = self.current.fetch_add(1, Ordering::SeqCst);
        self.high.fetch_max(before + 1, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(20)).await;
        let during = self.current.load(Ordering::SeqCst);
        if exclusive && (before != 0 || during != 1) {
            self.overlap.store(true, Ordering::SeqCst);
        }
        self.current.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A read-only tool named `name` that enters `probe`, sleeps 20 ms, leaves
/// and answers `measured`; `sequential` and `max_concurrency` go into its
/// spec, and a sequential gauge records any other call running while it
/// does.
pub fn gauge(
    name: &str,
    probe: &Arc<Probe>,
    sequential: bool,
    max_concurrency: Option<usize>,
) -> Arc<dyn Tool> {
    let mut builder = empty_input(name).safety(ToolSafety::pure());
    if sequential {
        builder = builder.sequential();
    }
    if let Some(n) = max_concurrency {
        builder = builder.max_concurrency(NonZeroUsize::new(n).expect("not zero"));
    }
    let probe = Arc::clone(probe);
    Arc::new(FnTool::new(
        builder.build().expect("valid spec"),
        move |_, _| {
            let probe = Arc::clone(&probe);
            Box::pin(async move {
                probe.measure(sequential).await;
                Ok(ToolOutput::text("measured"))
            })
        },
    ))
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

/// A temperature reading.
#[derive(Serialize, JsonSchema)]
pub struct Reading {
    /// Degrees above absolute zero, never negative.
    #[schemars(range(min = 0))]
    pub kelvin: i64,
    /// Where.
    pub city: String,
}

/// The arguments of a tool that takes a city.
#[derive(Deserialize, JsonSchema)]
pub struct CityArgs {
    /// The city.
    pub city: String,
}

/// Today's reading in a city, with a one-line view for the model.
#[tool(read_only, idempotent)]
pub async fn rendered_reading(args: CityArgs) -> Rendered<Reading> {
    let view = format!("{}: 294 K", args.city);
    Rendered::new(
        Reading {
            kelvin: 294,
            city: args.city,
        },
        view,
    )
}
