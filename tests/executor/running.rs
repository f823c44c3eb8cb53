//! Step 6 of the lifecycle: timeouts, retries, panics and run cancellation.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::json;
use tinyagents_tools::events::EventKind;
use tinyagents_tools::spec::Jitter;
use tinyagents_tools::*;
use tinyagents_tools_tests::*;

/// Generous: only a hang (a broken rule) comes near it.
const HANG: Duration = Duration::from_secs(30);

fn sleeper_spec(idempotent: bool, timeout_ms: u64) -> ToolSpec {
    let safety = if idempotent {
        ToolSafety::pure()
    } else {
        ToolSafety::default()
    };
    let mut spec = spec("sleeper", json!({"type": "object", "properties": {}}))
        .safety(safety)
        .timeout(Duration::from_millis(timeout_ms))
        .build()
        .unwrap();
    // Set after building: the builder refuses a retry policy on a
    // non-idempotent tool, so only the executor's own rule stands between
    // this policy and a second run.
    spec.retry = RetryPolicy::attempts(3, Duration::from_millis(1)).with_jitter(Jitter::None);
    spec
}

#[tokio::test]
async fn a_timeout_fires_the_calls_token_and_answers_with_a_timeout_error() {
    let tool = sleeper(sleeper_spec(false, 50), Duration::from_secs(600), true);
    let exec = executor(vec![tool.clone()]).build().unwrap();
    let r = call_the_sleeper(&exec).await;
    assert_eq!(r.tool_call_id.as_str(), "c1");
    assert_eq!(kind(&r), "timeout");
    assert!(tool.saw_cancel());
}

#[tokio::test]
async fn a_non_idempotent_tool_that_times_out_is_not_retried() {
    let tool = sleeper(sleeper_spec(false, 30), Duration::from_secs(600), true);
    let (recorder, exec) = recorded(vec![tool.clone()]);
    let r = execute_once(&exec, call("c1", "sleeper", "{}")).await;
    assert_eq!(kind(&r), "timeout");
    assert_eq!(tool.runs(), 1);
    assert_eq!(recorder.steps(), [("tool.started", 1), ("tool.failed", 1)]);
}

#[tokio::test]
async fn an_idempotent_tool_that_times_out_is_retried_up_to_its_attempts() {
    let tool = sleeper(sleeper_spec(true, 30), Duration::from_secs(600), true);
    let exec = executor(vec![tool.clone()]).build().unwrap();
    let r = execute_once(&exec, call("c1", "sleeper", "{}")).await;
    assert_eq!(kind(&r), "timeout");
    assert_eq!(tool.runs(), 3);
}

#[tokio::test]
async fn a_tool_that_ignores_cancellation_is_dropped_after_the_grace() {
    let tool = sleeper(sleeper_spec(false, 30), Duration::from_secs(600), false);
    let exec = executor(vec![tool.clone()])
        .configure(|c| c.cancel_grace = Duration::from_millis(20))
        .build()
        .unwrap();
    let r = call_the_sleeper(&exec).await;
    assert_eq!(kind(&r), "timeout");
}

/// Runs one call of `sleeper` through `exec`; the executor answers it well
/// within [`HANG`], whether the tool heeds its token or not.
async fn call_the_sleeper(exec: &ToolExecutor) -> ToolResult {
    tokio::time::timeout(HANG, execute_once(exec, call("c1", "sleeper", "{}")))
        .await
        .expect("the executor does not wait for a tool that ignores its token")
}

#[tokio::test]
async fn an_idempotent_flaky_tool_is_retried_with_retrying_events() {
    let tool = flaky_idempotent(2, 3);
    let (recorder, exec) = recorded(vec![tool.clone()]);
    let r = execute_once(&exec, call("c1", "flaky", "{}")).await;
    assert_eq!(r.text(), "finally");
    assert_eq!(tool.runs(), 3);
    let retrying: Vec<_> = recorder
        .events()
        .into_iter()
        .filter(|e| e.kind == EventKind::Retrying)
        .collect();
    assert_eq!(retrying.len(), 2);
    assert!(
        retrying
            .iter()
            .all(|e| e.error_class == Some(ErrorClass::Retry))
    );
}

