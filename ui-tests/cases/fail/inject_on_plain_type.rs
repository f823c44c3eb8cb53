// `#[inject]` needs a type that implements `Inject`.
use tinyagents_tools::prelude::*;

struct Database;

/// Query the database.
#[tool]
async fn query(#[inject] db: Database) {
    let _ = db;
}

fn main() {}
