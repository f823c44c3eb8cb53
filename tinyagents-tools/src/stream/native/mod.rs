//! Provider streams read as they arrive: OpenAI Chat Completions, OpenAI
//! Responses, Anthropic Messages and Gemini, each a [`NativeFormat`].
//!
//! A [`NativeReader`] is fed the raw bytes of a streamed response (the
//! server-sent events a provider sends, or one event JSON a line, in pieces
//! cut anywhere) through [`OutputReader`], or the events one by one through
//! [`NativeReader::push_event`] when the caller reads the SSE itself. It
//! yields, in order, the visible text, the reasoning and its signatures,
//! each call as it starts and as its arguments arrive, each call **ready the
//! moment its arguments close** (before the event that ends its block), and
//! how the turn finished. [`parse_response`] reads the whole, non-streamed
//! response of the same format into the same [`ModelOutput`]: for every
//! chunking of a stream, the output collected from it equals the whole
//! parse of the response it assembles to.
//!
//! ```
//! use tinyagents_tools::stream::native::{NativeFormat, NativeReader};
//! use tinyagents_tools::stream::{OutputReader, StreamEvent};
//!
//! let sse = concat!(
//!     "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Checking.\"}}]}\n\n",
//!     "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",",
//!     "\"type\":\"function\",\"function\":{\"name\":\"weather\",\"arguments\":\"{\\\"city\\\":\"}}]}}]}\n\n",
//!     "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,",
//!     "\"function\":{\"arguments\":\" \\\"Paris\\\"}\"}}]}}]}\n\n",
//!     "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
//!     "data: [DONE]\n\n",
//! );
//! let mut reader = NativeReader::new(NativeFormat::OpenAiChat);
//! let mut events = Vec::new();
//! for piece in sse.as_bytes().chunks(7) {
//!     reader.push(piece, &mut events);
//! }
//! reader.finish(&mut events);
//! let ready = events.iter().find_map(|e| match e {
//!     StreamEvent::CallReady(ready) => Some(&ready.call),
//!     _ => None,
//! });
//! assert_eq!(ready.unwrap().arguments, r#"{"city": "Paris"}"#.into());
//! ```
//!
//! Anthropic's and Gemini's calls carry their arguments as a JSON object,
//! and so do the ready calls read from their streams (the streamed text
//! parsed once, when it closes):
//!
//! ```
//! use serde_json::json;
//! use tinyagents_tools::stream::native::{NativeFormat, NativeOptions, NativeReader, parse_response};
//! use tinyagents_tools::stream::{ModelOutput, OutputReader};
//!
//! let events = [
//!     json!({"type": "message_start", "message": {"usage": {"input_tokens": 9, "output_tokens": 1}}}),
//!     json!({"type": "content_block_start", "index": 0,
//!            "content_block": {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {}}}),
//!     json!({"type": "content_block_delta", "index": 0,
//!            "delta": {"type": "input_json_delta", "partial_json": "{\"city\": \"Par"}}),
//!     json!({"type": "content_block_delta", "index": 0,
//!            "delta": {"type": "input_json_delta", "partial_json": "is\"}"}}),
//!     json!({"type": "content_block_stop", "index": 0}),
//!     json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"},
//!            "usage": {"output_tokens": 12}}),
//!     json!({"type": "message_stop"}),
//! ];
//! let mut reader = NativeReader::new(NativeFormat::Anthropic);
//! let mut out = Vec::new();
//! for event in &events {
//!     reader.push_event(event, &mut out);
//! }
//! reader.finish(&mut out);
//! let streamed = ModelOutput::collect(out);
//!
//! let message = json!({
//!     "content": [{"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Paris"}}],
//!     "stop_reason": "tool_use",
//!     "usage": {"input_tokens": 9, "output_tokens": 12},
//! });
//! let whole = parse_response(NativeFormat::Anthropic, &message, &NativeOptions::default());
//! assert_eq!(streamed, whole);
//! assert_eq!(whole.calls().next().unwrap().arguments, json!({"city": "Paris"}).into());
//! ```
//!
//! What the readers hold to, beyond the [module's contract](super):
//!
//! - **calls are the providers' parsers' calls**: when every call of a
//!   response is good, the calls of [`parse_response`] are exactly those of
//!   [`parse_chat_tool_calls`](crate::providers::openai::parse_chat_tool_calls),
//!   [`parse_responses_function_calls`](crate::providers::openai::parse_responses_function_calls),
//!   [`parse_tool_uses`](crate::providers::anthropic::parse_tool_uses) and
//!   [`parse_function_calls`](crate::providers::gemini::parse_function_calls)
//!   (Gemini's made-up ids `gemini-call-<turn>-<index>-<name>` from
//!   [`NativeOptions::turn`], its `thoughtSignature` kept on the call), except
//!   that an OpenAI call's argument text ends where its JSON value closes
//!   (whitespace after it is dropped, so a streamed call can be ready at the
//!   close). Unlike those parsers, a bad call becomes a
//!   [`FailedCall`](super::FailedCall) with its id and name and never
//!   discards the others;
//! - **judged once, at the close**: a call's arguments are scanned as they
//!   stream and refused the moment they grow past
//!   [`StreamLimits`] (`too_large`, `too_deep`; its
//!   later fragments are dropped); when they close they are read once: not
//!   one JSON object, or a key repeated in one object, is
//!   `malformed_arguments`; a call id used earlier in the output is
//!   `reused_id`; a call without an id or a name is `malformed_markup`; a
//!   call whose arguments were open when an event was lost (not JSON, not
//!   UTF-8) is `lost_event`. Text after the close that is not whitespace is
//!   a [`StreamProblemKind::ArgumentsAfterClose`](super::StreamProblemKind)
//!   problem; the call stands on its closed value;
//! - **truncated or malformed**: a call whose arguments began but never
//!   closed is a [`TruncatedCall`](super::TruncatedCall) when the output was
//!   cut (the token limit, a failed response, or the end of the stream), and
//!   `malformed_arguments` when the provider finished normally; a call with
//!   no argument text at all is ready with none (Anthropic's `input` of the
//!   block start, `{}`; OpenAI's empty text, which the executor reads as no
//!   arguments), unless the output was cut;
//! - **bad events are classified and skipped**: an event that is not JSON
//!   or not UTF-8, for an unknown index, out of order or repeated, after the
//!   end, and a provider's `error` event, are each a
//!   [`StreamProblem`] keeping the event's text;
//!   reading goes on with the next event;
//! - **the order of a whole response** is reasoning, text, then calls for
//!   Chat Completions (a message has no other order), and the order of its
//!   items, blocks or parts for the other formats.
//!
//! [`OutputReader`]: super::OutputReader
//! [`ModelOutput`]: super::ModelOutput

