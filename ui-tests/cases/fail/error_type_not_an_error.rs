// A tool's error type must be an error the framework can classify.
use tinyagents_tools::prelude::*;

struct NotAnError;

/// Fails.
#[tool]
async fn failing() -> Result<u32, NotAnError> {
    Err(NotAnError)
}

fn main() {}
