// `retry(...)` options are named as such, with the valid ones listed.
use tinyagents_tools::prelude::*;

/// Misspelled.
#[tool(idempotent, retry(max_attempts = 3, backof = "1s"))]
async fn misspelled() {}

/// No attempts.
#[tool(idempotent, retry(backoff = "1s"))]
async fn no_attempts() {}

/// Backoff as a number.
#[tool(idempotent, retry(max_attempts = 3, backoff = 100))]
async fn numeric_backoff() {}

fn main() {}
