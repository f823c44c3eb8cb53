// `blocking` runs a plain fn on tokio's blocking pool; an `async fn` refuses
// it (a plain fn without `blocking` is a tool that answers at once).
use tinyagents_tools::prelude::*;

/// Count to four.
#[tool(blocking)]
async fn count_async() -> u32 {
    4
}

fn main() {
    let _ = CountAsyncTool;
}
