//! OpenAI Responses: the `response.*` events and the `response` object they
//! add up to.
//!
//! Every event names its output item by `output_index`.
//! `response.output_item.added` opens an item: a `message` (its text in
//! `response.output_text.delta` and `response.refusal.delta`), a
//! `reasoning` item (its summary in `response.reasoning_summary_text.delta`,
//! its text in `response.reasoning_text.delta`, and its `encrypted_content`,
//! the signature, on the item when it is done), or a `function_call`
//! (`call_id` is the call's id, `name`; its argument text in
//! `response.function_call_arguments.delta`). `response.output_item.done`
//! (and `response.function_call_arguments.done`) carry the item whole: what
//! its deltas did not give is read from there, so a server that sends only
//! whole items loses nothing, and an item the deltas already gave is not
//! read twice. `response.completed`, `response.incomplete` (its
//! `incomplete_details.reason`) and `response.failed` (its `error`) end the
//! response, with its `usage`; items of the final response that no event
//! announced are read from it. `error` is the provider's error. An event
//! whose `sequence_number` is not above the last one's is a repeat, and is
//! reported and skipped. Other items (built-in tools' calls) are not calls
//! of this output and are not read.

use serde_json::Value;

use super::calls::{Args, Calls};
use super::{NativeOptions, finished, present, problem, reasoning, signature, str_at, text};
use crate::stream::{FinishReason, StreamEvent, StreamProblemKind};

/// The reading of one streamed response.
#[derive(Debug)]
pub(super) struct Stream {
    pub(super) calls: Calls,
    /// The items by `output_index`.
    items: Vec<(u64, Item)>,
    sequence: Option<u64>,
    /// Calls whose item is done with their arguments still open: judged
    /// once the response says whether it was cut.
    waiting: Vec<usize>,
    ended: bool,
}

#[derive(Debug)]
struct Item {
    kind: Kind,
    /// Whether a delta gave any of its text.
    streamed: bool,
    done: bool,
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    Message,
    Reasoning,
    Call(usize),
    Other,
}

impl Stream {
    pub(super) fn new(options: &NativeOptions) -> Self {
        Stream {
            calls: Calls::new(options.limits),
            items: Vec::new(),
            sequence: None,
            waiting: Vec::new(),
            ended: false,
        }
    }

    pub(super) fn event(&mut self, event: &Value, out: &mut Vec<StreamEvent>) {
        let kind = str_at(event, "type").unwrap_or_default();
        if let Some(n) = event.get("sequence_number").and_then(Value::as_u64) {
            if self.sequence.is_some_and(|last| n <= last) {
                return out.push(problem(StreamProblemKind::OutOfOrder, event));
            }
            self.sequence = Some(n);
        }
        if kind == "error" {
            return out.push(problem(StreamProblemKind::ProviderError, event));
        }
        if self.ended {
            return out.push(problem(StreamProblemKind::OutOfOrder, event));
        }
        match kind {
            "response.output_item.added" => {
                let (Some(index), Some(item)) = (index(event), present(event, "item")) else {
                    return out.push(problem(StreamProblemKind::MalformedEvent, event));
                };
                if self.item(index).is_some() {
                    return out.push(problem(StreamProblemKind::OutOfOrder, event));
                }
                self.add(index, item, out);
            }
            "response.output_text.delta" | "response.refusal.delta" => {
                self.delta(event, out, |kind| matches!(kind, Kind::Message), text);
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                self.delta(
                    event,
                    out,
                    |kind| matches!(kind, Kind::Reasoning),
                    reasoning,
                );
            }
            "response.function_call_arguments.delta" => {
                let Some(pos) = self.open_call(event, out) else {
                    return;
                };
                if let Some(fragment) = str_at(event, "delta") {
                    self.calls.fragment(pos, fragment, out);
                }
            }
            "response.function_call_arguments.done" => {
                let Some(pos) = self.open_call(event, out) else {
                    return;
                };
                if let Some(whole) = str_at(event, "arguments") {
                    self.calls.complete(pos, whole, out);
                }
            }
            "response.output_item.done" => {
                let (Some(index), Some(item)) = (index(event), present(event, "item")) else {
                    return out.push(problem(StreamProblemKind::MalformedEvent, event));
                };
                if self.item(index).is_none() {
                    self.add(index, item, out);
                }
                self.done(index, item, event, out);
            }
            "response.completed" | "response.incomplete" | "response.failed" => {
                let response = event.get("response").unwrap_or(&Value::Null);
                for (index, item) in output(response) {
                    if self.item(index).is_none() {
                        self.add(index, item, out);
                        self.done(index, item, event, out);
                    }
                }
                self.finish(response, out);
            }
            _ => {}
        }
    }

