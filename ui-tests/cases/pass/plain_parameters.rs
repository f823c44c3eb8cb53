// Plain parameters: described by `///` or `#[arg(description)]`, optional
// as `Option<T>`, defaulted with `#[arg(default)]`; the generated
// `AddArgs` is the input schema; the fn keeps its parameters.
use tinyagents_tools::prelude::*;

fn ten() -> i64 {
    10
}

/// Add numbers.
#[tool(read_only)]
pub async fn add(
    /// The first number.
    a: i64,
    #[arg(description = "The second number.")] b: Option<i64>,
    /// Added last (default 10).
    #[arg(default = "ten")]
    c: i64,
    /// Negate the sum.
    #[arg(default)]
    negate: bool,
    #[inject] _call: ToolCallId,
) -> i64 {
    let sum = a + b.unwrap_or(0) + c;
    if negate { -sum } else { sum }
}

fn main() {
    let schema = AddTool::spec().input_schema.as_value().clone();
    assert_eq!(schema["required"], serde_json::json!(["a"]));
    let args: AddArgs = serde_json::from_value(serde_json::json!({"a": 1})).unwrap();
    assert_eq!((args.a, args.b, args.c, args.negate), (1, None, 10, false));
    let mut registry: ToolRegistry = ToolRegistry::new();
    registry.register(AddTool).unwrap();
    let runtime = ToolRuntime::new(RunContext::empty(), "call-1", "add");
    let out = tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(AddTool.call(&(), &runtime, serde_json::json!({"a": 1, "b": 2})))
        .unwrap();
    assert_eq!(out.structured, Some(serde_json::json!(13)));
}
