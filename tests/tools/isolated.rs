//! Isolated tools: each OS limit stops a real runaway in a worker process,
//! the call gets a classified error with its id, and the agent goes on.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tinyagents_tools::events::EventKind;
use tinyagents_tools::isolated::{IsolatedTool, WorkerPool};
use tinyagents_tools::runtime::Secrets;
use tinyagents_tools::spec::{InjectedKind, ToolSpecBuilder};
use tinyagents_tools::*;
use tinyagents_tools_tests::isolated_bodies::*;
use tinyagents_tools_tests::*;

use crate::common::exhausted;

const WORKER: &str = env!("CARGO_BIN_EXE_isolated-worker");
const MIB: u64 = 1 << 20;

fn pool(size: usize) -> WorkerPool {
    WorkerPool::with_program(WORKER, size)
}

fn isolated(
    name: &str,
    pool: &WorkerPool,
    bounds: impl FnOnce(ToolSpecBuilder) -> ToolSpecBuilder,
) -> Arc<dyn Tool> {
    let spec = bounds(spec(name, json!({"type": "object"})))
        .build()
        .expect("a valid spec");
    Arc::new(IsolatedTool::new(spec).with_pool(pool.clone()))
}

/// An executor over `tools`.
fn build(tools: Vec<Arc<dyn Tool>>) -> ToolExecutor {
    executor(tools).build().unwrap()
}

/// A pool of `size` workers and an executor over the tool `in_pool` makes
/// and an `isolated_echo` bounded by `bounds`, both in that pool.
fn beside_echo<T: Tool + 'static>(
    size: usize,
    in_pool: impl FnOnce(WorkerPool) -> T,
    bounds: impl FnOnce(ToolSpecBuilder) -> ToolSpecBuilder,
) -> (WorkerPool, ToolExecutor) {
    let pool = pool(size);
    let tool: Arc<dyn Tool> = Arc::new(in_pool(pool.clone()));
    let exec = build(vec![tool, isolated("isolated_echo", &pool, bounds)]);
    (pool, exec)
}

