//! Model output as it streams: visible text, reasoning and tool calls read
//! out of provider event streams and out of the text open-weight models
//! write, in the order the model wrote them.
//!
//! Every reader here yields the same [`StreamEvent`]s, whether it is fed a
//! whole response at once or one byte at a time, and a [`ModelOutput`]
//! collects them. The contract every reader keeps, and that its tests check
//! for every chunking of the same output:
//!
//! - **the same output for every chunking**: the [`ModelOutput`] collected
//!   from the events is equal to the one the whole-response parse gives;
//! - **nothing silently dropped**: a call whose arguments do not parse is a
//!   [`FailedCall`] with its raw text (and its id and name where the format
//!   gives them), a call cut off by the end of the stream is a
//!   [`TruncatedCall`], and neither is ever run nor shown as text; one bad
//!   call never discards the others;
//! - **a call is ready when its arguments close**: [`StreamEvent::CallReady`]
//!   comes as soon as the arguments are complete, before whatever markup or
//!   event follows them, with the [`ToolCall`] exactly as the whole-response
//!   parse makes it;
//! - **bounded**: arguments larger or deeper than the [`StreamLimits`] are
//!   refused while they stream, before the whole value is buffered.
//!
//! [`execute_streamed`] runs one streamed turn with any reader: every event
//! to a callback as it comes, each ready call through the executor the
//! moment it is ready, and the answers in call order, failed and truncated
//! calls answered without running ([`FailedCall::answer`],
//! [`TruncatedCall::answer`]).

use std::time::Duration;

use serde_json::Value;

use crate::call::ToolCall;
use crate::error::{ArgumentProblem, ErrorClass, ErrorKind, ToolError};
use crate::executor::ExecutorConfig;
use crate::ids::{CallName, ToolCallId};
use crate::output::ToolResult;

mod execute;
pub mod grammar;
pub(crate) mod json_check;
pub mod json_scan;
pub mod native;
pub mod text;

pub use execute::{StreamedTurn, execute_streamed};

/// A reader of one turn's model output, fed in pieces as they arrive.
///
/// The provider-stream readers and the text-format readers both implement
/// it, so an agent loop, the executor's streamed intake and the tests drive
/// any of them the same way. A reader is for one turn: make a new one for
/// the next.
pub trait OutputReader {
    /// Reads the next piece of raw output, as it arrived: a piece may end
    /// anywhere, inside a UTF-8 sequence, a marker, an SSE line or a JSON
    /// value. Appends to `out` every event the reader can already tell, in
    /// order, and holds back only what it cannot tell yet.
    ///
    /// A reader may add a piece of text, reasoning or a call's arguments
    /// to the last event already in `out` when that event is of the same
    /// kind (and call) instead of pushing a new one: a caller that keeps
    /// one `Vec` for the whole turn gets one event per run of text, as the
    /// whole output read at once gives, and a caller that shows events as
    /// they come takes them out of `out` after each push (as
    /// [`execute_streamed`] does) and so sees every piece. The
    /// [`ModelOutput`] collected is the same either way.
    fn push(&mut self, piece: &[u8], out: &mut Vec<StreamEvent>);

    /// The output ended: appends what was held back (text that turned out
    /// to be text; calls cut off, as [`StreamEvent::Truncated`]; a stream
    /// that ended mid-event, as a [`StreamEvent::Problem`]) and, last,
    /// [`StreamEvent::Finished`] (with [`FinishReason::EndOfStream`] when
    /// the output never said why it stopped).
    fn finish(&mut self, out: &mut Vec<StreamEvent>);

    /// Reads every piece, then the end, and collects the output.
    fn read_all<'p>(&mut self, pieces: impl IntoIterator<Item = &'p [u8]>) -> ModelOutput
    where
        Self: Sized,
    {
        let mut events = Vec::new();
        for piece in pieces {
            self.push(piece, &mut events);
        }
        self.finish(&mut events);
        ModelOutput::collect(events)
    }
}

