// An option given twice is an error at the repeat.
use tinyagents_tools::prelude::*;

/// Search.
#[tool(timeout = "1s", read_only, timeout = "2s")]
async fn search() {}

fn main() {}