/// Waits up to five seconds for `done` to hold (it may still not).
async fn wait_until(done: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !done() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// What `isolated_injected` answers call `id` with in a run holding the
/// secret `key`.
async fn injected(exec: &ToolExecutor, key: &str, id: &str) -> Option<serde_json::Value> {
    let mut secrets = Secrets::new();
    secrets.insert(key.to_owned());
    let run = RunContext::builder(()).secrets(secrets).build();
    let result = execute_in(exec, &run, call(id, "isolated_injected", "{}")).await;
    result.structured.clone()
}

fn capped_memory(b: ToolSpecBuilder) -> ToolSpecBuilder {
    b.max_memory(256 * MIB)
}

async fn run(exec: &ToolExecutor, id: &str, name: &str) -> ToolResult {
    execute_once(exec, call(id, name, "{}")).await
}

fn pid(result: &ToolResult) -> u64 {
    assert!(!result.is_error, "{:?}", result.error);
    result.structured.as_ref().unwrap()["pid"].as_u64().unwrap()
}

/// Calls `isolated_echo` (as `c0`), then the tool `name` (as `c1`): the
/// pid of the worker that answered the echo, and the tool's result.
async fn echo_then(exec: &ToolExecutor, name: &str) -> (u64, ToolResult) {
    let worker = pid(&run(exec, "c0", "isolated_echo").await);
    (worker, run(exec, "c1", name).await)
}

#[tokio::test]
async fn an_isolated_tool_answers_from_a_worker_that_serves_the_next_call_too() {
    let pool = pool(1);
    let exec = build(vec![isolated("isolated_echo", &pool, |b| b)]);
    let first = execute_once(&exec, call("c1", "isolated_echo", r#"{"x":1}"#)).await;
    assert_eq!(
        first.structured.as_ref().unwrap()["arguments"],
        json!({"x": 1})
    );
    assert_ne!(pid(&first), u64::from(std::process::id()));
    let second = run(&exec, "c2", "isolated_echo").await;
    assert_eq!(pid(&first), pid(&second));
    assert_eq!(pool.stats().spawned, 1);
}

#[tokio::test]
async fn allocating_4_gib_under_a_256_mib_cap_is_resource_exhausted_and_the_next_call_is_answered()
{
    let (pool, exec) = beside_echo(1, IsolatedAllocTool::in_pool, capped_memory);
    let (before, result) = echo_then(&exec, "isolated_alloc").await;
    assert_eq!(result.tool_call_id.as_str(), "c1");
    assert_eq!(result.outcome(), "resource_exhausted", "{:?}", result.error);
    let error = exhausted(&result, "memory");
    assert_eq!(error.class(), ErrorClass::Repair);
    assert!(result.text().contains("256 MiB"), "{}", result.text());

    // The replacement starts in the background, before any call needs it.
    wait_until(|| pool.stats().idle > 0).await;
    assert_eq!(pool.stats().idle, 1);
    let after = pid(&run(&exec, "c2", "isolated_echo").await);
    assert_ne!(before, after, "the dead worker was replaced");
    let stats = pool.stats();
    assert_eq!((stats.spawned, stats.died), (2, 1));
}

#[tokio::test]
async fn an_endless_loop_under_a_one_second_cpu_cap_is_stopped_by_the_os() {
    let (_pool, exec) = beside_echo(1, IsolatedSpinTool::in_pool, |b| {
        b.max_cpu(Duration::from_secs(1))
    });
    let started = Instant::now();
    let result = run(&exec, "spin-1", "isolated_spin").await;
    assert_eq!(result.tool_call_id.as_str(), "spin-1");
    exhausted(&result, "cpu");
    assert!(started.elapsed() < Duration::from_secs(30));
    assert!(!run(&exec, "c2", "isolated_echo").await.is_error);
}

#[tokio::test]
async fn an_abort_is_a_crash_and_the_other_calls_of_the_batch_are_answered() {
    let (_pool, exec) = beside_echo(2, IsolatedAbortTool::in_pool, |b| b);
    let results = exec
        .execute_batch(
            &RunContext::empty(),
            &Turn::new(1),
            vec![
                call("a", "isolated_echo", "{}"),
                call("b", "isolated_abort", "{}"),
                call("c", "isolated_echo", "{}"),
            ],
        )
        .await;
    let ids: Vec<_> = results.iter().map(|r| r.tool_call_id.as_str()).collect();
    assert_eq!(ids, ["a", "b", "c"]);
    assert_eq!(results[1].outcome(), "crashed");
    assert_eq!(
        results[1].error.as_ref().unwrap().class(),
        ErrorClass::Fatal
    );
    assert!(!results[0].is_error && !results[2].is_error);
    assert!(!run(&exec, "d", "isolated_echo").await.is_error);
}

#[tokio::test]
async fn a_panic_in_the_worker_is_a_panicked_error_and_the_worker_lives_on() {
    let (_pool, exec) = beside_echo(1, IsolatedPanicTool::in_pool, |b| b);
    let (before, result) = echo_then(&exec, "isolated_panic").await;
    assert_eq!(result.outcome(), "panicked");
    assert!(!result.text().contains("a bug in the tool"));
    assert_eq!(pid(&run(&exec, "c2", "isolated_echo").await), before);
}

#[test]
fn a_panic_message_in_the_worker_never_reaches_its_stderr() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(WORKER)
        .env(isolated::WORKER_ENV, "1")
        .env("RUST_BACKTRACE", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the worker starts");
    let request = json!({"tool": "isolated_panic", "call_id": "c1", "arguments": {}});
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{request}").unwrap();
    drop(stdin);
    let out = child.wait_with_output().expect("the worker exits");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stdout.contains("panicked"),
        "the call is answered: {stdout}"
    );
    assert!(
        !stderr.contains("a bug in the tool") && !stderr.contains("panicked at"),
        "the panic stays out of stderr: {stderr}"
    );
}

/// Whether process `pid` is gone or a zombie (dead, not yet reaped).
#[cfg(target_os = "linux")]
fn is_dead(pid: u64) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_timeout_kills_the_worker_blocked_in_its_call() {
    let (pool, exec) = beside_echo(1, IsolatedSleepTool::in_pool, |b| b);
    let (worker, result) = echo_then(&exec, "isolated_sleep").await;
    assert_eq!(result.outcome(), "timeout");
    wait_until(|| is_dead(worker)).await;
    assert!(is_dead(worker), "worker {worker} still runs");
    assert_eq!(pool.stats().killed, 1);
    assert_ne!(pid(&run(&exec, "c2", "isolated_echo").await), worker);
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn an_idle_worker_killed_from_outside_is_not_handed_the_next_call() {
    let pool = pool(1);
    let exec = build(vec![isolated("isolated_echo", &pool, |b| b)]);
    let worker = pid(&run(&exec, "c1", "isolated_echo").await);
    std::process::Command::new("kill")
        .args(["-9", &worker.to_string()])
        .status()
        .unwrap();
    wait_until(|| is_dead(worker)).await;
    let next = run(&exec, "c2", "isolated_echo").await;
    assert_ne!(pid(&next), worker);
    assert_eq!(pool.stats().died, 0);
}

#[tokio::test]
async fn hidden_ids_and_secrets_cross_into_the_worker() {
    let pool = pool(1);
    let exec = build(vec![Arc::new(IsolatedInjectedTool::in_pool(pool))]);
    assert_eq!(
        injected(&exec, "hunter22", "call-7").await,
        Some(json!({"injected_id": "call-7", "key_len": 8}))
    );
}

#[tokio::test]
async fn text_the_tool_prints_to_stdout_does_not_disturb_its_answer() {
    let pool = pool(1);
    let exec = build(vec![Arc::new(IsolatedNoisyTool::in_pool(pool))]);
    for id in ["c1", "c2"] {
        assert_eq!(run(&exec, id, "isolated_noisy").await.text(), "answered");
    }
}

#[tokio::test]
async fn a_tool_error_crosses_with_its_class_and_message() {
    let pool = pool(1);
    let exec = build(vec![Arc::new(IsolatedTypedTool::in_pool(pool))]);
    let ok = execute_once(&exec, call("c1", "isolated_typed", r#"{"n":21}"#)).await;
    assert_eq!(ok.structured, Some(json!(42)));
    let bad = run(&exec, "c2", "isolated_typed").await;
    assert_eq!(bad.error.as_ref().unwrap().class(), ErrorClass::Repair);
    assert_eq!(bad.text(), "`n` must be a number");
}

#[tokio::test]
async fn a_program_that_is_not_a_worker_is_refused_with_a_fatal_error() {
    let pool = WorkerPool::with_program("/bin/true", 1);
    let exec = build(vec![isolated("isolated_echo", &pool, |b| b)]);
    let result = run(&exec, "c1", "isolated_echo").await;
    assert_eq!(result.error.as_ref().unwrap().class(), ErrorClass::Fatal);
    assert!(
        result.text().contains("serve_if_worker"),
        "{}",
        result.text()
    );
}

#[tokio::test]
async fn a_tool_the_worker_does_not_know_is_a_fatal_error_and_the_worker_lives_on() {
    let pool = pool(1);
    let exec = build(vec![
        isolated("isolated_missing", &pool, |b| b),
        isolated("isolated_echo", &pool, |b| b),
    ]);
    let missing = run(&exec, "c1", "isolated_missing").await;
    assert_eq!(missing.error.as_ref().unwrap().class(), ErrorClass::Fatal);
    assert!(!run(&exec, "c2", "isolated_echo").await.is_error);
    assert_eq!(pool.stats().spawned, 1);
}

#[tokio::test]
async fn the_started_event_shows_the_bounds() {
    let pool = pool(1);
    let (recorder, exec) = recorded(vec![isolated("isolated_echo", &pool, |b| {
        b.max_memory(256 * MIB).max_cpu(Duration::from_secs(2))
    })]);
    run(&exec, "c1", "isolated_echo").await;
    let started = recorder
        .events()
        .into_iter()
        .find(|e| e.kind == EventKind::Started)
        .unwrap();
    let bounds = started.bounds.unwrap();
    assert_eq!(
        (bounds.max_memory, bounds.max_cpu_ms),
        (Some(256 * MIB), Some(2000))
    );
    let event = serde_json::to_value(&started).unwrap();
    assert_eq!(
        event["bounds"],
        json!({"max_memory": 268435456, "max_cpu_ms": 2000, "fuel": null})
    );
}

#[tokio::test]
async fn a_hand_built_isolated_tool_sends_the_hidden_values_it_names() {
    let pool = pool(1);
    let spec = spec("isolated_injected", json!({"type": "object"}))
        .injected("id", "ToolCallId", InjectedKind::ToolCallId)
        .injected("key", "Secret<String>", InjectedKind::Secret)
        .build()
        .unwrap();
    let tool = IsolatedTool::new(spec)
        .with_pool(pool)
        .inject::<ToolCallId>("id")
        .inject::<Secret<String>>("key");
    let exec = build(vec![Arc::new(tool)]);
    assert_eq!(
        injected(&exec, "hunter2", "call-8").await,
        Some(json!({"injected_id": "call-8", "key_len": 7}))
    );
}

#[test]
fn the_attribute_puts_its_bounds_and_hidden_values_on_the_spec() {
    let alloc = IsolatedAllocTool::spec();
    assert_eq!(alloc.bounds.max_memory, Some(256 * MIB));
    assert_eq!(alloc.bounds.max_cpu_ms, None);
    let spin = IsolatedSpinTool::spec();
    assert_eq!(spin.bounds.max_cpu(), Some(Duration::from_secs(1)));
    assert_eq!(spin.timeout, Some(Duration::from_secs(60)));
    let injected = IsolatedInjectedTool::spec();
    let names: Vec<_> = injected.injected.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(names, ["id", "key"]);
    // A synchronous isolated fn runs in its worker, not on the agent's
    // blocking pool.
    assert!(!IsolatedSleepTool::spec().blocking);
}

#[test]
fn a_macro_isolated_tool_runs_in_the_global_pool_of_the_running_binary() {
    // The worker program is also the agent here: its global pool starts
    // workers of itself.
    let output = std::process::Command::new(WORKER)
        .arg("agent")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let line: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        line,
        json!({"id": "global-1", "structured": 42, "error": false})
    );
}
