//! A tool's channel to the MCP client of its call ([`McpPeer`]): log
//! messages, sampling and elicitation, driven by rmcp's client over an
//! in-process pipe and over stateless HTTP; and the classified errors when
//! the client cannot be asked (no capability, no MCP at all, stateless
//! mode), never answers, or the call ends first.

#![allow(deprecated)] // MCP logging and sampling, still in 2025-11-25

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{
    CancelledNotificationParam, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ElicitationAction, LoggingLevel,
    LoggingMessageNotificationParam, ProtocolVersion, SamplingMessage, SetLevelRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, ErrorData, ServiceExt};
use serde_json::{Value, json};
use tinyagents_tools::Turn;
use tinyagents_tools::prelude::*;
use tinyagents_tools_mcp::{LogLevel, McpPeer, McpServer, stateless_config};

use crate::common::{HANG, SecretText, call_on, client_config, connect_to, params, text};
use crate::protocol::Wire;

const API_KEY: &str = "sk-peer-5e1f0c9d";

/// What the tool should do with its client.
#[derive(Deserialize, JsonSchema)]
struct AskArgs {
    /// `log`, `sample`, `elicit` or `all`.
    ask: String,
    /// The text to send.
    text: String,
    /// Milliseconds to wait for the client (default: the handle's default).
    wait_ms: Option<u64>,
}

/// Talks to the MCP client of the call.
#[tool(read_only, local, timeout = "2s")]
async fn ask(args: AskArgs, #[inject] client: McpPeer) -> Result<String, ToolError> {
    let client = match args.wait_ms {
        Some(ms) => client.with_timeout(Duration::from_millis(ms)),
        None => client,
    };
    let mut out = Vec::new();
    if matches!(args.ask.as_str(), "log" | "all") {
        let debug = client
            .log(LogLevel::Debug, json!({"debug": args.text}))
            .await?;
        let warning = client.log(LogLevel::Warning, args.text.clone()).await?;
        out.push(format!("debug sent: {debug}, warning sent: {warning}"));
    }
    if matches!(args.ask.as_str(), "sample" | "all") {
        let answer = client.sample(&args.text, 50).await?;
        out.push(format!("model {} said: {}", answer.model, answer.text));
    }
    if matches!(args.ask.as_str(), "elicit" | "all") {
        let form = json!({
            "type": "object",
            "properties": {"name": {"type": "string", "description": "Your name"}},
            "required": ["name"],
        });
        let answer = client.elicit(&args.text, form).await?;
        out.push(format!(
            "user chose {} with {}",
            answer.action.as_str(),
            answer.content.unwrap_or_default()
        ));
    }
    Ok(out.join("; "))
}

/// How the test client answers the server's requests.
#[derive(Clone, Copy, PartialEq)]
enum Answers {
    /// Sampling and elicitation declared and answered.
    Promptly,
    /// Declared, and never answered.
    Never,
    /// Neither declared.
    Undeclared,
}

/// What the test client saw.
#[derive(Default)]
struct Seen {
    logs: Vec<LoggingMessageNotificationParam>,
    prompts: Vec<Value>,
    elicitations: Vec<String>,
    cancelled: Vec<CancelledNotificationParam>,
    /// Server requests whose handler saw its cancellation token fire.
    abandoned: usize,
}

#[derive(Clone)]
struct TestClient {
    answers: Answers,
    version: ProtocolVersion,
    seen: Arc<Mutex<Seen>>,
}

impl TestClient {
    async fn wait_or_answer<T>(&self, ct: &CancellationToken, answer: T) -> Result<T, ErrorData> {
        if self.answers == Answers::Never {
            ct.cancelled().await;
            self.seen.lock().unwrap().abandoned += 1;
            return Err(ErrorData::internal_error("abandoned", None));
        }
        Ok(answer)
    }
}

impl ClientHandler for TestClient {
    fn get_info(&self) -> ClientConfig {
        let declared = self.answers != Answers::Undeclared;
        client_config("peer-test", &self.version, declared, declared)
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        self.seen
            .lock()
            .unwrap()
            .prompts
            .push(serde_json::to_value(&params.messages).unwrap());
        let answer = CreateMessageResult::new(
            SamplingMessage::assistant_text("forty-two"),
            "test-model".to_owned(),
        );
        self.wait_or_answer(&context.ct, answer).await
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        if let ElicitRequestParams::FormElicitationParams { message, .. } = &request {
            self.seen.lock().unwrap().elicitations.push(message.clone());
        }
        let answer =
            ElicitResult::new(ElicitationAction::Accept).with_content(json!({"name": "Ada"}));
        self.wait_or_answer(&context.ct, answer).await
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.seen.lock().unwrap().logs.push(params);
    }

