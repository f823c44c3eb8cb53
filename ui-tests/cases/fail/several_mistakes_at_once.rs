// One compile shows every mistake of a fn.
#![allow(non_snake_case)]
use tinyagents_tools::prelude::*;

#[derive(Deserialize, JsonSchema)]
struct Args {
    query: String,
}

#[tool(read_only, destructive, timeout = "0s", retry(max_attempts = 3))]
fn Search(args: Args, extra: u32, cancel: CancellationToken) {
    let _ = (args.query, extra, cancel);
}

fn main() {}