#[tokio::test]
async fn errors_of_a_class_the_policy_does_not_retry_are_not_retried() {
    let spec = spec("flaky", json!({"type": "object", "properties": {}}))
        .safety(ToolSafety::pure())
        .retry(RetryPolicy::attempts(3, Duration::from_millis(1)))
        .build()
        .unwrap();
    let tool = flaky(spec, 2, ToolError::repair("use a smaller page"));
    let exec = executor(vec![tool.clone()]).build().unwrap();
    let r = execute_once(&exec, call("c1", "flaky", "{}")).await;
    assert_eq!(r.text(), "use a smaller page");
    assert_eq!(tool.runs(), 1);
}

#[tokio::test]
async fn a_panicking_tool_in_a_batch_of_ten_leaves_nine_good_results() {
    let exec = executor(vec![echo(), panicker()]).build().unwrap();
    let calls: Vec<ToolCall> = (0..10)
        .map(|i| {
            if i == 4 {
                call("p", "panicker", "{}")
            } else {
                call(&format!("e{i}"), "echo", json!({"text": format!("hi {i}")}))
            }
        })
        .collect();
    let results = exec
        .execute_batch(&RunContext::empty(), &Turn::new(1), calls)
        .await;
    assert_eq!(results.len(), 10);
    let good = results.iter().filter(|r| !r.is_error).count();
    assert_eq!(good, 9);
    let panicked = &results[4];
    assert_eq!(panicked.tool_call_id.as_str(), "p");
    assert_eq!(kind(panicked), "panicked");
    assert_eq!(panicked.error.as_ref().unwrap().class(), ErrorClass::Fatal);
    assert!(!panicked.text().contains("the panicker panicked"));
    // The executor is usable afterwards.
    let again = exec
        .execute(
            &RunContext::empty(),
            &Turn::new(2),
            call("z", "echo", r#"{"text":"ok"}"#),
        )
        .await;
    assert_eq!(again.text(), "ok");
}

#[tokio::test]
async fn cancelling_the_run_fires_running_tokens_and_answers_pending_calls_as_cancelled() {
    // `cancel_run` cancels its own run, then waits for its token.
    let saw_cancel = Arc::new(AtomicBool::new(false));
    let spec = empty_input("cancel_run").build().unwrap();
    let canceller = FnTool::new(spec, {
        let saw_cancel = Arc::clone(&saw_cancel);
        move |rt, _| {
            let saw_cancel = Arc::clone(&saw_cancel);
            Box::pin(async move {
                rt.run().cancel();
                rt.cancellation().cancelled().await;
                saw_cancel.store(true, Ordering::SeqCst);
                Err(ToolError::cancelled())
            })
        }
    });
    let echo = echo();
    let exec = executor(vec![Arc::new(canceller), echo.clone()])
        .configure(|c| c.max_concurrency = 1.try_into().unwrap())
        .build()
        .unwrap();
    let calls = vec![
        call("first", "cancel_run", "{}"),
        call("second", "echo", r#"{"text":"a"}"#),
        call("third", "echo", r#"{"text":"b"}"#),
    ];
    let run = RunContext::empty();
    let results = tokio::time::timeout(HANG, exec.execute_batch(&run, &Turn::new(1), calls))
        .await
        .unwrap();
    assert!(saw_cancel.load(Ordering::SeqCst));
    let ids: Vec<_> = results.iter().map(|r| r.tool_call_id.as_str()).collect();
    assert_eq!(ids, ["first", "second", "third"]);
    assert!(results.iter().all(|r| kind(r) == "cancelled"));
    assert_eq!(echo.runs(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_execute_future_can_be_spawned_on_another_task() {
    let exec = Arc::new(executor(vec![echo()]).build().unwrap());
    let task = spawn_call(
        &exec,
        &RunContext::empty(),
        1,
        call("c1", "echo", r#"{"text":"x"}"#),
    );
    assert_eq!(task.await.unwrap().text(), "x");
}
