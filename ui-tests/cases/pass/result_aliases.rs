// Every `Result`, whatever its name, is a success or a failure, and the
// error types users already have are accepted.
use std::fmt;
use tinyagents_tools::prelude::*;
use tinyagents_tools::{ErrorClass};
use tinyagents_tools::error::{ClassifyError};

type Outcome<T> = Result<T, String>;

/// Alias.
#[tool]
async fn alias() -> Outcome<u32> {
    Err("no".into())
}

/// anyhow.
#[tool]
async fn with_anyhow() -> anyhow::Result<u32> {
    anyhow::bail!("no city")
}

/// std::io.
#[tool]
async fn with_io() -> std::io::Result<u32> {
    Ok(1)
}

/// Boxed.
#[tool]
async fn boxed() -> Result<u32, Box<dyn std::error::Error + Send + Sync>> {
    Ok(1)
}

#[derive(Debug)]
struct Busy;
impl fmt::Display for Busy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("busy")
    }
}
impl std::error::Error for Busy {}
impl ClassifyError for Busy {
    fn error_class(&self) -> ErrorClass {
        ErrorClass::Retry
    }
}

/// Own error.
#[tool]
async fn own() -> Result<u32, Busy> {
    Err(Busy)
}

fn main() {
    let call = |tool: &dyn Tool| {
        let runtime = ToolRuntime::new(RunContext::empty(), "call-1", "t");
        tokio::runtime::Runtime::new()
            .unwrap()
            .block_on(tool.call(&(), &runtime, serde_json::json!({})))
    };
    assert_eq!(call(&AliasTool).unwrap_err().message(), "no");
    assert_eq!(call(&WithAnyhowTool).unwrap_err().message(), "no city");
    assert_eq!(call(&WithIoTool).unwrap().structured, Some(serde_json::json!(1)));
    assert_eq!(call(&BoxedTool).unwrap().structured, Some(serde_json::json!(1)));
    assert_eq!(call(&OwnTool).unwrap_err().class(), ErrorClass::Retry);
}
