// Flags take no value: leave the option out for false.
use tinyagents_tools::prelude::*;

/// Read.
#[tool(read_only = false)]
async fn read() {}

fn main() {}
