//! The MCP server scaled out: two instances in stateless mode behind a
//! round-robin proxy serve one client, on every protocol version; with
//! sessions, a client on an older protocol cannot be spread that way.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, ServiceExt};
use serde_json::{Value, json};
use tinyagents_tools::approval::approval_fingerprint;
use tinyagents_tools::policy::ConfirmationPolicy;
use tinyagents_tools::spec::SafetyItem;
use tinyagents_tools::{CancellationToken, ToolExecutor};
use tinyagents_tools_examples::{NoteBook, quickstart_registry, quickstart_run};
use tinyagents_tools_mcp::rmcp::transport::StreamableHttpServerConfig;
use tinyagents_tools_mcp::{McpApprover, McpServer, stateless_config};
use tokio::net::{TcpListener, TcpStream};

use crate::approvals::{Answer, Asked, note};
use crate::common::{HANG, error_message, params, text};

/// One server instance: its address, how many requests it made a run for
/// (one per session, or one per request when stateless), and its notes. It
/// stops serving when dropped.
struct Instance {
    addr: SocketAddr,
    runs: Arc<AtomicUsize>,
    notebook: Arc<NoteBook>,
    shutdown: CancellationToken,
    _workspace: tempfile::TempDir,
}

impl Drop for Instance {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

/// The request-state key the instances share.
const SHARED_KEY: &[u8] = b"the instances' shared sealing key, 32+ bytes";

async fn instance(config: StreamableHttpServerConfig) -> Instance {
    instance_with(config, false).await
}

/// An instance; with `approvals`, `write_note` is put to the client by an
/// [`McpApprover`].
async fn instance_with(config: StreamableHttpServerConfig, approvals: bool) -> Instance {
    instance_sharing(config, approvals, None).await
}

/// An instance that records the states it accepts in `journal`, when given.
async fn instance_sharing(
    config: StreamableHttpServerConfig,
    approvals: bool,
    journal: Option<tinyagents_tools::journal::Journal>,
) -> Instance {
    let workspace = tempfile::tempdir().unwrap();
    let root = workspace.path().to_owned();
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&runs);
    let notebook = Arc::new(NoteBook::default());
    let notes = Arc::clone(&notebook);
    let executor = ToolExecutor::builder(quickstart_registry().unwrap(), ());
    let approver = McpApprover::new();
    let (executor, server) = if approvals {
        let policy = ConfirmationPolicy::new(approver.clone()).timeout(Duration::from_secs(5));
        let executor = executor.middleware(policy);
        (executor, true)
    } else {
        (executor.unenforced(SafetyItem::Confirmation), false)
    };
    // Every instance seals input rounds under the same key.
    let mut builder = McpServer::builder(executor)
        .name("scaled-out")
        .request_state_key(SHARED_KEY);
    if server {
        builder = builder.approver(approver);
    }
    if let Some(journal) = journal {
        builder = builder.request_state_journal(journal);
    }
    let server = builder
        .build(move || {
            counted.fetch_add(1, Ordering::SeqCst);
            quickstart_run(&root, Arc::clone(&notes))
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
        notebook,
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
    connect_as(proxy, Versioned(version)).await
}

async fn connect_as<H: ClientHandler>(
    proxy: SocketAddr,
    handler: H,
) -> Result<RunningService<RoleClient, H>, String> {
    crate::http::install_crypto();
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let config = StreamableHttpClientTransportConfig::with_uri(format!("http://{proxy}/mcp"));
    let transport = StreamableHttpClientTransport::with_client(http, config);
    tokio::time::timeout(HANG, handler.serve(transport))
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
}

/// The retry of `write_note` with an accept of its approval and the state
/// `asked` sealed.
fn accepted_retry(asked: &Value) -> Value {
    let key = format!("approve-{}", approval_fingerprint("write_note", &note()));
    json!({
        "name": "write_note",
        "arguments": note(),
        "inputResponses": {key: {"action": "accept", "content": {}}},
        "requestState": asked["requestState"],
    })
}

/// Posts `write_note` to `addr` as request 1: the instance asks for its
/// approval; the result.
async fn ask_to_write_note(addr: SocketAddr) -> Value {
    post_call(addr, 1, json!({"name": "write_note", "arguments": note()})).await
}

/// Posts one 2026-07-28 `tools/call` (per-request `_meta`, no session) to
/// `addr` and returns the JSON-RPC result.
async fn post_call(addr: SocketAddr, id: u32, params: Value) -> Value {
    post_call_raw(addr, id, params).await["result"].clone()
}

/// [`post_call`], the whole JSON-RPC answer (result or error).
async fn post_call_raw(addr: SocketAddr, id: u32, params: Value) -> Value {
    crate::http::install_crypto();
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
    });
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
    let response = reqwest::Client::new()
        .post(format!("http://{addr}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "write_note")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let text = response.text().await.unwrap();
    serde_json::from_str(&text).unwrap_or_else(|_| panic!("{text}"))
}

#[tokio::test]
async fn stateless_instances_take_a_2026_approval_asked_by_one_and_sent_to_the_other() {
    let a = instance_with(stateless_config(), true).await;
    let b = instance_with(stateless_config(), true).await;

    // Instance A asks: the call waits for input, and nothing runs.
    let asked = ask_to_write_note(a.addr).await;
    assert_eq!(asked["resultType"], "input_required", "{asked}");
    let fingerprint = approval_fingerprint("write_note", &note());
    let key = format!("approve-{fingerprint}");
    let question = &asked["inputRequests"][&key];
    assert_eq!(question["method"], "elicitation/create", "{asked}");
    assert!(
        question["params"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("`write_note`") && m.contains(&fingerprint)),
        "{question}"
    );
    assert!(a.notebook.notes().is_empty());

    // An accept sent without the state A sealed (a client that computed
    // the key but was never asked) is not an approval: it is asked again.
    let accept = json!({key.clone(): {"action": "accept", "content": {}}});
    let unasked = json!({"name": "write_note", "arguments": note(), "inputResponses": accept});
    let again = post_call(b.addr, 2, unasked).await;
    assert_eq!(again["resultType"], "input_required", "{again}");
    assert!(b.notebook.notes().is_empty());

    // The retry, with the accept and A's state, reaches instance B, which
    // kept nothing: the state carries what it needs.
    let state = asked["requestState"].as_str().unwrap().to_owned();
    let retry = json!({
        "name": "write_note",
        "arguments": note(),
        "inputResponses": accept,
        "requestState": state,
    });
    let done = post_call(b.addr, 3, retry.clone()).await;
    assert_eq!(done["isError"], false, "{done}");
    assert_eq!(b.notebook.notes().len(), 1);
    assert!(a.notebook.notes().is_empty());
    // The accept held for that one call: replayed on the same instance,
    // it is refused before anything runs.
    let replayed = post_call_raw(b.addr, 4, retry).await;
    assert_eq!(replayed["error"]["code"], -32602, "{replayed}");
    assert_eq!(b.notebook.notes().len(), 1);
    // Nor does it cover other arguments.
    let other = json!({"name": "write_note", "arguments": {"title": "eggs", "body": "buy eggs"},
        "inputResponses": accept, "requestState": asked["requestState"]});
    let refused = post_call_raw(a.addr, 5, other).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert!(a.notebook.notes().is_empty());
}

#[tokio::test]
async fn stateless_instances_refuse_an_older_client_s_approval_without_asking() {
    let a = instance_with(stateless_config(), true).await;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let client = Asked {
        version: ProtocolVersion::V_2025_06_18,
        elicits: true,
        answer: Answer::Accept,
        seen: Arc::clone(&seen),
    };
    let client = connect_as(a.addr, client).await.unwrap();
    let answer = tokio::time::timeout(HANG, client.call_tool(params("write_note", note())))
        .await
        .unwrap()
        .unwrap();
    let answer = serde_json::to_value(answer).unwrap();
    assert_eq!(answer["isError"], true, "{answer}");
    assert!(text(&answer).contains("elicitation"), "{}", text(&answer));
    assert!(seen.lock().unwrap().is_empty());
    assert!(a.notebook.notes().is_empty());
}

#[tokio::test]
async fn instances_sharing_a_journal_accept_an_approval_s_state_once_between_them() {
    use tinyagents_tools::journal::{Journal, JournalStore, MemoryJournal};
    // One store, two handles: as two processes opening one database.
    let store: Arc<dyn JournalStore> = Arc::new(MemoryJournal::new());
    let a = instance_sharing(stateless_config(), true, Some(Journal::new(store.clone()))).await;
    let b = instance_sharing(stateless_config(), true, Some(Journal::new(store))).await;
    let asked = ask_to_write_note(a.addr).await;
    let retry = accepted_retry(&asked);
    let done = post_call(b.addr, 2, retry.clone()).await;
    assert_eq!(done["isError"], false, "{done}");
    assert_eq!(b.notebook.notes().len(), 1);
    // The same accept replayed to the other instance: refused there too.
    let replayed = post_call_raw(a.addr, 3, retry).await;
    assert_eq!(replayed["error"]["code"], -32602, "{replayed}");
    assert!(
        error_message(&replayed).contains("already used"),
        "{replayed}"
    );
    assert!(a.notebook.notes().is_empty());
}

#[tokio::test]
async fn a_state_that_cannot_be_checked_against_the_shared_journal_runs_nothing() {
    use tinyagents_tools::journal::Journal;
    let a = instance_with(stateless_config(), true).await;
    let b = instance_sharing(
        stateless_config(),
        true,
        Some(Journal::new(tinyagents_tools::testkit::UnavailableJournal)),
    )
    .await;
    let asked = ask_to_write_note(a.addr).await;
    let retry = accepted_retry(&asked);
    let refused = post_call_raw(b.addr, 2, retry).await;
    assert_eq!(refused["error"]["code"], -32603, "{refused}");
    assert!(b.notebook.notes().is_empty());
}
