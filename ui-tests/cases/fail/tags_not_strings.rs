// Tags are string literals.
use tinyagents_tools::prelude::*;

/// List files.
#[tool(tags = [files, "search"])]
async fn list_files() {}

fn main() {}
