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
            NativeFormat::OpenAiResponses => script.responses(response),
            NativeFormat::Anthropic => script.anthropic(response),
            NativeFormat::Gemini => script.gemini(response),
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

    /// Responses: `response.created` and `response.in_progress` with an
    /// empty output, then each output item added, its text, summary,
    /// reasoning text or argument deltas (with their `.done` events), the
    /// item done whole, and the response's end event (`response.completed`,
    /// `.incomplete` or `.failed`, by its status) with the whole response.
    fn responses(&mut self, response: &Value) {
        let mut shell = response.clone();
        shell["status"] = json!("in_progress");
        shell["output"] = json!([]);
        shell["usage"] = Value::Null;
        self.numbered(json!({"type": "response.created", "response": shell}));
        self.numbered(json!({"type": "response.in_progress", "response": shell}));
        let items = response.get("output").and_then(Value::as_array);
        for (index, item) in items.into_iter().flatten().enumerate() {
            let id = item
                .get("id")
                .cloned()
                .unwrap_or(json!(format!("item_{index}")));
            let at = |kind: &str| json!({"type": kind, "item_id": id, "output_index": index});
            let mut added = item.clone();
            match item.get("type").and_then(Value::as_str) {
                Some("message") => {
                    added["content"] = json!([]);
                    added["status"] = json!("in_progress");
                    self.numbered(json!({"type": "response.output_item.added", "output_index": index, "item": added}));
                    let parts = item.get("content").and_then(Value::as_array);
                    for (part_index, part) in parts.into_iter().flatten().enumerate() {
                        let (kind, key) = match part.get("type").and_then(Value::as_str) {
                            Some("refusal") => ("response.refusal", "refusal"),
                            _ => ("response.output_text", "text"),
                        };
                        let mut empty = part.clone();
                        empty[key] = json!("");
                        let mut event = at("response.content_part.added");
                        event["content_index"] = json!(part_index);
                        event["part"] = empty;
                        self.numbered(event);
                        let whole = part.get(key).and_then(Value::as_str).unwrap_or_default();
                        for piece in self.pieces(whole) {
                            let mut event = at(&format!("{kind}.delta"));
                            event["content_index"] = json!(part_index);
                            event["delta"] = json!(piece);
                            self.numbered(event);
                        }
                        let mut event = at(&format!("{kind}.done"));
                        event["content_index"] = json!(part_index);
                        event[key] = json!(whole);
                        self.numbered(event);
                        let mut event = at("response.content_part.done");
                        event["content_index"] = json!(part_index);
                        event["part"] = part.clone();
                        self.numbered(event);
                    }
                }
                Some("reasoning") => {
                    added["summary"] = json!([]);
                    if let Some(map) = added.as_object_mut() {
                        map.remove("content");
                        map.remove("encrypted_content");
                    }
                    self.numbered(json!({"type": "response.output_item.added", "output_index": index, "item": added}));
                    for (key, kind, index_key) in [
                        ("summary", "response.reasoning_summary_text", "summary_index"),
                        ("content", "response.reasoning_text", "content_index"),
                    ] {
                        let parts = item.get(key).and_then(Value::as_array);
                        for (part_index, part) in parts.into_iter().flatten().enumerate() {
                            let whole = part.get("text").and_then(Value::as_str).unwrap_or_default();
                            for piece in self.pieces(whole) {
                                let mut event = at(&format!("{kind}.delta"));
                                event[index_key] = json!(part_index);
                                event["delta"] = json!(piece);
                                self.numbered(event);
                            }
                            let mut event = at(&format!("{kind}.done"));
                            event[index_key] = json!(part_index);
                            event["text"] = json!(whole);
                            self.numbered(event);
                        }
                    }
                }
                Some("function_call") => {
                    added["arguments"] = json!("");
                    added["status"] = json!("in_progress");
                    self.numbered(json!({"type": "response.output_item.added", "output_index": index, "item": added}));
                    let whole = item.get("arguments").and_then(Value::as_str).unwrap_or_default();
                    for piece in self.pieces(whole) {
                        let mut event = at("response.function_call_arguments.delta");
                        event["delta"] = json!(piece);
                        self.numbered(event);
                    }
                    let mut event = at("response.function_call_arguments.done");
                    event["arguments"] = json!(whole);
                    self.numbered(event);
                }
                _ => self.numbered(json!({"type": "response.output_item.added", "output_index": index, "item": added})),
            }
            self.numbered(
                json!({"type": "response.output_item.done", "output_index": index, "item": item}),
            );
        }
        let end = match response.get("status").and_then(Value::as_str) {
            Some("incomplete") => "response.incomplete",
            Some("failed") => "response.failed",
            Some("completed") => "response.completed",
            _ => return,
        };
        self.numbered(json!({"type": end, "response": response}));
    }

    /// A Responses event, numbered and sent with its `event:` line.
    fn numbered(&mut self, mut event: Value) {
        event["sequence_number"] = json!(self.events.len());
        let name = event["type"].as_str().unwrap_or_default().to_owned();
        self.send(Some(&name), event);
    }

    /// Anthropic: `message_start` (the message without content, with its
    /// usage), a `ping`, each block started empty, its text, thinking or
    /// `input_json_delta` deltas (a thinking block's signature in a
    /// `signature_delta`; no argument text at all for an empty `input`, but
    /// one empty fragment) and its stop, then `message_delta` (stop reason,
    /// usage) and `message_stop`.
    fn anthropic(&mut self, message: &Value) {
        let mut shell = message.clone();
        shell["content"] = json!([]);
        shell["stop_reason"] = Value::Null;
        shell["stop_sequence"] = Value::Null;
        self.named(json!({"type": "message_start", "message": shell}));
        self.named(json!({"type": "ping"}));
        let blocks = match message.get("content") {
            Some(Value::String(text)) => vec![json!({"type": "text", "text": text})],
            Some(Value::Array(blocks)) => blocks.clone(),
            _ => Vec::new(),
        };
        for (index, block) in blocks.iter().enumerate() {
            let delta = |delta: Value| json!({"type": "content_block_delta", "index": index, "delta": delta});
            let start = |block: Value| json!({"type": "content_block_start", "index": index, "content_block": block});
            let text_of = |key: &str| {
                block
                    .get(key)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned()
            };
            match block.get("type").and_then(Value::as_str) {
                Some("text") => {
                    self.named(start(json!({"type": "text", "text": ""})));
                    for piece in self.pieces(&text_of("text")) {
                        self.named(delta(json!({"type": "text_delta", "text": piece})));
                    }
                }
                Some("thinking") => {
                    self.named(start(
                        json!({"type": "thinking", "thinking": "", "signature": ""}),
                    ));
                    for piece in self.pieces(&text_of("thinking")) {
                        self.named(delta(json!({"type": "thinking_delta", "thinking": piece})));
                    }
                    let signature = text_of("signature");
                    if !signature.is_empty() {
                        self.named(delta(
                            json!({"type": "signature_delta", "signature": signature}),
                        ));
                    }
                }
                Some("tool_use") => {
                    let mut empty = block.clone();
                    empty["input"] = json!({});
                    self.named(start(empty));
                    let input = block.get("input").cloned().unwrap_or(json!({}));
                    let text = match input.as_object() {
                        Some(map) if map.is_empty() => String::new(),
                        _ => input.to_string(),
                    };
                    let pieces = self.pieces(&text);
                    if pieces.is_empty() {
                        self.named(delta(
                            json!({"type": "input_json_delta", "partial_json": ""}),
                        ));
                    }
                    for piece in pieces {
                        self.named(delta(
                            json!({"type": "input_json_delta", "partial_json": piece}),
                        ));
                    }
                }
                _ => self.named(start(block.clone())),
            }
            self.named(json!({"type": "content_block_stop", "index": index}));
        }
        let mut end = json!({"type": "message_delta", "delta": {
            "stop_reason": message.get("stop_reason"),
            "stop_sequence": message.get("stop_sequence"),
        }});
        end["usage"] = message.get("usage").cloned().unwrap_or(json!({}));
        self.named(end);
        self.named(json!({"type": "message_stop"}));
    }

    /// An Anthropic event, sent with its `event:` line.
    fn named(&mut self, event: Value) {
        let name = event["type"].as_str().unwrap_or_default().to_owned();
        self.send(Some(&name), event);
    }

    /// Gemini: one chunk a part, a text or thought part cut into several
    /// (its `thoughtSignature` on the last piece), each function call
    /// whole; every chunk with the usage, and a last chunk with an empty
    /// text part and `finishReason`. Lines end in CRLF, as Google's do.
    fn gemini(&mut self, response: &Value) {
        let candidate = response.pointer("/candidates/0");
        let usage = response.get("usageMetadata");
        let chunk = |parts: Vec<Value>, finish: Option<&Value>| {
            let mut candidate = json!({"content": {"role": "model", "parts": parts}, "index": 0});
            if let Some(finish) = finish {
                candidate["finishReason"] = finish.clone();
            }
            let mut chunk = json!({"candidates": [candidate]});
            for key in ["modelVersion", "responseId"] {
                if let Some(value) = response.get(key) {
                    chunk[key] = value.clone();
                }
            }
            if let Some(usage) = usage {
                chunk["usageMetadata"] = usage.clone();
            }
            chunk
        };
        let Some(candidate) = candidate else {
            // A prompt blocked before any candidate: one chunk says so.
            self.crlf(response.clone());
            return;
        };
        let parts = candidate
            .pointer("/content/parts")
            .and_then(Value::as_array);
        for part in parts.into_iter().flatten() {
            let Some(text) = part
                .get("text")
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
            else {
                self.crlf(chunk(vec![part.clone()], None));
                continue;
            };
            let pieces = self.pieces(text);
            let last = pieces.len() - 1;
            for (i, piece) in pieces.into_iter().enumerate() {
                let mut cut = part.clone();
                cut["text"] = json!(piece);
                if i != last
                    && let Some(map) = cut.as_object_mut()
                {
                    map.remove("thoughtSignature");
                }
                self.crlf(chunk(vec![cut], None));
            }
        }
        self.crlf(chunk(
            vec![json!({"text": ""})],
            candidate.get("finishReason"),
        ));
    }

    /// A Gemini chunk, with CRLF line ends.
    fn crlf(&mut self, event: Value) {
        self.sse.push_str("data: ");
        self.sse.push_str(&event.to_string());
        self.sse.push_str("\r\n\r\n");
        self.events.push(event);
    }
}