/// One piece of a model's output, in the order the model wrote it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum StreamEvent {
    /// Visible text: what a chat UI shows. It never holds a byte of call or
    /// reasoning markup.
    Text(String),
    /// Reasoning text (thinking), kept apart from the answer.
    Reasoning(String),
    /// The opaque token that must go back to the provider with the
    /// reasoning written just before it (Anthropic's thinking signature or
    /// redacted thinking data, Gemini's thought signature on a thought part,
    /// the Responses API's encrypted reasoning content). It closes that
    /// reasoning block.
    ReasoningSignature(String),
    /// A call began: its id and name are known.
    CallStarted(CallStarted),
    /// A fragment of a call's arguments, as the model wrote it (for UIs that
    /// show a call as it is written; nothing runs on it).
    ArgumentsDelta(ArgumentsDelta),
    /// A call's arguments closed: the call is complete and may run.
    CallReady(ReadyCall),
    /// A call that cannot run: its arguments or markup are malformed, or it
    /// broke a limit. Kept with its raw text.
    CallFailed(FailedCall),
    /// A call cut off by the end of the stream (for example at the token
    /// limit). Never run, never shown as text.
    Truncated(TruncatedCall),
    /// A problem with the stream itself, tied to no call (an event that is
    /// not JSON, out of order, duplicated or for an unknown index; invalid
    /// UTF-8; a stream that ended mid-event).
    Problem(StreamProblem),
    /// The model finished its turn.
    Finished(Finish),
}

/// A call began.
#[derive(Debug, Clone, PartialEq)]
pub struct CallStarted {
    /// The call's position among this output's calls (0 first), counting
    /// failed and truncated calls too.
    pub index: usize,
    /// The call's id: the provider's, or one made up where the format has
    /// none (see each reader).
    pub id: ToolCallId,
    /// The tool name as the model wrote it.
    pub name: CallName,
}

/// A fragment of a call's arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct ArgumentsDelta {
    /// The call's index (as in [`CallStarted::index`]).
    pub index: usize,
    /// The fragment, as written.
    pub fragment: String,
}

/// A complete call.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadyCall {
    /// The call's index (as in [`CallStarted::index`]).
    pub index: usize,
    /// The call, exactly as the whole-response parse makes it.
    pub call: ToolCall,
}

/// A call that cannot run.
#[derive(Debug, Clone, PartialEq)]
pub struct FailedCall {
    /// The call's index, when the call got as far as having one.
    pub index: Option<usize>,
    /// The call's id, where the format gave one (so the executor can still
    /// answer it, fail-closed).
    pub id: Option<ToolCallId>,
    /// The tool name, where the format gave one.
    pub name: Option<CallName>,
    /// What is wrong.
    pub kind: CallProblem,
    /// The call's raw text as the model wrote it (markup included for text
    /// formats; the argument text for native ones), up to the limit that
    /// stopped it.
    pub raw: String,
}

impl FailedCall {
    /// The answer to this call, without running anything: a
    /// [`ToolResult`] for its id with a classified [`ToolError`] whose
    /// message names the problem (its [`CallProblem::as_str`] word) and says
    /// the call did not run. `None` when the call has no id (the provider
    /// then expects no answer; the text readers give every call one). A
    /// call whose name never arrived is answered under an empty name: its
    /// id is what the answer is matched by.
    ///
    /// The error's kind follows what the executor answers for the same
    /// problem: [`ErrorKind::InvalidArguments`] for arguments or markup that
    /// cannot be read and for a lost event, [`ErrorKind::LimitExceeded`]
    /// (`argument_size`, `argument_depth`) for arguments past the limits,
    /// and [`ErrorKind::Conflict`] for a reused id (whose arguments may be
    /// good: they are never run under an id already answered). Every one is
    /// [`ErrorClass::Repair`]: the model can write the call again.
    pub fn answer(&self) -> Option<ToolResult> {
        let id = self.id.clone()?;
        let name = self.name.clone().unwrap_or_else(|| CallName::new(""));
        let problem = self.kind.as_str();
        let error = match self.kind {
            CallProblem::MalformedArguments => unreadable(format!(
                "the call's arguments are not one JSON object ({problem}); it did not run"
            )),
            CallProblem::MalformedMarkup => unreadable(format!(
                "the call's markup is malformed ({problem}); it did not run"
            )),
            CallProblem::LostEvent => unreadable(format!(
                "a piece of the stream was lost while the call's arguments were open \
                 ({problem}); it did not run"
            )),
            CallProblem::TooLarge => ToolError::limit_exceeded(
                ErrorClass::Repair,
                "argument_size",
                format!(
                    "the call's arguments grew past the size limit ({problem}); it did not run"
                ),
            ),
            CallProblem::TooDeep => ToolError::limit_exceeded(
                ErrorClass::Repair,
                "argument_depth",
                format!(
                    "the call's arguments nest deeper than the depth limit ({problem}); it did not run"
                ),
            ),
            CallProblem::ReusedId => ToolError::new(
                ErrorClass::Repair,
                ErrorKind::Conflict,
                format!(
                    "call id `{id}` was already used by an earlier call of this output \
                     ({problem}); this call did not run"
                ),
            ),
        };
        Some(ToolResult::from_error(id, name, error, Duration::ZERO))
    }
}

