// `#[inject]` takes no options.
use tinyagents_tools::prelude::*;

/// Wait.
#[tool]
async fn wait(#[inject(optional)] cancel: CancellationToken) {
    cancel.cancelled().await;
}

fn main() {}
