//! Case 6: MCP `tools/call` over streamable HTTP, 50 concurrent clients on
//! loopback: our server (`McpServer::serve_http`, feature `mcp-http`)
//! against a server written with rmcp alone (its `StreamableHttpService`
//! over the same hyper HTTP/1.1 accept loop), both exposing "add". One load
//! generator drives both: 50 raw HTTP/1.1 keep-alive connections (hyper's
//! client connection, no pool), each initializing its own MCP session and
//! then sending `tools/call` after `tools/call`, every answer read to its
//! end and checked (the sum must be 42). The two servers are measured in
//! alternating windows (ours, rmcp, ours, rmcp, ...); the verdict is the
//! median over window pairs of ours / rmcp in requests per second.
//!
//! The stdio round trip: this binary started again as a child process
//! serving one session on its stdin and stdout (`--serve-stdio ours|rmcp`),
//! one `tools/call` line written and its answer line read, one at a time.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::Value;
use tinyagents_tools::prelude::{CancellationToken, RunContext, ToolExecutor, ToolRegistry};
use tinyagents_tools_mcp::McpServer;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

use crate::contenders::{ours, rmcp::AddServer};
use crate::harness::{Stats, quartiles, runtime};
use crate::report::{Report, Unit};

/// Concurrent clients.
pub const CLIENTS: usize = 50;

/// The protocol version the clients ask for (sessions, as most clients
/// deployed today).
const PROTOCOL: &str = "2025-06-18";

/// Which server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Server {
    /// Ours.
    Ours,
    /// rmcp alone.
    Rmcp,
}

/// What one window of load measured.
struct Window {
    requests: u64,
    elapsed: Duration,
    latencies_ns: Vec<u64>,
}

/// Our MCP server over "add" (the `#[tool]` one), no subscriber of its own
/// beyond what `McpServer` attaches.
fn our_server() -> McpServer {
    let mut registry = ToolRegistry::new();
    registry.register(ours::MacroAddTool).expect("registers");
    McpServer::builder(ToolExecutor::builder(registry, ()))
        .build(RunContext::empty)
        .expect("builds")
}

/// Starts `server` on a loopback port; returns the address. The server
/// stops when `stop` fires.
async fn start(server: Server, stop: CancellationToken) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("binds");
    let addr = listener.local_addr().expect("an address");
    match server {
        Server::Ours => {
            let ours = our_server();
            tokio::spawn(async move {
                ours.serve_http(listener, StreamableHttpServerConfig::default(), stop)
                    .await
                    .expect("serves");
            });
        }
        Server::Rmcp => {
            let mut config = StreamableHttpServerConfig::default();
            config.cancellation_token = stop.child_token();
            let service = StreamableHttpService::new(
                || Ok(AddServer::new()),
                Arc::new(LocalSessionManager::default()),
                config,
            );
            tokio::spawn(async move {
                loop {
                    let (stream, _) = tokio::select! {
                        _ = stop.cancelled() => break,
                        accepted = listener.accept() => accepted.expect("accepts"),
                    };
                    // As ours does: events are written in small pieces.
                    let _ = stream.set_nodelay(true);
                    let service = hyper_util::service::TowerToHyperService::new(service.clone());
                    tokio::spawn(async move {
                        let _ = hyper::server::conn::http1::Builder::new()
                            .serve_connection(TokioIo::new(stream), service)
                            .await;
                    });
                }
            });
        }
    }
    addr
}

/// One client: a keep-alive connection and an initialized MCP session.
struct Client {
    send: SendRequest<Full<Bytes>>,
    host: String,
    session: String,
    next_id: u64,
}

impl Client {
    async fn connect(addr: SocketAddr) -> Client {
        let stream = tokio::net::TcpStream::connect(addr)
            .await
            .expect("connects");
        stream.set_nodelay(true).expect("nodelay");
        let (send, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .expect("handshake");
        tokio::spawn(connection);
        let mut client = Client {
            send,
            host: addr.to_string(),
            session: String::new(),
            next_id: 1,
        };
        let init = initialize_request();
        let (session, body) = client.post(init.to_string()).await;
        client.session = session.expect("the server opened a session");
        assert!(answer_of(&body, 0).get("result").is_some(), "initialized");
        let (_, _) = client
            .post(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned())
            .await;
        client
    }

    /// POSTs one JSON-RPC message; returns the session header and the whole
    /// body.
    async fn post(&mut self, body: String) -> (Option<String>, Bytes) {
        let mut request = hyper::Request::post("/mcp")
            .header("host", &self.host)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", PROTOCOL);
        if !self.session.is_empty() {
            request = request.header("mcp-session-id", &self.session);
        }
        let request = request
            .body(Full::new(Bytes::from(body)))
            .expect("a request");
        self.send.ready().await.expect("connection ready");
        let response = self.send.send_request(request).await.expect("answered");
        assert!(
            response.status().is_success(),
            "HTTP status {}",
            response.status()
        );
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let body = response
            .into_body()
            .collect()
            .await
            .expect("a body")
            .to_bytes();
        (session, body)
    }

    /// One `tools/call` of "add", checked.
    async fn call_add(&mut self) {
        let id = self.next_id;
        self.next_id += 1;
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"add","arguments":{{"a":40,"b":2}}}}}}"#
        );
        let (_, answer) = self.post(body).await;
        let answer = answer_of(&answer, id);
        assert_eq!(
            answer["result"]["structuredContent"]["sum"],
            serde_json::json!(42),
            "a correct answer: {answer}"
        );
    }
}

