//! "add" written for rmcp (3.x) with `#[tool]` / `#[tool_router]` /
//! `#[tool_handler]`, called through its `ToolRouter` the way its server
//! dispatches `tools/call`.

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::{CallToolRequestParams, CallToolResponse, JsonObject, NumberOrString};
use rmcp::service::{RequestContext, RunningService};
use rmcp::{ErrorData, RoleServer, ServerHandler, tool, tool_handler, tool_router};

use crate::add::{AddArgs, Sum, add};

/// rmcp's server with one tool, "add"; the router is built once and kept.
#[derive(Clone)]
pub struct AddServer {
    router: ToolRouter<AddServer>,
}

#[tool_router(router = tool_router)]
impl AddServer {
    /// Builds the server and its router.
    pub fn new() -> Self {
        AddServer {
            router: Self::tool_router(),
        }
    }

    /// Add two integers.
    #[tool(name = "add")]
    fn add(&self, Parameters(args): Parameters<AddArgs>) -> Json<Sum> {
        Json(add(args))
    }
}

#[tool_handler(router = self.router)]
impl ServerHandler for AddServer {}

/// A live peer and a request context for calling the router outside a
/// transport loop. rmcp's `Peer` has no public constructor; serving the
/// handler over an idle in-memory duplex gives a real one. Keep this value
/// alive while calling.
pub struct Harness {
    /// The server.
    pub server: AddServer,
    /// A request context as the service loop would build it.
    pub context: RequestContext<RoleServer>,
    _running: RunningService<RoleServer, AddServer>,
    _idle_end: tokio::io::DuplexStream,
}

impl Harness {
    /// Starts the idle service (needs a tokio runtime).
    pub fn start() -> Self {
        let server = AddServer::new();
        let (ours, idle_end) = tokio::io::duplex(64 * 1024);
        let running = rmcp::service::serve_directly(server.clone(), ours, None);
        let context = RequestContext::new(NumberOrString::Number(1), running.peer().clone());
        Harness {
            server,
            context,
            _running: running,
            _idle_end: idle_end,
        }
    }

    /// One call through the router built once.
    pub async fn call(&self, arguments: JsonObject) -> Result<CallToolResponse, ErrorData> {
        let params = CallToolRequestParams::new("add").with_arguments(arguments);
        let tcc = ToolCallContext::new(&self.server, params, self.context.clone());
        self.server.router.call(tcc).await
    }

    /// One call with the router rebuilt first, as `#[tool_handler]`'s default
    /// (`router = Self::tool_router()`) does on every request.
    pub async fn call_rebuilding(
        &self,
        arguments: JsonObject,
    ) -> Result<CallToolResponse, ErrorData> {
        let params = CallToolRequestParams::new("add").with_arguments(arguments);
        let tcc = ToolCallContext::new(&self.server, params, self.context.clone());
        AddServer::tool_router().call(tcc).await
    }
}

/// A router of `n` "add" tools named `add_{i}`, each built as
/// `#[tool_router]` builds a route (the `#[tool]` attr, renamed, and the
/// handler fn). Each tool gets its own copy of the schemas, its input schema
/// with a description naming the tool, as `n` distinct tools (with `n`
/// argument types) would; sharing one would let the listing read the same
/// memory `n` times.
pub fn router_of(n: usize) -> ToolRouter<AddServer> {
    let mut router = ToolRouter::new();
    for i in 0..n {
        let mut attr = AddServer::add_tool_attr();
        attr.name = format!("add_{i}").into();
        // A root description naming the tool, as ours gets
        // (`ours::distinct_add_spec`).
        let mut input = (*attr.input_schema).clone();
        input.insert(
            "description".to_owned(),
            serde_json::Value::String(format!("Arguments of add_{i}.")),
        );
        attr.input_schema = std::sync::Arc::new(input);
        attr.output_schema = attr
            .output_schema
            .map(|schema| std::sync::Arc::new((*schema).clone()));
        router = router.with_route((attr, AddServer::add));
    }
    router
}

/// What a `tools/list` answer costs rmcp: `list_all` (clone and sort every
/// tool) and serialization to the JSON text sent on the wire.
pub fn list_tools_json(router: &ToolRouter<AddServer>) -> String {
    let tools = router.list_all();
    serde_json::to_string(&tools).expect("tools serialize")
}
