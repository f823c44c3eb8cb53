// Only one parameter may come from the model.
use tinyagents_tools::prelude::*;

#[derive(Deserialize, JsonSchema)]
struct Args {
    query: String,
}

/// Search.
#[tool]
async fn search(args: Args, limit: u32) -> String {
    format!("{} {limit}", args.query)
}

fn main() {}
