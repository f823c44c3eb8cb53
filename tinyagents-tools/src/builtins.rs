//! Built-in tools: [`EchoTool`] and [`HashTool`], the smallest complete
//! tools, registered like any other.
//!
//! Both are pure: read-only, idempotent, local and deterministic, so every
//! policy lets them through and their results may be replayed.
//!
//! ```
//! use tinyagents_tools::builtins::{EchoTool, HashTool};
//! use tinyagents_tools::prelude::*;
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let mut registry: ToolRegistry = ToolRegistry::new();
//! registry.register(EchoTool)?;
//! registry.register(HashTool)?;
//! let executor = ToolExecutor::builder(registry, ()).build()?;
//! let run = RunContext::builder(()).build();
//!
//! let echoed = executor
//!     .execute(&run, &Turn::new(1), ToolCall::new("c1", "echo", r#"{"text":"hi"}"#))
//!     .await;
//! assert_eq!(echoed.text(), "hi");
//!
//! let hashed = executor
//!     .execute(&run, &Turn::new(1), ToolCall::new("c2", "hash", r#"{"text":"abc"}"#))
//!     .await;
//! // BLAKE3("abc"), the published test value.
//! assert_eq!(
//!     hashed.text(),
//!     "6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85"
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

use std::sync::OnceLock;

use serde_json::{Value, json};

use crate::error::{ArgumentProblem, ToolError};
use crate::output::ToolOutput;
use crate::spec::ToolSafety;
use crate::spec::ToolSchema;
use crate::spec::ToolSpec;
use crate::tool::CallResult;
use crate::tool::answered_at_once;

/// `echo`: returns its `text` argument unchanged, as text.
#[derive(Debug, Clone, Copy, Default)]
pub struct EchoTool;

/// `hash`: returns the BLAKE3 digest of its `text` argument's UTF-8 bytes,
/// as 64 lowercase hex digits.
#[derive(Debug, Clone, Copy, Default)]
pub struct HashTool;

fn text_spec(name: &str, description: &str, text_doc: &str) -> ToolSpec {
    ToolSpec::builder(name, description)
        .input_schema(ToolSchema::from_value(json!({
            "type": "object",
            "properties": {"text": {"type": "string", "description": text_doc}},
            "required": ["text"],
            "additionalProperties": false
        })))
        .safety(ToolSafety::pure())
        .build()
        .expect("the built-in spec follows every spec rule")
}

/// The `text` argument (the schema has already required it; a direct call
/// without it still gets a repairable error, not a panic).
fn text_argument(arguments: &Value) -> Result<&str, ToolError> {
    arguments
        .get("text")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            ToolError::invalid_arguments(vec![ArgumentProblem::new("/text", "is required")])
        })
}

impl EchoTool {
    fn answer(arguments: &Value) -> CallResult {
        text_argument(arguments).map(ToolOutput::text)
    }
}

impl HashTool {
    /// The hex BLAKE3 digest of `text`, as the tool returns it.
    pub fn digest(text: &str) -> String {
        blake3::hash(text.as_bytes()).to_hex().to_string()
    }

    fn answer(arguments: &Value) -> CallResult {
        text_argument(arguments).map(|text| ToolOutput::text(HashTool::digest(text)))
    }
}

/// The [`Tool`](crate::Tool) impl of a built-in that answers at once from
/// one text argument: its spec (built once) and its `answer`.
macro_rules! text_tool {
    ($tool:ty, $name:literal, $description:literal, $text:literal) => {
        answered_at_once!($tool, spec: {
            static SPEC: OnceLock<ToolSpec> = OnceLock::new();
            SPEC.get_or_init(|| text_spec($name, $description, $text))
        }, answer: |_: &$tool, arguments: &Value| <$tool>::answer(arguments));
    };
}

text_tool!(
    EchoTool,
    "echo",
    "Return the given text unchanged.",
    "The text to return."
);
text_tool!(
    HashTool,
    "hash",
    "Return the BLAKE3 hash of the given text, as 64 hex digits.",
    "The text to hash (its UTF-8 bytes)."
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_matches_the_published_blake3_value_of_the_empty_input() {
        assert_eq!(
            HashTool::digest(""),
            "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"
        );
    }

    #[test]
    fn echo_without_text_is_a_repairable_argument_error() {
        let error = EchoTool::answer(&json!({})).unwrap_err();
        assert!(error.is_repairable());
        assert_eq!(error.problems()[0].pointer, "/text");
    }
}
