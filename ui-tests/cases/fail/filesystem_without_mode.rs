// `filesystem` needs its access mode.
use tinyagents_tools::prelude::*;

/// List files.
#[tool(filesystem)]
async fn list_files() {}

fn main() {}
