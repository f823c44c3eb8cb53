//! Gemini: the `GenerateContentResponse` chunks of
//! `streamGenerateContent?alt=sse`, and the whole response.
//!
//! Each chunk holds `candidates[0].content.parts` that follow the parts
//! before them: `text` parts (with `thought: true`, reasoning), and
//! `functionCall` parts, each a whole call (`name`, `args`, `id` when
//! Gemini gives one); a part's `thoughtSignature` signs a `functionCall`
//! part's call (kept on the call) or closes the reasoning before it (on a
//! text or thought part, often an empty one at the end). The last chunk
//! has `finishReason`; `usageMetadata` grows chunk by chunk and the last
//! one counts. A chunk with an `error` object is the provider's error. A
//! prompt blocked before any candidate (`promptFeedback.blockReason`) ends
//! as filtered. Streamed function-call arguments (`partialArgs` and
//! `willContinue`, Vertex AI's `streamFunctionCallArguments`) are not read:
//! such a call fails (`malformed_arguments`, with its id and name) and never
//! runs. Candidates other than the first are not read, as the whole parse
//! reads `candidates[0]`.
//!
//! Gemini says nothing when the stream ends: the reader finishes at the
//! end of the bytes ([`OutputReader::finish`](crate::stream::OutputReader)).

use serde_json::{Map, Value};

use super::calls::Calls;
use super::{NativeOptions, finished, present, problem, reasoning, signature, str_at, text};
use crate::providers::gemini::SYNTHETIC_ID_PREFIX;
use crate::stream::{CallProblem, FinishReason, StreamEvent, StreamProblemKind};

/// The reading of one streamed response.
#[derive(Debug)]
pub(super) struct Stream {
    pub(super) calls: Calls,
    turn: u32,
    reason: Option<String>,
    blocked: bool,
    usage: Option<Value>,
    ended: bool,
}

impl Stream {
    pub(super) fn new(options: &NativeOptions) -> Self {
        Stream {
            calls: Calls::new(options.limits),
            turn: options.turn,
            reason: None,
            blocked: false,
            usage: None,
            ended: false,
        }
    }

    pub(super) fn event(&mut self, chunk: &Value, out: &mut Vec<StreamEvent>) {
        if !chunk.is_object() {
            return out.push(problem(StreamProblemKind::MalformedEvent, chunk));
        }
        if present(chunk, "error").is_some() {
            return out.push(problem(StreamProblemKind::ProviderError, chunk));
        }
        if self.ended {
            return out.push(problem(StreamProblemKind::OutOfOrder, chunk));
        }
        if let Some(usage) = present(chunk, "usageMetadata") {
            self.usage = Some(usage.clone());
        }
        self.blocked |= blocked(chunk);
        let Some(candidate) = chunk.pointer("/candidates/0") else {
            return;
        };
        parts(&mut self.calls, self.turn, candidate, out);
        if let Some(reason) = str_at(candidate, "finishReason") {
            self.reason = Some(reason.to_owned());
        }
    }

    /// The end of the bytes.
    pub(super) fn end(&mut self, out: &mut Vec<StreamEvent>) {
        if self.ended {
            return;
        }
        self.ended = true;
        let reason = finish_reason(self.reason.as_deref(), self.blocked, self.calls.len() > 0);
        finished(out, reason, self.usage.as_ref());
    }
}

/// Whether the prompt was blocked.
fn blocked(response: &Value) -> bool {
    response
        .pointer("/promptFeedback/blockReason")
        .is_some_and(|r| !r.is_null())
}

/// The parts of a candidate's content, in order.
fn parts(calls: &mut Calls, turn: u32, candidate: &Value, out: &mut Vec<StreamEvent>) {
    let parts = candidate
        .pointer("/content/parts")
        .and_then(Value::as_array);
    for part in parts.into_iter().flatten() {
        let signed = str_at(part, "thoughtSignature");
        let Some(call) = present(part, "functionCall") else {
            if part.get("thought").and_then(Value::as_bool) == Some(true) {
                reasoning(out, str_at(part, "text"));
            } else {
                text(out, str_at(part, "text"));
            }
            signature(out, signed);
            continue;
        };
        let name = str_at(call, "name").filter(|n| !n.is_empty());
        let id = match str_at(call, "id") {
            Some(id) => id.to_owned(),
            None => format!(
                "{SYNTHETIC_ID_PREFIX}{turn}-{}-{}",
                calls.len(),
                name.unwrap_or_default()
            ),
        };
        if present(call, "partialArgs").is_some() || present(call, "willContinue").is_some() {
            calls.refuse(Some(&id), name, call, CallProblem::MalformedArguments, out);
            continue;
        }
        let empty = Value::Object(Map::new());
        let args = present(call, "args").unwrap_or(&empty);
        calls.whole(Some(&id), name, args, signed, true, out);
    }
}

fn finish_reason(reason: Option<&str>, blocked: bool, has_calls: bool) -> FinishReason {
    match reason {
        None if blocked => FinishReason::ContentFilter,
        None => FinishReason::EndOfStream,
        Some("STOP") if has_calls => FinishReason::ToolCalls,
        Some("STOP") => FinishReason::Stop,
        Some("MAX_TOKENS") => FinishReason::Length,
        Some(
            "SAFETY"
            | "RECITATION"
            | "BLOCKLIST"
            | "PROHIBITED_CONTENT"
            | "SPII"
            | "IMAGE_SAFETY"
            | "IMAGE_PROHIBITED_CONTENT"
            | "IMAGE_RECITATION",
        ) => FinishReason::ContentFilter,
        Some(other) => FinishReason::Other(other.to_owned()),
    }
}

/// The whole `GenerateContentResponse`: `candidates[0]`'s parts in order,
/// its `finishReason`, and `usageMetadata`.
pub(super) fn parse(response: &Value, options: &NativeOptions, out: &mut Vec<StreamEvent>) {
    let mut calls = Calls::new(options.limits);
    let candidate = response.pointer("/candidates/0");
    if let Some(candidate) = candidate {
        parts(&mut calls, options.turn, candidate, out);
    } else if !blocked(response) {
        out.push(problem(StreamProblemKind::MalformedEvent, response));
    }
    let reason = candidate.and_then(|c| str_at(c, "finishReason"));
    let reason = finish_reason(reason, blocked(response), calls.len() > 0);
    finished(out, reason, present(response, "usageMetadata"));
}
