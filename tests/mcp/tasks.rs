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
use tinyagents_tools::journal::{CallQuery, CallState, Journal, MCP_TASKS_RUN, MemoryJournal};
use tinyagents_tools::mcp::tasks::{
    JournalTaskStore, MemoryTaskStore, StoredTask, TaskRecord, TaskStore, TaskStoreError,
};
use tinyagents_tools::mcp::{
    Elicitation, McpApprover, McpPeer, McpServer, McpServerBuilder, stateless_config,
};
use tinyagents_tools::policy::ConfirmationPolicy;
use tinyagents_tools::prelude::*;
use tinyagents_tools::spec::{SpecError, TaskStart, TaskSupport};
use tinyagents_tools::{CancellationToken, ToolSpec};
use tinyagents_tools_examples::conformance_tasks::{
    self, FailingJobTool, GreetTool, NoArgs, SlowComputeTool, TestToolWithTaskTool,
};
use tokio::net::TcpListener;

use crate::common::{HANG, connect_to, params, text};

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
    let answer = rpc(
        addr,
        "tools/call",
        json!({"name": name, "arguments": arguments}),
        true,
    )
    .await;
    answer
        .get("result")
        .cloned()
        .unwrap_or_else(|| panic!("{answer}"))
}

/// `tasks/get`: its result.
async fn get(addr: SocketAddr, task_id: &str) -> Value {
    let answer = rpc(addr, "tasks/get", json!({ "taskId": task_id }), true).await;
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

#[tokio::test]
async fn a_task_tool_answers_with_a_stored_task_and_inlines_its_result_once_completed() {
    let server = instance(|b| b).await;
    let created = call(
        server.addr,
        "slow_compute",
        json!({"seconds": 1, "label": "one"}),
    )
    .await;
    // A flat CreateTaskResult: the task, nothing of a result.
    assert_eq!(
        keys(&created),
        [
            "createdAt",
            "lastUpdatedAt",
            "pollIntervalMs",
            "resultType",
            "status",
            "taskId",
            "ttlMs"
        ],
        "{created}"
    );
    assert_eq!(created["resultType"], "task");
    assert_eq!(created["status"], "working");
    assert_eq!(created["ttlMs"], 3_600_000);
    assert_eq!(created["pollIntervalMs"], 500);
    let id = task_id(&created);
    assert!(
        id.len() == 32 && id.bytes().all(|c| c.is_ascii_hexdigit()),
        "{id}"
    );
    let created_at = created["createdAt"].as_str().unwrap();
    assert!(
        created_at.len() == 24 && created_at.ends_with('Z') && created_at.as_bytes()[10] == b'T',
        "ISO 8601: {created_at}"
    );

    // Stored before the answer: asked at once, it is there, working.
    let working = get(server.addr, &id).await;
    assert_eq!(working["resultType"], "complete");
    assert_eq!(working["taskId"], id.as_str());
    assert_eq!(working["status"], "working");
    for absent in ["result", "error", "inputRequests", "requestState"] {
        assert!(working.get(absent).is_none(), "{working}");
    }

    let done = until(server.addr, &id, &["completed", "failed", "cancelled"]).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["createdAt"], created["createdAt"]);
    assert_eq!(done["result"]["isError"], false, "{done}");
    assert_eq!(text(&done["result"]), "computed one in 1 s");
    assert!(done.get("error").is_none());
    assert!(done["result"]["_meta"].is_null());
}

#[tokio::test]
async fn a_tool_error_completes_the_task_and_a_panic_fails_it() {
    let server = instance(|b| b).await;
    let failing = task_id(&call(server.addr, "failing_job", json!({})).await);
    let done = until(server.addr, &failing, &["completed", "failed"]).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["isError"], true, "{done}");
    assert!(text(&done["result"]).contains("the job failed"), "{done}");

    let panicking = task_id(&call(server.addr, "protocol_error_job", json!({})).await);
    let failed = until(server.addr, &panicking, &["completed", "failed"]).await;
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(failed["error"]["code"], -32603, "{failed}");
    assert!(failed["error"]["message"].is_string());
    assert!(failed.get("result").is_none(), "{failed}");
}

