//! A raw JSON-RPC MCP server on protocol 2026-07-28 (whatever the client
//! asks for) over an in-process pipe, serving one tool, `op`, whose
//! requests (`tools/call`, `tasks/*`) a test script answers; every message
//! it receives is logged with the time it arrived.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tinyagents_tools::{RunContext, ToolCall, ToolExecutor, ToolRegistry, ToolResult};
use tinyagents_tools_mcp::client::{ImportOptions, McpClient, McpClientOptions};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};

use crate::common::HANG;

/// What the server answers a request with.
pub(crate) enum Reply {
    /// This `result`.
    Result(Value),
    /// Nothing, ever.
    Silence,
}

/// The messages the server received, in order.
#[derive(Clone, Default)]
pub(crate) struct Log(Arc<Mutex<Vec<(Instant, Value)>>>);

impl Log {
    fn push(&self, message: Value) {
        self.0.lock().unwrap().push((Instant::now(), message));
    }

    /// The `params` of every message of `method`, in order.
    pub(crate) fn params(&self, method: &str) -> Vec<Value> {
        self.of(method).into_iter().map(|(_, m)| m).collect()
    }

    /// When each message of `method` arrived.
    pub(crate) fn times(&self, method: &str) -> Vec<Instant> {
        self.of(method).into_iter().map(|(t, _)| t).collect()
    }

    fn of(&self, method: &str) -> Vec<(Instant, Value)> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter(|(_, m)| m["method"] == method)
            .map(|(t, m)| (*t, m["params"].clone()))
            .collect()
    }

    /// Waits (at most five seconds) for a message of `method`; its params.
    pub(crate) async fn wait_for(&self, method: &str) -> Option<Value> {
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Some(params) = self.params(method).pop() {
                return Some(params);
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        None
    }
}

/// A task handle or state as MCP's tasks extension writes it.
pub(crate) fn task(status: &str, poll_interval_ms: u64) -> Value {
    json!({
        "taskId": "t-1",
        "status": status,
        "createdAt": "2026-07-28T00:00:00Z",
        "lastUpdatedAt": "2026-07-28T00:00:00Z",
        "ttlMs": null,
        "pollIntervalMs": poll_interval_ms
    })
}

/// An `input_required` result asking `requests` (its `inputRequests`) under
/// the request state `state`.
pub(crate) fn input_required(requests: Value, state: &str) -> Reply {
    Reply::Result(json!({
        "resultType": "input_required",
        "inputRequests": requests,
        "requestState": state
    }))
}

/// A form elicitation request as an `inputRequests` entry.
pub(crate) fn elicitation(message: &str) -> Value {
    json!({
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": message,
            "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}
        }
    })
}

async fn serve(
    io: DuplexStream,
    log: Log,
    mut script: impl FnMut(&str, &Value) -> Reply + Send + 'static,
) {
    let (read, mut write) = tokio::io::split(io);
    let mut lines = BufReader::new(read).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        log.push(message.clone());
        let id = message["id"].clone();
        let method = message["method"].as_str().unwrap_or_default().to_owned();
        let reply = match method.as_str() {
            "initialize" => Reply::Result(json!({
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}},
                "serverInfo": {"name": "scripted", "version": "0"}
            })),
            "tools/list" => Reply::Result(json!({"tools": [
                {"name": "op", "description": "Does something.", "inputSchema": {"type": "object"}}
            ]})),
            _ if id.is_null() => continue,
            _ => script(&method, &message["params"]),
        };
        let answer = match reply {
            Reply::Result(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Reply::Silence => continue,
        };
        let mut text = answer.to_string();
        text.push('\n');
        if write.write_all(text.as_bytes()).await.is_err() {
            return;
        }
    }
}

/// A client connected with `options` to a server answering with `script`.
pub(crate) async fn scripted(
    options: McpClientOptions,
    script: impl FnMut(&str, &Value) -> Reply + Send + 'static,
) -> (McpClient, Log) {
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    let log = Log::default();
    tokio::spawn(serve(server_io, log.clone(), script));
    let client = McpClient::connect_with(client_io, options.timeout(HANG))
        .await
        .expect("initialized");
    (client, log)
}

/// An executor over the server's `op`, timed out after `timeout`.
pub(crate) async fn executor_of(client: &McpClient, timeout: Duration) -> ToolExecutor {
    let mut registry = ToolRegistry::new();
    let report = client
        .import_into(&mut registry, &ImportOptions::new().timeout(timeout))
        .await
        .expect("listed");
    assert_eq!(report.imported.len(), 1);
    ToolExecutor::builder(registry, ()).build().unwrap()
}

/// Calls `op` once, as [`call_op`] in an empty run, on a server answering
/// with `script` (the client connected with `options`, the call timed out
/// after [`HANG`]): the result, and what the server received.
pub(crate) async fn call_scripted(
    options: McpClientOptions,
    script: impl FnMut(&str, &Value) -> Reply + Send + 'static,
) -> (ToolResult, Log) {
    let (client, log) = scripted(options, script).await;
    let executor = executor_of(&client, HANG).await;
    (call_op(&executor, &RunContext::empty()).await, log)
}

/// Calls `op` with `{"n": 1}` as call `c1` of `run`.
pub(crate) async fn call_op(executor: &ToolExecutor, run: &RunContext) -> ToolResult {
    tinyagents_tools_tests::execute_in(executor, run, ToolCall::new("c1", "op", r#"{"n": 1}"#))
        .await
}

/// A tool result with one text block.
pub(crate) fn done(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}], "isError": false, "resultType": "complete"})
}