    /// Opens the item at `index`, reading what the added item already
    /// holds.
    fn add(&mut self, index: u64, item: &Value, out: &mut Vec<StreamEvent>) {
        let kind = match str_at(item, "type").unwrap_or_default() {
            "message" => Kind::Message,
            "reasoning" => Kind::Reasoning,
            "function_call" => {
                let pos = self.calls.open(
                    Args::Text,
                    str_at(item, "call_id"),
                    str_at(item, "name"),
                    out,
                );
                item_arguments(&mut self.calls, pos, item, out);
                Kind::Call(pos)
            }
            _ => Kind::Other,
        };
        self.items.push((
            index,
            Item {
                kind,
                streamed: false,
                done: false,
            },
        ));
    }

    /// The item at `index` is done: what its deltas did not give is read
    /// from the whole item.
    fn done(&mut self, index: u64, item: &Value, event: &Value, out: &mut Vec<StreamEvent>) {
        let Some(known) = self.item(index) else {
            return;
        };
        if known.done {
            return out.push(problem(StreamProblemKind::OutOfOrder, event));
        }
        known.done = true;
        let (kind, streamed) = (known.kind, known.streamed);
        match kind {
            Kind::Message if !streamed => message_text(item, out),
            Kind::Reasoning => {
                if !streamed {
                    reasoning_text(item, out);
                }
                signature(out, str_at(item, "encrypted_content"));
            }
            Kind::Call(pos) => {
                match present(item, "arguments") {
                    Some(Value::String(whole)) => self.calls.complete(pos, whole, out),
                    // Arguments sent as an object (see `item_arguments`),
                    // unless the deltas or the added item gave them.
                    Some(value) if !self.calls.received_any(pos) => {
                        self.calls.value(pos, value, out)
                    }
                    _ => {}
                }
                if str_at(item, "status") == Some("incomplete") {
                    self.calls.end(pos, true, out);
                } else if self.calls.decided(pos) {
                    self.calls.end(pos, false, out);
                } else {
                    self.waiting.push(pos);
                }
            }
            Kind::Message | Kind::Other => {}
        }
    }

    /// A text or reasoning delta for an item of the kind `fits`.
    fn delta(
        &mut self,
        event: &Value,
        out: &mut Vec<StreamEvent>,
        fits: impl Fn(Kind) -> bool,
        emit: fn(&mut Vec<StreamEvent>, Option<&str>),
    ) {
        let Some(item) = index(event).and_then(|i| self.item(i)) else {
            return out.push(problem(StreamProblemKind::UnknownIndex, event));
        };
        if item.done {
            return out.push(problem(StreamProblemKind::OutOfOrder, event));
        }
        if !fits(item.kind) {
            return out.push(problem(StreamProblemKind::MalformedEvent, event));
        }
        item.streamed = true;
        emit(out, str_at(event, "delta"));
    }

    /// The call of the event's item, while it is open.
    fn open_call(&mut self, event: &Value, out: &mut Vec<StreamEvent>) -> Option<usize> {
        let Some(item) = index(event).and_then(|i| self.item(i)) else {
            out.push(problem(StreamProblemKind::UnknownIndex, event));
            return None;
        };
        match item.kind {
            _ if item.done => out.push(problem(StreamProblemKind::OutOfOrder, event)),
            Kind::Call(pos) => return Some(pos),
            _ => out.push(problem(StreamProblemKind::MalformedEvent, event)),
        }
        None
    }

    fn item(&mut self, index: u64) -> Option<&mut Item> {
        self.items
            .iter_mut()
            .find(|(i, _)| *i == index)
            .map(|(_, item)| item)
    }

    /// The response ended as `response` says.
    fn finish(&mut self, response: &Value, out: &mut Vec<StreamEvent>) {
        self.ended = true;
        let (reason, cut) = finish_reason(response, self.calls.len() > 0);
        if let Some(error) = present(response, "error") {
            out.push(problem(StreamProblemKind::ProviderError, error));
        }
        for pos in std::mem::take(&mut self.waiting) {
            self.calls.end(pos, cut, out);
        }
        self.calls.end_all(true, out);
        finished(out, reason, present(response, "usage"));
    }