/// An [`ErrorKind::InvalidArguments`] refusal with `message` as its one
/// problem, for the whole call.
fn unreadable(message: String) -> ToolError {
    ToolError::new(
        ErrorClass::Repair,
        ErrorKind::InvalidArguments {
            problems: vec![ArgumentProblem::new("", message.clone())],
        },
        message,
    )
}

/// A call cut off by the end of the stream.
#[derive(Debug, Clone, PartialEq)]
pub struct TruncatedCall {
    /// The call's index, when it got as far as having one.
    pub index: Option<usize>,
    /// The call's id, where the format gave one.
    pub id: Option<ToolCallId>,
    /// The tool name, where the format gave one.
    pub name: Option<CallName>,
    /// Everything of the call that arrived.
    pub raw: String,
}

impl TruncatedCall {
    /// The answer to this call, without running anything: a
    /// [`ToolResult`] for its id with an [`ErrorKind::InvalidArguments`]
    /// error ([`ErrorClass::Repair`]) saying it was cut off by the end of
    /// the output and did not run. `None` when the call has no id (the
    /// text readers give every call one); a call cut off before its name is
    /// answered under an empty name.
    pub fn answer(&self) -> Option<ToolResult> {
        let id = self.id.clone()?;
        let name = self.name.clone().unwrap_or_else(|| CallName::new(""));
        let error =
            unreadable("the call was cut off by the end of the output; it did not run".into());
        Some(ToolResult::from_error(id, name, error, Duration::ZERO))
    }
}

/// What is wrong with a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CallProblem {
    /// The arguments are not a JSON object (or, for formats that write them
    /// otherwise, cannot be read as one).
    MalformedArguments,
    /// The call's markup is malformed (a missing name, an unclosed or
    /// misplaced marker).
    MalformedMarkup,
    /// The arguments grew past [`StreamLimits::max_argument_bytes`].
    TooLarge,
    /// The arguments nest deeper than [`StreamLimits::max_argument_depth`].
    TooDeep,
    /// The call reuses the id of an earlier call of this output.
    ReusedId,
    /// An event of the stream that may have carried a piece of this call
    /// was lost (it was not JSON, not UTF-8, or too long to read) while the
    /// call's arguments were open: they may be missing that piece.
    LostEvent,
}

impl CallProblem {
    /// A stable name: `malformed_arguments`, `malformed_markup`,
    /// `too_large`, `too_deep`, `reused_id` or `lost_event`.
    pub fn as_str(self) -> &'static str {
        match self {
            CallProblem::MalformedArguments => "malformed_arguments",
            CallProblem::MalformedMarkup => "malformed_markup",
            CallProblem::TooLarge => "too_large",
            CallProblem::TooDeep => "too_deep",
            CallProblem::ReusedId => "reused_id",
            CallProblem::LostEvent => "lost_event",
        }
    }
}

/// A problem with the stream itself.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamProblem {
    /// What is wrong.
    pub kind: StreamProblemKind,
    /// The offending input (an event's text, a line), cut to a bounded
    /// length.
    pub raw: String,
}

impl StreamProblem {
    /// The most bytes of offending input a problem keeps.
    pub const MAX_RAW: usize = 1024;

    /// A problem of `kind` keeping `raw` cut to [`MAX_RAW`](Self::MAX_RAW)
    /// bytes (at a character boundary).
    pub fn new(kind: StreamProblemKind, raw: &str) -> Self {
        let mut end = raw.len().min(Self::MAX_RAW);
        while !raw.is_char_boundary(end) {
            end -= 1;
        }
        StreamProblem {
            kind,
            raw: raw[..end].to_owned(),
        }
    }
}

