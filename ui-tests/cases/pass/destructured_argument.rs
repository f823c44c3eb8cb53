// Patterns in parameters work as in any Rust fn: the argument struct taken
// apart, or bound `mut`.
use tinyagents_tools::prelude::*;

#[derive(Deserialize, JsonSchema)]
struct SearchArgs {
    query: String,
    limit: Option<u32>,
}

/// Search.
#[tool]
async fn search(SearchArgs { query, .. }: SearchArgs) -> String {
    query
}

/// Search, trimming the query first.
#[tool(read_only)]
async fn search_trimmed(mut args: SearchArgs) -> String {
    args.query = args.query.trim().to_owned();
    format!("{} ({:?})", args.query, args.limit)
}

/// Search on the blocking pool.
#[tool(read_only, blocking)]
fn search_now(SearchArgs { query, limit }: SearchArgs) -> String {
    format!("{query} {limit:?}")
}

fn main() {
    let _ = (SearchTool, SearchTrimmedTool, SearchNowTool);
}
