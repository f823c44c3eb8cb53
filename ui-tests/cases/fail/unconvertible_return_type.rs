// The return value must become a tool result.
use tinyagents_tools::prelude::*;

struct Report;

/// Returns something that cannot be serialized.
#[tool]
async fn report() -> Report {
    Report
}

struct MyError;

/// Fails with an error that is not a ToolError.
#[tool]
async fn failing() -> Result<u32, MyError> {
    Err(MyError)
}

/// Hides its error type.
#[tool]
async fn aliased() -> std::io::Result<u32> {
    Ok(1)
}

/// Returns impl Trait.
#[tool]
async fn opaque() -> impl Serialize {
    1
}

fn main() {}
