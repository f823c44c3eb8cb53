//! MCP tasks (the tasks extension, SEP-2663), driven with raw JSON-RPC over
//! stateless HTTP (2026-07-28, per-request `_meta`): a task is stored
//! before its handle is sent, runs in the background, is polled, asks its
//! client, is answered, cancelled; instances sharing a PostgreSQL journal
//! share their tasks, and a restarted server still answers for them.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::ClientHandler;
use rmcp::model::{
    CallToolResponse, ClientCapabilities, ClientConfig, GetTaskParams, Implementation,
    ProtocolVersion, TaskStatus,
};
use serde_json::{Value, json};
use tinyagents_tools::journal::{CallQuery, CallState, Journal, MemoryJournal};
use tinyagents_tools::policy::ConfirmationPolicy;
use tinyagents_tools::prelude::*;
use tinyagents_tools::spec::{SpecError, TaskStart, TaskSupport};
use tinyagents_tools::{CancellationToken, ToolSpec};
use tinyagents_tools_examples::conformance_tasks::{
    self, FailingJobTool, GreetTool, NoArgs, SlowComputeTool, TestToolWithTaskTool,
};
use tinyagents_tools_mcp::tasks::{
    JournalTaskStore, MemoryTaskStore, StoredTask, TASKS_SPACE, TaskRecord, TaskStore,
    TaskStoreError,
};
use tinyagents_tools_mcp::{
    Elicitation, McpApprover, McpPeer, McpServer, McpServerBuilder, stateless_config,
};
use tokio::net::TcpListener;

use crate::common::{HANG, connect_to, error_message, params, text};

const TASKS: &str = "io.modelcontextprotocol/tasks";

/// What the bodies of [`wait_for_cancel`] saw on one instance.
#[derive(Debug, Default)]
struct Probe {
    started: AtomicUsize,
    cancelled: AtomicUsize,
}

/// Works until it is cancelled.
#[tool(read_only, idempotent, local, task = "optional", timeout = "5m")]
async fn wait_for_cancel(
    _args: NoArgs,
    #[inject] probe: Store<Probe>,
    #[inject] cancel: CancellationToken,
) -> Result<String, ToolError> {
    probe.started.fetch_add(1, Ordering::SeqCst);
    cancel.cancelled().await;
    probe.cancelled.fetch_add(1, Ordering::SeqCst);
    Err(ToolError::cancelled())
}

/// Asks `a` in input rounds, escalates, then asks `b` in the task.
#[tool(read_only, local, task = "optional", escalates)]
async fn two_phases(_args: NoArgs, #[inject] client: McpPeer) -> Result<String, ToolError> {
    let form =
        json!({"type": "object", "properties": {"v": {"type": "string"}}, "required": ["v"]});
    let a = client.elicit_as("a", "First?", form.clone()).await?;
    client.escalate().await?;
    let b = client.elicit_as("b", "Second?", form).await?;
    let v = |answer: Elicitation| answer.content.unwrap_or_default()["v"].clone();
    Ok(format!("{} then {}", v(a), v(b)))
}

/// Launches something (a person must approve each call).
#[tool(mutating, local, requires_confirmation, task = "optional")]
async fn launch(_args: NoArgs) -> String {
    "launched".to_owned()
}

/// A task store whose writes all fail.
struct Broken;

#[async_trait]
impl TaskStore for Broken {
    async fn create(&self, _: &TaskRecord) -> Result<(), TaskStoreError> {
        Err(TaskStoreError::Backend("the disk is full".into()))
    }

    async fn get(&self, _: &str) -> Result<Option<StoredTask>, TaskStoreError> {
        Ok(None)
    }

    async fn replace(&self, _: &TaskRecord, _: u64) -> Result<bool, TaskStoreError> {
        Err(TaskStoreError::Backend("the disk is full".into()))
    }
}

/// One server instance in stateless mode.
struct Instance {
    addr: SocketAddr,
    probe: Arc<Probe>,
    shutdown: CancellationToken,
}

impl Drop for Instance {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

fn registry() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    conformance_tasks::register(&mut registry).unwrap();
    registry.register(WaitForCancelTool).unwrap();
    registry.register(TwoPhasesTool).unwrap();
    registry
}

