// `max_concurrency` is a whole number of at least 1.
use tinyagents_tools::prelude::*;

/// Negative.
#[tool(max_concurrency = -1)]
async fn negative() {}

/// Zero.
#[tool(max_concurrency = 0)]
async fn zero() {}

fn main() {}
