// A `where` clause is refused at the clause.
use tinyagents_tools::prelude::*;

/// Count.
#[tool]
async fn count() -> u32
where
    u32: Copy,
{
    1
}

fn main() {}
