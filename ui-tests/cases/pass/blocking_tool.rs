// A synchronous fn marked `blocking` runs on tokio's blocking pool.
use tinyagents_tools::prelude::*;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct HashArgs {
    text: String,
}

/// Hash a text.
#[tool(blocking, read_only, idempotent)]
fn hash(args: HashArgs, #[inject] call: ToolCallId) -> Result<usize, ToolError> {
    let _ = call;
    Ok(args.text.len())
}

fn main() {
    assert_eq!(hash(HashArgs { text: "ab".into() }, "c".into()).unwrap(), 2);
    let mut registry: ToolRegistry = ToolRegistry::new();
    registry.register(HashTool).unwrap();
    assert!(HashTool::spec().blocking);
    let runtime = ToolRuntime::new(RunContext::empty(), "call-1", "hash");
    let out = tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(HashTool.call(&(), &runtime, serde_json::json!({"text": "abc"})))
        .unwrap();
    assert_eq!(out.structured, Some(serde_json::json!(3)));
}
