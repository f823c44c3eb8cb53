use tinyagents_tools::prelude::*;

/// What to look up.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct WeatherArgs {
    /// City name, e.g. "Paris".
    city: String,
}

/// Current weather in a city.
#[tool(read_only, idempotent, timeout = "5s")]
async fn weather(args: WeatherArgs) -> Result<String, ToolError> {
    if args.city.is_empty() {
        return Err(ToolError::repair("`city` must not be empty"));
    }
    Ok(format!("It is sunny in {}.", args.city))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut registry = ToolRegistry::new();
    registry.register(WeatherTool)?;
    let executor = ToolExecutor::builder(registry, ()).build()?;

    // A call as a model sends it: an id, a tool name, JSON arguments.
    let call = ToolCall::new("call_1", "weather", r#"{"city": "Paris"}"#);
    let result = executor
        .execute(&RunContext::empty(), &Turn::new(1), call)
        .await;
    assert_eq!(result.text(), "It is sunny in Paris.");
    println!("{}", result.text());
    Ok(())
}
