// A secret cannot be a field of the argument struct.
use tinyagents_tools::prelude::*;

#[derive(Deserialize, JsonSchema)]
struct Args {
    query: String,
    api_key: Secret<String>,
}

/// Search.
#[tool]
async fn search(args: Args) -> String {
    args.query
}

fn main() {}
