// `task` is "optional" or "required": what MCP's `taskSupport` allows.
use tinyagents_tools::prelude::*;

/// Crunch numbers for a long time.
#[tool(task = "always")]
async fn crunch() {}

fn main() {}