/// An instance serving the conformance fixtures and [`wait_for_cancel`],
/// its builder shaped by `configure`.
async fn instance(configure: impl FnOnce(McpServerBuilder) -> McpServerBuilder) -> Instance {
    let probe = Arc::new(Probe::default());
    let stores = Arc::clone(&probe);
    let builder = McpServer::builder(ToolExecutor::builder(registry(), ())).name("tasks");
    let server = configure(builder)
        .build(move || {
            RunContext::builder(())
                .store_arc(Arc::clone(&stores))
                .build()
        })
        .unwrap();
    serve(server, probe).await
}

async fn serve(server: McpServer, probe: Arc<Probe>) -> Instance {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let shutdown = CancellationToken::new();
    let stop = shutdown.clone();
    tokio::spawn(async move { server.serve_http(listener, stateless_config(), stop).await });
    Instance {
        addr,
        probe,
        shutdown,
    }
}

/// One 2026-07-28 request to `addr` (no session, per-request `_meta`) from
/// a client that declares elicitation, and the tasks extension when
/// `tasks`; the whole JSON-RPC answer.
async fn rpc(addr: SocketAddr, method: &str, params: Value, tasks: bool) -> Value {
    let mut capabilities = json!({"elicitation": {"form": {}}});
    if tasks {
        capabilities["extensions"] = json!({ TASKS: {} });
    }
    rpc_declaring(addr, method, params, capabilities).await
}

/// [`rpc`] from a client that declares `capabilities`.
async fn rpc_declaring(
    addr: SocketAddr,
    method: &str,
    mut params: Value,
    capabilities: Value,
) -> Value {
    crate::http::install_crypto();
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    });
    let name = match method {
        "tools/call" => params["name"].as_str().map(str::to_owned),
        "tasks/get" | "tasks/update" | "tasks/cancel" => {
            params["taskId"].as_str().map(str::to_owned)
        }
        _ => None,
    };
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let mut request = reqwest::Client::new()
        .post(format!("http://{addr}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    if let Some(name) = name {
        request = request.header("mcp-name", name);
    }
    let text = tokio::time::timeout(HANG, async {
        request.body(body.to_string()).send().await?.text().await
    })
    .await
    .expect("answered in time")
    .unwrap();
    serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}"))
}

/// A `tools/call` from a client that declared the extension: its result.
async fn call(addr: SocketAddr, name: &str, arguments: Value) -> Value {
    let params = json!({"name": name, "arguments": arguments});
    result_of(rpc(addr, "tools/call", params, true).await)
}

/// `test_tool_with_task` in two rounds: called, it asks for the user's name
/// in an input round; answered (Alice) with that round's state. The first
/// round's result and the second's whole JSON-RPC answer.
async fn alice_in_two_rounds(addr: SocketAddr) -> (Value, Value) {
    let round1 = call(addr, "test_tool_with_task", json!({})).await;
    assert_eq!(round1["resultType"], "input_required", "{round1}");
    let answer = json!({
        "name": "test_tool_with_task",
        "arguments": {},
        "inputResponses": {"user_name": accept(json!({"name": "Alice"}))},
        "requestState": round1["requestState"],
    });
    let round2 = rpc(addr, "tools/call", answer, true).await;
    (round1, round2)
}

/// `tasks/get`: its result.
async fn get(addr: SocketAddr, task_id: &str) -> Value {
    result_of(rpc(addr, "tasks/get", json!({ "taskId": task_id }), true).await)
}

/// The `result` of a JSON-RPC answer (a panic showing the answer when it
/// has none).
fn result_of(answer: Value) -> Value {
    answer
        .get("result")
        .cloned()
        .unwrap_or_else(|| panic!("{answer}"))
}

/// Polls `tasks/get` until the task's status is one of `statuses`.
async fn until(addr: SocketAddr, task_id: &str, statuses: &[&str]) -> Value {
    let deadline = tokio::time::Instant::now() + HANG;
    loop {
        let task = get(addr, task_id).await;
        if statuses.iter().any(|s| task["status"] == *s) {
            return task;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "task {task_id} stayed {task}"
        );
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
}

/// Waits until `count` reaches `n`.
async fn reaches(count: &AtomicUsize, n: usize) {
    tokio::time::timeout(HANG, async {
        while count.load(Ordering::SeqCst) < n {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("the count stayed {}", count.load(Ordering::SeqCst)));
}

fn task_id(created: &Value) -> String {
    created["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("no task: {created}"))
        .to_owned()
}

fn keys(value: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = value
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    keys.sort_unstable();
    keys
}

fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

mod durable;
mod flows;