/// What is wrong with a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum StreamProblemKind {
    /// An event (or a line) that is not JSON, or not the shape its type
    /// says.
    MalformedEvent,
    /// An event that cannot come where it came (a delta before its start, a
    /// second start for the same index, anything after the end).
    OutOfOrder,
    /// An event for a call or block index never started.
    UnknownIndex,
    /// Bytes that are not UTF-8.
    InvalidUtf8,
    /// The stream ended in the middle of an event or a line.
    EndedMidEvent,
    /// The provider reported an error in the stream.
    ProviderError,
    /// Text that came in a call's arguments after they had closed (the call
    /// is complete without it; whitespace there is not a problem).
    ArgumentsAfterClose,
}

impl StreamProblemKind {
    /// A stable name: `malformed_event`, `out_of_order`, `unknown_index`,
    /// `invalid_utf8`, `ended_mid_event`, `provider_error` or
    /// `arguments_after_close`.
    pub fn as_str(self) -> &'static str {
        match self {
            StreamProblemKind::MalformedEvent => "malformed_event",
            StreamProblemKind::OutOfOrder => "out_of_order",
            StreamProblemKind::UnknownIndex => "unknown_index",
            StreamProblemKind::InvalidUtf8 => "invalid_utf8",
            StreamProblemKind::EndedMidEvent => "ended_mid_event",
            StreamProblemKind::ProviderError => "provider_error",
            StreamProblemKind::ArgumentsAfterClose => "arguments_after_close",
        }
    }
}

/// How a turn ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Finish {
    /// Why the model stopped.
    pub reason: FinishReason,
    /// The provider's token usage, as it sent it, when it sent one.
    pub usage: Option<Value>,
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FinishReason {
    /// It finished its answer. A text reader says so only where the format
    /// has an explicit end of turn (harmony's `<|return|>`, or `<|end|>`
    /// closing a message that is not a call).
    Stop,
    /// It stopped to have tools called. A text reader says so when the
    /// output's last non-whitespace content is a call (ready or failed).
    ToolCalls,
    /// It hit the token limit. A text reader says so when the output ends
    /// inside a call (a [`TruncatedCall`]): a call cut off by the end is, in
    /// practice, the token limit.
    Length,
    /// The provider's filter stopped it.
    ContentFilter,
    /// The stream ended without the model saying why. A text reader says so
    /// when the output ends with text or reasoning, which cannot tell a stop
    /// from a cut (end-of-sequence tokens such as `</s>` or `<|eot_id|>`
    /// are text to it, not stops).
    EndOfStream,
    /// Another reason, as the provider named it.
    Other(String),
}

/// The bounds a reader holds a call's arguments to while they stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamLimits {
    /// The most bytes of argument text one call may have.
    pub max_argument_bytes: usize,
    /// The deepest nesting of arrays and objects in one call's arguments.
    pub max_argument_depth: usize,
}

impl Default for StreamLimits {
    /// The executor's default bounds, so that what a reader lets through the
    /// executor would not refuse for its size or depth.
    fn default() -> Self {
        StreamLimits::from(&ExecutorConfig::default())
    }
}

impl From<&ExecutorConfig> for StreamLimits {
    fn from(config: &ExecutorConfig) -> Self {
        StreamLimits {
            max_argument_bytes: config.max_argument_bytes,
            max_argument_depth: config.max_argument_depth,
        }
    }
}

/// One part of a [`ModelOutput`], in the order it was written.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum OutputPart {
    /// Visible text.
    Text(String),
    /// A reasoning block, with the signature that closed it, if any.
    Reasoning {
        /// The reasoning text.
        text: String,
        /// The opaque token that goes back with it.
        signature: Option<String>,
    },
    /// A complete call.
    Call(ToolCall),
    /// A call that cannot run.
    Failed(FailedCall),
    /// A call cut off by the end of the stream.
    Truncated(TruncatedCall),
}

/// A model's whole output: what the events of one turn add up to.
///
/// [`push`](Self::push) folds events in; adjacent text (and reasoning)
/// fragments join into one part, so the same output streamed in different
/// chunks collects to an equal value.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelOutput {
    /// The parts, in order.
    pub parts: Vec<OutputPart>,
    /// Problems with the stream itself.
    pub problems: Vec<StreamProblem>,
    /// How the turn ended, once it did.
    pub finish: Option<Finish>,
}

impl ModelOutput {
    /// An empty output.
    pub fn new() -> Self {
        ModelOutput::default()
    }

    /// Collects every event of `events`.
    pub fn collect(events: impl IntoIterator<Item = StreamEvent>) -> Self {
        let mut out = ModelOutput::new();
        for event in events {
            out.push(event);
        }
        out
    }

