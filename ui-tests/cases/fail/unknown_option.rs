// An unknown option gets a did-you-mean suggestion.
use tinyagents_tools::prelude::*;

/// Search.
#[tool(read_onyl)]
async fn search() {}

fn main() {}