#[tokio::test]
async fn cancelling_a_task_fires_its_body_s_token_and_settles_it_cancelled() {
    let server = instance(|b| b).await;
    let id = task_id(&call(server.addr, "wait_for_cancel", json!({})).await);
    reaches(&server.probe.started, 1).await;

    let ack = rpc(server.addr, "tasks/cancel", json!({"taskId": id}), true).await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    reaches(&server.probe.cancelled, 1).await;
    let cancelled = get(server.addr, &id).await;
    assert_eq!(cancelled["status"], "cancelled", "{cancelled}");
    for absent in ["result", "error", "inputRequests"] {
        assert!(cancelled.get(absent).is_none(), "{cancelled}");
    }

    // Cancelling an ended task changes nothing, with the same answer.
    let again = rpc(server.addr, "tasks/cancel", json!({"taskId": id}), true).await;
    assert_eq!(
        again["result"],
        json!({"resultType": "complete"}),
        "{again}"
    );
    let done = task_id(&call(server.addr, "slow_compute", json!({"seconds": 0})).await);
    until(server.addr, &done, &["completed"]).await;
    let late = rpc(server.addr, "tasks/cancel", json!({"taskId": done}), true).await;
    assert_eq!(late["result"], json!({"resultType": "complete"}), "{late}");
    assert_eq!(get(server.addr, &done).await["status"], "completed");
    assert_eq!(server.probe.started.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_unknown_task_id_is_invalid_params_and_the_removed_methods_do_not_exist() {
    let server = instance(|b| b).await;
    let unknown = "0123456789abcdef0123456789abcdef";
    for (method, params) in [
        ("tasks/get", json!({"taskId": unknown})),
        (
            "tasks/update",
            json!({"taskId": unknown, "inputResponses": {}}),
        ),
        ("tasks/cancel", json!({"taskId": unknown})),
    ] {
        let answer = rpc(server.addr, method, params, true).await;
        assert_eq!(answer["error"]["code"], -32602, "{method}: {answer}");
    }
    for method in ["tasks/result", "tasks/list"] {
        let answer = rpc(server.addr, method, json!({"taskId": unknown}), true).await;
        assert_eq!(answer["error"]["code"], -32601, "{method}: {answer}");
    }
}

#[tokio::test]
async fn a_client_without_the_extension_is_answered_in_its_request_or_refused() {
    let server = instance(|b| b).await;
    // An optional task tool: a plain result.
    let call_params = json!({"name": "slow_compute", "arguments": {"seconds": 0, "label": "sync"}});
    let plain = rpc(server.addr, "tools/call", call_params, false).await;
    assert_eq!(plain["result"]["resultType"], "complete", "{plain}");
    assert!(plain["result"].get("taskId").is_none(), "{plain}");
    assert_eq!(text(&plain["result"]), "computed sync in 0 s");

    // A required one: -32021, naming the extension.
    for tool in ["failing_job", "test_tool_with_task"] {
        let refused = rpc(
            server.addr,
            "tools/call",
            json!({"name": tool, "arguments": {}}),
            false,
        )
        .await;
        assert_eq!(refused["error"]["code"], -32021, "{refused}");
        assert_eq!(
            refused["error"]["data"]["requiredCapabilities"]["extensions"][TASKS],
            json!({}),
            "{refused}"
        );
    }

    // The tasks methods: -32021 too.
    let id = task_id(&call(server.addr, "slow_compute", json!({"seconds": 0})).await);
    for (method, params) in [
        ("tasks/get", json!({"taskId": id})),
        ("tasks/update", json!({"taskId": id, "inputResponses": {}})),
        ("tasks/cancel", json!({"taskId": id})),
    ] {
        let answer = rpc(server.addr, method, params, false).await;
        assert_eq!(answer["error"]["code"], -32021, "{method}: {answer}");
    }

    // A plain tool stays plain, whatever the client asks for (a v1 `task`
    // param included).
    let legacy = json!({"name": "greet", "arguments": {"name": "Ada"}, "task": {"ttl": 60000}});
    let greeted = rpc(server.addr, "tools/call", legacy, true).await;
    assert_eq!(greeted["result"]["resultType"], "complete", "{greeted}");
    assert_eq!(text(&greeted["result"]), "Hello, Ada!");
}

#[tokio::test]
async fn only_a_server_with_a_task_tool_declares_the_extension() {
    let with_tasks = instance(|b| b).await;
    let discovered = rpc(with_tasks.addr, "server/discover", json!({}), false).await;
    let capabilities = &discovered["result"]["capabilities"];
    assert_eq!(capabilities["extensions"][TASKS], json!({}), "{discovered}");
    assert!(capabilities.get("tasks").is_none(), "{discovered}");

    let mut plain = ToolRegistry::new();
    plain.register(GreetTool).unwrap();
    let server = McpServer::builder(ToolExecutor::builder(plain, ()))
        .build(RunContext::empty)
        .unwrap();
    let without = serve(server, Arc::default()).await;
    let discovered = rpc(without.addr, "server/discover", json!({}), false).await;
    let capabilities = &discovered["result"]["capabilities"];
    assert!(capabilities["tools"].is_object(), "{discovered}");
    assert!(
        capabilities["extensions"].get(TASKS).is_none(),
        "{discovered}"
    );
    // Without the extension, the tasks methods do not exist.
    let answer = rpc(without.addr, "tasks/get", json!({"taskId": "x"}), true).await;
    assert_eq!(answer["error"]["code"], -32601, "{answer}");
}

#[tokio::test]
async fn a_task_that_asks_its_client_waits_in_input_required_and_takes_answers_one_at_a_time() {
    let server = instance(|b| b).await;
    let id = task_id(&call(server.addr, "multi_input", json!({})).await);
    let waiting = until(server.addr, &id, &["input_required", "completed", "failed"]).await;
    assert_eq!(waiting["status"], "input_required", "{waiting}");
    assert_eq!(
        keys(&waiting["inputRequests"]),
        ["confirm", "name"],
        "{waiting}"
    );
    let asked = &waiting["inputRequests"]["name"];
    assert_eq!(asked["method"], "elicitation/create", "{waiting}");
    assert_eq!(asked["params"]["message"], "What is your name?");
    assert!(waiting.get("requestState").is_none());

    // One answer (and one to a key never asked, ignored): the other still
    // waits.
    let partial = json!({"taskId": id, "inputResponses": {
        "name": accept(json!({"name": "Ada"})),
        "unasked": accept(json!({})),
    }});
    let ack = rpc(server.addr, "tasks/update", partial, true).await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    let still = get(server.addr, &id).await;
    assert_eq!(still["status"], "input_required", "{still}");
    assert_eq!(keys(&still["inputRequests"]), ["confirm"], "{still}");

    // An answer that is no result object is refused, and changes nothing.
    let bad = json!({"taskId": id, "inputResponses": {"confirm": true}});
    let refused = rpc(server.addr, "tasks/update", bad, true).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert_eq!(get(server.addr, &id).await["status"], "input_required");

    // The last answer: the body runs again with both, and completes.
    let last =
        json!({"taskId": id, "inputResponses": {"confirm": accept(json!({"confirm": true}))}});
    let ack = rpc(server.addr, "tasks/update", last, true).await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    let done = until(server.addr, &id, &["completed", "failed"]).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(text(&done["result"]), "name: Ada, confirmed: true");
    // An update to an ended task is ignored.
    let late =
        json!({"taskId": id, "inputResponses": {"confirm": accept(json!({"confirm": false}))}});
    let ack = rpc(server.addr, "tasks/update", late, true).await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    assert_eq!(
        text(&get(server.addr, &id).await["result"]),
        "name: Ada, confirmed: true"
    );
}

#[tokio::test]
async fn a_task_needing_a_capability_its_client_lacks_fails_naming_it() {
    let server = instance(|b| b).await;
    // Declares the extension, not elicitation.
    let answer = rpc_declaring(
        server.addr,
        "tools/call",
        json!({"name": "confirm_delete", "arguments": {"filename": "a.txt"}}),
        json!({"extensions": {TASKS: {}}}),
    )
    .await;
    let id = task_id(&answer["result"]);
    let failed = until(server.addr, &id, &["failed", "completed", "input_required"]).await;
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(failed["error"]["code"], -32021, "{failed}");
    assert_eq!(
        failed["error"]["data"]["requiredCapabilities"]["elicitation"],
        json!({}),
        "{failed}"
    );
}

#[tokio::test]
async fn a_tool_that_escalates_asks_in_rounds_then_becomes_a_task() {
    let server = instance(|b| b).await;
    // Round 1: input rounds, no task.
    let round1 = call(server.addr, "test_tool_with_task", json!({})).await;
    assert_eq!(round1["resultType"], "input_required", "{round1}");
    assert!(round1.get("taskId").is_none(), "{round1}");
    assert_eq!(keys(&round1["inputRequests"]), ["user_name"], "{round1}");
    let state = round1["requestState"].as_str().unwrap().to_owned();

    // Round 2, with the answer and the state: the task.
    let round2 = rpc(
        server.addr,
        "tools/call",
        json!({
            "name": "test_tool_with_task",
            "arguments": {},
            "inputResponses": {"user_name": accept(json!({"name": "Alice"}))},
            "requestState": state,
        }),
        true,
    )
    .await["result"]
        .clone();
    assert_eq!(round2["resultType"], "task", "{round2}");
    for absent in ["requestState", "inputRequests", "content"] {
        assert!(round2.get(absent).is_none(), "{round2}");
    }
    let id = task_id(&round2);
    let done = until(server.addr, &id, &["completed", "failed", "input_required"]).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(text(&done["result"]), "Hello, Alice!");
}

#[tokio::test]
async fn a_tool_that_escalates_carries_its_round_answers_into_the_task() {
    let server = instance(|b| b).await;
    let call_with = |responses: Value, state: &Value| {
        let mut params =
            json!({"name": "two_phases", "arguments": {}, "inputResponses": responses});
        if let Some(state) = state.as_str() {
            params["requestState"] = json!(state);
        }
        params
    };
    let a = json!({"a": accept(json!({"v": "x"}))});

    // Without the extension, escalating changes nothing: every question is
    // a round.
    let round1 = rpc(
        server.addr,
        "tools/call",
        call_with(json!({}), &Value::Null),
        false,
    )
    .await;
    let round1 = &round1["result"];
    assert_eq!(keys(&round1["inputRequests"]), ["a"], "{round1}");
    let round2 = rpc(
        server.addr,
        "tools/call",
        call_with(a.clone(), &round1["requestState"]),
        false,
    )
    .await;
    let round2 = &round2["result"];
    assert_eq!(keys(&round2["inputRequests"]), ["b"], "{round2}");
    let b = json!({"b": accept(json!({"v": "y"}))});
    let round3 = rpc(
        server.addr,
        "tools/call",
        call_with(b.clone(), &round2["requestState"]),
        false,
    )
    .await;
    assert_eq!(text(&round3["result"]), "\"x\" then \"y\"", "{round3}");

    // With it: the answer of the round becomes the task's, and the later
    // question parks the task.
    let round1 = rpc(
        server.addr,
        "tools/call",
        call_with(json!({}), &Value::Null),
        true,
    )
    .await;
    let round1 = &round1["result"];
    assert_eq!(round1["resultType"], "input_required", "{round1}");
    let round2 = rpc(
        server.addr,
        "tools/call",
        call_with(a, &round1["requestState"]),
        true,
    )
    .await;
    let id = task_id(&round2["result"]);
    let waiting = until(server.addr, &id, &["input_required", "completed", "failed"]).await;
    assert_eq!(keys(&waiting["inputRequests"]), ["b"], "{waiting}");
    let ack = rpc(
        server.addr,
        "tasks/update",
        json!({"taskId": id, "inputResponses": b}),
        true,
    )
    .await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    let done = until(server.addr, &id, &["completed", "failed"]).await;
    assert_eq!(text(&done["result"]), "\"x\" then \"y\"", "{done}");
}

#[tokio::test]
async fn a_task_needing_approval_asks_it_in_its_input_requests() {
    let approver = McpApprover::new();
    let mut registry = ToolRegistry::new();
    registry.register(LaunchTool).unwrap();
    let executor =
        ToolExecutor::builder(registry, ()).middleware(ConfirmationPolicy::new(approver.clone()));
    let server = McpServer::builder(executor)
        .approver(approver)
        .build(RunContext::empty)
        .unwrap();
    let server = serve(server, Arc::default()).await;
    for (action, status, expected) in [("accept", false, "launched"), ("decline", true, "declined")]
    {
        let id = task_id(&call(server.addr, "launch", json!({})).await);
        let waiting = until(server.addr, &id, &["input_required", "completed"]).await;
        let asked = keys(&waiting["inputRequests"]);
        assert!(
            asked.len() == 1 && asked[0].starts_with("approve-"),
            "{waiting}"
        );
        let key = asked[0].to_owned();
        assert_eq!(
            waiting["inputRequests"][&key]["method"],
            "elicitation/create"
        );
        let answer = json!({"taskId": id, "inputResponses": {key: {"action": action}}});
        rpc(server.addr, "tasks/update", answer, true).await;
        let done = until(server.addr, &id, &["completed", "failed"]).await;
        assert_eq!(done["status"], "completed", "{done}");
        assert_eq!(done["result"]["isError"], status, "{done}");
        assert!(text(&done["result"]).contains(expected), "{done}");
    }
}

#[tokio::test]
async fn a_task_store_that_fails_is_an_internal_error_and_nothing_runs() {
    let server = instance(|b| b.task_store(Broken)).await;
    let refused = rpc(
        server.addr,
        "tools/call",
        json!({"name": "wait_for_cancel", "arguments": {}}),
        true,
    )
    .await;
    assert_eq!(refused["error"]["code"], -32603, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("the disk is full"),
        "{refused}"
    );
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(server.probe.started.load(Ordering::SeqCst), 0);

    // A tool that escalates: its rounds work, its escalation is refused.
    let round1 = call(server.addr, "test_tool_with_task", json!({})).await;
    assert_eq!(round1["resultType"], "input_required", "{round1}");
    let round2 = rpc(
        server.addr,
        "tools/call",
        json!({
            "name": "test_tool_with_task",
            "arguments": {},
            "inputResponses": {"user_name": accept(json!({"name": "Alice"}))},
            "requestState": round1["requestState"],
        }),
        true,
    )
    .await;
    assert_eq!(round2["error"]["code"], -32603, "{round2}");
}

#[tokio::test]
async fn a_running_task_renews_its_lease_and_stays_working_past_it() {
    // Two instances sharing one journal, each claiming for 300 ms at a time.
    let journal = Journal::new(MemoryJournal::new());
    let lease = Duration::from_millis(300);
    let a = {
        let journal = journal.clone();
        instance(move |b| b.journal_tasks(journal).task_lease(lease)).await
    };
    let b = instance(move |b| b.journal_tasks(journal).task_lease(lease)).await;
    let id = task_id(&call(a.addr, "wait_for_cancel", json!({})).await);
    reaches(&a.probe.started, 1).await;
    tokio::time::sleep(lease * 4).await;
    assert_eq!(get(b.addr, &id).await["status"], "working");
    rpc(b.addr, "tasks/cancel", json!({"taskId": id}), true).await;
    reaches(&a.probe.cancelled, 1).await;
    assert_eq!(get(a.addr, &id).await["status"], "cancelled");
}

/// A client declaring the tasks extension at `initialize` (no per-request
/// `_meta`), on 2025-11-25.
#[derive(Clone)]
struct SessionClient;

impl ClientHandler for SessionClient {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::builder().enable_tasks().build(),
            Implementation::new("session-tasks", "0"),
        )
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }
}

