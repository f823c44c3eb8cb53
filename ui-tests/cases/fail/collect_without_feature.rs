// `#[tool(collect)]` needs the runtime crate's `collect` feature: without
// it nothing is collected, and the option says which feature to turn on.
use tinyagents_tools::prelude::*;

/// Pings.
#[tool(collect)]
async fn ping() -> String {
    "pong".into()
}

fn main() {}
