// Only one parameter may come from the model.
use tinyagents_tools::prelude::*;

#[derive(Deserialize, JsonSchema)]
struct Args {
    query: String,
}

#[derive(Deserialize, JsonSchema)]
struct Limits {
    limit: u32,
}

/// Search.
#[tool]
async fn search(args: Args, limits: Limits) -> String {
    format!("{} {}", args.query, limits.limit)
}

fn main() {}
