// `timeout` takes a duration string.
use tinyagents_tools::prelude::*;

/// Wait.
#[tool(timeout = 5)]
async fn wait() {}

fn main() {}