#[tokio::test]
async fn a_client_that_declared_the_extension_at_initialize_gets_tasks_over_stdio() {
    let server = McpServer::builder(ToolExecutor::builder(registry(), ()))
        .build(|| RunContext::builder(()).store(Probe::default()).build())
        .unwrap();
    let client = connect_to(server, SessionClient).await;
    let answer = client
        .call_tool_once(params(
            "slow_compute",
            json!({"seconds": 0, "label": "stdio"}),
        ))
        .await
        .unwrap();
    let CallToolResponse::Task(created) = answer else {
        panic!("not a task: {answer:?}");
    };
    let id = created.task.task_id;
    let deadline = tokio::time::Instant::now() + HANG;
    let done = loop {
        let got = client
            .get_task(GetTaskParams::new(id.clone()))
            .await
            .unwrap();
        if got.task.status() == TaskStatus::Completed {
            break got;
        }
        assert!(tokio::time::Instant::now() < deadline, "{got:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let done = serde_json::to_value(done).unwrap();
    assert_eq!(text(&done["result"]), "computed stdio in 0 s");
}

#[tokio::test]
async fn a_task_is_kept_for_its_ttl_and_then_the_memory_store_may_forget_it() {
    let server = instance(|b| b.task_ttl(Duration::from_millis(400))).await;
    let created = call(server.addr, "slow_compute", json!({"seconds": 0})).await;
    assert_eq!(created["ttlMs"], 400);
    let id = task_id(&created);
    until(server.addr, &id, &["completed"]).await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    // Past its time to live and ended: forgotten (the store sweeps when a
    // task is created).
    call(server.addr, "slow_compute", json!({"seconds": 0})).await;
    let gone = rpc(server.addr, "tasks/get", json!({"taskId": id}), true).await;
    assert_eq!(gone["error"]["code"], -32602, "{gone}");
}

#[tokio::test]
async fn two_stateless_instances_sharing_a_postgres_journal_share_their_tasks() {
    let pg = tinyagents_tools::testkit::TempPostgres::start().unwrap_or_else(|e| panic!("{e}"));
    let a = {
        let journal = Journal::open(pg.url()).await.unwrap();
        instance(move |b| b.journal_tasks(journal)).await
    };
    let b = {
        let journal = Journal::open(pg.url()).await.unwrap();
        instance(move |b| b.journal_tasks(journal)).await
    };

    // Created on A, read and cancelled on B: A's body sees its token fire.
    let id = task_id(&call(a.addr, "wait_for_cancel", json!({})).await);
    reaches(&a.probe.started, 1).await;
    assert_eq!(get(b.addr, &id).await["status"], "working");
    let ack = rpc(b.addr, "tasks/cancel", json!({"taskId": id}), true).await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    reaches(&a.probe.cancelled, 1).await;
    assert_eq!(get(a.addr, &id).await["status"], "cancelled");
    assert_eq!(b.probe.started.load(Ordering::SeqCst), 0);

    // Created on A, answered on B: B runs the body again, A sees the end.
    let id = task_id(&call(a.addr, "confirm_delete", json!({"filename": "notes.txt"})).await);
    let waiting = until(b.addr, &id, &["input_required"]).await;
    assert_eq!(keys(&waiting["inputRequests"]), ["confirm"]);
    let answer =
        json!({"taskId": id, "inputResponses": {"confirm": accept(json!({"confirm": true}))}});
    let ack = rpc(b.addr, "tasks/update", answer, true).await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    let done = until(a.addr, &id, &["completed", "failed"]).await;
    assert_eq!(text(&done["result"]), "Deleted notes.txt", "{done}");
    assert_eq!(get(b.addr, &id).await, done);

    // Created on B, ended there: A answers it too.
    let id = task_id(&call(b.addr, "slow_compute", json!({"seconds": 0, "label": "b"})).await);
    let done = until(a.addr, &id, &["completed"]).await;
    assert_eq!(text(&done["result"]), "computed b in 0 s");

    // The journal keeps them as records of the tasks run, never a run to
    // resume.
    let journal = Journal::open(pg.url()).await.unwrap();
    let records = journal.calls(&CallQuery::run(MCP_TASKS_RUN)).await.unwrap();
    assert_eq!(records.len(), 3);
    assert!(records.iter().all(|r| r.state == CallState::Answered));
    assert!(journal.runs_to_resume().await.unwrap().is_empty());
}

#[tokio::test]
async fn a_restarted_server_still_answers_for_its_finished_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("tasks.db").display());
    let first = {
        let journal = Journal::open(&url).await.unwrap();
        instance(move |b| b.journal_tasks(journal)).await
    };
    let id = task_id(
        &call(
            first.addr,
            "slow_compute",
            json!({"seconds": 0, "label": "kept"}),
        )
        .await,
    );
    let done = until(first.addr, &id, &["completed"]).await;
    drop(first);

    let journal = Journal::open(&url).await.unwrap();
    let second = instance(move |b| b.journal_tasks(journal)).await;
    let again = get(second.addr, &id).await;
    assert_eq!(again, done);
    assert_eq!(text(&again["result"]), "computed kept in 0 s");
}

