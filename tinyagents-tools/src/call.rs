//! A tool call as a provider sent it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ids::{CallName, ToolCallId};

/// A call's arguments exactly as the provider sent them.
///
/// OpenAI sends a JSON *string*; Anthropic, Gemini and MCP send an object. A
/// string is kept as text until the executor parses it, so a malformed string
/// is reported as such and never silently replaced by `{}`.
///
/// # The way in for a transport
///
/// A transport that holds the text of a call's arguments as its client
/// sent it (an MCP server reading `tools/call`, a stream reader assembling
/// fragments, a queue consumer) hands that text over as
/// [`Text`](RawArguments::Text), untouched, and the executor judges it:
/// its size and nesting are bounded before anything is parsed
/// ([`ExecutorConfig`](crate::executor::ExecutorConfig)), a key repeated in
/// one object is refused (two parsers, one keeping the first and one the
/// last, would disagree about the call), and text that is not JSON is
/// answered as such. A value parsed first ([`Json`](RawArguments::Json))
/// has already lost what a parser drops, repeated keys among it.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use tinyagents_tools::prelude::*;
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Args {
///     /// Where to send it.
///     to: String,
/// }
///
/// /// Sends a note.
/// #[tool(local)]
/// async fn send(args: Args) -> String {
///     args.to
/// }
///
/// let mut registry = ToolRegistry::new();
/// registry.register(SendTool)?;
/// let executor = ToolExecutor::builder(registry, ()).build()?;
/// let run = RunContext::empty();
/// // The exact text a client sent, with `to` twice.
/// let text = r#"{"to": "alice", "to": "mallory"}"#;
/// let call = ToolCall::new("call_1", "send", text);
/// let result = executor.execute(&run, &Turn::new(1), call).await;
/// assert!(result.is_error);
/// assert!(result.text().contains("more than once"), "{}", result.text());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
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
    /// The size of the arguments in bytes: the text's length, or for a
    /// parsed value the length of its compact JSON text (as
    /// `serde_json::to_string` writes it), counted by walking the value
    /// without writing it out.
    pub fn len_hint(&self) -> usize {
        match self {
            RawArguments::Text(s) => s.len(),
            RawArguments::Json(value) => compact_json_len(value),
        }
    }
}

/// The length of `value`'s compact JSON text, walked without recursion (a
/// parsed value may be nested deeper than the stack allows).
pub(crate) fn compact_json_len(value: &Value) -> usize {
    let mut len = 0;
    let mut todo = vec![value];
    while let Some(value) = todo.pop() {
        len += match value {
            Value::Null => 4,
            Value::Bool(true) => 4,
            Value::Bool(false) => 5,
            Value::Number(n) => display_len(n),
            Value::String(s) => quoted_len(s),
            Value::Array(items) => {
                todo.extend(items);
                2 + items.len().saturating_sub(1)
            }
            Value::Object(map) => {
                todo.extend(map.values());
                let keys: usize = map.keys().map(|k| quoted_len(k) + 1).sum();
                2 + keys + map.len().saturating_sub(1)
            }
        };
    }
    len
}

/// The length of `s` as a JSON string: quotes, and the escapes serde_json
/// writes (`\"`, `\\`, the short forms of five control characters and
/// `\u00XX` for the others).
fn quoted_len(s: &str) -> usize {
    let escapes: usize = s
        .bytes()
        .map(|b| match b {
            b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 1,
            0x00..=0x1f => 5,
            _ => 0,
        })
        .sum();
    s.len() + escapes + 2
}

/// The length of a value's `Display` text, counted without keeping it.
fn display_len(value: &impl std::fmt::Display) -> usize {
    struct Count(usize);
    impl std::fmt::Write for Count {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            self.0 += s.len();
            Ok(())
        }
    }
    let mut count = Count(0);
    let _ = std::fmt::write(&mut count, format_args!("{value}"));
    count.0
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn len_hint_of_a_parsed_value_is_the_length_of_its_compact_json() {
        let values = [
            json!({}),
            json!([]),
            json!(null),
            json!({"query": "rust", "limit": 10, "exact": false, "tags": ["a", "b"]}),
            json!({"nested": {"deeper": [1.5, -2, 1e300, 12345678901234567u64, null, true]}}),
            json!({"quote\"d": "back\\slash\nnew line\ttab\u{1}\u{1f}\u{8}\u{c}\r"}),
            json!({"unicode": "héllo ✓ 🦀", "empty": ""}),
        ];
        for value in values {
            let text = serde_json::to_string(&value).unwrap();
            assert_eq!(RawArguments::Json(value).len_hint(), text.len(), "{text}");
        }
        assert_eq!(RawArguments::from("{\"a\": 1}").len_hint(), 8);
    }

    #[test]
    fn len_hint_walks_a_value_nested_deeper_than_the_stack_without_recursion() {
        let depth = 100_000;
        let text = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let mut value = Value::Array(Vec::new());
        for _ in 1..depth {
            value = Value::Array(vec![value]);
        }
        let raw = RawArguments::Json(value);
        assert_eq!(raw.len_hint(), text.len());
        // Taken apart by hand: dropping it would recurse.
        let RawArguments::Json(mut value) = raw else {
            unreachable!()
        };
        while let Value::Array(mut items) = value {
            value = items.pop().unwrap_or(Value::Null);
        }
    }
}