/// The JSON-RPC answer with `id` in a body that is either JSON or an event
/// stream.
fn answer_of(body: &[u8], id: u64) -> Value {
    let text = std::str::from_utf8(body).expect("UTF-8");
    let candidates: Vec<&str> = if text.trim_start().starts_with('{') {
        vec![text]
    } else {
        text.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .collect()
    };
    candidates
        .into_iter()
        .filter_map(|c| serde_json::from_str::<Value>(c).ok())
        .find(|v| v["id"] == serde_json::json!(id))
        .unwrap_or_else(|| panic!("no answer to {id} in {text}"))
}

/// Runs `CLIENTS` clients against `addr` for `duration`; counts the calls
/// answered and keeps every latency.
async fn window(clients: &mut Vec<Client>, duration: Duration) -> Window {
    let stop = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let tasks: Vec<_> = clients
        .drain(..)
        .map(|mut client| {
            let stop = Arc::clone(&stop);
            tokio::spawn(async move {
                let mut latencies = Vec::with_capacity(4096);
                while !stop.load(Ordering::Relaxed) {
                    let t = Instant::now();
                    client.call_add().await;
                    latencies.push(t.elapsed().as_nanos() as u64);
                }
                (client, latencies)
            })
        })
        .collect();
    tokio::time::sleep(duration).await;
    stop.store(true, Ordering::Relaxed);
    let mut latencies_ns = Vec::new();
    for task in tasks {
        let (client, latencies) = task.await.expect("a client task");
        latencies_ns.extend(latencies);
        clients.push(client);
    }
    Window {
        requests: latencies_ns.len() as u64,
        elapsed: started.elapsed(),
        latencies_ns,
    }
}

/// The figures the targets need.
#[derive(Debug, Default, Clone, Copy)]
pub struct McpHttp {
    /// Ours / rmcp in requests per second, median over window pairs.
    pub rps_ratio: f64,
}

