// The executor's state must be the state the tools need.
use tinyagents_tools::prelude::*;

/// Count.
#[tool]
async fn count(#[inject] state: State<u32>) -> u32 {
    *state
}

fn main() {
    let mut registry = ToolRegistry::default();
    registry.register(CountTool).unwrap();
    let _ = ToolExecutor::builder(registry, ());
}
