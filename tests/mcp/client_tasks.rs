//! The MCP client following a call the server answered with a task (the
//! tasks extension): polled with `tasks/get` no faster than the server's
//! `pollIntervalMs` until it ends, its requests for input answered with
//! `tasks/update`, and cancelled with `tasks/cancel` when the call stops
//! waiting first.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tinyagents_tools::{ErrorClass, RunContext, async_trait};
use tinyagents_tools_mcp::client::{
    InputKind, McpClientOptions, McpInputContext, McpInputError, McpInputHandler,
};
use tinyagents_tools_mcp::rmcp::model::ElicitRequestParams;
use tinyagents_tools_mcp::{ElicitAction, Elicitation};

use crate::common::HANG;
use crate::scripted::{
    Log, Reply, call_op, call_scripted, done, elicitation, executor_of, scripted, task,
};

/// `task(status)` with its `resultType`, as `tools/call` answers it.
fn created(poll_interval_ms: u64) -> Reply {
    let mut handle = task("working", poll_interval_ms);
    handle["resultType"] = json!("task");
    Reply::Result(handle)
}

/// `task(status)` with `extra` fields, as `tasks/get` answers it.
fn polled(status: &str, poll_interval_ms: u64, extra: Value) -> Reply {
    let mut state = task(status, poll_interval_ms);
    state["resultType"] = json!("complete");
    for (key, value) in extra.as_object().unwrap() {
        state[key] = value.clone();
    }
    Reply::Result(state)
}

/// A server answering `tools/call` with a task polled every
/// `poll_interval_ms`, and each `tasks/get` with what `poll` gives.
fn tasked(
    poll_interval_ms: u64,
    mut poll: impl FnMut() -> Reply + Send + 'static,
) -> impl FnMut(&str, &Value) -> Reply + Send + 'static {
    move |method, _| match method {
        "tools/call" => created(poll_interval_ms),
        "tasks/get" => poll(),
        _ => Reply::Result(json!({})),
    }
}

/// Waits for the client's `tasks/cancel` and checks that it names the task.
async fn assert_cancelled_with_tasks_cancel(log: &Log) {
    let cancel = log
        .wait_for("tasks/cancel")
        .await
        .expect("tasks/cancel sent");
    assert_eq!(cancel["taskId"], "t-1");
}

#[tokio::test]
async fn a_task_is_polled_at_the_servers_interval_until_it_completes_with_its_result() {
    let mut polls = 0;
    let script = tasked(150, move || {
        polls += 1;
        if polls < 3 {
            polled("working", 150, json!({}))
        } else {
            polled("completed", 150, json!({"result": done("finished")}))
        }
    });
    let (result, log) = call_scripted(McpClientOptions::new(), script).await;
    assert!(!result.is_error, "{}", result.text());
    assert_eq!(result.text(), "finished");

    let gets = log.params("tasks/get");
    assert_eq!(gets.len(), 3);
    assert!(gets.iter().all(|p| p["taskId"] == "t-1"), "{gets:?}");
    let mut times = log.times("tools/call");
    times.extend(log.times("tasks/get"));
    for pair in times.windows(2) {
        let gap = pair[1] - pair[0];
        assert!(gap >= Duration::from_millis(140), "polled after {gap:?}");
    }
    assert!(log.params("tasks/cancel").is_empty());
}

#[tokio::test]
async fn a_task_still_working_when_the_call_times_out_is_cancelled_with_tasks_cancel() {
    let still_working = tasked(50, || polled("working", 50, json!({})));
    let (client, log) = scripted(McpClientOptions::new(), still_working).await;
    let executor = executor_of(&client, Duration::from_millis(400)).await;
    let started = Instant::now();
    let result = call_op(&executor, &RunContext::empty()).await;
    assert_eq!(result.outcome(), "timeout", "{}", result.text());
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_cancelled_with_tasks_cancel(&log).await;
    assert!(!log.params("tasks/get").is_empty());
}

