//! The MCP server over streamable HTTP (the feature `http` of
//! `tinyagents-tools-mcp`), served on 127.0.0.1 and driven by rmcp's HTTP
//! client: the same guarantees as over stdio, sessions side by side,
//! shutdown, and the loopback `Host` rule.

use std::sync::Arc;

use rmcp::model::{CallToolRequest, ClientRequest, ErrorCode, ProgressNotificationParam};
use rmcp::service::{PeerRequestOptions, RoleClient, RunningService};
use rmcp::{ServiceError, ServiceExt};
use serde_json::json;
use tinyagents_tools::providers::{ExportTarget, export_declarations};
use tinyagents_tools::spec::SafetyItem;
use tinyagents_tools::{CancellationToken, ToolExecutor};
use tinyagents_tools_examples::{NoteBook, quickstart_registry, quickstart_run};
use tinyagents_tools_mcp::McpServer;
use tinyagents_tools_mcp::rmcp::transport::StreamableHttpServerConfig;
use tokio::sync::mpsc;

use crate::common::{HANG, call_on, params, text};
use crate::server::{Client, CountStepsTool};

/// Serves the quickstart tools and `count_steps` over streamable HTTP on
/// 127.0.0.1; returns the address, the shutdown token and the serving task.
async fn serve_over_http() -> (
    std::net::SocketAddr,
    CancellationToken,
    tokio::task::JoinHandle<std::io::Result<()>>,
    tempfile::TempDir,
) {
    serve_with(StreamableHttpServerConfig::default()).await
}

/// [`serve_over_http`] with `config`.
async fn serve_with(
    config: StreamableHttpServerConfig,
) -> (
    std::net::SocketAddr,
    CancellationToken,
    tokio::task::JoinHandle<std::io::Result<()>>,
    tempfile::TempDir,
) {
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join("notes.txt"), "remember the milk\n").unwrap();
    let mut registry = quickstart_registry().unwrap();
    registry.register(CountStepsTool).unwrap();
    let root = workspace.path().to_owned();
    // MCP hosts ask their user before a call: confirmation is left to them.
    let executor = ToolExecutor::builder(registry, ()).unenforced(SafetyItem::Confirmation);
    let server = McpServer::builder(executor)
        .name("quickstart-http")
        .build(move || quickstart_run(&root, Arc::new(NoteBook::default())))
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let shutdown = CancellationToken::new();
    let stop = shutdown.clone();
    let serving = tokio::spawn(async move { server.serve_http(listener, config, stop).await });
    (addr, shutdown, serving, workspace)
}

/// reqwest (under rmcp's HTTP client too) needs a rustls crypto provider
/// installed, even for plain `http://`; the workspace uses ring.
pub(crate) fn install_crypto() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

async fn http_client(
    addr: std::net::SocketAddr,
) -> (
    RunningService<RoleClient, Client>,
    mpsc::UnboundedReceiver<ProgressNotificationParam>,
) {
    install_crypto();
    let transport =
        rmcp::transport::StreamableHttpClientTransport::from_uri(format!("http://{addr}/mcp"));
    let (tx, progress) = mpsc::unbounded_channel();
    let client = tokio::time::timeout(HANG, Client { progress: tx }.serve(transport))
        .await
        .expect("the client connects in time")
        .expect("the client connects");
    (client, progress)
}

