//! Calls that wait in a journal for a person's approval
//! (`ConfirmationPolicy::deferred()` and a SQLite journal behind the
//! server), as MCP clients see them: outside a task, an error result
//! naming the approval, found again by the same call in the same session
//! or with the same idempotency key (across a restart), run once when
//! approved; as a task, `working` until the decision, then answered by the
//! instance asked about it.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tinyagents_tools::approval::ApprovalDecision;
use tinyagents_tools::journal::Journal;
use tinyagents_tools::policy::ConfirmationPolicy;
use tinyagents_tools::prelude::*;
use tinyagents_tools_mcp::McpServer;
use tinyagents_tools_mcp::durable::{IDEMPOTENCY_META_KEY, PENDING_APPROVAL_META_KEY};
use tinyagents_tools_mcp::tasks::APPROVAL_REFUSED;

use crate::common::HANG;
use crate::protocol::Wire;

/// How many times a body ran, across every server of a test.
#[derive(Default)]
struct Runs(AtomicUsize);

/// What to publish.
#[derive(Deserialize, JsonSchema)]
struct Post {
    /// The post's title.
    title: String,
}

/// Publish a post (needs a person's approval).
#[tool(mutating, local, requires_confirmation, task = "optional")]
async fn publish(args: Post, #[inject] runs: Store<Runs>) -> String {
    runs.0.fetch_add(1, Ordering::SeqCst);
    format!("published {}", args.title)
}

/// A server whose calls to `publish` wait in the SQLite journal at `path`.
async fn server(path: &Path, runs: &Arc<Runs>) -> McpServer {
    let journal = Journal::open(&format!("sqlite://{}", path.display()))
        .await
        .unwrap();
    let mut registry = ToolRegistry::new();
    registry.register(PublishTool).unwrap();
    let executor = ToolExecutor::builder(registry, ())
        .middleware(ConfirmationPolicy::deferred())
        .journal(journal.clone());
    let runs = Arc::clone(runs);
    McpServer::builder(executor)
        .journal_tasks(journal)
        .build(move || RunContext::builder(()).store_arc(Arc::clone(&runs)).build())
        .unwrap()
}

/// A person deciding, from another journal handle (another process).
async fn decide(path: &Path, approval: &str, decision: ApprovalDecision) {
    let journal = Journal::open(&format!("sqlite://{}", path.display()))
        .await
        .unwrap();
    journal.decide(approval, decision).await.unwrap();
}

/// `tools/call` of `publish` on a 2025-11-25 session, with `meta`.
async fn publish_call(wire: &mut Wire, id: u64, title: &str, meta: Value) -> Value {
    let answer = wire
        .request(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                        "params": {"name": "publish", "arguments": {"title": title},
                                   "_meta": meta}}))
        .await;
    answer["result"].clone()
}

/// The approval a waiting result names (in its text and its `_meta`).
fn waiting_on(result: &Value) -> String {
    assert_eq!(result["isError"], true, "{result}");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("the call has not run"), "{result}");
    let meta = &result["_meta"][PENDING_APPROVAL_META_KEY];
    assert_eq!(meta["status"], "pending", "{result}");
    let id = meta["approvalId"].as_str().unwrap().to_owned();
    assert!(id.starts_with("apr_"), "{result}");
    assert!(text.contains(&id), "{result}");
    id
}

#[tokio::test]
async fn a_waiting_call_is_an_error_and_the_same_call_in_the_session_finds_its_approval() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.db");
    let runs = Arc::new(Runs::default());
    let server = server(&path, &runs).await;
    let mut wire = Wire::at_on("2025-11-25", server.clone()).await;

    let first = waiting_on(&publish_call(&mut wire, 1, "hello", json!({})).await);
    let again = waiting_on(&publish_call(&mut wire, 2, "hello", json!({})).await);
    assert_eq!(first, again, "the same call finds the same approval");
    // Other arguments are another call.
    let other = waiting_on(&publish_call(&mut wire, 3, "other", json!({})).await);
    assert_ne!(other, first);
    assert_eq!(runs.0.load(Ordering::SeqCst), 0);

    decide(&path, &first, ApprovalDecision::Approve).await;
    let done = publish_call(&mut wire, 4, "hello", json!({})).await;
    assert_eq!(done["isError"], false, "{done}");
    assert_eq!(done["content"][0]["text"], "published hello", "{done}");
    assert_eq!(runs.0.load(Ordering::SeqCst), 1);

    // Answered: the same call again is a new call, with a new approval.
    let next = waiting_on(&publish_call(&mut wire, 5, "hello", json!({})).await);
    assert_ne!(next, first);
    // Another session does not share this session's waits.
    let mut elsewhere = Wire::at_on("2025-11-25", server).await;
    let theirs = waiting_on(&publish_call(&mut elsewhere, 1, "hello", json!({})).await);
    assert_ne!(theirs, next);
    assert_eq!(runs.0.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_idempotency_key_finds_the_approval_after_a_restart_and_a_refusal_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.db");
    let runs = Arc::new(Runs::default());
    let keyed = |key: &str| json!({ IDEMPOTENCY_META_KEY: key });

    let before = server(&path, &runs).await;
    let mut wire = Wire::at_on("2025-11-25", before).await;
    let approval = waiting_on(&publish_call(&mut wire, 1, "hello", keyed("order-1")).await);
    let refused = waiting_on(&publish_call(&mut wire, 2, "hello", keyed("order-2")).await);
    drop(wire);

    // The server restarts: a new process would open the same file.
    let mut wire = Wire::at_on("2025-11-25", server(&path, &runs).await).await;
    let found = waiting_on(&publish_call(&mut wire, 1, "hello", keyed("order-1")).await);
    assert_eq!(found, approval);
    decide(&path, &approval, ApprovalDecision::Approve).await;
    decide(
        &path,
        &refused,
        ApprovalDecision::Reject {
            reason: "not on a Friday".into(),
        },
    )
    .await;
    let done = publish_call(&mut wire, 2, "hello", keyed("order-1")).await;
    assert_eq!(done["content"][0]["text"], "published hello", "{done}");
    let denied = publish_call(&mut wire, 3, "hello", keyed("order-2")).await;
    assert_eq!(denied["isError"], true, "{denied}");
    let reason = denied["content"][0]["text"].as_str().unwrap();
    assert!(reason.contains("not on a Friday"), "{denied}");
    assert!(denied["_meta"].get(PENDING_APPROVAL_META_KEY).is_none());
    assert_eq!(runs.0.load(Ordering::SeqCst), 1);
}

