//! Auto-registration (feature `collect`): `#[tool(collect)]` tools are
//! gathered at link time and registered together.

use serde_json::json;
use tinyagents_tools::prelude::*;

#[derive(Deserialize, JsonSchema)]
struct Text {
    /// The text.
    text: String,
}

/// Echoes the text.
#[tool(collect)]
async fn collected_echo(args: Text) -> String {
    args.text
}

/// Shouts the text.
#[tool(collect, read_only)]
async fn collected_shout(args: Text) -> String {
    args.text.to_uppercase()
}

#[tokio::test]
async fn every_collected_tool_is_registered_with_its_definitions_place() {
    let registry = ToolRegistry::from_collected().unwrap();
    let mut names: Vec<&str> = registry.names().collect();
    names.sort_unstable();
    assert_eq!(names, ["collected_echo", "collected_shout"]);
    let echo = registry.get("collected_echo").unwrap();
    // The place is the attribute's line: the one above the fn's.
    let fn_index = include_str!("collect.rs")
        .lines()
        .position(|line| line.starts_with("async fn collected_echo"))
        .unwrap();
    let place = format!("the tool collected at tests/tools/collect.rs:{fn_index}");
    assert_eq!(echo.origin(), Some(place.as_str()));
    let executor = ToolExecutor::builder(registry, ()).build().unwrap();
    let call = ToolCall::new("c1", "collected_shout", json!({"text": "hi"}));
    let result = tinyagents_tools_tests::execute_once(&executor, call).await;
    assert_eq!(result.text(), "HI");
}
