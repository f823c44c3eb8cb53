// The return value must become a tool result: a serializable value, a
// `ToolOutput` or `()`, possibly inside a `Result`.
use tinyagents_tools::prelude::*;

struct Report;

/// Returns something that cannot be serialized.
#[tool]
async fn report() -> Report {
    Report
}

/// Returns impl Trait.
#[tool]
async fn opaque() -> impl Serialize {
    1
}

fn main() {}
