//! The MCP server, driven by rmcp's client over an in-process duplex pipe:
//! the quickstart's tools (what `examples/mcp_server.rs` serves) plus a tool
//! that waits for cancellation and one that reports progress.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CallToolRequest, ClientRequest, ErrorCode, ProgressNotificationParam};
use rmcp::service::{NotificationContext, PeerRequestOptions, RoleClient, RunningService};
use rmcp::{ClientHandler, ServiceError};
use serde_json::{Value, json};
use tinyagents_tools::ToolSafety;
use tinyagents_tools::events::EventKind;
use tinyagents_tools::executor::ToolExecutorBuilder;
use tinyagents_tools::prelude::*;
use tinyagents_tools::providers::{ExportTarget, export_declarations};
use tinyagents_tools::runtime::CallLimits;
use tinyagents_tools::spec::SafetyItem;
use tinyagents_tools_examples::{NoteBook, quickstart_registry, quickstart_run};
use tinyagents_tools_mcp::McpServer;
use tinyagents_tools_tests::{FakeTool, Recorder, sleeper, spec};
use tokio::sync::mpsc;

use crate::common::{HANG, call_on, connect_to, params, text};

/// Arguments of [`count_steps`].
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct StepsArgs {
    /// How many steps to report.
    steps: u32,
}

/// Count to `steps`, reporting each step, then say it is done.
#[tool(read_only, idempotent, local)]
pub(crate) async fn count_steps(args: StepsArgs, #[inject] progress: StreamWriter) -> u32 {
    for step in 1..=args.steps {
        let message = format!("step {step}");
        progress.progress(f64::from(step), Some(f64::from(args.steps)), Some(&message));
    }
    progress.write("done");
    args.steps
}

/// The client side: keeps every progress notification it gets.
#[derive(Clone)]
pub(crate) struct Client {
    pub(crate) progress: mpsc::UnboundedSender<ProgressNotificationParam>,
}

impl ClientHandler for Client {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.progress.send(params);
    }
}

struct Fixture {
    client: RunningService<RoleClient, Client>,
    progress: mpsc::UnboundedReceiver<ProgressNotificationParam>,
    server: McpServer,
    notebook: Arc<NoteBook>,
    sleeper: Arc<FakeTool>,
    events: Arc<Recorder>,
    _workspace: tempfile::TempDir,
}

/// Serves the quickstart tools, `sleeper` and `count_steps` to a connected
/// client.
async fn start() -> Fixture {
    start_with(|executor| executor).await
}

/// [`start`], with the executor configured by `configure`.
async fn start_with(configure: impl FnOnce(ToolExecutorBuilder) -> ToolExecutorBuilder) -> Fixture {
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join("notes.txt"), "remember the milk\n").unwrap();
    let notebook = Arc::new(NoteBook::default());
    let sleeper = sleeper(
        spec("sleeper", json!({"type": "object", "properties": {}}))
            .safety(ToolSafety::pure())
            .timeout(Duration::from_secs(600))
            .build()
            .unwrap(),
        Duration::from_secs(600),
        true,
    );
    let events = Recorder::new();

    let mut registry = quickstart_registry().unwrap();
    registry.register(sleeper.clone()).unwrap();
    registry.register(CountStepsTool).unwrap();
    let root = workspace.path().to_owned();
    let book = Arc::clone(&notebook);
    // MCP hosts ask their user before a call; the server leaves confirmation
    // to them, explicitly.
    let executor = configure(
        ToolExecutor::builder(registry, ())
            .subscribe(events.clone())
            .unenforced(SafetyItem::Confirmation),
    );
    let server = McpServer::builder(executor)
        .name("quickstart-test")
        .build(move || quickstart_run(&root, Arc::clone(&book)))
        .unwrap();

    let (client, progress) = connect(&server).await;
    Fixture {
        client,
        progress,
        server,
        notebook,
        sleeper,
        events,
        _workspace: workspace,
    }
}

/// Opens a new session of `server` and connects a client to it.
async fn connect(
    server: &McpServer,
) -> (
    RunningService<RoleClient, Client>,
    mpsc::UnboundedReceiver<ProgressNotificationParam>,
) {
    let (tx, progress) = mpsc::unbounded_channel();
    let client = connect_to(server.clone(), Client { progress: tx }).await;
    (client, progress)
}

