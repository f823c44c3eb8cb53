// Plain parameters are named, owned, described, and never mixed with an
// argument struct; `#[arg]` takes known options only.
use tinyagents_tools::prelude::*;

#[derive(Deserialize, JsonSchema)]
struct SearchArgs {
    query: String,
}

/// Echo the text.
#[tool]
async fn echo(text: String) -> String {
    text
}

/// Count the characters.
#[tool]
async fn count(
    /// The text.
    text: &str,
) -> usize {
    text.len()
}

/// Search the index.
#[tool]
async fn search(
    args: SearchArgs,
    /// At most this many hits.
    limit: u32,
) -> String {
    format!("{} {limit}", args.query)
}

/// Add one.
#[tool]
async fn add_one(#[arg(descripton = "The number.")] n: i64) -> i64 {
    n + 1
}

fn main() {}
