//! The MCP server scaled out: two instances in stateless mode behind a
//! round-robin proxy serve one client, on every protocol version; with
//! sessions, a client on an older protocol cannot be spread that way.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, ServiceExt};
use serde_json::json;
use tinyagents_tools::mcp::rmcp::transport::StreamableHttpServerConfig;
use tinyagents_tools::mcp::{McpServer, stateless_config};
use tinyagents_tools::{CancellationToken, SafetyItem, ToolExecutor};
use tinyagents_tools_examples::{NoteBook, quickstart_registry, quickstart_run};
use tokio::net::{TcpListener, TcpStream};

use crate::mcp_server::{HANG, params, text};

/// One server instance: its address, how many requests it made a run for
/// (one per session, or one per request when stateless), and its shutdown.
struct Instance {
    addr: SocketAddr,
    runs: Arc<AtomicUsize>,
    shutdown: CancellationToken,
    _workspace: tempfile::TempDir,
}

async fn instance(config: StreamableHttpServerConfig) -> Instance {
    let workspace = tempfile::tempdir().unwrap();
    let root = workspace.path().to_owned();
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&runs);
    let executor = ToolExecutor::builder(quickstart_registry().unwrap(), ())
        .unenforced(SafetyItem::Confirmation);
    let server = McpServer::builder(executor)
        .name("scaled-out")
        .build(move || {
            counted.fetch_add(1, Ordering::SeqCst);
            quickstart_run(&root, Arc::new(NoteBook::default()))
        })
        .unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let shutdown = CancellationToken::new();
    let stop = shutdown.clone();
    tokio::spawn(async move { server.serve_http(listener, config, stop).await });
    Instance {
        addr,
        runs,
        shutdown,
        _workspace: workspace,
    }
}

/// A TCP proxy on 127.0.0.1 sending each new connection to the next backend
/// in turn; returns its address and how many connections each backend got.
async fn round_robin(backends: Vec<SocketAddr>) -> (SocketAddr, Arc<Vec<AtomicUsize>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let counts: Arc<Vec<AtomicUsize>> =
        Arc::new(backends.iter().map(|_| AtomicUsize::new(0)).collect());
    let seen = Arc::clone(&counts);
    tokio::spawn(async move {
        let mut next = 0usize;
        while let Ok((mut inbound, _)) = listener.accept().await {
            let which = next % backends.len();
            next += 1;
            seen[which].fetch_add(1, Ordering::SeqCst);
            let backend = backends[which];
            tokio::spawn(async move {
                if let Ok(mut outbound) = TcpStream::connect(backend).await {
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                }
            });
        }
    });
    (addr, counts)
}

/// A client that offers `version` in `initialize`.
#[derive(Clone)]
struct Versioned(ProtocolVersion);

impl ClientHandler for Versioned {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("scale-out-test", "0"),
        )
        .with_protocol_version(self.0.clone())
    }
}

/// Connects through `proxy` with a new TCP connection per HTTP request, so
/// the proxy spreads the client's requests over the backends.
async fn connect(
    proxy: SocketAddr,
    version: ProtocolVersion,
) -> Result<RunningService<RoleClient, Versioned>, String> {
    crate::mcp_http::install_crypto();
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let config = StreamableHttpClientTransportConfig::with_uri(format!("http://{proxy}/mcp"));
    let transport = StreamableHttpClientTransport::with_client(http, config);
    tokio::time::timeout(HANG, Versioned(version).serve(transport))
        .await
        .map_err(|_| "the client did not connect in time".to_owned())?
        .map_err(|e| e.to_string())
}

/// Lists the tools, then makes six calls; every answer must be right.
async fn list_and_calls(client: &RunningService<RoleClient, Versioned>) -> Result<(), String> {
    let tools = tokio::time::timeout(HANG, client.list_all_tools())
        .await
        .map_err(|_| "tools/list timed out".to_owned())?
        .map_err(|e| e.to_string())?;
    if tools.len() != 4 {
        return Err(format!("listed {} tools", tools.len()));
    }
    for a in 1..=6 {
        let call = params("calculate", json!({"a": a, "op": "add", "b": 10}));
        let answer = tokio::time::timeout(HANG, client.call_tool(call))
            .await
            .map_err(|_| "tools/call timed out".to_owned())?
            .map_err(|e| e.to_string())?;
        let answer = serde_json::to_value(answer).unwrap();
        let expected = format!("{}.0", a + 10);
        if answer["isError"] != false || text(&answer) != expected {
            return Err(format!("call {a} answered {answer}"));
        }
    }
    Ok(())
}

#[tokio::test]
async fn stateless_instances_behind_a_round_robin_proxy_serve_one_client() {
    for version in [
        ProtocolVersion::V_2025_03_26,
        ProtocolVersion::V_2025_06_18,
        ProtocolVersion::LATEST,
    ] {
        let a = instance(stateless_config()).await;
        let b = instance(stateless_config()).await;
        let (proxy, connections) = round_robin(vec![a.addr, b.addr]).await;

        let client = connect(proxy, version.clone()).await.unwrap();
        list_and_calls(&client).await.unwrap_or_else(|e| {
            panic!("on {version}: {e}");
        });

        let (runs_a, runs_b) = (a.runs.load(Ordering::SeqCst), b.runs.load(Ordering::SeqCst));
        assert!(
            runs_a >= 3 && runs_b >= 3,
            "on {version}, both instances serve requests: {runs_a} and {runs_b}"
        );
        for (i, count) in connections.iter().enumerate() {
            assert!(count.load(Ordering::SeqCst) >= 3, "backend {i} got traffic");
        }
        let _ = client.cancel().await;
        a.shutdown.cancel();
        b.shutdown.cancel();
    }
}

#[tokio::test]
async fn with_sessions_an_older_client_cannot_be_spread_over_two_instances() {
    let a = instance(StreamableHttpServerConfig::default()).await;
    let b = instance(StreamableHttpServerConfig::default()).await;
    let (proxy, _connections) = round_robin(vec![a.addr, b.addr]).await;
    let outcome = match connect(proxy, ProtocolVersion::V_2025_06_18).await {
        Ok(client) => list_and_calls(&client).await,
        Err(e) => Err(e),
    };
    assert!(
        outcome.is_err(),
        "a session lives in one process, so a proxy spreading its requests breaks it"
    );
    a.shutdown.cancel();
    b.shutdown.cancel();
}
