// A refused fn stays callable and its tool type still exists: its uses add
// no errors of their own.
use tinyagents_tools::prelude::*;

/// Add.
#[tool(timeout = "soon")]
async fn add() -> u32 {
    2
}

fn main() {
    let mut registry: ToolRegistry = ToolRegistry::new();
    registry.register(AddTool).unwrap();
    let _ = AddTool::spec();
    let _ = add();
}
