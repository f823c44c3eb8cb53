// A plain (not `async`) fn is a tool that answers at once: free, with
// plain parameters and an injection, and as a `&self` method of a
// `#[tools]` block (its parameter described by `#[arg(description)]`).
use std::sync::Arc;

use tinyagents_tools::prelude::*;

/// Add two numbers.
#[tool(read_only, idempotent)]
fn add(
    /// The first number.
    a: i64,
    /// The second number.
    b: i64,
    #[inject] call: ToolCallId,
) -> Result<i64, ToolError> {
    let _ = call;
    Ok(a + b)
}

#[derive(Default)]
struct Counter {
    base: i64,
}

#[tools]
impl Counter {
    /// Add to the base.
    #[tool(read_only, idempotent)]
    fn plus(&self, #[arg(description = "How much to add.")] n: i64) -> i64 {
        self.base + n
    }
}

fn main() {
    assert_eq!(add(1, 2, "c".into()).unwrap(), 3);
    let runtime = ToolRuntime::new(RunContext::empty(), "call-1", "add");
    let inline = Tool::<(), ()>::__inline(&AddTool).expect("a plain fn answers at once");
    let out = inline
        .call_inline(
            &(),
            &(&runtime).into(),
            &serde_json::json!({"a": 2, "b": 3}),
        )
        .unwrap();
    assert_eq!(out.structured, Some(serde_json::json!(5)));
    assert!(!AddTool::spec().blocking);

    let plus = CounterPlusTool::new(Arc::new(Counter { base: 10 }));
    let inline = Tool::<(), ()>::__inline(&plus).expect("a plain method answers at once");
    let out = inline
        .call_inline(&(), &(&runtime).into(), &serde_json::json!({"n": 5}))
        .unwrap();
    assert_eq!(out.structured, Some(serde_json::json!(15)));
    let n = &CounterPlusTool::spec().input_schema.as_value()["properties"]["n"];
    assert_eq!(n["description"], "How much to add.");
    let mut registry: ToolRegistry = ToolRegistry::new();
    registry.register(AddTool).unwrap();
    registry
        .register_service(Arc::new(Counter::default()))
        .unwrap();
}
