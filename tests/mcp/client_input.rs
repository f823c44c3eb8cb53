//! The MCP client answering a 2026-07-28 server's `input_required` results
//! through the application's handler: the call is sent again with the
//! answers and the server's `requestState` verbatim, for a bounded number of
//! rounds; the handler's defaults decline and refuse. Also: what the client
//! declares, and an older server's own elicitation request.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tinyagents_tools::error::ErrorKind;
use tinyagents_tools::{ErrorClass, RunContext, async_trait};
use tinyagents_tools_mcp::client::{
    DEFAULT_MAX_INPUT_ROUNDS, InputKind, McpClient, McpClientOptions, McpInputContext,
    McpInputError, McpInputHandler,
};
use tinyagents_tools_mcp::rmcp::model::ElicitRequestParams;
use tinyagents_tools_mcp::{ElicitAction, Elicitation};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::common::HANG;
use crate::scripted::{
    Reply, call_op, call_scripted, done, elicitation, executor_of, input_required, scripted,
};

/// Accepts every elicitation with `{"ok": true}`, keeping who asked what.
#[derive(Clone, Default)]
struct Accepting {
    asked: Arc<Mutex<Vec<(McpInputContext, String)>>>,
}

#[async_trait]
impl McpInputHandler for Accepting {
    fn answers(&self) -> &[InputKind] {
        &[InputKind::Elicitation]
    }

    async fn elicit(
        &self,
        context: &McpInputContext,
        request: &ElicitRequestParams,
    ) -> Result<Elicitation, McpInputError> {
        let message = serde_json::to_value(request).unwrap()["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        self.asked.lock().unwrap().push((context.clone(), message));
        Ok(Elicitation {
            action: ElicitAction::Accept,
            content: Some(json!({"ok": true})),
        })
    }
}

/// A `requestState` a client must not touch: not ASCII, with JSON inside.
const STATE: &str = "opaque\u{2603}{\"step\":1}==";

/// Asks for confirmation under `confirm` on the first `tools/call`, and
/// answers the second.
fn ask_once() -> impl FnMut(&str, &Value) -> Reply + Send + 'static {
    let mut calls = 0;
    move |method, _params| {
        assert_eq!(method, "tools/call");
        calls += 1;
        if calls == 1 {
            input_required(json!({"confirm": elicitation("Go ahead?")}), STATE)
        } else {
            Reply::Result(done("went ahead"))
        }
    }
}

#[tokio::test]
async fn an_input_round_is_answered_by_the_handler_and_the_call_sent_again_with_the_answers_and_state()
 {
    let handler = Accepting::default();
    let options = McpClientOptions::new().input_handler(handler.clone());
    let (result, log) = call_scripted(options, ask_once()).await;
    assert!(!result.is_error, "{}", result.text());
    assert_eq!(result.text(), "went ahead");

    let calls = log.params("tools/call");
    assert_eq!(calls.len(), 2);
    assert!(calls[0].get("inputResponses").is_none(), "{}", calls[0]);
    assert!(calls[0].get("requestState").is_none(), "{}", calls[0]);
    assert_eq!(calls[1]["requestState"], json!(STATE));
    assert_eq!(
        calls[1]["inputResponses"],
        json!({"confirm": {"action": "accept", "content": {"ok": true}}})
    );
    assert_eq!(calls[1]["name"], "op");
    assert_eq!(calls[1]["arguments"], json!({"n": 1}));

    let asked = handler.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].0.tool.as_deref(), Some("op"));
    assert_eq!(asked[0].0.call_id.as_ref().unwrap().as_str(), "c1");
    assert_eq!(asked[0].1, "Go ahead?");
}

#[tokio::test]
async fn without_a_handler_an_elicitation_is_declined_and_the_call_sent_again() {
    let (result, log) = call_scripted(McpClientOptions::new(), ask_once()).await;
    assert!(!result.is_error, "{}", result.text());
    let calls = log.params("tools/call");
    assert_eq!(calls.len(), 2);
    assert_eq!(
        calls[1]["inputResponses"],
        json!({"confirm": {"action": "decline"}})
    );
    assert_eq!(calls[1]["requestState"], json!(STATE));
}

