//! A rig-driven agent loop over tinyagents tools, against a local
//! OpenAI-compatible stub server the example starts on 127.0.0.1 (no
//! network, no key): the stub asks for a `hash` call, rig's OpenAI Chat
//! Completions client reads it, the call runs through the tinyagents
//! executor as a rig tool, and the executor's events are printed.
//!
//! ```sh
//! cargo run -p tinyagents-tools-rig --example rig_agent
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rig_core::completion::{AssistantContent, CompletionRequest, Message};
use rig_core::providers::openai::OpenAIConfig;
use serde_json::{Value, json};
use tinyagents_tools::builtins::{EchoTool, HashTool};
use tinyagents_tools::{
    Delivery, EventSubscriber, RunContext, ToolEvent, ToolExecutor, ToolRegistry,
};
use tinyagents_tools_rig::rig_tools;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// Prints every event as it happens.
struct Printer;

impl EventSubscriber for Printer {
    fn on_event(&self, event: &ToolEvent) {
        println!(
            "event: {} tool={} call={} error={}",
            event.kind.as_str(),
            event.tool,
            event.call_id,
            event.error_kind.unwrap_or("-")
        );
    }
    fn delivery(&self) -> Delivery {
        Delivery::Inline
    }
}

/// The stub's answer to the `n`th request: first a tool call, then text.
fn reply(n: usize) -> Value {
    let message = if n == 0 {
        json!({"role": "assistant", "content": null, "tool_calls": [{
            "id": "call_1", "type": "function",
            "function": {"name": "hash", "arguments": "{\"text\": \"hello\"}"}
        }]})
    } else {
        json!({"role": "assistant", "content": "The BLAKE3 digest of `hello` is above."})
    };
    let finish = if n == 0 { "tool_calls" } else { "stop" };
    json!({
        "id": format!("chatcmpl-{n}"), "object": "chat.completion", "created": 0,
        "model": "stub-model",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    })
}

/// Serves [`reply`]s over HTTP/1.1, one request per connection.
async fn stub(listener: TcpListener) {
    let served = AtomicUsize::new(0);
    while let Ok((mut socket, _)) = listener.accept().await {
        let mut request = Vec::new();
        let mut buf = [0u8; 4096];
        // Headers, then as many body bytes as Content-Length says.
        while let Ok(n) = socket.read(&mut buf).await {
            if n == 0 {
                break;
            }
            request.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&request);
            if let Some(end) = text.find("\r\n\r\n") {
                let length = text[..end]
                    .lines()
                    .find_map(|l| {
                        let (k, v) = l.split_once(':')?;
                        k.eq_ignore_ascii_case("content-length")
                            .then(|| v.trim().parse::<usize>().ok())?
                    })
                    .unwrap_or(0);
                if request.len() >= end + 4 + length {
                    break;
                }
            }
        }
        let body = reply(served.fetch_add(1, Ordering::SeqCst)).to_string();
        let response = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = socket.write_all(response.as_bytes()).await;
        let _ = socket.shutdown().await;
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let address = listener.local_addr()?;
    tokio::spawn(stub(listener));

    let mut registry: ToolRegistry = ToolRegistry::new();
    registry.register(EchoTool)?;
    registry.register(HashTool)?;
    let executor = ToolExecutor::builder(registry, ())
        .subscribe(Printer)
        .build()?;
    let tools = rig_tools(Arc::new(executor), Arc::new(RunContext::empty()));
    let definitions: Vec<_> = tools.iter().map(|t| t.definition()).collect();

    let model = OpenAIConfig::new("stub-key")
        .with_base_url(format!("http://{address}/v1"))
        .client()
        .chat("stub-model");
    let prompt = "What is the BLAKE3 digest of `hello`?";
    let mut history = vec![Message::user(prompt)];
    for _turn in 0..4 {
        let (last, before) = history.split_last().expect("never empty");
        let request = CompletionRequest::new(last.clone())
            .messages(before.iter().cloned())
            .tools(definitions.clone());
        let response = model.call(request).await?;
        let calls: Vec<_> = response
            .choice
            .iter()
            .filter_map(|c| match c {
                AssistantContent::ToolCall(call) => Some(call.clone()),
                _ => None,
            })
            .collect();
        if calls.is_empty() {
            for content in &response.choice {
                if let AssistantContent::Text(text) = content {
                    println!("model: {}", text.text());
                }
            }
            return Ok(());
        }
        history.push(Message::from(response.choice.clone()));
        for call in calls {
            let name = call.function.name.as_str();
            println!("model calls {name} ({:?})", call.id);
            let Some(tool) = tools.iter().find(|t| t.name() == name) else {
                continue;
            };
            let arguments = Value::Object(call.function.arguments.clone());
            let answer = match tool.call(arguments).await {
                Ok(output) => output
                    .as_text()
                    .map(str::to_owned)
                    .or_else(|| output.as_json().map(Value::to_string))
                    .unwrap_or_default(),
                Err(error) => error.message().to_owned(),
            };
            println!("result: {answer}");
            history.push(Message::tool_result(
                call.id.clone(),
                call.function.name.clone(),
                answer,
            ));
        }
    }
    Ok(())
}
