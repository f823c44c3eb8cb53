//! Streams scripted from whole responses: the events a provider would send
//! for a complete response, its text and arguments split into deltas, as
//! the bytes of its server-sent events, cut into pieces the way a test
//! chooses, so a streaming loop is tested without a provider.

use serde_json::{Value, json};

use super::chunks::{Chunking, chunk_bytes, chunk_text};
use crate::stream::native::NativeFormat;
use crate::stream::{ModelOutput, OutputReader};

/// A provider's stream for one response (or a model's raw text), ready to
/// be fed to a reader in pieces.
///
/// [`from_response`](Self::from_response) writes the events the provider
/// would stream for a complete response: OpenAI Chat Completions chunks
/// (`data:` lines and `data: [DONE]`), OpenAI Responses events and Anthropic
/// events (each with its `event:` line), or Gemini chunks (CRLF line ends,
/// as Google sends them); text, reasoning and argument text split into
/// deltas. Fed to a [`NativeReader`](crate::stream::native::NativeReader) of
/// the same format, in any pieces, it collects to the output
/// [`parse_response`](crate::stream::native::parse_response) reads from the
/// response. [`text`](Self::text) is a model's raw output, for the text
/// formats' readers.
///
/// ```
/// use serde_json::json;
/// use tinyagents_tools::stream::native::{NativeFormat, NativeOptions, NativeReader, parse_response};
/// use tinyagents_tools::testkit::{Chunking, ScriptedStream};
///
/// let response = json!({
///     "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
///         "role": "assistant",
///         "content": "Looking it up.",
///         "tool_calls": [{"id": "call_1", "type": "function",
///                         "function": {"name": "weather", "arguments": "{\"city\": \"Paris\"}"}}],
///     }}],
/// });
/// let stream = ScriptedStream::from_response(NativeFormat::OpenAiChat, &response);
/// let whole = parse_response(NativeFormat::OpenAiChat, &response, &NativeOptions::default());
/// for chunking in Chunking::matrix(4) {
///     let streamed = stream.read(NativeReader::new(NativeFormat::OpenAiChat), chunking);
///     assert_eq!(streamed, whole, "{chunking:?}");
/// }
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptedStream {
    events: Vec<Value>,
    bytes: Vec<u8>,
}

impl ScriptedStream {
    /// The deltas [`from_response`](Self::from_response) splits text and
    /// arguments into: 5 characters each.
    pub const DELTAS: Chunking = Chunking::Fixed(5);

    /// The stream a provider of `format` would send for `response`, its
    /// text and arguments in deltas of [`DELTAS`](Self::DELTAS).
    pub fn from_response(format: NativeFormat, response: &Value) -> Self {
        ScriptedStream::from_response_with(format, response, Self::DELTAS)
    }

    /// The same, with text and arguments split into deltas as `deltas` cuts
    /// them (in characters).
    pub fn from_response_with(format: NativeFormat, response: &Value, deltas: Chunking) -> Self {
        let mut script = Script {
            events: Vec::new(),
            sse: String::new(),
            deltas,
        };
        match format {
            NativeFormat::OpenAiChat => script.chat(response),
        }
        ScriptedStream {
            events: script.events,
            bytes: script.sse.into_bytes(),
        }
    }

    /// A model's raw text output, as a text format's reader reads it.
    pub fn text(text: &str) -> Self {
        ScriptedStream {
            events: Vec::new(),
            bytes: text.as_bytes().to_vec(),
        }
    }

    /// The provider's events in order (each one `data:` JSON; empty for
    /// raw text).
    pub fn events(&self) -> &[Value] {
        &self.events
    }

    /// The stream's bytes: the server-sent events, or the raw text.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The events as one JSON a line (the form a reader also takes, and
    /// the one a recorded stream is often kept in).
    pub fn json_lines(&self) -> String {
        let mut lines = String::new();
        for event in &self.events {
            lines.push_str(&event.to_string());
            lines.push('\n');
        }
        lines
    }