/// A 2026-07-28 request's `_meta`, declaring the tasks extension.
fn task_context() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities":
            {"extensions": {"io.modelcontextprotocol/tasks": {}}},
    })
}

async fn task_request(wire: &mut Wire, id: u64, method: &str, mut params: Value) -> Value {
    params["_meta"] = task_context();
    let answer = wire
        .request(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
        .await;
    answer["result"].clone()
}

/// Polls `tasks/get` on `wire` until the task is no longer `working`.
async fn ended(wire: &mut Wire, task: &str) -> Value {
    let polling = async {
        for id in 100.. {
            let got = task_request(wire, id, "tasks/get", json!({"taskId": task})).await;
            if got["status"] != "working" {
                return got;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        unreachable!()
    };
    tokio::time::timeout(HANG, polling)
        .await
        .expect("the task ends")
}

/// Starts `publish` as a task and waits until it awaits approval: its id
/// and the approval's.
async fn waiting_task(wire: &mut Wire, title: &str) -> (String, String) {
    let created = task_request(
        wire,
        1,
        "tools/call",
        json!({"name": "publish", "arguments": {"title": title}}),
    )
    .await;
    assert_eq!(created["resultType"], "task", "{created}");
    let task = created["taskId"].as_str().unwrap().to_owned();
    let waiting = async {
        loop {
            let got = task_request(wire, 2, "tasks/get", json!({"taskId": task})).await;
            let message = got["statusMessage"].as_str().unwrap_or_default().to_owned();
            if let Some(at) = message.find("apr_") {
                assert_eq!(got["status"], "working", "{got}");
                assert!(message.contains("the call has not run"), "{got}");
                let id: String = message[at..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                return id;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    let approval = tokio::time::timeout(HANG, waiting).await.expect("it waits");
    (task, approval)
}

#[tokio::test]
async fn a_task_awaits_its_approval_and_any_instance_asked_runs_it_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.db");
    let runs = Arc::new(Runs::default());
    let mut a = Wire::serving(server(&path, &runs).await).await;
    let mut b = Wire::serving(server(&path, &runs).await).await;

    let (task, approval) = waiting_task(&mut a, "hello").await;
    // Undecided, it stays `working` wherever it is asked about.
    let still = task_request(&mut b, 3, "tasks/get", json!({"taskId": task})).await;
    assert_eq!(still["status"], "working", "{still}");
    assert_eq!(runs.0.load(Ordering::SeqCst), 0);

    decide(&path, &approval, ApprovalDecision::Approve).await;
    let done = ended(&mut b, &task).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        done["result"]["content"][0]["text"], "published hello",
        "{done}"
    );
    let seen_by_a = ended(&mut a, &task).await;
    assert_eq!(seen_by_a["status"], "completed", "{seen_by_a}");
    assert_eq!(runs.0.load(Ordering::SeqCst), 1);

    let (refused, approval) = waiting_task(&mut a, "later").await;
    decide(
        &path,
        &approval,
        ApprovalDecision::Reject {
            reason: "not on a Friday".into(),
        },
    )
    .await;
    let failed = ended(&mut a, &refused).await;
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(failed["error"]["code"], APPROVAL_REFUSED, "{failed}");
    let message = failed["error"]["message"].as_str().unwrap();
    assert!(message.contains("not on a Friday"), "{failed}");
    assert_eq!(runs.0.load(Ordering::SeqCst), 1);
}