/// Calls a tool and gives the result as JSON, as it went over the wire.
async fn call(fx: &Fixture, name: &'static str, arguments: Value) -> Value {
    call_on(&fx.client, name, arguments).await
}

/// Calls a tool that must fail and gives its error text; an error result
/// carries no structured content.
async fn error_text(fx: &Fixture, name: &'static str, arguments: Value) -> String {
    let result = call(fx, name, arguments).await;
    assert_eq!(result["isError"], true, "{result}");
    assert!(result.get("structuredContent").is_none(), "{result}");
    text(&result)
}

#[tokio::test]
async fn tools_list_gives_every_tool_with_its_schemas_and_safety_annotations() {
    let fx = start().await;
    let tools = fx.client.list_all_tools().await.unwrap();
    let listed: Vec<Value> = tools
        .iter()
        .map(|t| serde_json::to_value(t).unwrap())
        .collect();

    let names: Vec<&str> = listed.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "search_docs",
            "write_note",
            "read_file",
            "calculate",
            "sleeper",
            "count_steps"
        ]
    );

    // The list is the providers' MCP export, unchanged.
    let registry = fx.server.executor().registry();
    let exported = export_declarations(ExportTarget::Mcp, registry.specs());
    assert!(exported.errors.is_empty());
    assert_eq!(Value::Array(listed.clone()), exported.to_json());

    let search = &listed[0];
    assert_eq!(
        search["annotations"],
        json!({
            "readOnlyHint": true,
            "destructiveHint": false,
            "idempotentHint": true,
            "openWorldHint": false,
        })
    );
    assert_eq!(search["inputSchema"]["type"], "object");
    assert_eq!(search["inputSchema"]["required"], json!(["query"]));
    assert_eq!(search["inputSchema"]["additionalProperties"], false);
    assert_eq!(
        search["inputSchema"]["properties"]["query"]["type"],
        "string"
    );
    // MCP keeps the dialect (2020-12 is its default; clients may check it).
    assert_eq!(
        search["inputSchema"]["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );

    let write = &listed[1];
    assert_eq!(
        write["annotations"],
        json!({
            "readOnlyHint": false,
            "destructiveHint": false,
            "idempotentHint": false,
            "openWorldHint": false,
        })
    );

    let read = &listed[2];
    assert_eq!(read["outputSchema"]["type"], "object");
    assert_eq!(read["outputSchema"]["properties"]["text"]["type"], "string");
    assert_eq!(
        read["inputSchema"]["properties"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["path"],
        "the injected workspace root is not in the schema"
    );
}

#[tokio::test]
async fn a_good_call_returns_structured_content_with_a_text_copy() {
    let fx = start().await;
    let result = call(&fx, "read_file", json!({"path": "notes.txt"})).await;

    let structured = json!({"path": "notes.txt", "text": "remember the milk\n"});
    assert_eq!(result["isError"], false);
    assert_eq!(result["structuredContent"], structured);
    assert_eq!(
        result["content"],
        json!([{"type": "text", "text": structured.to_string()}])
    );

    let sum = call(&fx, "calculate", json!({"a": 2, "op": "add", "b": 3})).await;
    assert_eq!(sum["isError"], false);
    assert_eq!(text(&sum), "5.0");
}

#[tokio::test]
async fn bad_arguments_come_back_as_an_error_result_with_the_repair_message() {
    let message = error_text(
        &start().await,
        "search_docs",
        json!({"query": "retries", "limit": 500, "verbose": true}),
    )
    .await;
    assert!(
        message.contains("`limit`: 500 is greater than the maximum 10"),
        "{message}"
    );
    assert!(message.contains("`verbose`"), "{message}");
}

#[tokio::test]
async fn a_tool_failure_is_an_error_result_not_a_protocol_error() {
    let divide = json!({"a": 1, "op": "divide", "b": 0});
    let message = error_text(&start().await, "calculate", divide).await;
    assert_eq!(message, "`b`: division by zero; use a non-zero divisor");
}

#[tokio::test]
async fn a_forged_hidden_key_is_refused_and_the_tool_never_runs() {
    let fx = start().await;
    let message = error_text(
        &fx,
        "write_note",
        json!({"title": "hi", "body": "there", "notebook": {"notes": []}}),
    )
    .await;
    assert!(message.contains("`notebook`"), "{message}");
    assert!(message.contains("supplied by the runtime"), "{message}");
    assert!(fx.notebook.notes().is_empty(), "the tool must not have run");
    let steps: Vec<&str> = fx.events.events().iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(steps, ["tool.rejected"]);

    // The same call without the forged key runs.
    let ok = call(&fx, "write_note", json!({"title": "hi", "body": "there"})).await;
    assert_eq!(ok["isError"], false);
    assert_eq!(fx.notebook.notes().len(), 1);
}

#[tokio::test]
async fn an_unknown_tool_is_a_json_rpc_invalid_params_error() {
    let fx = start().await;
    let error = fx
        .client
        .call_tool(params("delete_everything", json!({})))
        .await
        .expect_err("an unknown tool is a protocol error");

    let ServiceError::McpError(error) = error else {
        panic!("expected a JSON-RPC error, got {error:?}");
    };
    assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    assert!(
        error.message.contains("`delete_everything`"),
        "{}",
        error.message
    );
}

#[tokio::test]
async fn a_cancelled_call_fires_the_tools_token_and_ends_cancelled() {
    let fx = start().await;
    let request =
        ClientRequest::CallToolRequest(CallToolRequest::new(params("sleeper", json!({}))));
    let handle = fx
        .client
        .peer()
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .unwrap();

    tokio::time::timeout(HANG, async {
        while fx.sleeper.runs() == 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the tool starts");
    assert!(!fx.sleeper.saw_cancel());

    handle
        .cancel(Some("the user stopped it".into()))
        .await
        .unwrap();

    let ended = tokio::time::timeout(HANG, async {
        loop {
            let events = fx.events.events();
            if let Some(end) = events.iter().find(|e| e.kind == EventKind::Failed) {
                return end.clone();
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the call ends");
    assert_eq!(ended.error_kind, Some("cancelled"));
    assert_eq!(ended.tool, "sleeper");
    assert!(ended.call_id.as_str().starts_with("mcp-"));
    assert!(fx.sleeper.saw_cancel());

    // Only that call was cancelled: the session goes on.
    let after = call(&fx, "calculate", json!({"a": 1, "op": "add", "b": 1})).await;
    assert_eq!(after["isError"], false);
    assert_eq!(text(&after), "2.0");
}

#[tokio::test]
async fn stream_writer_progress_becomes_progress_notifications() {
    let mut fx = start().await;
    let result = call(&fx, "count_steps", json!({"steps": 3})).await;
    assert_eq!(result["isError"], false);
    assert_eq!(text(&result), "3");

    let mut notes = Vec::new();
    while notes.len() < 4 {
        let note = tokio::time::timeout(HANG, fx.progress.recv())
            .await
            .expect("four notifications")
            .expect("the client is alive");
        notes.push(note);
    }
    // The client may handle notifications concurrently: order by value.
    notes.sort_by(|a, b| a.progress.total_cmp(&b.progress));
    let token = &notes[0].progress_token;
    assert!(notes.iter().all(|n| &n.progress_token == token));
    let seen: Vec<(f64, Option<f64>, Option<&str>)> = notes[..3]
        .iter()
        .map(|n| (n.progress, n.total, n.message.as_deref()))
        .collect();
    assert_eq!(
        seen,
        [
            (1.0, Some(3.0), Some("step 1")),
            (2.0, Some(3.0), Some("step 2")),
            (3.0, Some(3.0), Some("step 3")),
        ]
    );
    // A message-only report still increases the value, as MCP requires.
    assert!(notes[3].progress > 3.0);
    assert_eq!(notes[3].message.as_deref(), Some("done"));
    assert!(fx.progress.try_recv().is_err(), "no other notification");
}

#[tokio::test]
async fn executor_limits_apply_and_each_session_has_its_own_run() {
    let fx = start_with(|executor| {
        executor.configure(|config| config.limits = CallLimits::none().per_run(2))
    })
    .await;
    let add = json!({"a": 1, "op": "add", "b": 1});
    assert_eq!(call(&fx, "calculate", add.clone()).await["isError"], false);
    assert_eq!(call(&fx, "calculate", add.clone()).await["isError"], false);
    let third = call(&fx, "calculate", add.clone()).await;
    assert_eq!(third["isError"], true);
    let last = fx.events.events().last().cloned().unwrap();
    assert_eq!(last.kind, EventKind::Rejected);
    assert_eq!(last.error_kind, Some("limit_exceeded"));

    // A second connection is a new session, with a new run and new counts.
    let (other, _progress) = connect(&fx.server).await;
    assert_eq!(call_on(&other, "calculate", add).await["isError"], false);
}
