// A runtime-only value must be marked `#[inject]`.
use tinyagents_tools::prelude::*;

/// Wait for cancellation.
#[tool]
async fn wait(cancel: CancellationToken, key: Secret<String>) {
    cancel.cancelled().await;
    let _ = key;
}

fn main() {}
