// The argument struct is taken by name, not taken apart in the signature.
use tinyagents_tools::prelude::*;

#[derive(Deserialize, JsonSchema)]
struct SearchArgs {
    query: String,
}

/// Search.
#[tool]
async fn search(SearchArgs { query }: SearchArgs) -> String {
    query
}

fn main() {}