/// A task record as an instance writes it when it starts a body, created
/// now.
fn working_task(task_id: &str, owner: &str, lease_until: i64) -> TaskRecord {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    serde_json::from_value(json!({
        "task_id": task_id,
        "tool": "slow_compute",
        "arguments": {"seconds": 1},
        "fingerprint": "f",
        "status": "working",
        "attempt": 1,
        "owner": owner,
        "lease_until": lease_until,
        "created_at": now,
        "updated_at": now,
        "ttl_ms": 60_000,
        "poll_interval_ms": 500,
    }))
    .unwrap()
}

#[tokio::test]
async fn a_task_whose_instance_is_gone_is_answered_failed_and_never_run_again() {
    let journal = Journal::new(MemoryJournal::new());
    let store = JournalTaskStore::new(journal.clone());
    // Its owner's lease ran out long ago.
    let id = "00000000000000000000000000000001";
    store
        .create(&working_task(id, "another-boot/1/x", 2_000))
        .await
        .unwrap();
    let server = instance(move |b| b.journal_tasks(journal)).await;
    let failed = get(server.addr, id).await;
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(failed["error"]["code"], -32603);
    assert!(
        failed["error"]["message"]
            .as_str()
            .unwrap()
            .contains("stopped before it ended"),
        "{failed}"
    );
    // Recorded so: the next read says the same.
    assert_eq!(get(server.addr, id).await, failed);
    let stored = store.get(id).await.unwrap().unwrap();
    assert_eq!(stored.task.status, TaskStatus::Failed);
    assert_eq!(stored.task.owner, None);
}

