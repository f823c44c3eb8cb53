// A tool's future is sent across threads: nothing held across `.await`
// may be `!Send`.
use std::rc::Rc;
use tinyagents_tools::prelude::*;

/// Count.
#[tool]
async fn count() -> u32 {
    let shared = Rc::new(1);
    tokio::task::yield_now().await;
    *shared
}

fn main() {}
