// A tool without a model-visible parameter takes an empty object.
use tinyagents_tools::prelude::*;

/// Tell the time of day.
#[tool(read_only)]
async fn now() -> String {
    "noon".to_owned()
}

fn main() {
    let mut registry: ToolRegistry = ToolRegistry::new();
    registry.register(NowTool).unwrap();
    assert_eq!(registry.names().collect::<Vec<_>>(), ["now"]);
    assert!(!NowTool::spec().input_schema.has_required());
    let runtime = ToolRuntime::new(RunContext::empty(), "call-1", "now");
    let out = tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(NowTool.call(&(), &runtime, serde_json::json!({})))
        .unwrap();
    assert_eq!(out.structured, Some(serde_json::json!("noon")));
}