    async fn on_cancelled(
        &self,
        params: CancelledNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.seen.lock().unwrap().cancelled.push(params);
    }
}

fn server() -> McpServer {
    let mut registry = ToolRegistry::new();
    registry.register(AskTool).unwrap();
    McpServer::builder(ToolExecutor::builder(registry, ()))
        .build(|| RunContext::builder(()).secret(SecretText(API_KEY)).build())
        .unwrap()
}

/// The server over an in-process pipe, and a client answering `answers`.
async fn connect(answers: Answers) -> (RunningService<RoleClient, TestClient>, Arc<Mutex<Seen>>) {
    connect_on(answers, ProtocolVersion::V_2025_06_18).await
}

async fn connect_on(
    answers: Answers,
    version: ProtocolVersion,
) -> (RunningService<RoleClient, TestClient>, Arc<Mutex<Seen>>) {
    let server = server();
    let seen = Arc::new(Mutex::new(Seen::default()));
    let handler = TestClient {
        answers,
        version,
        seen: Arc::clone(&seen),
    };
    let client = connect_to(server, handler).await;
    (client, seen)
}

async fn ask_on(client: &RunningService<RoleClient, TestClient>, arguments: Value) -> Value {
    call_on(client, "ask", arguments).await
}

/// Waits until `done` holds for what the client saw (notifications arrive
/// on their own task).
async fn eventually(seen: &Mutex<Seen>, done: impl Fn(&Seen) -> bool) {
    let start = Instant::now();
    while !done(&seen.lock().unwrap()) {
        assert!(start.elapsed() < HANG, "the client never saw it");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn a_tool_logs_samples_and_elicits_through_the_mcp_client_of_its_call() {
    let (client, seen) = connect(Answers::Promptly).await;
    let answer = ask_on(
        &client,
        json!({"ask": "all", "text": "What is six times seven?"}),
    )
    .await;
    assert_eq!(answer["isError"], false, "{answer}");
    assert_eq!(
        text(&answer),
        "debug sent: true, warning sent: true; model test-model said: forty-two; \
         user chose accept with {\"name\":\"Ada\"}"
    );
    eventually(&seen, |s| s.logs.len() == 2).await;
    let seen = seen.lock().unwrap();
    assert_eq!(seen.logs[0].level, LoggingLevel::Debug);
    assert_eq!(
        seen.logs[0].data,
        json!({"debug": "What is six times seven?"})
    );
    assert_eq!(seen.logs[1].level, LoggingLevel::Warning);
    assert_eq!(seen.logs[1].logger.as_deref(), Some("ask"));
    assert_eq!(
        seen.prompts[0][0]["content"]["text"],
        "What is six times seven?"
    );
    assert_eq!(seen.elicitations, ["What is six times seven?"]);
}

#[tokio::test]
async fn log_messages_below_the_level_the_client_set_are_not_sent() {
    let (client, seen) = connect(Answers::Promptly).await;
    client
        .set_level(SetLevelRequestParams::new(LoggingLevel::Info))
        .await
        .expect("the server takes logging/setLevel");
    let answer = ask_on(&client, json!({"ask": "log", "text": "disk almost full"})).await;
    assert_eq!(
        text(&answer),
        "debug sent: false, warning sent: true",
        "{answer}"
    );
    eventually(&seen, |s| !s.logs.is_empty()).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    let seen = seen.lock().unwrap();
    assert_eq!(seen.logs.len(), 1);
    assert_eq!(seen.logs[0].level, LoggingLevel::Warning);
}

#[tokio::test]
async fn a_secret_in_what_a_tool_sends_its_client_is_masked() {
    let (client, seen) = connect(Answers::Promptly).await;
    let leak = format!("the key is {API_KEY}");
    let answer = ask_on(&client, json!({"ask": "all", "text": leak})).await;
    assert_eq!(answer["isError"], false, "{answer}");
    eventually(&seen, |s| s.logs.len() == 2).await;
    let seen = seen.lock().unwrap();
    let sent = format!("{:?} {:?} {:?}", seen.logs, seen.prompts, seen.elicitations);
    assert!(!sent.contains(API_KEY), "{sent}");
    assert!(sent.contains("the key is"), "{sent}");
}

#[tokio::test]
async fn a_client_without_sampling_or_elicitation_gets_a_classified_error_at_once() {
    let (client, seen) = connect(Answers::Undeclared).await;
    for (ask, capability) in [("sample", "sampling"), ("elicit", "elicitation")] {
        let start = Instant::now();
        let answer = ask_on(&client, json!({"ask": ask, "text": "hello"})).await;
        assert_eq!(answer["isError"], true, "{answer}");
        assert_eq!(
            text(&answer),
            format!("the MCP client did not declare {capability}")
        );
        assert!(start.elapsed() < Duration::from_secs(1), "no waiting");
    }
    let seen = seen.lock().unwrap();
    assert!(seen.prompts.is_empty() && seen.elicitations.is_empty());
}

#[tokio::test]
async fn a_client_that_never_answers_sampling_times_out_and_is_told_it_is_cancelled() {
    let (client, seen) = connect(Answers::Never).await;
    let answer = ask_on(
        &client,
        json!({"ask": "sample", "text": "hello", "wait_ms": 200}),
    )
    .await;
    assert_eq!(answer["isError"], true, "{answer}");
    assert_eq!(text(&answer), "the MCP client did not answer within 200 ms");
    // The client's handler is told to stop: the request is cancelled.
    eventually(&seen, |s| s.abandoned == 1).await;
}

#[tokio::test]
async fn when_the_call_times_out_first_the_pending_elicitation_is_cancelled_at_the_client() {
    // The tool's own timeout (2 s) ends the call while the handle would
    // still wait (60 s by default).
    let (client, seen) = connect(Answers::Never).await;
    let start = Instant::now();
    let answer = ask_on(&client, json!({"ask": "elicit", "text": "hello"})).await;
    assert_eq!(answer["isError"], true, "{answer}");
    assert!(
        text(&answer).contains("did not finish within 2000 ms"),
        "{answer}"
    );
    assert!(start.elapsed() < Duration::from_secs(10));
    eventually(&seen, |s| s.abandoned == 1 && s.cancelled.len() == 1).await;
}

#[tokio::test]
async fn a_call_the_client_cancels_cancels_its_pending_sampling_request_too() {
    use rmcp::model::{CallToolRequest, ClientRequest};
    use rmcp::service::PeerRequestOptions;

    let (client, seen) = connect(Answers::Never).await;
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params(
        "ask",
        json!({"ask": "sample", "text": "hello"}),
    )));
    let call = client
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .unwrap();
    // The server's sampling request is waiting at the client.
    eventually(&seen, |s| s.prompts.len() == 1).await;
    let start = Instant::now();
    call.cancel(Some("the user gave up".to_owned()))
        .await
        .unwrap();
    // The tool's handle stops waiting and the client is told at once, long
    // before the tool's 2 s timeout or the handle's 60 s.
    eventually(&seen, |s| s.abandoned == 1 && s.cancelled.len() == 1).await;
    // (The executor drops a tool that ignores its token only after a 1 s
    // grace period.)
    assert!(start.elapsed() < Duration::from_millis(700));
}