#[tokio::test]
async fn a_request_for_sampling_nobody_answers_fails_the_call_without_sending_it_again() {
    let options = McpClientOptions::new().input_handler(Accepting::default());
    let draft = json!({"draft": {
        "method": "sampling/createMessage",
        "params": {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}],
                   "maxTokens": 10}
    }});
    let (result, log) =
        call_scripted(options, move |_, _| input_required(draft.clone(), "s")).await;
    let error = result.error.as_ref().expect("refused");
    assert_eq!(error.class(), ErrorClass::Fatal);
    assert!(result.text().contains("sampling"), "{}", result.text());
    assert_eq!(log.params("tools/call").len(), 1);
}

#[tokio::test]
async fn a_server_that_keeps_asking_for_input_fails_the_call_after_the_round_limit() {
    let options = McpClientOptions::new().input_handler(Accepting::default());
    let again =
        |_: &str, _: &Value| input_required(json!({"again": elicitation("Once more?")}), "loop");
    let (result, log) = call_scripted(options, again).await;
    let error = result.error.as_ref().expect("failed");
    assert_eq!(error.class(), ErrorClass::Fatal);
    assert!(
        matches!(error.kind(), ErrorKind::LimitExceeded { limit } if limit == "mcp_input_rounds"),
        "{:?}",
        error.kind()
    );
    // The first request, then one per answered round.
    assert_eq!(DEFAULT_MAX_INPUT_ROUNDS, 8);
    assert_eq!(log.params("tools/call").len(), 1 + 8);

    let options = McpClientOptions::new()
        .input_handler(Accepting::default())
        .max_input_rounds(2);
    let (result, log) = call_scripted(options, |_, _| {
        Reply::Result(json!({"resultType": "input_required", "requestState": "busy"}))
    })
    .await;
    assert_eq!(result.outcome(), "limit_exceeded", "{}", result.text());
    let calls = log.params("tools/call");
    assert_eq!(calls.len(), 3);
    assert!(calls[2].get("inputResponses").is_none(), "{}", calls[2]);
    assert_eq!(calls[2]["requestState"], "busy");
}

#[tokio::test]
async fn the_client_declares_the_input_it_answers_and_the_tasks_extension() {
    let options = McpClientOptions::new().input_handler(Accepting::default());
    let (_client, log) = scripted(options, |_, _| Reply::Silence).await;
    let init = &log.params("initialize")[0];
    let capabilities = &init["capabilities"];
    assert!(capabilities["elicitation"].is_object(), "{init}");
    assert!(capabilities.get("sampling").is_none(), "{init}");
    assert!(capabilities.get("roots").is_none(), "{init}");
    assert!(
        capabilities["extensions"]["io.modelcontextprotocol/tasks"].is_object(),
        "{init}"
    );

    let (_client, log) = scripted(McpClientOptions::new(), |_, _| Reply::Silence).await;
    let init = &log.params("initialize")[0];
    assert!(init["capabilities"].get("elicitation").is_none(), "{init}");
}

/// An older server (2025-06-18) that asks its own `elicitation/create`
/// while a call runs and answers the call with what the client said.
async fn older_server(io: tokio::io::DuplexStream) {
    let (read, mut write) = tokio::io::split(io);
    let mut lines = BufReader::new(read).lines();
    let mut call_id = Value::Null;
    while let Ok(Some(line)) = lines.next_line().await {
        let message: Value = serde_json::from_str(&line).unwrap();
        let reply = match message["method"].as_str() {
            Some("initialize") => json!({"jsonrpc": "2.0", "id": message["id"], "result": {
                "protocolVersion": "2025-06-18",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "older", "version": "0"}
            }}),
            Some("tools/list") => json!({"jsonrpc": "2.0", "id": message["id"], "result": {
                "tools": [{"name": "op", "description": "Asks first.", "inputSchema": {"type": "object"}}]
            }}),
            Some("tools/call") => {
                call_id = message["id"].clone();
                json!({"jsonrpc": "2.0", "id": "ask-1", "method": "elicitation/create",
                       "params": elicitation("Sure?")["params"]})
            }
            None if message["id"] == "ask-1" => {
                let action = message["result"]["action"].as_str().unwrap_or("none");
                json!({"jsonrpc": "2.0", "id": call_id, "result": done(&format!("user said {action}"))})
            }
            Some(_) if !message["id"].is_null() => json!({"jsonrpc": "2.0", "id": message["id"],
                "error": {"code": -32601, "message": "method not found"}}),
            _ => continue,
        };
        let mut text = reply.to_string();
        text.push('\n');
        if write.write_all(text.as_bytes()).await.is_err() {
            return;
        }
    }
}

