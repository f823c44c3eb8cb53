// A tool needs a doc comment or `description`.
use tinyagents_tools::prelude::*;

#[tool(read_only)]
async fn undocumented() {}

/// Documented, but the option wins and is empty.
#[tool(description = "  ")]
async fn blank() {}

fn main() {}