mod anthropic;
mod calls;
mod chat;
mod gemini;
mod responses;
mod sse;

use std::fmt;
use std::str::FromStr;

use serde_json::Value;

use super::{
    Finish, FinishReason, ModelOutput, OutputReader, StreamEvent, StreamLimits, StreamProblem,
    StreamProblemKind,
};
pub use sse::{SseFrame, SseReader};

/// A provider's response format, streamed or whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NativeFormat {
    /// OpenAI Chat Completions (`chat.completion.chunk` events and
    /// `chat.completion` objects), and the OpenAI-compatible servers that
    /// speak it (their `reasoning_content` or `reasoning` deltas included).
    OpenAiChat,
    /// OpenAI Responses (`response.*` events and `response` objects).
    OpenAiResponses,
    /// Anthropic Messages (`message_start` ... `message_stop` events and
    /// `message` objects).
    Anthropic,
    /// Gemini `generateContent` (`streamGenerateContent?alt=sse` chunks and
    /// `GenerateContentResponse` objects).
    Gemini,
}

impl NativeFormat {
    /// Every format, in a fixed order.
    pub const ALL: [NativeFormat; 4] = [
        NativeFormat::OpenAiChat,
        NativeFormat::OpenAiResponses,
        NativeFormat::Anthropic,
        NativeFormat::Gemini,
    ];

