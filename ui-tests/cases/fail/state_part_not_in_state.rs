// `State<Part>` takes a part of the executor's state only through `FromState`.
use tinyagents_tools::prelude::*;

#[derive(Clone)]
struct AppState;

#[derive(Clone)]
struct Db;

/// Query.
#[tool(state = AppState)]
async fn query(#[inject] db: State<Db>) {
    let _ = db;
}

fn main() {}
