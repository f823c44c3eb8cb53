// The model-visible parameter must be `Deserialize + JsonSchema`.
use tinyagents_tools::prelude::*;

struct Query {
    text: String,
}

/// Search.
#[tool]
async fn search(query: Query) -> String {
    query.text
}

fn main() {}
