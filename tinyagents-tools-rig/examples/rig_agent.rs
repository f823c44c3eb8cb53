//! A rig agent (from `rig-agent`, rig's agent runtime) with tinyagents tools,
//! against a local OpenAI-compatible stub server the example starts on
//! 127.0.0.1 (no network, no key): the stub asks for a `hash` call, the
//! agent calls the tool, which runs through the tinyagents executor (its
//! events are printed), and the stub then answers with the final text.
//!
//! ```sh
//! cargo run -p tinyagents-tools-rig --example rig_agent
//! ```

#[path = "../tests/support/stub.rs"]
mod stub;

use std::sync::Arc;

use rig_agent::AgentBuilder;
use rig_core::providers::openai::OpenAIConfig;
use tinyagents_tools::builtins::{EchoTool, HashTool};
use tinyagents_tools::events::{Delivery, EventSubscriber, ToolEvent};
use tinyagents_tools::{RunContext, ToolExecutor, ToolRegistry};
use tinyagents_tools_rig::AgentToolsExt;

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

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let stub = stub::start(vec![
        stub::tool_call("call_1", "hash", r#"{"text": "hello"}"#),
        stub::text("The BLAKE3 digest of `hello` is the tool's answer above."),
    ])
    .await?;

    let mut registry: ToolRegistry = ToolRegistry::new();
    registry.register(EchoTool)?;
    registry.register(HashTool)?;
    let executor = ToolExecutor::builder(registry, ())
        .subscribe(Printer)
        .build()?;

    let model = OpenAIConfig::new("stub-key")
        .with_base_url(stub.base_url.clone())
        .client()
        .chat("stub-model");
    let agent = AgentBuilder::new(model)
        .preamble("Use the tools when they help.")
        .tinyagents_tools(Arc::new(executor), Arc::new(RunContext::empty()))
        .build();

    let response = agent
        .prompt("What is the BLAKE3 digest of `hello`?")
        .max_turns(4)
        .await?;
    for message in stub.requests.lock().unwrap().iter().skip(1) {
        if let Some(result) = message["messages"]
            .as_array()
            .and_then(|m| m.iter().rev().find(|m| m["role"] == "tool"))
        {
            println!("tool result sent to the model: {}", result["content"]);
        }
    }
    println!("agent: {}", response.output());
    Ok(())
}
