//! What several tool tests share.

use tinyagents_tools::error::ErrorKind;
use tinyagents_tools::{ToolError, ToolResult};

/// The error of `result`, which must be a resource exhaustion of `resource`
/// (`memory`, `cpu`, `fuel`, ...).
pub(crate) fn exhausted<'r>(result: &'r ToolResult, resource: &str) -> &'r ToolError {
    let error = result.error.as_ref().expect("the call failed");
    assert_eq!(
        error.kind(),
        &ErrorKind::ResourceExhausted {
            resource: resource.to_owned().into()
        },
        "{}",
        result.text()
    );
    error
}
