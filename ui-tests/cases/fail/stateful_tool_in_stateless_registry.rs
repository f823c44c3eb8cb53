// A tool that injects state, registered into `ToolRegistry::new()` (the
// registry of tools without state): the error says how to make the
// registry for that state.
use tinyagents_tools::prelude::*;

#[derive(Clone)]
struct Db;

/// Count the rows.
#[tool]
async fn count(#[inject] db: State<Db>) -> u32 {
    let _ = &*db;
    0
}

fn main() {
    let mut registry = ToolRegistry::new();
    registry.register(CountTool).unwrap();
}
