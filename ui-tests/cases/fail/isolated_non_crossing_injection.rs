// An isolated tool runs in a worker process: a hidden value that lives in
// the agent process (a store, the cancellation token) is refused at its
// parameter; ids and secrets cross.
use tinyagents_tools::prelude::*;

/// Count the records.
#[tool(isolated)]
async fn count(
    #[inject] id: ToolCallId,
    #[inject] db: Store<Vec<u8>>,
    #[inject] cancel: CancellationToken,
) -> usize {
    let _ = (id, cancel);
    db.len()
}

fn main() {}
