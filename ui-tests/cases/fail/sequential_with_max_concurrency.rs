// `sequential` already means one call at a time.
use tinyagents_tools::prelude::*;

/// Write the log.
#[tool(sequential, max_concurrency = 4)]
async fn write_log() {}

fn main() {}