/// Runs case 6 (`windows` alternating windows per server of `window_len`
/// each, and `stdio_calls` stdio round trips per server) and records it.
pub fn run(
    windows: usize,
    window_len: Duration,
    stdio_calls: usize,
    report: &mut Report,
) -> McpHttp {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let (ours, rmcp) = rt.block_on(async {
        let stop = CancellationToken::new();
        let ours_addr = start(Server::Ours, stop.clone()).await;
        let rmcp_addr = start(Server::Rmcp, stop.clone()).await;
        let mut ours_clients = Vec::with_capacity(CLIENTS);
        let mut rmcp_clients = Vec::with_capacity(CLIENTS);
        for _ in 0..CLIENTS {
            ours_clients.push(Client::connect(ours_addr).await);
            rmcp_clients.push(Client::connect(rmcp_addr).await);
        }
        // Warm-up: a short window each.
        window(&mut ours_clients, window_len / 4).await;
        window(&mut rmcp_clients, window_len / 4).await;
        let mut ours = Vec::with_capacity(windows);
        let mut rmcp = Vec::with_capacity(windows);
        for round in 0..windows {
            // Alternate which server goes first.
            if round % 2 == 0 {
                ours.push(window(&mut ours_clients, window_len).await);
                rmcp.push(window(&mut rmcp_clients, window_len).await);
            } else {
                rmcp.push(window(&mut rmcp_clients, window_len).await);
                ours.push(window(&mut ours_clients, window_len).await);
            }
        }
        stop.cancel();
        (ours, rmcp)
    });
    let rps = |w: &Window| w.requests as f64 / w.elapsed.as_secs_f64();
    let ratios: Vec<f64> = ours
        .iter()
        .zip(&rmcp)
        .map(|(o, r)| rps(o) / rps(r))
        .collect();
    let ratio = Stats::from_samples(ratios.clone(), 1).median_ns;
    let spread = quartiles(ratios);
    for (key, label, windows) in [
        ("ours", "ours (McpServer::serve_http)", &ours),
        ("rmcp", "rmcp alone (StreamableHttpService)", &rmcp),
    ] {
        let per_window: Vec<f64> = windows.iter().map(rps).collect();
        let rps_median = Stats::from_samples(per_window.clone(), 1).median_ns;
        report.value(
            "mcp_http",
            &format!("{key}_rps"),
            &format!("{label}: tools/call per second, 50 clients"),
            serde_json::json!(rps_median.round()),
        );
        report.value(
            "mcp_http",
            &format!("{key}_rps_windows"),
            &format!("{label}: per window"),
            serde_json::json!(per_window.iter().map(|r| r.round()).collect::<Vec<_>>()),
        );
        let mut all: Vec<u64> = windows
            .iter()
            .flat_map(|w| w.latencies_ns.iter().copied())
            .collect();
        all.sort_unstable();
        let pct = |p: f64| all[((all.len() - 1) as f64 * p).round() as usize];
        report.stats(
            "mcp_http",
            &format!("{key}_latency"),
            &format!("{label}: latency of a call, median (min, max)"),
            Unit::Us,
            Stats {
                median_ns: pct(0.5) as f64,
                min_ns: all[0] as f64,
                max_ns: all[all.len() - 1] as f64,
                samples: all.len(),
                iters: 1,
            },
        );
        report.value(
            "mcp_http",
            &format!("{key}_p50_us"),
            &format!("{label}: p50 latency (us)"),
            serde_json::json!(pct(0.5) / 1000),
        );
        report.value(
            "mcp_http",
            &format!("{key}_p99_us"),
            &format!("{label}: p99 latency (us)"),
            serde_json::json!(pct(0.99) / 1000),
        );
    }
    report.value(
        "mcp_http",
        "window_ms",
        "length of one measured window (ms)",
        serde_json::json!(window_len.as_millis() as u64),
    );
    report.paired(
        "ours_mcp_http_rps_vs_rmcp",
        "ours / rmcp, MCP HTTP requests per second (median of window pairs)",
        ratio,
    );
    report.quartiles(
        "ours_mcp_http_rps_vs_rmcp_quartiles",
        "ours / rmcp, MCP HTTP rps: 1st and 3rd quartile over window pairs",
        spread,
    );

    stdio_case(stdio_calls, report);
    McpHttp { rps_ratio: ratio }
}

/// `n` sequential `tools/call` requests from one client to `server` on
/// loopback, in this process on one thread, after the session opened: the
/// loop `--profile-mcp-http` and `--profile-rmcp-http` run for a profiler.
fn profile_http(server: Server, n: u64) {
    runtime().block_on(async {
        let stop = CancellationToken::new();
        let addr = start(server, stop.clone()).await;
        let mut client = Client::connect(addr).await;
        for _ in 0..n {
            client.call_add().await;
        }
        stop.cancel();
    });
}

