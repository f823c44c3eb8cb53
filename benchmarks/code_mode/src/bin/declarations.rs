//! The bytes a model is sent with every request: the tools declared one by
//! one against the one `run_code` declaration carrying them as typed stubs
//! (`CodeMode::declaration_sizes`, the request's `tools` value as each
//! provider receives it), for the example's two tools and for twenty.
//!
//! `cargo run --release --manifest-path benchmarks/code_mode/Cargo.toml --bin declarations`
use std::sync::Arc;

use serde_json::Value;
use tinyagents_tools::prelude::*;
use tinyagents_tools::providers::{AnthropicOptions, ExportTarget, GeminiOptions, OpenAiOptions};
use tinyagents_tools_code_mode::CodeMode;

// The example's two tools, and the shape of twenty.
#[path = "../../../../tinyagents-tools-code-mode/examples/code_mode/catalog.rs"]
#[allow(dead_code)]
mod catalog;
use catalog::{LabelTool, LookupTool, catalog_spec};

/// A tool that is only declared.
struct Declared(ToolSpec);

#[async_trait]
impl Tool for Declared {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }

    async fn call(&self, _: &(), _: &ToolRuntime, _: Value) -> CallResult {
        Ok(ToolOutput::text(""))
    }
}

/// Twenty tools shaped like the example's: one sentence, two described
/// arguments (one bounded), an object answer of two described members
/// (the same shape as the test `twenty_tools_cost_less_in_code_mode_...`).
fn twenty() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    for i in 0..20 {
        registry.register(Declared(catalog_spec(i))).unwrap();
    }
    registry
}

fn main() {
    let mut two = ToolRegistry::new();
    two.register(LookupTool).unwrap();
    two.register(LabelTool).unwrap();
    let targets = [
        (
            "OpenAI Chat",
            ExportTarget::OpenAiChat(OpenAiOptions::default()),
        ),
        (
            "OpenAI Responses",
            ExportTarget::OpenAiResponses(OpenAiOptions::default()),
        ),
        (
            "Anthropic",
            ExportTarget::Anthropic(AnthropicOptions::default()),
        ),
        ("Gemini", ExportTarget::Gemini(GeminiOptions::default())),
        ("MCP", ExportTarget::Mcp),
    ];
    println!("declarations, bytes: plain / code mode (saved)");
    for (case, registry) in [("the example's 2 tools", two), ("20 tools", twenty())] {
        let executor = Arc::new(ToolExecutor::builder(registry, ()).build().unwrap());
        for (name, target) in targets {
            let sizes = CodeMode::new(Arc::clone(&executor)).declaration_sizes(target);
            println!(
                "{case}, {name}: {} / {} ({})",
                sizes.plain,
                sizes.code_mode,
                sizes.saved()
            );
        }
    }
}