#[tokio::test]
async fn over_streamable_http_the_same_guarantees_hold() {
    let (addr, shutdown, serving, _workspace) = serve_over_http().await;
    let (client, mut progress) = http_client(addr).await;

    // Schemas and annotations over HTTP are the MCP export, unchanged.
    let tools = client.list_all_tools().await.unwrap();
    let listed = serde_json::to_value(&tools).unwrap();
    let mut registry = quickstart_registry().unwrap();
    registry.register(CountStepsTool).unwrap();
    let exported = export_declarations(ExportTarget::Mcp, registry.specs());
    assert_eq!(listed, exported.to_json());
    assert_eq!(listed.as_array().unwrap().len(), 5);

    let good = call_on(&client, "read_file", json!({"path": "notes.txt"})).await;
    assert_eq!(good["isError"], false);
    assert_eq!(good["structuredContent"]["text"], "remember the milk\n");

    let bad = call_on(
        &client,
        "calculate",
        json!({"a": 1, "op": "modulo", "b": 2}),
    )
    .await;
    assert_eq!(bad["isError"], true);
    assert!(
        text(&bad).starts_with("invalid arguments"),
        "{}",
        text(&bad)
    );

    let forged = call_on(
        &client,
        "search_docs",
        json!({"query": "x", "index": "mine"}),
    )
    .await;
    assert_eq!(forged["isError"], true);
    assert!(text(&forged).contains("`index`"), "{}", text(&forged));

    let escape = call_on(&client, "read_file", json!({"path": "../../etc/passwd"})).await;
    assert_eq!(escape["isError"], true);

    let unknown = client.call_tool(params("drop_tables", json!({}))).await;
    match unknown {
        Err(ServiceError::McpError(e)) => assert_eq!(e.code, ErrorCode::INVALID_PARAMS),
        other => panic!("expected a protocol error, got {other:?}"),
    }

    // Progress reported by the tool reaches the client as notifications.
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params(
        "count_steps",
        json!({"steps": 3}),
    )));
    let handle = client
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .unwrap();
    tokio::time::timeout(HANG, handle.await_response())
        .await
        .expect("answers")
        .expect("not a protocol error");
    let first = tokio::time::timeout(HANG, progress.recv())
        .await
        .expect("progress arrives")
        .expect("a notification");
    assert_eq!(first.progress, 1.0);

    // A second client gets its own session; both work side by side.
    let (other, _p) = http_client(addr).await;
    let sum = call_on(&other, "calculate", json!({"a": 2, "op": "add", "b": 3})).await;
    assert_eq!(text(&sum), "5.0");

    shutdown.cancel();
    let stopped = tokio::time::timeout(HANG, serving)
        .await
        .expect("the server stops when told")
        .unwrap();
    assert!(stopped.is_ok());
}

#[tokio::test]
async fn over_streamable_http_a_foreign_host_header_is_refused() {
    install_crypto();
    let (addr, shutdown, _serving, _workspace) = serve_over_http().await;
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "probe", "version": "1"}}
    });
    let post = |host: &'static str| {
        reqwest::Client::new()
            .post(format!("http://{addr}/mcp"))
            .header("host", host)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(initialize.to_string())
            .send()
    };
    // A DNS-rebinding page would arrive under its own name.
    let foreign = post("attacker.example").await.unwrap();
    assert_eq!(foreign.status(), reqwest::StatusCode::FORBIDDEN);
    let local = post("localhost").await.unwrap();
    assert!(local.status().is_success(), "{}", local.status());
    shutdown.cancel();
}

/// One raw POST (or other method) to `/mcp`: the status, the session id
/// header, and the JSON-RPC messages of the body (plain JSON or SSE).
pub(crate) async fn raw(
    addr: std::net::SocketAddr,
    method: reqwest::Method,
    headers: &[(&str, &str)],
    body: String,
) -> (reqwest::StatusCode, Option<String>, Vec<serde_json::Value>) {
    install_crypto();
    let mut request = reqwest::Client::new()
        .request(method, format!("http://{addr}/mcp"))
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = tokio::time::timeout(HANG, request.body(body).send())
        .await
        .expect("answers in time")
        .unwrap();
    let status = response.status();
    let session = response
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_owned());
    let text = tokio::time::timeout(HANG, response.text())
        .await
        .expect("the body ends in time")
        .unwrap();
    let messages = match serde_json::from_str(&text) {
        Ok(value) => vec![value],
        Err(_) => text
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str(d.trim()).ok())
            .collect(),
    };
    (status, session, messages)
}

const LEGACY: &str = "2025-11-25";

/// A legacy (2025-11-25) session over streamable HTTP.
pub(crate) struct LegacySession {
    addr: std::net::SocketAddr,
    id: String,
}

impl LegacySession {
    /// One request with `body` in this session: the status and the JSON-RPC
    /// messages of the answer.
    pub(crate) async fn send(
        &self,
        method: reqwest::Method,
        body: String,
    ) -> (reqwest::StatusCode, Vec<serde_json::Value>) {
        let headers = [
            ("mcp-session-id", self.id.as_str()),
            ("mcp-protocol-version", LEGACY),
        ];
        let (status, _, messages) = raw(self.addr, method, &headers, body).await;
        (status, messages)
    }
}