#[tokio::test]
async fn outside_mcp_the_handle_reaches_no_client_and_says_so() {
    let mut registry = ToolRegistry::new();
    registry.register(AskTool).unwrap();
    let executor = ToolExecutor::builder(registry, ()).build().unwrap();
    for ask in ["log", "sample", "elicit"] {
        let call = ToolCall::new(
            format!("local-{ask}"),
            "ask",
            json!({"ask": ask, "text": "hi"}).to_string(),
        );
        let result = executor
            .execute(&RunContext::empty(), &Turn::new(1), call)
            .await;
        assert!(result.is_error, "{ask}");
        assert_eq!(result.outcome(), "tool");
        assert_eq!(result.text(), "the call did not come from an MCP client");
    }
    assert!(!McpPeer::detached().is_connected());
}

/// A client over HTTP (one connection per request) that declares sampling.
async fn http_client(addr: std::net::SocketAddr) -> RunningService<RoleClient, TestClient> {
    crate::http::install_crypto();
    let transport = StreamableHttpClientTransport::from_uri(format!("http://{addr}/mcp"));
    let handler = TestClient {
        answers: Answers::Promptly,
        version: ProtocolVersion::V_2025_06_18,
        seen: Arc::default(),
    };
    tokio::time::timeout(HANG, handler.serve(transport))
        .await
        .unwrap()
        .unwrap()
}

#[tokio::test]
async fn in_stateless_mode_a_tool_cannot_reach_its_client_and_says_why() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let shutdown = CancellationToken::new();
    let stop = shutdown.clone();
    let server = server();
    tokio::spawn(async move { server.serve_http(listener, stateless_config(), stop).await });
    let client = http_client(addr).await;
    for ask in ["log", "sample", "elicit"] {
        let answer = ask_on(&client, json!({"ask": ask, "text": "hi"})).await;
        assert_eq!(answer["isError"], true, "{answer}");
        assert_eq!(
            text(&answer),
            "the MCP client cannot be reached: the request was served without a session \
             (stateless mode)"
        );
    }
    let _ = client.cancel().await;
    shutdown.cancel();
}

mod rounds;
