// Without `name`, the fn name must be a valid tool name.
#![allow(non_snake_case)]
use tinyagents_tools::prelude::*;

/// Search.
#[tool]
async fn SearchDocs() {}

fn main() {}
