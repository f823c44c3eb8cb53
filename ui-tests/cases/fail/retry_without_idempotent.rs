// Only an idempotent tool may retry, and a retry needs at least two attempts.
use tinyagents_tools::prelude::*;

/// Send an email.
#[tool(retry(max_attempts = 3, backoff = "100ms"))]
async fn send_email() {}

/// Fetch a page.
#[tool(idempotent, retry(max_attempts = 1, backoff = "soon"))]
async fn fetch() {}

fn main() {}
