//! A registered tool's compiled output check: a successful output's
//! structured value against the tool's declared output schema.

use std::fmt;

use serde_json::Value;

use std::sync::Arc;

use super::{Compiled, SchemaError, ValidatorCache};
use crate::error::ToolError;
use crate::output::ToolOutput;

/// The output check of one registered tool with an output schema.
pub(crate) struct OutputValidator {
    checks: Arc<Compiled>,
}

impl OutputValidator {
    /// Compiles `schema` as [`super::compile_schema`] does, sharing the
    /// validator of an earlier schema of `cache` that differs only in
    /// annotations.
    pub(crate) fn compile(schema: &Value, cache: &mut ValidatorCache) -> Result<Self, SchemaError> {
        Ok(OutputValidator {
            checks: cache.compile(schema)?,
        })
    }

    /// `Ok` when the output's structured value (`null` when it has none)
    /// matches the schema; otherwise [`ToolError::invalid_output`] with
    /// the mismatches as its source, for the application only.
    pub(crate) fn check(&self, output: &ToolOutput) -> Result<(), ToolError> {
        let value = output.structured.as_ref().unwrap_or(&Value::Null);
        // The flat check, when the schema has its shape, gives the same
        // answer; the list of mismatches always comes from the general one.
        if self.checks.is_valid_where(value, |_| true) {
            return Ok(());
        }
        let problems = self
            .checks
            .full
            .problems(value)
            .into_iter()
            .map(|e| {
                let at = if e.at.is_empty() { "/" } else { e.at.as_str() };
                format!("at `{at}`: {e}")
            })
            .collect();
        Err(ToolError::invalid_output().with_source(OutputMismatch { problems }))
    }
}

/// Why an output failed its schema: each mismatch located by JSON pointer.
/// The source of an [`ErrorKind::InvalidOutput`](crate::error::ErrorKind) error;
/// it may quote the output, so it is never shown to the model.
#[derive(Debug)]
struct OutputMismatch {
    problems: Vec<String>,
}

impl fmt::Display for OutputMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the output does not match the output schema: ")?;
        f.write_str(&self.problems.join("; "))
    }
}

impl std::error::Error for OutputMismatch {}
