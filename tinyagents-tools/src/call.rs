//! A tool call as a provider sent it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ids::{CallName, ToolCallId};

/// A call's arguments exactly as the provider sent them.
///
/// OpenAI sends a JSON *string*; Anthropic, Gemini and MCP send an object. A
/// string is kept as text until the executor parses it, so a malformed string
/// is reported as such and never silently replaced by `{}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RawArguments {
    /// Arguments already parsed as JSON (any JSON value; the executor checks
    /// it is an object).
    Json(Value),
    /// Arguments as JSON text, not yet parsed.
    Text(String),
}

impl RawArguments {
    /// The size of the arguments in bytes (text length, or an estimate for a
    /// parsed value).
    pub fn len_hint(&self) -> usize {
        match self {
            RawArguments::Text(s) => s.len(),
            RawArguments::Json(_) => 0,
        }
    }
}

impl From<Value> for RawArguments {
    fn from(value: Value) -> Self {
        RawArguments::Json(value)
    }
}

impl From<String> for RawArguments {
    fn from(text: String) -> Self {
        RawArguments::Text(text)
    }
}

impl From<&str> for RawArguments {
    fn from(text: &str) -> Self {
        RawArguments::Text(text.to_owned())
    }
}

/// One tool call from a model: an id, the name it called, and its arguments.
///
/// `name` is the name as the model wrote it (it may be a provider alias or a
/// tool that does not exist); the executor resolves it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id for this call; the result answers it.
    pub id: ToolCallId,
    /// The tool name as called (kept in place, not on the heap, when it is
    /// up to 24 bytes long).
    pub name: CallName,
    /// The arguments as sent.
    pub arguments: RawArguments,
    /// Gemini's `thoughtSignature` on the call's `functionCall` part, kept
    /// as sent so that the call written back into the conversation
    /// ([`gemini::function_call_part`](crate::providers::gemini::function_call_part))
    /// carries it again: Gemini refuses a turn whose calls lost theirs.
    /// `None` for other providers and for calls without one. The executor
    /// ignores it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thought_signature: Option<Box<str>>,
}

impl ToolCall {
    /// A call with the given id, name and arguments.
    pub fn new(
        id: impl Into<ToolCallId>,
        name: impl Into<CallName>,
        arguments: impl Into<RawArguments>,
    ) -> Self {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
            thought_signature: None,
        }
    }
}
