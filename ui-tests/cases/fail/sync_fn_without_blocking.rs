// A synchronous fn needs `blocking`; an async fn refuses it.
use tinyagents_tools::prelude::*;

/// Count to three.
#[tool]
fn count() -> u32 {
    3
}

/// Count to four.
#[tool(blocking)]
async fn count_async() -> u32 {
    4
}

fn main() {}
