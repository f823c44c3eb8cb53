// Turning secret redaction off needs the explicit opt-in, and the opt-in
// alone is a mistake too.
use tinyagents_tools::prelude::*;

/// Show the token.
#[tool(redact(secrets = false))]
async fn show_token() {}

/// Show nothing secret.
#[tool(unredacted_secrets)]
async fn show_nothing() {}

fn main() {}