    /// A stable name: `openai-chat`, `openai-responses`, `anthropic` or
    /// `gemini`.
    pub fn as_str(self) -> &'static str {
        match self {
            NativeFormat::OpenAiChat => "openai-chat",
            NativeFormat::OpenAiResponses => "openai-responses",
            NativeFormat::Anthropic => "anthropic",
            NativeFormat::Gemini => "gemini",
        }
    }
}

impl fmt::Display for NativeFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is not a [`NativeFormat`]'s.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown provider format `{0}` (expected openai-chat, openai-responses, anthropic or gemini)"
)]
pub struct UnknownFormat(pub String);

impl FromStr for NativeFormat {
    type Err = UnknownFormat;

    /// Reads the name [`as_str`](NativeFormat::as_str) gives.
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        NativeFormat::ALL
            .into_iter()
            .find(|format| format.as_str() == name)
            .ok_or_else(|| UnknownFormat(name.to_owned()))
    }
}

/// How a reader or a whole parse reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NativeOptions {
    /// The bounds on one call's arguments.
    pub limits: StreamLimits,
    /// The index of the turn the calls will run in, for the ids made up for
    /// Gemini calls that come without one (as
    /// [`parse_function_calls`](crate::providers::gemini::parse_function_calls)
    /// makes them).
    pub turn: u32,
    /// The longest event (one line, or one event's data lines) a reader of
    /// bytes reads; a longer one is reported as a
    /// [`StreamProblemKind::MalformedEvent`] and skipped without being kept.
    pub max_event_bytes: usize,
}

impl Default for NativeOptions {
    /// The executor's default limits, turn 0, and events of up to 16 MiB.
    fn default() -> Self {
        NativeOptions {
            limits: StreamLimits::default(),
            turn: 0,
            max_event_bytes: 16 << 20,
        }
    }
}

/// Reads a whole, non-streamed response of `format` (a `chat.completion`
/// object, a Responses `response` object, an Anthropic `message`, a Gemini
/// `GenerateContentResponse`) into the output its stream would give.
///
/// A response that is not the shape its format says is read as far as it
/// goes; what cannot be read is a [`StreamProblem`] of the output.
pub fn parse_response(
    format: NativeFormat,
    response: &Value,
    options: &NativeOptions,
) -> ModelOutput {
    let mut out = Vec::new();
    match format {
        NativeFormat::OpenAiChat => chat::parse(response, options, &mut out),
        NativeFormat::OpenAiResponses => responses::parse(response, options, &mut out),
        NativeFormat::Anthropic => anthropic::parse(response, options, &mut out),
        NativeFormat::Gemini => gemini::parse(response, options, &mut out),
    }
    ModelOutput::collect(out)
}

/// A reader of one streamed response of a [`NativeFormat`]: fed bytes
/// through [`OutputReader`], or events through
/// [`push_event`](Self::push_event).
#[derive(Debug)]
pub struct NativeReader {
    sse: SseReader,
    format: Format,
}

#[derive(Debug)]
enum Format {
    Chat(chat::Stream),
    Responses(responses::Stream),
    Anthropic(anthropic::Stream),
    Gemini(gemini::Stream),
}

impl NativeReader {
    /// A reader of `format` with the default options.
    pub fn new(format: NativeFormat) -> Self {
        NativeReader::with_options(format, NativeOptions::default())
    }

    /// A reader of `format` with `options`.
    pub fn with_options(format: NativeFormat, options: NativeOptions) -> Self {
        NativeReader {
            sse: SseReader::new(options.max_event_bytes),
            format: match format {
                NativeFormat::OpenAiChat => Format::Chat(chat::Stream::new(&options)),
                NativeFormat::OpenAiResponses => {
                    Format::Responses(responses::Stream::new(&options))
                }
                NativeFormat::Anthropic => Format::Anthropic(anthropic::Stream::new(&options)),
                NativeFormat::Gemini => Format::Gemini(gemini::Stream::new(&options)),
            },
        }
    }

    /// The format read.
    pub fn format(&self) -> NativeFormat {
        match self.format {
            Format::Chat(_) => NativeFormat::OpenAiChat,
            Format::Responses(_) => NativeFormat::OpenAiResponses,
            Format::Anthropic(_) => NativeFormat::Anthropic,
            Format::Gemini(_) => NativeFormat::Gemini,
        }
    }

