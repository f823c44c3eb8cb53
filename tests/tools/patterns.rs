//! Patterns in a tool's parameters work as in any Rust fn: the argument
//! struct taken apart, or bound `mut`; a plain parameter
//! bound `mut`, or taken apart with its property named by
//! `#[arg(name = "...")]`. The call still gets the model's values.

use serde_json::json;
use tinyagents_tools::prelude::*;
use tinyagents_tools_tests::{call, execute_once};

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
    let oslo = json!({"city": "Oslo"});
    let a = execute_once(&executor, call("c1", "taken_apart", oslo)).await;
    assert_eq!(a.text(), "city Oslo");
    let oslo_in_celsius = json!({"city": "Oslo", "unit": "celsius"});
    let b = execute_once(&executor, call("c2", "bound_mut", oslo_in_celsius)).await;
    assert_eq!(b.text(), "OSLO in celsius");
}

/// The city and unit, taken apart in a plain fn.
#[tool(read_only, idempotent)]
fn unwrapped(Lookup { city, unit }: Lookup) -> String {
    format!("{city} {}", unit.unwrap_or_default())
}

/// A range and a count, as plain parameters.
#[tool(read_only, idempotent)]
fn span_of(
    /// The range's ends, low first.
    #[arg(name = "range")]
    (lo, hi): (i64, i64),
    /// How many steps.
    mut steps: u32,
) -> String {
    steps = steps.max(1);
    format!("{} per step", (hi - lo) / i64::from(steps))
}

#[tokio::test]
async fn a_tuple_pattern_is_a_plain_parameter_named_by_arg_name_and_mut_binds_as_written() {
    // The tuple is the property `range`, a JSON array of two integers; the
    // schema says so and the call gets the model's values.
    let schema = SpanOfTool::spec().input_schema.as_value();
    assert_eq!(schema["required"], json!(["range", "steps"]));
    assert_eq!(schema["properties"]["range"]["type"], "array");
    assert_eq!(schema["properties"]["range"]["minItems"], 2);
    assert_eq!(schema["properties"]["range"]["maxItems"], 2);
    let mut registry = ToolRegistry::new();
    registry.register(SpanOfTool).unwrap();
    registry.register(UnwrappedTool).unwrap();
    let executor = ToolExecutor::builder(registry, ()).build().unwrap();
    let two_to_twelve = json!({"range": [2, 12], "steps": 0});
    let spanned = execute_once(&executor, call("c1", "span_of", two_to_twelve)).await;
    assert_eq!(spanned.text(), "10 per step");
    // A plain fn takes its argument struct apart as an async fn does.
    let schema = UnwrappedTool::spec().input_schema.as_value();
    assert_eq!(schema["required"], json!(["city"]));
    let oslo_in_kelvin = json!({"city": "Oslo", "unit": "K"});
    let unwrapped = execute_once(&executor, call("c2", "unwrapped", oslo_in_kelvin)).await;
    assert_eq!(unwrapped.text(), "Oslo K");
}