/// A legacy (2025-11-25) `initialize` request, as text.
fn initialize_legacy() -> String {
    json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": LEGACY, "capabilities": {},
                   "clientInfo": {"name": "probe", "version": "1"}}
    })
    .to_string()
}

/// [`raw`]: a POST of `body` sent from a page at `origin`.
async fn post_from(
    addr: std::net::SocketAddr,
    origin: &str,
    body: String,
) -> (reqwest::StatusCode, Option<String>, Vec<serde_json::Value>) {
    raw(addr, reqwest::Method::POST, &[("origin", origin)], body).await
}

/// Initializes a legacy (session) connection.
pub(crate) async fn initialized_session(addr: std::net::SocketAddr) -> LegacySession {
    let (status, id, _) = raw(addr, reqwest::Method::POST, &[], initialize_legacy()).await;
    assert!(status.is_success(), "{status}");
    let session = LegacySession {
        addr,
        id: id.expect("a session id"),
    };
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (status, _) = session
        .send(reqwest::Method::POST, initialized.to_string())
        .await;
    assert!(status.is_success(), "{status}");
    session
}

#[tokio::test]
async fn over_streamable_http_a_foreign_origin_is_refused_and_loopback_origins_are_not() {
    let (addr, shutdown, _serving, _workspace) = serve_over_http().await;
    let initialize = initialize_legacy();
    for origin in ["http://evil.example", "https://evil.example:443", "null"] {
        let (status, session, _) = post_from(addr, origin, initialize.clone()).await;
        assert_eq!(status, reqwest::StatusCode::FORBIDDEN, "{origin}");
        assert_eq!(session, None, "{origin}: no session is made");
    }
    // Not even a body the screen answers itself gets past a foreign Origin.
    let (status, _, _) = post_from(addr, "http://evil.example", "not json".into()).await;
    assert_eq!(status, reqwest::StatusCode::FORBIDDEN);
    for origin in [
        "http://localhost:5173",
        "http://127.0.0.1:8080",
        "https://[::1]:3000",
    ] {
        let (status, _, _) = post_from(addr, origin, initialize.clone()).await;
        assert!(status.is_success(), "{origin}: {status}");
    }
    // No Origin (a client that is not a browser) is not refused.
    let (status, _, _) = raw(addr, reqwest::Method::POST, &[], initialize).await;
    assert!(status.is_success(), "{status}");
    shutdown.cancel();
}

#[tokio::test]
async fn over_streamable_http_listed_origins_replace_the_loopback_default() {
    let config =
        StreamableHttpServerConfig::default().with_allowed_origins(["https://app.example.com:443"]);
    let (addr, shutdown, _serving, _workspace) = serve_with(config).await;
    let initialize = initialize_legacy();
    for (origin, allowed) in [
        ("https://app.example.com", true),
        ("http://evil.example", false),
        ("http://localhost:5173", false),
    ] {
        let (status, _, _) = post_from(addr, origin, initialize.clone()).await;
        assert_eq!(status.is_success(), allowed, "{origin}: {status}");
        if !allowed {
            assert_eq!(status, reqwest::StatusCode::FORBIDDEN, "{origin}");
        }
    }
    shutdown.cancel();
}

#[tokio::test]
async fn over_streamable_http_deleting_a_session_answers_no_content() {
    let (addr, shutdown, _serving, _workspace) = serve_over_http().await;
    let session = initialized_session(addr).await;
    let (status, _) = session.send(reqwest::Method::DELETE, String::new()).await;
    assert_eq!(status, reqwest::StatusCode::NO_CONTENT);
    // The session is gone.
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string();
    let (status, _) = session.send(reqwest::Method::POST, list).await;
    assert_eq!(status, reqwest::StatusCode::NOT_FOUND);
    shutdown.cancel();
}

