//! (A test binary of its own: it installs a global `tracing` subscriber.)
//! An approver's answer that arrives after its run was cancelled is ignored
//! and logged as a `tracing` warning naming the run, the call and the
//! decision.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tinyagents_tools::approval::*;
use tinyagents_tools::policy::*;
use tinyagents_tools::*;
use tinyagents_tools_tests::{FakeTool, LogCapture, call, empty_input, kind, spawn_call};
use tokio::sync::{Notify, oneshot};

/// Tells the test it was asked, then answers what the test sends.
struct Late {
    asked: Arc<Notify>,
    answer: Mutex<Option<oneshot::Receiver<ApprovalDecision>>>,
}

#[async_trait]
impl Approver for Late {
    async fn review(&self, _: &ApprovalRequest) -> ApprovalDecision {
        self.asked.notify_one();
        let rx = self.answer.lock().unwrap().take().unwrap();
        rx.await.unwrap()
    }
}

#[tokio::test]
async fn a_late_approval_after_cancellation_is_ignored_and_logged() {
    let buffer = LogCapture::default();
    tracing::subscriber::set_global_default(buffer.subscriber(tracing::Level::WARN).finish())
        .unwrap();

    let asked = Arc::new(Notify::new());
    let (tx, rx) = oneshot::channel();
    let mut registry = ToolRegistry::new();
    let spec = empty_input("wipe")
        .safety(ToolSafety::default().requires_confirmation(true))
        .build()
        .unwrap();
    // It never runs: a cancelled call must not.
    registry
        .register(FakeTool::new(spec).answering_with(|_, _| panic!("a cancelled call ran")))
        .unwrap();
    let exec = Arc::new(
        ToolExecutor::builder(registry, ())
            .middleware(ConfirmationPolicy::new(Late {
                asked: asked.clone(),
                answer: Mutex::new(Some(rx)),
            }))
            .build()
            .unwrap(),
    );
    let run = RunContext::builder(()).run_id("run-late").build();
    let task = spawn_call(&exec, &run, 3, call("call-late", "wipe", json!({})));
    asked.notified().await;
    run.cancel();
    let r = task.await.unwrap();
    assert_eq!(kind(&r), "cancelled");
    assert_eq!(r.tool_call_id.as_str(), "call-late");

    tx.send(ApprovalDecision::Approve).unwrap();
    let mut text = String::new();
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(10)).await;
        text = buffer.text();
        if text.contains("ignored") {
            break;
        }
    }
    let line = text
        .lines()
        .find(|l| l.contains("after its run was cancelled"))
        .unwrap_or_else(|| panic!("no warning logged: {text}"));
    assert!(line.contains("WARN"), "{line}");
    assert!(line.contains("call_id=call-late"), "{line}");
    assert!(line.contains("run_id=run-late"), "{line}");
    assert!(
        line.contains("decision=\"approve\"") || line.contains("decision=approve"),
        "{line}"
    );
}