    /// The end of the bytes.
    pub(super) fn end(&mut self, out: &mut Vec<StreamEvent>) {
        if self.ended {
            return;
        }
        self.ended = true;
        for pos in std::mem::take(&mut self.waiting) {
            self.calls.end(pos, true, out);
        }
        self.calls.end_all(true, out);
        finished(out, FinishReason::EndOfStream, None);
    }
}

/// The event's `output_index`.
fn index(event: &Value) -> Option<u64> {
    event.get("output_index").and_then(Value::as_u64)
}

/// The items of a response's `output`, with their indexes.
fn output(response: &Value) -> impl Iterator<Item = (u64, &Value)> {
    response
        .get("output")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(i, item)| (i as u64, item))
}

/// A message item's text: its `output_text` and `refusal` parts.
fn message_text(item: &Value, out: &mut Vec<StreamEvent>) {
    for part in item
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        match str_at(part, "type") {
            Some("output_text") => text(out, str_at(part, "text")),
            Some("refusal") => text(out, str_at(part, "refusal")),
            _ => {}
        }
    }
}

/// A reasoning item's text: its summary, then its content.
fn reasoning_text(item: &Value, out: &mut Vec<StreamEvent>) {
    for key in ["summary", "content"] {
        for part in item
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            reasoning(out, str_at(part, "text"));
        }
    }
}

/// How a response ended, and whether it was cut off: `completed` is a stop
/// (for calls, when it has any), `incomplete` its `incomplete_details`
/// reason, `failed` a cut.
fn finish_reason(response: &Value, has_calls: bool) -> (FinishReason, bool) {
    match str_at(response, "status") {
        Some("completed") if has_calls => (FinishReason::ToolCalls, false),
        Some("completed") => (FinishReason::Stop, false),
        Some("incomplete") => {
            let reason = response
                .pointer("/incomplete_details/reason")
                .and_then(Value::as_str);
            let reason = match reason {
                Some("max_output_tokens") => FinishReason::Length,
                Some("content_filter") => FinishReason::ContentFilter,
                Some(other) => FinishReason::Other(other.to_owned()),
                None => FinishReason::Other("incomplete".to_owned()),
            };
            (reason, true)
        }
        Some("failed") => (FinishReason::Other("failed".to_owned()), true),
        _ => (FinishReason::EndOfStream, true),
    }
}

/// The whole `response` object: its `output` items in order, its status
/// and `usage`.
pub(super) fn parse(response: &Value, options: &NativeOptions, out: &mut Vec<StreamEvent>) {
    let mut calls = Calls::new(options.limits);
    if !response.get("output").is_some_and(Value::is_array) {
        out.push(problem(StreamProblemKind::MalformedEvent, response));
    }
    let mut incomplete = Vec::new();
    for (_, item) in output(response) {
        match str_at(item, "type").unwrap_or_default() {
            "message" => message_text(item, out),
            "reasoning" => {
                reasoning_text(item, out);
                signature(out, str_at(item, "encrypted_content"));
            }
            "function_call" => {
                let pos = calls.open(
                    Args::Text,
                    str_at(item, "call_id"),
                    str_at(item, "name"),
                    out,
                );
                item_arguments(&mut calls, pos, item, out);
                if str_at(item, "status") == Some("incomplete") {
                    calls.end(pos, true, out);
                } else if calls.decided(pos) {
                    calls.end(pos, false, out);
                } else {
                    incomplete.push(pos);
                }
            }
            _ => {}
        }
    }
    let (reason, cut) = finish_reason(response, calls.len() > 0);
    if let Some(error) = present(response, "error") {
        out.push(problem(StreamProblemKind::ProviderError, error));
    }
    for pos in incomplete {
        calls.end(pos, cut, out);
    }
    calls.end_all(true, out);
    finished(out, reason, present(response, "usage"));
}

/// A `function_call` item's `arguments`: their text, or an object (some
/// compatible servers write them so, and [`parse_responses_function_calls`]
/// reads it), which is the call's arguments as it is.
///
/// [`parse_responses_function_calls`]: crate::providers::openai::parse_responses_function_calls
fn item_arguments(calls: &mut Calls, pos: usize, item: &Value, out: &mut Vec<StreamEvent>) {
    match present(item, "arguments") {
        Some(Value::String(text)) => calls.fragment(pos, text, out),
        Some(value) => calls.value(pos, value, out),
        None => {}
    }
}
