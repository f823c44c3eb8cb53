//! The MCP client against hostile servers written here as raw JSON-RPC
//! lines over an in-process pipe: one that dies mid-call, one that hangs,
//! one that answers garbage, one that never initializes. Every call gets a
//! classified error and nothing waits past its timeout.

use std::time::{Duration, Instant};
use tinyagents_tools_tests::execute_in;

use serde_json::{Value, json};
use tinyagents_tools::{ErrorClass, RunContext, ToolCall, ToolExecutor, ToolRegistry, Turn};
use tinyagents_tools_mcp::client::{ImportOptions, McpClient, McpClientError};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;

use crate::common::HANG;
use crate::scripted::executor_of;

/// What the raw server does with a `tools/call`.
#[derive(Clone, Copy)]
enum OnCall {
    /// Closes the connection.
    Die,
    /// Never answers.
    Hang,
    /// Writes a line that is not JSON, then never answers.
    NotJson,
    /// Answers with a result that is not a tool result.
    WrongShape,
}

/// Serves raw JSON-RPC on `io`; every method the server sees goes to `seen`.
async fn raw_server(io: DuplexStream, on_call: OnCall, seen: mpsc::UnboundedSender<String>) {
    let (read, mut write) = tokio::io::split(io);
    let mut lines = BufReader::new(read).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let method = message["method"].as_str().unwrap_or_default().to_owned();
        let _ = seen.send(method.clone());
        let id = message["id"].clone();
        let reply = match method.as_str() {
            "initialize" => json!({"jsonrpc": "2.0", "id": id, "result": {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "raw", "version": "0"}
            }}),
            "tools/list" => json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [
                {"name": "op", "description": "Does something.", "inputSchema": {"type": "object"}}
            ]}}),
            "tools/call" => match on_call {
                OnCall::Die => return,
                OnCall::Hang => continue,
                OnCall::NotJson => {
                    let _ = write.write_all(b"}}} this is not JSON {{{\n").await;
                    continue;
                }
                OnCall::WrongShape => json!({"jsonrpc": "2.0", "id": id, "result": {"tools": 3}}),
            },
            _ if id.is_null() => continue,
            _ => json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "no"}}),
        };
        let mut text = reply.to_string();
        text.push('\n');
        if write.write_all(text.as_bytes()).await.is_err() {
            return;
        }
    }
}

struct Hostile {
    executor: ToolExecutor,
    seen: mpsc::UnboundedReceiver<String>,
}

async fn hostile(on_call: OnCall, timeout: Duration) -> Hostile {
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    let (tx, seen) = mpsc::unbounded_channel();
    tokio::spawn(raw_server(server_io, on_call, tx));
    let client = McpClient::connect(client_io, HANG)
        .await
        .expect("initialized");
    Hostile {
        executor: executor_of(&client, timeout).await,
        seen,
    }
}

async fn run_op(executor: &ToolExecutor, id: &str) -> tinyagents_tools::ToolResult {
    executor
        .execute(
            &RunContext::empty(),
            &Turn::new(1),
            ToolCall::new(id, "op", "{}"),
        )
        .await
}

async fn saw(seen: &mut mpsc::UnboundedReceiver<String>, method: &str) -> bool {
    let deadline = Instant::now() + Duration::from_secs(5);
    while let Ok(Some(m)) = tokio::time::timeout_at(deadline.into(), seen.recv()).await {
        if m == method {
            return true;
        }
    }
    false
}

#[tokio::test]
async fn a_server_that_dies_mid_call_answers_that_call_and_every_later_one_crashed() {
    let fx = hostile(OnCall::Die, HANG).await;
    let started = Instant::now();
    let first = run_op(&fx.executor, "c1").await;
    assert_eq!(first.outcome(), "crashed", "{}", first.text());
    assert_eq!(first.tool_call_id.as_str(), "c1");
    let second = run_op(&fx.executor, "c2").await;
    assert_eq!(second.outcome(), "crashed", "{}", second.text());
    assert_eq!(second.error.as_ref().unwrap().class(), ErrorClass::Fatal);
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn a_server_that_hangs_meets_the_timeout_and_is_sent_notifications_cancelled() {
    let mut fx = hostile(OnCall::Hang, Duration::from_millis(300)).await;
    let started = Instant::now();
    let result = run_op(&fx.executor, "c1").await;
    assert_eq!(result.outcome(), "timeout");
    assert!(started.elapsed() < Duration::from_secs(3));
    assert!(saw(&mut fx.seen, "notifications/cancelled").await);
}

#[tokio::test]
async fn a_line_that_is_not_json_leaves_the_call_to_its_timeout() {
    let fx = hostile(OnCall::NotJson, Duration::from_millis(300)).await;
    let started = Instant::now();
    let result = run_op(&fx.executor, "c1").await;
    assert!(result.is_error);
    // rmcp skips the line; the call waits for its answer until the timeout.
    assert_eq!(result.outcome(), "timeout");
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test]
async fn an_answer_that_is_not_a_tool_result_is_a_classified_error() {
    let fx = hostile(OnCall::WrongShape, HANG).await;
    let started = Instant::now();
    let result = run_op(&fx.executor, "c1").await;
    assert!(result.is_error);
    assert_eq!(result.error.as_ref().unwrap().class(), ErrorClass::Fatal);
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn a_server_that_never_initializes_fails_the_connect_within_its_timeout() {
    let (client_io, _server_io) = tokio::io::duplex(1024);
    let started = Instant::now();
    let error = McpClient::connect(client_io, Duration::from_millis(200))
        .await
        .unwrap_err();
    assert!(matches!(error, McpClientError::Timeout(_)), "{error}");
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test]
async fn a_command_that_exits_at_once_fails_the_connect_with_a_classified_error() {
    let error = McpClient::spawn(tokio::process::Command::new("true"))
        .await
        .unwrap_err();
    assert!(matches!(error, McpClientError::Initialize(_)), "{error}");
    let error = McpClient::spawn(tokio::process::Command::new("/nonexistent/mcp-server"))
        .await
        .unwrap_err();
    assert!(matches!(error, McpClientError::Spawn(_)), "{error}");
}

#[tokio::test]
async fn a_child_process_server_is_imported_over_stdio_and_a_killed_one_answers_crashed() {
    let command = tokio::process::Command::new(env!("CARGO_BIN_EXE_mcp-stdio-server"));
    let client = McpClient::spawn(command)
        .await
        .expect("the child server initialized");
    assert_eq!(client.server_name().as_deref(), Some("stdio-test"));
    let mut registry = ToolRegistry::new();
    let report = client
        .import_into(&mut registry, &ImportOptions::new().timeout(HANG))
        .await
        .unwrap();
    assert_eq!(report.imported.len(), 4);
    let executor = ToolExecutor::builder(registry, ()).build().unwrap();
    let args = r#"{"a": 6, "op": "multiply", "b": 7}"#;
    let result = execute_in(
        &executor,
        &RunContext::empty(),
        ToolCall::new("c1", "calculate", args),
    )
    .await;
    assert!(result.text().contains("42"), "{}", result.text());
    client.clone().close().await;
    let started = Instant::now();
    let result = executor
        .execute(
            &RunContext::empty(),
            &Turn::new(2),
            ToolCall::new("c2", "calculate", args),
        )
        .await;
    assert!(result.is_error);
    assert_eq!(result.outcome(), "crashed", "{}", result.text());
    assert!(started.elapsed() < Duration::from_secs(5));
}