    /// Reads one event, already parsed from its SSE `data:` line (for a
    /// caller that reads the SSE itself; `data: [DONE]` is the end: call
    /// [`finish`](OutputReader::finish)). Appends what it tells to `out`.
    pub fn push_event(&mut self, event: &Value, out: &mut Vec<StreamEvent>) {
        self.format.event(event, out);
    }
}

impl OutputReader for NativeReader {
    fn push(&mut self, piece: &[u8], out: &mut Vec<StreamEvent>) {
        let format = &mut self.format;
        self.sse.push(piece, &mut |frame| format.frame(frame, out));
    }

    /// Reads what was held back (a last line without its newline), then
    /// ends the output: calls still open are truncated, and
    /// [`StreamEvent::Finished`] comes last, unless the stream's own end
    /// (`[DONE]`, `message_stop`, `response.completed`) already said it.
    fn finish(&mut self, out: &mut Vec<StreamEvent>) {
        let format = &mut self.format;
        self.sse.finish(&mut |frame| format.frame(frame, out));
        self.format.end(out);
    }
}

impl Format {
    fn frame(&mut self, frame: SseFrame, out: &mut Vec<StreamEvent>) {
        match frame {
            SseFrame::Event(event) => self.event(&event, out),
            SseFrame::Done => self.end(out),
            SseFrame::Lost(problem) => {
                out.push(StreamEvent::Problem(problem));
                self.calls().taint_open();
            }
        }
    }

    fn event(&mut self, event: &Value, out: &mut Vec<StreamEvent>) {
        match self {
            Format::Chat(s) => s.event(event, out),
            Format::Responses(s) => s.event(event, out),
            Format::Anthropic(s) => s.event(event, out),
            Format::Gemini(s) => s.event(event, out),
        }
    }

    fn end(&mut self, out: &mut Vec<StreamEvent>) {
        match self {
            Format::Chat(s) => s.end(out),
            Format::Responses(s) => s.end(out),
            Format::Anthropic(s) => s.end(out),
            Format::Gemini(s) => s.end(out),
        }
    }

    fn calls(&mut self) -> &mut calls::Calls {
        match self {
            Format::Chat(s) => &mut s.calls,
            Format::Responses(s) => &mut s.calls,
            Format::Anthropic(s) => &mut s.calls,
            Format::Gemini(s) => &mut s.calls,
        }
    }
}

/// A problem of `kind` keeping `event`'s compact JSON text (bounded).
fn problem(kind: StreamProblemKind, event: &Value) -> StreamEvent {
    let text = calls::compact_prefix(event, StreamProblem::MAX_RAW, usize::MAX);
    StreamEvent::Problem(StreamProblem::new(kind, &text))
}

/// `value[key]` as a string, when it is one.
fn str_at<'v>(value: &'v Value, key: &str) -> Option<&'v str> {
    value.get(key).and_then(Value::as_str)
}

/// `value[key]` unless it is missing or null.
fn present<'v>(value: &'v Value, key: &str) -> Option<&'v Value> {
    value.get(key).filter(|v| !v.is_null())
}

/// A text event, unless the text is empty.
fn text(out: &mut Vec<StreamEvent>, text: Option<&str>) {
    if let Some(text) = text.filter(|t| !t.is_empty()) {
        out.push(StreamEvent::Text(text.to_owned()));
    }
}

/// A reasoning event, unless the text is empty.
fn reasoning(out: &mut Vec<StreamEvent>, text: Option<&str>) {
    if let Some(text) = text.filter(|t| !t.is_empty()) {
        out.push(StreamEvent::Reasoning(text.to_owned()));
    }
}

/// A signature event, unless the signature is empty.
fn signature(out: &mut Vec<StreamEvent>, signature: Option<&str>) {
    if let Some(signature) = signature.filter(|s| !s.is_empty()) {
        out.push(StreamEvent::ReasoningSignature(signature.to_owned()));
    }
}

/// The finish event.
fn finished(out: &mut Vec<StreamEvent>, reason: FinishReason, usage: Option<&Value>) {
    out.push(StreamEvent::Finished(Finish {
        reason,
        usage: usage.cloned(),
    }));
}