/// `which` server (`ours` or `rmcp`) alone under `CLIENTS` clients for
/// `duration`, as in one window of case 6; prints its requests per second.
pub fn solo(which: &str, duration: Duration) {
    let server = match which {
        "ours" => Server::Ours,
        "rmcp" => Server::Rmcp,
        other => panic!("--mcp-http-solo takes `ours` or `rmcp`, not `{other}`"),
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    rt.block_on(async {
        let stop = CancellationToken::new();
        let addr = start(server, stop.clone()).await;
        let mut clients = Vec::with_capacity(CLIENTS);
        for _ in 0..CLIENTS {
            clients.push(Client::connect(addr).await);
        }
        let w = window(&mut clients, duration).await;
        println!(
            "{which}: {:.0} tools/call per second",
            w.requests as f64 / w.elapsed.as_secs_f64()
        );
        stop.cancel();
    });
}

/// `n` sequential `tools/call` requests through our HTTP server.
pub fn profile_ours_http(n: u64) {
    profile_http(Server::Ours, n);
}

/// `n` sequential `tools/call` requests through rmcp's HTTP server.
pub fn profile_rmcp_http(n: u64) {
    profile_http(Server::Rmcp, n);
}

/// The stdio round trip, ours and rmcp's side by side: both children
/// serve at once and take calls in turn (which goes first alternating), so
/// that load from elsewhere falls on both alike; a tenth of the calls warm
/// up first. Reports each server's round trip and ours / rmcp paired by
/// call (the median of the per-call ratios, with its quartiles).
pub fn stdio_case(calls: usize, report: &mut Report) {
    let (ours, rmcp) = runtime().block_on(async {
        let mut ours = StdioChild::start(Server::Ours).await;
        let mut rmcp = StdioChild::start(Server::Rmcp).await;
        let warm = calls / 10;
        let (mut ours_ns, mut rmcp_ns) = (Vec::with_capacity(calls), Vec::with_capacity(calls));
        for id in 1..=(warm + calls) as u64 {
            let (o, r) = if id % 2 == 0 {
                (ours.call(id).await, rmcp.call(id).await)
            } else {
                let r = rmcp.call(id).await;
                (ours.call(id).await, r)
            };
            if id as usize > warm {
                ours_ns.push(o);
                rmcp_ns.push(r);
            }
        }
        ours.finish().await;
        rmcp.finish().await;
        (ours_ns, rmcp_ns)
    });
    let per_call: Vec<f64> = ours.iter().zip(&rmcp).map(|(o, r)| o / r).collect();
    let spread = quartiles(per_call.clone());
    let ratio = Stats::from_samples(per_call, 1).median_ns;
    for (server, samples) in [(Server::Ours, ours), (Server::Rmcp, rmcp)] {
        let key = match server {
            Server::Ours => "ours_stdio_round_trip",
            Server::Rmcp => "rmcp_stdio_round_trip",
        };
        report.stats(
            "mcp_stdio",
            key,
            &format!("{server:?}: one tools/call over a child's stdio, round trip"),
            Unit::Us,
            Stats::from_samples(samples, 1),
        );
    }
    report.paired(
        "ours_mcp_stdio_round_trip_vs_rmcp",
        "ours / rmcp, stdio round trip (paired by call)",
        ratio,
    );
    report.quartiles(
        "ours_mcp_stdio_round_trip_vs_rmcp_quartiles",
        "ours / rmcp, stdio round trip: 1st and 3rd quartile over calls",
        spread,
    );
}

/// One child process serving `server` on its stdio (this binary with
/// `--serve-stdio`), its session initialized.
struct StdioChild {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    stdout: BufReader<tokio::process::ChildStdout>,
    line: String,
}

impl StdioChild {
    async fn start(server: Server) -> StdioChild {
        let which = match server {
            Server::Ours => "ours",
            Server::Rmcp => "rmcp",
        };
        let mut child = tokio::process::Command::new(std::env::current_exe().expect("this binary"))
            .args(["--serve-stdio", which])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawns");
        let mut stdin = child.stdin.take().expect("stdin");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut line = String::new();
        let init = initialize_request();
        stdin
            .write_all(format!("{init}\n").as_bytes())
            .await
            .expect("writes");
        stdout.read_line(&mut line).await.expect("reads");
        assert!(answer_of(line.as_bytes(), 0).get("result").is_some());
        stdin
            .write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
            .await
            .expect("writes");
        StdioChild {
            child,
            stdin,
            stdout,
            line,
        }
    }

    /// One `tools/call` written and its answer line read (checked); the
    /// round trip in nanoseconds.
    async fn call(&mut self, id: u64) -> f64 {
        let message = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"add\",\"arguments\":{{\"a\":40,\"b\":2}}}}}}\n"
        );
        self.line.clear();
        let t = Instant::now();
        self.stdin
            .write_all(message.as_bytes())
            .await
            .expect("writes");
        self.stdout.read_line(&mut self.line).await.expect("reads");
        let elapsed = t.elapsed();
        let answer = answer_of(self.line.as_bytes(), id);
        assert_eq!(
            answer["result"]["structuredContent"]["sum"],
            serde_json::json!(42)
        );
        elapsed.as_nanos() as f64
    }

    /// Closes the child's stdin and waits (briefly) for it to end.
    async fn finish(self) {
        let StdioChild {
            mut child, stdin, ..
        } = self;
        drop(stdin);
        let _ = tokio::time::timeout(Duration::from_secs(5), child.wait()).await;
    }
}

/// The `initialize` request (id 0) both load generators open a session with.
fn initialize_request() -> Value {
    serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"}
        }
    })
}

/// Serves one MCP session on this process's stdin and stdout: `which` is
/// `ours` or `rmcp`. Returns when the client closes stdin.
pub fn serve_stdio(which: &str) {
    runtime().block_on(async {
        match which {
            "ours" => {
                let running = our_server().serve_stdio().await.expect("initializes");
                let _ = running.waiting().await;
            }
            "rmcp" => {
                use rmcp::ServiceExt;
                let running = AddServer::new()
                    .serve(rmcp::transport::stdio())
                    .await
                    .expect("initializes");
                let _ = running.waiting().await;
            }
            other => panic!("--serve-stdio ours|rmcp, not {other}"),
        }
    });
}