    /// The stream's bytes cut as `chunking` cuts bytes: anywhere, in the
    /// middle of a line or of a UTF-8 sequence too, as a network does.
    pub fn pieces(&self, chunking: Chunking) -> Vec<&[u8]> {
        chunk_bytes(&self.bytes, chunking)
    }

    /// Feeds the stream to `reader` in the pieces `chunking` cuts, ends it,
    /// and collects the output.
    pub fn read<R: OutputReader>(&self, mut reader: R, chunking: Chunking) -> ModelOutput {
        reader.read_all(self.pieces(chunking))
    }
}

/// The stream being written.
struct Script {
    events: Vec<Value>,
    sse: String,
    deltas: Chunking,
}

impl Script {
    /// One event, with an `event:` line when `name` is given.
    fn send(&mut self, name: Option<&str>, event: Value) {
        if let Some(name) = name {
            self.sse.push_str("event: ");
            self.sse.push_str(name);
            self.sse.push('\n');
        }
        self.sse.push_str("data: ");
        self.sse.push_str(&event.to_string());
        self.sse.push_str("\n\n");
        self.events.push(event);
    }

    /// `text` cut into deltas.
    fn pieces<'t>(&self, text: &'t str) -> Vec<&'t str> {
        chunk_text(text, self.deltas)
    }

    /// Chat Completions: a first chunk with the role, then reasoning,
    /// refusal and content deltas, each call's first fragment (id, type,
    /// name) and its argument fragments, the chunk with `finish_reason`, the
    /// usage chunk, and `[DONE]`.
    fn chat(&mut self, response: &Value) {
        let chunk = |choices: Value| {
            json!({
                "id": response.get("id").cloned().unwrap_or_else(|| json!("chatcmpl-scripted")),
                "object": "chat.completion.chunk",
                "created": response.get("created").cloned().unwrap_or(json!(0)),
                "model": response.get("model").cloned().unwrap_or(json!("scripted")),
                "choices": choices,
            })
        };
        let delta =
            |delta: Value| chunk(json!([{"index": 0, "delta": delta, "finish_reason": null}]));
        let choice = response
            .pointer("/choices/0")
            .cloned()
            .unwrap_or(Value::Null);
        let message = choice.get("message").cloned().unwrap_or(Value::Null);
        self.send(None, delta(json!({"role": "assistant", "content": ""})));
        for key in ["reasoning_content", "reasoning", "refusal", "content"] {
            let Some(text) = message.get(key).and_then(Value::as_str) else {
                continue;
            };
            if key == "reasoning"
                && message
                    .get("reasoning_content")
                    .is_some_and(Value::is_string)
            {
                continue;
            }
            for piece in self.pieces(text) {
                self.send(None, delta(json!({ key: piece })));
            }
        }
        let calls = message.get("tool_calls").and_then(Value::as_array);
        for (index, call) in calls.into_iter().flatten().enumerate() {
            let function = call.get("function").cloned().unwrap_or(Value::Null);
            let first = json!({
                "index": index,
                "id": call.get("id"),
                "type": call.get("type").cloned().unwrap_or(json!("function")),
                "function": {"name": function.get("name"), "arguments": ""},
            });
            self.send(None, delta(json!({ "tool_calls": [first] })));
            let arguments = match function.get("arguments") {
                Some(Value::String(text)) => text.clone(),
                None | Some(Value::Null) => String::new(),
                Some(other) => other.to_string(),
            };
            for piece in self.pieces(&arguments) {
                let fragment = json!({"index": index, "function": {"arguments": piece}});
                self.send(None, delta(json!({ "tool_calls": [fragment] })));
            }
        }
        if let Some(reason) = choice.get("finish_reason").filter(|r| !r.is_null()) {
            self.send(
                None,
                chunk(json!([{"index": 0, "delta": {}, "finish_reason": reason}])),
            );
        }
        if let Some(usage) = response.get("usage").filter(|u| !u.is_null()) {
            let mut last = chunk(json!([]));
            last["usage"] = usage.clone();
            self.send(None, last);
        }
        self.sse.push_str("data: [DONE]\n\n");
    }
}
