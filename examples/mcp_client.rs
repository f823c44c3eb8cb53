//! Uses the tools of any MCP server through the executor: starts COMMAND as
//! a stdio MCP server, imports its tools, prints their OpenAI Chat
//! Completions declarations, then answers calls read from stdin.
//!
//! ```text
//! cargo run --example mcp_client --features mcp-client -- COMMAND [ARGS...]
//! ```
//!
//! - The first line of stdout is one JSON array: each imported tool's
//!   declaration, `strict: true` where its schema can be made strict,
//!   otherwise `strict: false`. A tool refused at import (an invalid name
//!   or schema) is named on stderr with the reason.
//! - Then each line of stdin is a call,
//!   `{"id": "...", "name": "...", "arguments": {...}}` (`arguments` may also
//!   be the JSON text of the object), and each gets one line on stdout: the
//!   canonical tool message `{"id", "name", "is_error", "content", "value"}`
//!   (`value` is the structured result, or `null`).
//! - Arguments are checked against the remote schema before anything is
//!   sent; a server that dies or hangs gets a classified error per call.
//! - When the server says its tool list changed, the tools are imported
//!   again before the next call.
//! - It exits 0 at the end of input.
//!
//! Against the project's own server:
//!
//! ```text
//! cargo build --example mcp_server
//! echo '{"id":"1","name":"calculate","arguments":{"a":6,"op":"multiply","b":7}}' |
//!   cargo run --example mcp_client --features mcp-client -- target/debug/examples/mcp_server
//! ```

use std::process::ExitCode;
use std::time::Duration;

use serde_json::{Value, json};
use tinyagents_tools::providers::{ExportTarget, OpenAiOptions, export_tool};
use tinyagents_tools::{RunContext, ToolCall, ToolExecutor, ToolRegistry, ToolSpec, Turn};
use tinyagents_tools_mcp::client::{ImportOptions, McpClient};
use tokio::io::{AsyncBufReadExt, BufReader};

/// The OpenAI Chat Completions declaration of `spec`: strict when the
/// schema allows it, otherwise not strict, and for a schema OpenAI refuses
/// altogether, an open object (the executor still checks every call against
/// the remote schema).
fn declaration(spec: &ToolSpec) -> Value {
    let strict = ExportTarget::OpenAiChat(OpenAiOptions { strict: true });
    let loose = ExportTarget::OpenAiChat(OpenAiOptions { strict: false });
    if let Ok(declaration) = export_tool(spec, strict) {
        return declaration.into_json();
    }
    match export_tool(spec, loose) {
        Ok(declaration) => declaration.into_json(),
        Err(e) => {
            eprintln!(
                "mcp_client: `{}` is declared with open parameters: {e}",
                spec.name
            );
            json!({"type": "function", "function": {
                "name": spec.name.as_str(),
                "description": spec.description,
                "parameters": {"type": "object"},
                "strict": false
            }})
        }
    }
}

async fn import(client: &McpClient, options: &ImportOptions) -> Result<ToolExecutor, String> {
    let mut registry = ToolRegistry::new();
    let report = client
        .import_into(&mut registry, options)
        .await
        .map_err(|e| e.to_string())?;
    for refused in &report.refused {
        eprintln!("mcp_client: refused {refused}");
    }
    ToolExecutor::builder(registry, ())
        .build()
        .map_err(|e| e.to_string())
}

/// A line that is not a call: the `id` and `name` it had, if any, and why.
type BadLine = Box<(Value, Value, String)>;

/// A call line as a [`ToolCall`], or why it is not one.
fn parse_call(line: &str) -> Result<ToolCall, BadLine> {
    let value: Value = serde_json::from_str(line).map_err(|e| {
        Box::new((
            Value::Null,
            Value::Null,
            format!("the line is not JSON: {e}"),
        ))
    })?;
    let id = value.get("id").cloned().unwrap_or(Value::Null);
    let name = value.get("name").cloned().unwrap_or(Value::Null);
    let id_text = match &id {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => {
            return Err(Box::new((
                id,
                name,
                "the call has no string `id`".to_owned(),
            )));
        }
    };
    let Some(name_text) = name.as_str().map(str::to_owned) else {
        return Err(Box::new((
            id,
            name,
            "the call has no string `name`".to_owned(),
        )));
    };
    let arguments = match value.get("arguments") {
        None | Some(Value::Null) => "{}".to_owned(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    };
    Ok(ToolCall::new(id_text, name_text, arguments))
}

#[tokio::main]
async fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let Some(program) = args.next() else {
        eprintln!("usage: mcp_client COMMAND [ARGS...]");
        return ExitCode::from(2);
    };
    let mut command = tokio::process::Command::new(program);
    command.args(args);
    let client = match McpClient::spawn(command).await {
        Ok(client) => client,
        Err(e) => {
            eprintln!("mcp_client: {e}");
            return ExitCode::FAILURE;
        }
    };
    let options = ImportOptions::new().timeout(Duration::from_secs(60));
    let mut executor = match import(&client, &options).await {
        Ok(executor) => executor,
        Err(e) => {
            eprintln!("mcp_client: {e}");
            return ExitCode::FAILURE;
        }
    };
    let declarations: Vec<Value> = executor.registry().specs().map(declaration).collect();
    println!("{}", Value::Array(declarations));

    let run = RunContext::empty();
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    let mut turn = 0;
    while let Ok(Some(line)) = lines.next_line().await {
        if line.trim().is_empty() {
            continue;
        }
        turn += 1;
        if client.take_tools_changed() {
            match import(&client, &options).await {
                Ok(next) => executor = next,
                Err(e) => eprintln!("mcp_client: keeping the previous tools: {e}"),
            }
        }
        let answer = match parse_call(&line) {
            Ok(call) => {
                let result = executor.execute(&run, &Turn::new(turn), call).await;
                let message = result.to_message();
                json!({
                    "id": message.tool_call_id.as_str(),
                    "name": message.name.as_str(),
                    "is_error": message.is_error,
                    "content": message.content,
                    "value": result.structured,
                })
            }
            Err(bad) => {
                let (id, name, problem) = *bad;
                json!({
                    "id": id,
                    "name": name,
                    "is_error": true,
                    "content": [{"type": "text", "text": problem}],
                    "value": null,
                })
            }
        };
        println!("{answer}");
    }
    ExitCode::SUCCESS
}
