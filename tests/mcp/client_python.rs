//! What the official Python SDK (mcp 2.3, `MCPServer` with two tools)
//! sends, recorded as raw JSON and replayed by a server written here: the
//! client imports both tools, declares them strict for OpenAI, and a strict
//! model's `null` for an optional argument reaches the server as an absent
//! argument.
//!
//! The Python server (`add(a: int, b: int) -> Sum` and
//! `shout(text: str, times: int = 1) -> str`, which raises for `times > 3`)
//! was driven by hand with `cargo run --example mcp_client --features
//! mcp-client -- python server.py`.

use std::time::Duration;

use serde_json::{Value, json};
use tinyagents_tools::providers::{ExportTarget, OpenAiOptions, export_tool};
use tinyagents_tools::{ErrorClass, RunContext, ToolCall, ToolExecutor, ToolRegistry, Turn};
use tinyagents_tools_mcp::client::{ImportOptions, McpClient};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;

/// The Python SDK's `tools/list` result, as it sent it.
fn python_tools() -> Value {
    json!({"tools": [
        {"description": "Add two integers.",
         "inputSchema": {"properties": {"a": {"title": "A", "type": "integer"}, "b": {"title": "B", "type": "integer"}},
                         "required": ["a", "b"], "type": "object", "title": "addArguments"},
         "name": "add",
         "outputSchema": {"properties": {"total": {"title": "Total", "type": "integer"}},
                          "required": ["total"], "type": "object", "title": "Sum"}},
        {"description": "Repeat text in capitals.",
         "inputSchema": {"properties": {"text": {"title": "Text", "type": "string"},
                                        "times": {"default": 1, "title": "Times", "type": "integer"}},
                         "required": ["text"], "type": "object", "title": "shoutArguments"},
         "name": "shout",
         "outputSchema": {"properties": {"result": {"title": "Result", "type": "string"}},
                          "required": ["result"], "type": "object", "title": "shoutOutput"}}
    ]})
}

/// The Python SDK's answer to a call, as it sent it.
fn python_answer(params: &Value) -> Value {
    let args = &params["arguments"];
    match params["name"].as_str() {
        Some("add") => {
            let total = args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0);
            json!({"content": [{"type": "text", "text": format!("{{\n  \"total\": {total}\n}}")}],
                   "structuredContent": {"total": total}, "isError": false})
        }
        Some("shout") if args["times"].as_i64().unwrap_or(1) > 3 => {
            json!({"content": [{"text": "Error executing tool shout", "type": "text"}], "isError": true})
        }
        Some("shout") if args.get("times").is_some_and(|t| !t.is_i64()) => {
            // What pydantic says of `"times": null`.
            json!({"content": [{"type": "text", "text": "Error executing tool shout: 1 validation error for shoutArguments\ntimes\n  Input should be a valid integer"}], "isError": true})
        }
        _ => {
            let times = args["times"].as_i64().unwrap_or(1) as usize;
            let text = vec![args["text"].as_str().unwrap_or("").to_uppercase(); times].join(" ");
            json!({"content": [{"type": "text", "text": text}], "structuredContent": {"result": text}, "isError": false})
        }
    }
}

async fn python_like(io: DuplexStream, calls: mpsc::UnboundedSender<Value>) {
    let (read, mut write) = tokio::io::split(io);
    let mut lines = BufReader::new(read).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let id = message["id"].clone();
        let result = match message["method"].as_str() {
            Some("initialize") => json!({
                "capabilities": {"prompts": {"listChanged": false},
                                 "resources": {"listChanged": false, "subscribe": false},
                                 "tools": {"listChanged": false}},
                "protocolVersion": message["params"]["protocolVersion"],
                "serverInfo": {"name": "py-demo", "version": ""}
            }),
            Some("tools/list") => python_tools(),
            Some("tools/call") => {
                let _ = calls.send(message["params"].clone());
                python_answer(&message["params"])
            }
            _ if id.is_null() => continue,
            // What a server answers a method it does not have (the
            // client's `server/discover`, for one).
            _ => {
                let error = json!({"code": -32601, "message": "Method not found"});
                let mut text = json!({"jsonrpc": "2.0", "id": id, "error": error}).to_string();
                text.push('\n');
                if write.write_all(text.as_bytes()).await.is_err() {
                    return;
                }
                continue;
            }
        };
        let mut text = json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
        text.push('\n');
        if write.write_all(text.as_bytes()).await.is_err() {
            return;
        }
    }
}

