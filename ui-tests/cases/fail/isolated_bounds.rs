// `max_memory` and `max_cpu` are enforced in a worker process only: without
// `isolated` they are refused, naming it; zero and malformed bounds too.
use tinyagents_tools::prelude::*;

/// Without isolated.
#[tool(max_memory = "256MiB", max_cpu = "2s")]
async fn not_isolated() {}

/// Zero bounds.
#[tool(isolated, max_memory = "0MiB", max_cpu = "0s")]
async fn zero_bounds() {}

/// Malformed bounds.
#[tool(isolated, max_memory = "256MB", max_cpu = "2")]
async fn malformed_bounds() {}

/// Not a string.
#[tool(isolated, max_memory = 256)]
async fn not_a_string() {}

fn main() {}