    /// Folds one event in. Call starts and argument fragments add nothing
    /// (the ready, failed or truncated call that follows them does).
    pub fn push(&mut self, event: StreamEvent) {
        match event {
            StreamEvent::Text(text) => match self.parts.last_mut() {
                Some(OutputPart::Text(last)) => last.push_str(&text),
                _ if text.is_empty() => {}
                _ => self.parts.push(OutputPart::Text(text)),
            },
            StreamEvent::Reasoning(text) => match self.parts.last_mut() {
                Some(OutputPart::Reasoning {
                    text: last,
                    signature: None,
                }) => last.push_str(&text),
                _ if text.is_empty() => {}
                _ => self.parts.push(OutputPart::Reasoning {
                    text,
                    signature: None,
                }),
            },
            StreamEvent::ReasoningSignature(sig) => match self.parts.last_mut() {
                Some(OutputPart::Reasoning {
                    signature: signature @ None,
                    ..
                }) => *signature = Some(sig),
                _ => self.parts.push(OutputPart::Reasoning {
                    text: String::new(),
                    signature: Some(sig),
                }),
            },
            StreamEvent::CallStarted(_) | StreamEvent::ArgumentsDelta(_) => {}
            StreamEvent::CallReady(ready) => self.parts.push(OutputPart::Call(ready.call)),
            StreamEvent::CallFailed(failed) => self.parts.push(OutputPart::Failed(failed)),
            StreamEvent::Truncated(cut) => self.parts.push(OutputPart::Truncated(cut)),
            StreamEvent::Problem(problem) => self.problems.push(problem),
            StreamEvent::Finished(finish) => self.finish = Some(finish),
        }
    }

