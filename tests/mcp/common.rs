//! What the MCP tests share: the hang bound, an in-process pipe to a served
//! [`McpServer`], a connected rmcp client or [`McpClient`], one
//! `tools/call` as the JSON that went over the wire, and a server written
//! with rmcp alone.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ClientConfig,
    Implementation, JsonObject, ListToolsResult, PaginatedRequestParams, ProtocolVersion,
    ServerCapabilities, ServerConfig, Tool as RemoteDecl,
};
use rmcp::service::{Peer, RequestContext, RoleClient, RoleServer, RunningService};
use rmcp::{ClientHandler, ErrorData as McpError, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use tinyagents_tools_mcp::McpServer;
use tinyagents_tools_mcp::client::McpClient;
use tokio::io::DuplexStream;

/// Generous: only a hang (a broken rule) comes near it.
pub(crate) const HANG: Duration = Duration::from_secs(30);

/// A secret for a run's redaction, given as its text.
pub(crate) struct SecretText(pub(crate) &'static str);

impl AsRef<str> for SecretText {
    fn as_ref(&self) -> &str {
        self.0
    }
}

/// What a test client named `name` declares at `version`: elicitation when
/// `elicits`, sampling when `samples`.
pub(crate) fn client_config(
    name: &str,
    version: &ProtocolVersion,
    elicits: bool,
    samples: bool,
) -> ClientConfig {
    let mut capabilities = ClientCapabilities::default();
    if samples {
        capabilities.sampling = Some(Default::default());
    }
    if elicits {
        capabilities.elicitation = Some(serde_json::from_value(json!({"form": {}})).unwrap());
    }
    ClientConfig::new(capabilities, Implementation::new(name, "0"))
        .with_protocol_version(version.clone())
}

/// Serves a new session of `server` as JSON lines over an in-process pipe
/// and gives the client's end.
pub(crate) fn pipe_to(server: McpServer) -> DuplexStream {
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        let (read, write) = tokio::io::split(server_io);
        let running = server
            .serve_lines(read, write)
            .await
            .expect("the server starts");
        let _ = running.waiting().await;
    });
    client_io
}

/// Connects an rmcp client with `handler` to a new session of `server`.
pub(crate) async fn connect_to<H: ClientHandler>(
    server: McpServer,
    handler: H,
) -> RunningService<RoleClient, H> {
    tokio::time::timeout(HANG, handler.serve(pipe_to(server)))
        .await
        .expect("the client connects in time")
        .expect("the client connects")
}

/// Connects the crate's [`McpClient`] to a new session of `server`.
pub(crate) async fn mcp_client_of(server: McpServer) -> McpClient {
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    McpClient::connect(client_io, HANG)
        .await
        .expect("the client connects")
}

/// The parameters of a `tools/call` of `name` with the object `arguments`.
pub(crate) fn params(name: &'static str, arguments: Value) -> CallToolRequestParams {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object");
    };
    CallToolRequestParams::new(name).with_arguments(arguments as JsonObject)
}

/// Calls a tool through `client` and gives the result as JSON, as it went
/// over the wire.
pub(crate) async fn call_on<H: ClientHandler>(
    client: &RunningService<RoleClient, H>,
    name: &'static str,
    arguments: Value,
) -> Value {
    let result = tokio::time::timeout(HANG, client.call_tool(params(name, arguments)))
        .await
        .expect("the call is answered in time")
        .expect("the call is answered with a result");
    serde_json::to_value(result).unwrap()
}

/// The text blocks of a `tools/call` result, joined by newlines.
pub(crate) fn text(result: &Value) -> String {
    result["content"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|block| block["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The `error.message` of a JSON-RPC error answer, or of a failed task.
pub(crate) fn error_message(answer: &Value) -> &str {
    answer["error"]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("no error message: {answer}"))
}

/// What a server written with rmcp alone (no project code on the server
/// side) serves: the tools it lists, and its answer to each call.
pub(crate) trait RmcpTools: Send + Sync + 'static {
    /// The tools it lists now.
    fn tools(&self) -> Vec<RemoteDecl>;

    /// Its answer to `request`.
    fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CallToolResult, McpError>> + Send;
}

/// A server of `tools` that may announce a changed list, counting the calls
/// it answers.
struct RmcpServer<T> {
    tools: T,
    calls: Arc<AtomicUsize>,
}

impl<T: RmcpTools> ServerHandler for RmcpServer<T> {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.tools.call(request, context).await.map(Into::into)
    }
}

/// The crate's [`McpClient`] connected to a server written with rmcp alone.
pub(crate) struct RmcpServed {
    pub(crate) client: McpClient,
    /// The server's side of the session, to announce a changed list.
    pub(crate) peer: Peer<RoleServer>,
    /// How many calls the server answered.
    pub(crate) calls: Arc<AtomicUsize>,
}

/// Serves `tools` over an in-process pipe and connects an [`McpClient`].
pub(crate) async fn rmcp_served(tools: impl RmcpTools) -> RmcpServed {
    let calls = Arc::new(AtomicUsize::new(0));
    let server = RmcpServer {
        tools,
        calls: Arc::clone(&calls),
    };
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    let (peer_tx, peer_rx) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let running = server.serve(server_io).await.expect("served");
        let _ = peer_tx.send(running.peer().clone());
        let _ = running.waiting().await;
    });
    let client = McpClient::connect(client_io, HANG)
        .await
        .expect("connected");
    let peer = peer_rx.await.expect("the server is up");
    RmcpServed {
        client,
        peer,
        calls,
    }
}
