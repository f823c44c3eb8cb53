//! The MCP server over streamable HTTP (feature `mcp-http`), served on
//! 127.0.0.1 and driven by rmcp's HTTP client: the same guarantees as over
//! stdio, sessions side by side, shutdown, and the loopback `Host` rule.

use std::sync::Arc;

use rmcp::model::{CallToolRequest, ClientRequest, ErrorCode, ProgressNotificationParam};
use rmcp::service::{PeerRequestOptions, RoleClient, RunningService};
use rmcp::{ServiceError, ServiceExt};
use serde_json::json;
use tinyagents_tools::mcp::McpServer;
use tinyagents_tools::providers::{ExportTarget, export_declarations};
use tinyagents_tools::{CancellationToken, SafetyItem, ToolExecutor};
use tinyagents_tools_examples::{NoteBook, quickstart_registry, quickstart_run};
use tokio::sync::mpsc;

use crate::mcp_server::{Client, CountStepsTool, HANG, call_on, params, text};

/// Serves the quickstart tools and `count_steps` over streamable HTTP on
/// 127.0.0.1; returns the address, the shutdown token and the serving task.
async fn serve_over_http() -> (
    std::net::SocketAddr,
    CancellationToken,
    tokio::task::JoinHandle<std::io::Result<()>>,
    tempfile::TempDir,
) {
    use tinyagents_tools::mcp::rmcp::transport::StreamableHttpServerConfig;
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
    let serving = tokio::spawn(async move {
        server
            .serve_http(listener, StreamableHttpServerConfig::default(), stop)
            .await
    });
    (addr, shutdown, serving, workspace)
}

/// reqwest (under rmcp's HTTP client too) needs a rustls crypto provider
/// installed, even for plain `http://`; the workspace uses ring.
fn install_crypto() {
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
