// A model-visible value is a field of the argument struct, never a plain
// parameter: the model's input is one JSON object.
use tinyagents_tools::prelude::*;

/// Echo the text.
#[tool]
async fn echo(text: String) -> String {
    text
}

/// Add two numbers.
#[tool]
async fn add(pair: (i64, i64)) -> i64 {
    pair.0 + pair.1
}

fn main() {}
