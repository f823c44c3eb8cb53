//! Patterns in a tool's parameters work as in any Rust fn: the argument
//! struct taken apart, or bound `mut`, and the call still gets the model's
//! values.

use serde_json::json;
use tinyagents_tools::prelude::*;

/// What to look for.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Lookup {
    /// The city.
    city: String,
    /// The unit.
    unit: Option<String>,
}

/// The city, taken apart in the signature.
#[tool(read_only, idempotent)]
async fn taken_apart(Lookup { city, .. }: Lookup) -> String {
    format!("city {city}")
}

/// The whole struct, bound `mut`.
#[tool(read_only, idempotent)]
async fn bound_mut(mut args: Lookup) -> String {
    args.city.make_ascii_uppercase();
    format!("{} in {}", args.city, args.unit.unwrap_or_default())
}

#[tokio::test]
async fn a_destructured_or_mut_argument_struct_gets_the_models_values() {
    let mut registry = ToolRegistry::new();
    registry.register(TakenApartTool).unwrap();
    registry.register(BoundMutTool).unwrap();
    // The schema is the struct's, whatever the pattern.
    let schema = TakenApartTool::spec().input_schema.as_value();
    assert_eq!(schema["required"], json!(["city"]));
    let executor = ToolExecutor::builder(registry, ()).build().unwrap();
    let run = RunContext::empty();
    let turn = Turn::new(1);
    let a = executor
        .execute(
            &run,
            &turn,
            ToolCall::new("c1", "taken_apart", json!({"city": "Oslo"})),
        )
        .await;
    assert_eq!(a.text(), "city Oslo");
    let b = executor
        .execute(
            &run,
            &turn,
            ToolCall::new(
                "c2",
                "bound_mut",
                json!({"city": "Oslo", "unit": "celsius"}),
            ),
        )
        .await;
    assert_eq!(b.text(), "OSLO in celsius");
}
