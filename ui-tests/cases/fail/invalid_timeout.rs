// A timeout is a positive whole number with a unit.
use tinyagents_tools::prelude::*;

/// One.
#[tool(timeout = "0s")]
async fn one() {}

/// Two.
#[tool(timeout = "30")]
async fn two() {}

/// Three.
#[tool(timeout = "1.5s")]
async fn three() {}

/// Four.
#[tool(max_concurrency = 0)]
async fn four() {}

fn main() {}