#[tokio::test]
async fn an_older_servers_own_elicitation_request_reaches_the_same_handler() {
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    tokio::spawn(older_server(server_io));
    let handler = Accepting::default();
    let options = McpClientOptions::new()
        .timeout(HANG)
        .input_handler(handler.clone());
    let client = McpClient::connect_with(client_io, options).await.unwrap();
    let executor = executor_of(&client, HANG).await;
    let result = call_op(&executor, &RunContext::empty()).await;
    assert_eq!(result.text(), "user said accept");
    let asked = handler.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].1, "Sure?");
    assert_eq!(asked[0].0.tool, None);
}

/// Connects to the project's own server, whose `write_note` needs an
/// approval asked through elicitation, with `options`; the call's result,
/// how many notes were written, and what the handler was asked.
async fn write_note_through_own_server(
    options: McpClientOptions,
) -> (
    String,
    tinyagents_tools::ToolResult,
    usize,
    Vec<(McpInputContext, String)>,
) {
    use tinyagents_tools::ToolExecutor;
    use tinyagents_tools::policy::ConfirmationPolicy;
    use tinyagents_tools_examples::{NoteBook, quickstart_registry, quickstart_run};
    use tinyagents_tools_mcp::{McpApprover, McpServer};

    let workspace = tempfile::tempdir().unwrap();
    let root = workspace.path().to_owned();
    let notebook = Arc::new(NoteBook::default());
    let notes = Arc::clone(&notebook);
    let approver = McpApprover::new();
    let policy = ConfirmationPolicy::new(approver.clone()).timeout(HANG);
    let executor = ToolExecutor::builder(quickstart_registry().unwrap(), ()).middleware(policy);
    let server = McpServer::builder(executor)
        .approver(approver)
        .build(move || quickstart_run(&root, Arc::clone(&notes)))
        .unwrap();
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(server_io).await {
            let _ = running.waiting().await;
        }
    });
    let handler = Accepting::default();
    let options = options.timeout(HANG).input_handler(handler.clone());
    let client = McpClient::connect_with(client_io, options).await.unwrap();
    let (registry, _) = crate::client::imported(&client, &Default::default()).await;
    let executor = ToolExecutor::builder(registry, ()).build().unwrap();
    let args = json!({"title": "milk", "body": "remember the milk"});
    let result = crate::client::execute_call(&executor, "c1", "write_note", args).await;
    let asked = handler.asked.lock().unwrap().clone();
    let version = client.protocol_version().unwrap_or_default();
    (version, result, notebook.notes().len(), asked)
}

#[tokio::test]
async fn the_projects_own_server_asks_for_approval_in_input_rounds_after_discover() {
    let options = McpClientOptions::new().discover(true);
    let (version, result, notes, asked) = write_note_through_own_server(options).await;
    assert_eq!(version, "2026-07-28");
    assert!(!result.is_error, "{}", result.text());
    assert_eq!(notes, 1);
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(asked[0].1.contains("`write_note`"), "{}", asked[0].1);
    // Asked inside the call's answer, so the handler knows which call.
    assert_eq!(asked[0].0.tool.as_deref(), Some("write_note"));
    assert_eq!(asked[0].0.call_id.as_ref().unwrap().as_str(), "c1");
}

#[tokio::test]
async fn the_projects_own_server_asks_for_approval_with_a_request_after_initialize() {
    let (version, result, notes, asked) =
        write_note_through_own_server(McpClientOptions::new()).await;
    assert_eq!(version, "2025-11-25");
    assert!(!result.is_error, "{}", result.text());
    assert_eq!(notes, 1);
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(asked[0].1.contains("`write_note`"), "{}", asked[0].1);
    assert_eq!(asked[0].0.tool, None);
}

#[tokio::test]
async fn with_discover_an_older_server_is_reached_through_initialize() {
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    tokio::spawn(older_server(server_io));
    let options = McpClientOptions::new()
        .timeout(HANG)
        .discover(true)
        .input_handler(Accepting::default());
    let started = std::time::Instant::now();
    let client = McpClient::connect_with(client_io, options).await.unwrap();
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    assert_eq!(client.protocol_version().as_deref(), Some("2025-06-18"));
    let executor = executor_of(&client, HANG).await;
    let result = call_op(&executor, &RunContext::empty()).await;
    assert_eq!(result.text(), "user said accept");
}
