//! (A test binary of its own: it installs a global `tracing` subscriber.)
//! An approver's answer that arrives after its run was cancelled is ignored
//! and logged as a `tracing` warning naming the run, the call and the
//! decision.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tinyagents_tools::policy::*;
use tinyagents_tools::*;
use tinyagents_tools_tests::{call, kind, spec};
use tokio::sync::{Notify, oneshot};

#[derive(Clone, Default)]
struct Buffer(Arc<Mutex<Vec<u8>>>);

impl Write for Buffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

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

struct Never(ToolSpec);

#[async_trait]
impl Tool for Never {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    async fn call(&self, _: &(), _: &ToolRuntime, _: Value) -> Result<ToolOutput, ToolError> {
        panic!("a cancelled call ran");
    }
}

#[tokio::test]
async fn a_late_approval_after_cancellation_is_ignored_and_logged() {
    let buffer = Buffer::default();
    let writer = buffer.clone();
    tracing::subscriber::set_global_default(
        tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_max_level(tracing::Level::WARN)
            .with_ansi(false)
            .finish(),
    )
    .unwrap();

    let asked = Arc::new(Notify::new());
    let (tx, rx) = oneshot::channel();
    let mut registry = ToolRegistry::new();
    registry
        .register(Never(
            spec("wipe", json!({"type": "object", "properties": {}}))
                .safety(ToolSafety::default().requires_confirmation(true))
                .build()
                .unwrap(),
        ))
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
    let task = {
        let (exec, run) = (exec.clone(), run.clone());
        tokio::spawn(async move {
            exec.execute(&run, &Turn::new(3), call("call-late", "wipe", json!({})))
                .await
        })
    };
    asked.notified().await;
    run.cancel();
    let r = task.await.unwrap();
    assert_eq!(kind(&r), "cancelled");
    assert_eq!(r.tool_call_id.as_str(), "call-late");

    tx.send(ApprovalDecision::Approve).unwrap();
    let mut text = String::new();
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(10)).await;
        text = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
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
