// Every `Result`, whatever its name, is a success or a failure, and the
// error types users already have are accepted.
use std::fmt;
use tinyagents_tools::ErrorClass;
use tinyagents_tools::error::ClassifyError;
use tinyagents_tools::prelude::*;

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

// An error enum whose variants choose their class.
#[derive(Debug)]
enum FetchError {
    Timeout,
    NotFound,
}
impl fmt::Display for FetchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FetchError::Timeout => "timed out",
            FetchError::NotFound => "no such page",
        })
    }
}
impl std::error::Error for FetchError {}
impl ClassifyError for FetchError {
    fn error_class(&self) -> ErrorClass {
        match self {
            FetchError::Timeout => ErrorClass::Retry,
            FetchError::NotFound => ErrorClass::Repair,
        }
    }
}

/// Own error.
#[tool]
async fn own() -> Result<u32, FetchError> {
    Err(FetchError::Timeout)
}

/// Own error, another variant.
#[tool]
async fn own_not_found() -> Result<u32, FetchError> {
    Err(FetchError::NotFound)
}

fn main() {
    let call = |tool: &dyn Tool| {
        let runtime = ToolRuntime::new(RunContext::empty(), "call-1", "t");
        tokio::runtime::Runtime::new().unwrap().block_on(tool.call(
            &(),
            &runtime,
            serde_json::json!({}),
        ))
    };
    assert_eq!(call(&AliasTool).unwrap_err().message(), "no");
    assert_eq!(call(&WithAnyhowTool).unwrap_err().message(), "no city");
    assert_eq!(
        call(&WithIoTool).unwrap().structured,
        Some(serde_json::json!(1))
    );
    assert_eq!(
        call(&BoxedTool).unwrap().structured,
        Some(serde_json::json!(1))
    );
    assert_eq!(call(&OwnTool).unwrap_err().class(), ErrorClass::Retry);
    assert_eq!(
        call(&OwnNotFoundTool).unwrap_err().class(),
        ErrorClass::Repair
    );
}
