// The call's clock and random values cannot be fields of the argument
// struct: they implement neither `Deserialize` nor `JsonSchema`.
use tinyagents_tools::prelude::*;

#[derive(Deserialize, JsonSchema)]
struct Args {
    title: String,
    when: Clock,
    dice: Random,
}

/// Stamp.
#[tool]
async fn stamp(args: Args) -> String {
    args.title
}

fn main() {}
