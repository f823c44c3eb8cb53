//! The bytes a model is sent with every request: the tools declared one by
//! one against the one `run_code` declaration carrying them as typed stubs
//! (`CodeMode::declaration_sizes`, the request's `tools` value as each
//! provider receives it), for the example's two tools and for twenty.
//!
//! `cargo run --release --manifest-path benchmarks/code_mode/Cargo.toml --bin declarations`
use std::sync::Arc;

use serde_json::{Value, json};
use tinyagents_tools::code_mode::CodeMode;
use tinyagents_tools::prelude::*;
use tinyagents_tools::providers::{AnthropicOptions, ExportTarget, GeminiOptions, OpenAiOptions};
use tinyagents_tools::{ToolSafety, ToolSchema};

/// Which item.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ItemId {
    /// The item's number, from 1 to 100.
    #[schemars(range(min = 1, max = 100))]
    id: u32,
}

/// An item of the catalog.
#[derive(Serialize, JsonSchema)]
struct Item {
    /// Its name.
    name: String,
    /// Its price in cents.
    price: u32,
}

/// Look up an item of the catalog by number.
#[tool(read_only, idempotent, local)]
async fn lookup(args: ItemId) -> Item {
    Item {
        name: format!("item-{}", args.id),
        price: args.id * 125,
    }
}

/// What to label.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct LabelArgs {
    /// The item's name.
    name: String,
    /// Its price in cents.
    price: u32,
}

/// Make the shelf label of an item.
#[tool(read_only, idempotent, local)]
async fn label(args: LabelArgs) -> String {
    format!(
        "{} ${}.{:02}",
        args.name,
        args.price / 100,
        args.price % 100
    )
}

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
        let spec = ToolSpec::builder(
            format!("catalog_tool_{i}"),
            format!("Look up record {i} of the catalog by number and name."),
        )
        .input_schema(ToolSchema::from_value(json!({
            "type": "object", "description": "Which record.",
            "properties": {
                "id": {"type": "integer", "minimum": 1, "maximum": 100, "description": "The record's number, from 1 to 100."},
                "name": {"type": "string", "description": "The record's name."}
            },
            "required": ["id", "name"], "additionalProperties": false
        })))
        .output_schema(ToolSchema::from_value(json!({
            "type": "object", "description": "A record.",
            "properties": {
                "label": {"type": "string", "description": "Its label."},
                "price": {"type": "integer", "minimum": 0, "description": "Its price in cents."}
            },
            "required": ["label", "price"]
        })))
        .safety(ToolSafety::pure())
        .build()
        .unwrap();
        registry.register(Declared(spec)).unwrap();
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
