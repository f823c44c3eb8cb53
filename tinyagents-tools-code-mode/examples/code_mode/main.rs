//! Code mode: the model writes one program that calls many tools.
//!
//! ```sh
//! cargo run --example code_mode
//! ```
//!
//! A scripted model is offered `run_code` alone (OpenAI Chat format). In
//! one call, its program loops over 20 items, calling `lookup` then
//! `label` for each, and returns the joined labels. Every one of those 40
//! calls goes through the executor, with ids derived from the `run_code`
//! call's id. The example prints the result, the calls made, the model
//! round trips saved, and the declarations' bytes plain and in code mode.

use std::sync::Arc;

use catalog::{LabelTool, LookupTool, PROGRAM};
use serde_json::json;
use tinyagents_tools::events::{Delivery, EventKind, EventSubscriber, ToolEvent};
use tinyagents_tools::prelude::*;
use tinyagents_tools::providers::openai::{chat_tool_message, parse_chat_tool_calls};
use tinyagents_tools::providers::{ExportTarget, OpenAiOptions, export_declarations};
use tinyagents_tools_code_mode::CodeMode;

// Shared with the tests and the benchmark; `catalog_spec` is theirs.
#[allow(dead_code)]
mod catalog;

/// Counts the inner calls that completed.
#[derive(Default)]
struct Calls(std::sync::Mutex<Vec<String>>);

impl EventSubscriber for Calls {
    // In-line: every event is recorded by the time its call answers (a
    // queued subscriber would get them a moment later).
    fn delivery(&self) -> Delivery {
        Delivery::Inline
    }

    fn on_event(&self, event: &ToolEvent) {
        if event.kind == EventKind::Completed {
            self.0
                .lock()
                .unwrap()
                .push(format!("{} {}", event.call_id, event.tool));
        }
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    main_inner().await
}

async fn main_inner() -> Result<(), Box<dyn std::error::Error>> {
    // The executor that runs the tools.
    let mut registry = ToolRegistry::new();
    registry.register(LookupTool)?;
    registry.register(LabelTool)?;
    let calls = Arc::new(Calls::default());
    let inner = Arc::new(
        ToolExecutor::builder(registry, ())
            .subscribe(calls.clone())
            .build()?,
    );

    // The model-facing executor: `run_code` alone.
    let mode = CodeMode::new(Arc::clone(&inner));
    let target = ExportTarget::OpenAiChat(OpenAiOptions::default());
    let sizes = mode.declaration_sizes(target);
    // What the second tool adds, as a stub and as a plain declaration.
    let first = CodeMode::new(Arc::clone(&inner))
        .offering(["lookup"])
        .declaration_sizes(target);
    let mut model_facing = ToolRegistry::new();
    model_facing.register(mode.tool())?;
    let outer = ToolExecutor::builder(model_facing, ()).build()?;
    let declared = export_declarations(target, outer.registry().specs()).request_tools();
    assert_eq!(declared.as_array().map(Vec::len), Some(1));

    // The scripted model's one reply: a run_code call.
    let reply = json!({"choices": [{"message": {"role": "assistant", "tool_calls": [{
        "id": "call_1", "type": "function",
        "function": {"name": "run_code", "arguments": json!({"code": PROGRAM}).to_string()}
    }]}}]});
    let run = RunContext::empty();
    let turn = Turn::new(1).advertising(["run_code"]);
    let results = outer
        .execute_batch(&run, &turn, parse_chat_tool_calls(&reply)?)
        .await;
    let answer = &results[0];
    let message = chat_tool_message(&answer.message);

    let made = calls.0.lock().unwrap().clone();
    println!(
        "result: {}",
        answer
            .message
            .structured
            .as_ref()
            .map_or(json!(null), |s| s["result"].clone())
    );
    println!(
        "tool calls made by the program: {} ({} .. {})",
        made.len(),
        made[0],
        made[made.len() - 1]
    );
    println!(
        "the message the model gets back: {} bytes",
        message.to_string().len()
    );
    // Without code mode the model makes the 20 lookups in one turn, reads
    // them, then the 20 labels in a second turn (parallel calls; 40 turns
    // one call at a time); with it, one turn.
    println!(
        "model round trips: 1 with code mode, 2 without (parallel calls), 40 one call per turn: {} saved (39 one call per turn)",
        2 - 1
    );
    // `run_code`'s instructions are a fixed cost; each tool's stub is
    // smaller than its declaration, so code mode saves bytes from a few
    // tools on (with these two, it costs more).
    let verdict = match sizes.saved() {
        saved if saved >= 0 => format!("{saved} bytes saved"),
        saved => format!("{} bytes more", -saved),
    };
    println!(
        "declarations (OpenAI Chat): {} bytes plain, {} bytes in code mode: {verdict}; \
         `label` adds {} bytes as a stub, {} declared plainly",
        sizes.plain,
        sizes.code_mode,
        sizes.code_mode - first.code_mode,
        sizes.plain - first.plain,
    );
    assert_eq!(answer.outcome(), "ok");
    assert_eq!(made.len(), 40);
    Ok(())
}

#[cfg(test)]
mod tests {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_walkthrough_runs() {
        super::main_inner().await.unwrap();
    }
}