async fn python_tools_imported() -> (ToolExecutor, mpsc::UnboundedReceiver<Value>) {
    let (client_io, server_io) = tokio::io::duplex(64 * 1024);
    let (tx, calls) = mpsc::unbounded_channel();
    tokio::spawn(python_like(server_io, tx));
    let client = McpClient::connect(client_io, Duration::from_secs(30))
        .await
        .unwrap();
    let mut registry = ToolRegistry::new();
    let report = client
        .import_into(&mut registry, &ImportOptions::new())
        .await
        .unwrap();
    assert_eq!(report.imported.len(), 2);
    assert!(report.refused.is_empty());
    (ToolExecutor::builder(registry, ()).build().unwrap(), calls)
}

async fn run(executor: &ToolExecutor, name: &str, args: Value) -> tinyagents_tools::ToolResult {
    executor
        .execute(
            &RunContext::empty(),
            &Turn::new(1),
            ToolCall::new("c1", name, args.to_string()),
        )
        .await
}

#[tokio::test]
async fn python_sdk_tools_are_declared_strict_for_openai() {
    let (executor, _) = python_tools_imported().await;
    let strict = ExportTarget::OpenAiChat(OpenAiOptions { strict: true });
    for spec in executor.registry().specs() {
        let declaration = export_tool(spec, strict).unwrap().into_json();
        assert_eq!(
            declaration["function"]["strict"],
            json!(true),
            "{}",
            spec.name
        );
    }
    let shout = export_tool(executor.registry().get("shout").unwrap().spec(), strict)
        .unwrap()
        .into_json();
    let parameters = &shout["function"]["parameters"];
    assert_eq!(parameters["required"], json!(["text", "times"]));
    assert_eq!(
        parameters["properties"]["times"]["type"],
        json!(["integer", "null"])
    );
}

#[tokio::test]
async fn a_strict_models_null_for_an_optional_python_argument_reaches_the_server_as_absent() {
    let (executor, mut calls) = python_tools_imported().await;
    let result = run(&executor, "shout", json!({"text": "hi", "times": null})).await;
    assert!(!result.is_error, "{}", result.text());
    assert_eq!(result.text(), "HI");
    // The SDK's `MCPServer` wraps a `str` in `result` without FastMCP's
    // `x-fastmcp-wrap-result` mark: unmarked, the object stays as it is.
    assert_eq!(result.structured, Some(json!({"result": "HI"})));
    let sent = calls.recv().await.unwrap();
    assert_eq!(sent["arguments"], json!({"text": "hi"}));
}

#[tokio::test]
async fn python_structured_results_are_checked_and_its_errors_become_repair_errors() {
    let (executor, _) = python_tools_imported().await;
    let result = run(&executor, "add", json!({"a": 2, "b": 40})).await;
    assert!(!result.is_error, "{}", result.text());
    assert_eq!(result.structured, Some(json!({"total": 42})));
    let result = run(&executor, "shout", json!({"text": "hi", "times": 9})).await;
    assert_eq!(
        result.error.as_ref().map(|e| e.class()),
        Some(ErrorClass::Repair)
    );
    assert_eq!(
        result.text(),
        "the remote tool failed: Error executing tool shout"
    );
    let result = run(&executor, "add", json!({"a": "2", "b": 40})).await;
    assert_eq!(result.outcome(), "invalid_arguments");
}