#[tokio::test]
async fn over_streamable_http_malformed_messages_get_json_rpc_answers() {
    let (addr, shutdown, _serving, _workspace) = serve_over_http().await;
    let session = initialized_session(addr).await;

    let (status, messages) = session
        .send(reqwest::Method::POST, "{not json".into())
        .await;
    assert_eq!(status, reqwest::StatusCode::BAD_REQUEST);
    assert_eq!(messages[0]["error"]["code"], -32700, "{messages:?}");

    let nameless = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                          "params": {"arguments": {}}});
    let (_, messages) = session
        .send(reqwest::Method::POST, nameless.to_string())
        .await;
    assert_eq!(messages[0]["id"], 3, "{messages:?}");
    assert_eq!(messages[0]["error"]["code"], -32602, "{messages:?}");

    let levels = 100_000;
    let nested = format!("{}{}", "[".repeat(levels), "]".repeat(levels));
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{{"name":"calculate","arguments":{{"a":{nested},"op":"add","b":1}}}}}}"#
    );
    let (_, messages) = session.send(reqwest::Method::POST, deep).await;
    assert_eq!(messages[0]["id"], 4, "{messages:?}");
    assert_eq!(messages[0]["result"]["isError"], true, "{messages:?}");
    let text = messages[0]["result"]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(text.contains("nest deeper than 64 levels"), "{text}");

    let repeated = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"calculate","arguments":{"a":1,"op":"add","b":2,"b":3}}}"#;
    let (_, messages) = session.send(reqwest::Method::POST, repeated.into()).await;
    assert_eq!(messages[0]["result"]["isError"], true, "{messages:?}");
    let text = messages[0]["result"]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(text.contains("appears more than once"), "{text}");
    shutdown.cancel();
}

#[tokio::test]
async fn over_streamable_http_2026_07_28_results_carry_their_result_type() {
    let (addr, shutdown, _serving, _workspace) = serve_over_http().await;
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "probe", "version": "1"}
    });
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                      "params": {"_meta": meta, "name": "calculate",
                                 "arguments": {"a": 1, "op": "modulo", "b": 2}}});
    let headers = [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "calculate"),
    ];
    let (status, _, messages) = raw(addr, reqwest::Method::POST, &headers, call.to_string()).await;
    assert!(status.is_success(), "{status} {messages:?}");
    assert_eq!(messages[0]["result"]["isError"], true, "{messages:?}");
    assert_eq!(
        messages[0]["result"]["resultType"], "complete",
        "{messages:?}"
    );

    // The same call on a 2025-11-25 session has no such field.
    let session = initialized_session(addr).await;
    let call = json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
                      "params": {"name": "calculate", "arguments": {"a": 1, "op": "add", "b": 2}}});
    let (_, messages) = session.send(reqwest::Method::POST, call.to_string()).await;
    assert_eq!(messages[0]["result"]["isError"], false, "{messages:?}");
    assert!(
        messages[0]["result"].get("resultType").is_none(),
        "{messages:?}"
    );
    shutdown.cancel();
}

#[tokio::test]
async fn over_streamable_http_a_body_is_read_whole_up_to_its_bound_and_refused_past_it() {
    let bound = 64 << 10;
    let mut config = StreamableHttpServerConfig::default();
    config.max_request_body_bytes = bound;
    let (addr, shutdown, _serving, _workspace) = serve_with(config).await;
    let session = initialized_session(addr).await;
    // Whitespace between members: a body of any length around one small
    // call (it reaches the server in several reads).
    let call = |length: usize| {
        let head = r#"{"jsonrpc":"2.0","#;
        let tail = r#""id":7,"method":"tools/call","params":{"name":"calculate","arguments":{"a":1,"op":"add","b":2}}}"#;
        let padding = " ".repeat(length - head.len() - tail.len());
        format!("{head}{padding}{tail}")
    };

    let (status, messages) = session.send(reqwest::Method::POST, call(bound)).await;
    assert!(status.is_success(), "{status}");
    assert_eq!(messages[0]["id"], 7, "{messages:?}");
    assert_eq!(messages[0]["result"]["isError"], false, "{messages:?}");
    assert_eq!(messages[0]["result"]["content"][0]["text"], "3.0");

    let (status, _) = session.send(reqwest::Method::POST, call(bound + 1)).await;
    assert_eq!(status, reqwest::StatusCode::PAYLOAD_TOO_LARGE);
    shutdown.cancel();
}