    /// The visible text, all of it.
    pub fn text(&self) -> String {
        self.parts
            .iter()
            .filter_map(|p| match p {
                OutputPart::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect()
    }

    /// The reasoning text, all of it.
    pub fn reasoning(&self) -> String {
        self.parts
            .iter()
            .filter_map(|p| match p {
                OutputPart::Reasoning { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }

    /// The complete calls, in order.
    pub fn calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.parts.iter().filter_map(|p| match p {
            OutputPart::Call(call) => Some(call),
            _ => None,
        })
    }

    /// The calls that cannot run, in order.
    pub fn failed(&self) -> impl Iterator<Item = &FailedCall> {
        self.parts.iter().filter_map(|p| match p {
            OutputPart::Failed(failed) => Some(failed),
            _ => None,
        })
    }

    /// The calls cut off by the end of the stream, in order.
    pub fn truncated(&self) -> impl Iterator<Item = &TruncatedCall> {
        self.parts.iter().filter_map(|p| match p {
            OutputPart::Truncated(cut) => Some(cut),
            _ => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> StreamEvent {
        StreamEvent::Text(s.to_owned())
    }

    #[test]
    fn adjacent_fragments_collect_to_the_same_output_however_they_were_cut() {
        let whole = ModelOutput::collect([
            StreamEvent::Reasoning("think hard".into()),
            StreamEvent::ReasoningSignature("sig".into()),
            text("Hello, world"),
        ]);
        let cut = ModelOutput::collect([
            StreamEvent::Reasoning("think".into()),
            StreamEvent::Reasoning(String::new()),
            StreamEvent::Reasoning(" hard".into()),
            StreamEvent::ReasoningSignature("sig".into()),
            text(""),
            text("Hello"),
            text(", world"),
        ]);
        assert_eq!(whole, cut);
        assert_eq!(whole.text(), "Hello, world");
        assert_eq!(whole.reasoning(), "think hard");
    }

    #[test]
    fn a_signature_closes_its_reasoning_block() {
        let out = ModelOutput::collect([
            StreamEvent::Reasoning("one".into()),
            StreamEvent::ReasoningSignature("s1".into()),
            StreamEvent::Reasoning("two".into()),
        ]);
        assert_eq!(
            out.parts,
            vec![
                OutputPart::Reasoning {
                    text: "one".into(),
                    signature: Some("s1".into())
                },
                OutputPart::Reasoning {
                    text: "two".into(),
                    signature: None
                },
            ]
        );
    }

    fn failed(kind: CallProblem, raw: &str) -> FailedCall {
        FailedCall {
            index: Some(0),
            id: Some("call_1".into()),
            name: Some("weather".into()),
            kind,
            raw: raw.into(),
        }
    }

    #[test]
    fn a_failed_call_with_an_id_and_a_name_is_answered_by_id_naming_its_problem() {
        let cases = [
            (
                CallProblem::MalformedArguments,
                "invalid_arguments",
                "the call's arguments are not one JSON object (malformed_arguments); it did not run",
            ),
            (
                CallProblem::MalformedMarkup,
                "invalid_arguments",
                "the call's markup is malformed (malformed_markup); it did not run",
            ),
            (
                CallProblem::LostEvent,
                "invalid_arguments",
                "a piece of the stream was lost while the call's arguments were open (lost_event); it did not run",
            ),
            (
                CallProblem::TooLarge,
                "limit_exceeded",
                "the call's arguments grew past the size limit (too_large); it did not run",
            ),
            (
                CallProblem::TooDeep,
                "limit_exceeded",
                "the call's arguments nest deeper than the depth limit (too_deep); it did not run",
            ),
        ];
        for (kind, outcome, message) in cases {
            let result = failed(kind, r#"{"city": "Par"#).answer().unwrap();
            assert_eq!(result.tool_call_id.as_str(), "call_1", "{kind:?}");
            assert_eq!(result.name.as_str(), "weather", "{kind:?}");
            assert!(result.is_error, "{kind:?}");
            assert_eq!(result.outcome(), outcome, "{kind:?}");
            let error = result.error.as_ref().unwrap();
            assert_eq!(error.class(), ErrorClass::Repair, "{kind:?}");
            assert_eq!(error.message(), message, "{kind:?}");
            assert_eq!(result.text(), message, "{kind:?}");
        }
    }

    #[test]
    fn a_reused_id_is_answered_as_a_conflict_even_when_its_arguments_are_good() {
        let result = failed(CallProblem::ReusedId, r#"{"city": "Paris"}"#)
            .answer()
            .unwrap();
        assert_eq!(result.outcome(), "conflict");
        assert_eq!(
            result.text(),
            "call id `call_1` was already used by an earlier call of this output (reused_id); this call did not run"
        );
        assert_eq!(result.error.unwrap().class(), ErrorClass::Repair);
    }

    #[test]
    fn a_call_without_an_id_has_no_answer() {
        let anonymous = FailedCall {
            id: None,
            ..failed(CallProblem::MalformedArguments, "{")
        };
        assert!(anonymous.answer().is_none());
        let cut = TruncatedCall {
            index: Some(2),
            id: None,
            name: Some("search".into()),
            raw: "{\"a\"".into(),
        };
        assert!(cut.answer().is_none());
    }

    #[test]
    fn a_call_without_a_name_is_answered_by_its_id() {
        let nameless = FailedCall {
            name: None,
            ..failed(CallProblem::MalformedArguments, "{")
        };
        let result = nameless.answer().unwrap();
        assert_eq!(result.tool_call_id.as_str(), "call_1");
        assert_eq!(result.name.as_str(), "");
        assert_eq!(result.outcome(), "invalid_arguments");
        let cut = TruncatedCall {
            index: Some(2),
            id: Some("call_3".into()),
            name: None,
            raw: "{\"a\"".into(),
        };
        let result = cut.answer().unwrap();
        assert_eq!(result.tool_call_id.as_str(), "call_3");
        assert_eq!(result.name.as_str(), "");
    }

    #[test]
    fn a_truncated_call_is_answered_as_cut_off_and_not_run() {
        let cut = TruncatedCall {
            index: Some(2),
            id: Some("call_3".into()),
            name: Some("search".into()),
            raw: "{\"query\": \"ret".into(),
        };
        let result = cut.answer().unwrap();
        assert_eq!(result.tool_call_id.as_str(), "call_3");
        assert_eq!(result.name.as_str(), "search");
        assert_eq!(result.outcome(), "invalid_arguments");
        assert_eq!(
            result.text(),
            "the call was cut off by the end of the output; it did not run"
        );
        assert_eq!(result.error.unwrap().class(), ErrorClass::Repair);
    }

    #[test]
    fn the_default_limits_are_the_executor_s() {
        let config = ExecutorConfig::default();
        let limits = StreamLimits::default();
        assert_eq!(limits.max_argument_bytes, config.max_argument_bytes);
        assert_eq!(limits.max_argument_depth, config.max_argument_depth);
    }
}