#[tokio::test]
async fn the_task_of_a_cancelled_run_is_cancelled_with_tasks_cancel() {
    let still_working = tasked(50, || polled("working", 50, json!({})));
    let (client, log) = scripted(McpClientOptions::new(), still_working).await;
    let executor = executor_of(&client, HANG).await;
    let run = RunContext::empty();
    let canceller = run.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        canceller.cancel();
    });
    let result = call_op(&executor, &run).await;
    assert_eq!(result.outcome(), "cancelled", "{}", result.text());
    assert_cancelled_with_tasks_cancel(&log).await;
}

/// Answers every elicitation `accept` with `{"ok": true}`, counting them.
#[derive(Clone, Default)]
struct Yes(Arc<Mutex<usize>>);

#[async_trait]
impl McpInputHandler for Yes {
    fn answers(&self) -> &[InputKind] {
        &[InputKind::Elicitation]
    }

    async fn elicit(
        &self,
        _context: &McpInputContext,
        _request: &ElicitRequestParams,
    ) -> Result<Elicitation, McpInputError> {
        *self.0.lock().unwrap() += 1;
        Ok(Elicitation {
            action: ElicitAction::Accept,
            content: Some(json!({"ok": true})),
        })
    }
}

#[tokio::test]
async fn a_task_waiting_for_input_is_answered_through_the_handler_with_tasks_update() {
    let updated = Arc::new(AtomicBool::new(false));
    let seen = Arc::clone(&updated);
    let mut gets = 0;
    let handler = Yes::default();
    let options = McpClientOptions::new().input_handler(handler.clone());
    let script = move |method: &str, _: &Value| match method {
        "tools/call" => created(20),
        "tasks/update" => {
            seen.store(true, Ordering::SeqCst);
            Reply::Result(json!({"resultType": "complete"}))
        }
        "tasks/get" => {
            gets += 1;
            let asked = json!({"inputRequests": {"confirm": elicitation("Proceed?")}});
            match gets {
                // The second poll still shows the question: the server
                // has not caught up with the answer yet.
                1 | 2 => polled("input_required", 20, asked),
                _ if seen.load(Ordering::SeqCst) => {
                    polled("completed", 20, json!({"result": done("confirmed")}))
                }
                _ => polled("working", 20, json!({})),
            }
        }
        _ => Reply::Result(json!({})),
    };
    let (result, log) = call_scripted(options, script).await;
    assert!(!result.is_error, "{}", result.text());
    assert_eq!(result.text(), "confirmed");
    assert!(updated.load(Ordering::SeqCst));
    let updates = log.params("tasks/update");
    assert_eq!(updates.len(), 1, "{updates:?}");
    assert_eq!(updates[0]["taskId"], "t-1");
    assert_eq!(
        updates[0]["inputResponses"],
        json!({"confirm": {"action": "accept", "content": {"ok": true}}})
    );
    assert_eq!(*handler.0.lock().unwrap(), 1);
}

#[tokio::test]
async fn a_failed_task_is_a_classified_error_and_a_cancelled_one_a_cancellation() {
    let error = json!({"error": {"code": -32602, "message": "`n` must be even"}});
    let failed = tasked(10, move || polled("failed", 10, error.clone()));
    let (result, log) = call_scripted(McpClientOptions::new(), failed).await;
    let error = result.error.as_ref().expect("failed");
    assert_eq!(error.class(), ErrorClass::Repair);
    assert!(result.text().contains("must be even"), "{}", result.text());
    assert!(log.params("tasks/cancel").is_empty());

    let cancelled = tasked(10, || polled("cancelled", 10, json!({})));
    let (result, log) = call_scripted(McpClientOptions::new(), cancelled).await;
    assert_eq!(result.outcome(), "cancelled", "{}", result.text());
    assert!(log.params("tasks/cancel").is_empty());
}