/// Every store: a task is created once, and replaced only at the revision
/// its writer read.
async fn store_rules(store: &dyn TaskStore) {
    let id = "0000000000000000000000000000000a";
    let task = working_task(id, "me", i64::MAX);
    store.create(&task).await.unwrap();
    assert!(matches!(
        store.create(&task).await,
        Err(TaskStoreError::Duplicate { .. })
    ));
    let stored = store.get(id).await.unwrap().unwrap();
    assert_eq!((stored.revision, &stored.task), (1, &task));
    let mut asked = task.clone();
    asked.status = TaskStatus::InputRequired;
    assert!(store.replace(&asked, 1).await.unwrap());
    assert!(!store.replace(&task, 1).await.unwrap(), "a stale revision");
    let stored = store.get(id).await.unwrap().unwrap();
    assert_eq!(
        (stored.revision, stored.task.status),
        (2, TaskStatus::InputRequired)
    );
    assert!(store.get("nothing").await.unwrap().is_none());
    let mut other = task.clone();
    other.task_id = "nothing".into();
    assert!(!store.replace(&other, 1).await.unwrap(), "no such task");
}

#[tokio::test]
async fn every_task_store_creates_once_and_replaces_only_at_the_revision_read() {
    store_rules(&MemoryTaskStore::new()).await;
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("j.db").display());
    for journal in [
        Journal::new(MemoryJournal::new()),
        Journal::open(&url).await.unwrap(),
    ] {
        store_rules(&JournalTaskStore::new(journal.clone())).await;
        // One record of the tasks run, the task id as its call id and the
        // task as its arguments; its state follows the task's.
        let records = journal.calls(&CallQuery::run(MCP_TASKS_RUN)).await.unwrap();
        assert_eq!(records.len(), 1);
        let record = &records[0];
        assert_eq!(
            record.key.call_id.as_str(),
            "0000000000000000000000000000000a"
        );
        assert_eq!(record.key.turn, 0);
        assert_eq!(record.state, CallState::Received);
        assert_eq!(record.arguments["status"], "input_required");
        assert_eq!(record.arguments["arguments"], json!({"seconds": 1}));
        assert!(journal.runs_to_resume().await.unwrap().is_empty());
    }
}

#[test]
fn the_tool_declarations_carry_their_task_support() {
    assert_eq!(GreetTool::spec().task_support, TaskSupport::Forbidden);
    assert_eq!(SlowComputeTool::spec().task_support, TaskSupport::Optional);
    assert_eq!(FailingJobTool::spec().task_support, TaskSupport::Required);
    let escalating = TestToolWithTaskTool::spec();
    assert_eq!(
        (escalating.task_support, escalating.task_start),
        (TaskSupport::Required, TaskStart::OnEscalate)
    );
    assert_eq!(SlowComputeTool::spec().task_start, TaskStart::Immediately);
    let spec = serde_json::to_value(SlowComputeTool::spec()).unwrap();
    assert_eq!(spec["task_support"], "optional");
    assert!(spec.get("task_start").is_none());
    let plain = serde_json::to_value(GreetTool::spec()).unwrap();
    assert!(plain.get("task_support").is_none());
    assert_eq!(TaskSupport::Required.as_str(), "required");

    let refused = ToolSpec::builder("crunch", "Crunches.")
        .task_start(TaskStart::OnEscalate)
        .build();
    assert_eq!(
        refused,
        Err(SpecError::EscalatesWithoutTasks("crunch".into()))
    );
}
