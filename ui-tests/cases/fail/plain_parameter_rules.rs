// Plain parameters are named, owned, described, and never mixed with an
// argument struct; one taken apart by a pattern is named by
// `#[arg(name = "...")]`, a valid name; `#[arg]` takes known options only.
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

/// The width of a range.
#[tool]
async fn width(
    /// The range's ends.
    (lo, hi): (i64, i64),
    /// The range's ends again.
    #[arg(name = "type")]
    (from, to): (i64, i64),
    /// A count.
    #[arg(name = "count")]
    n: u32,
) -> i64 {
    hi - lo + to - from + i64::from(n)
}

fn main() {}
