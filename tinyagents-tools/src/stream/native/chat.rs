//! OpenAI Chat Completions: `chat.completion.chunk` events and the
//! `chat.completion` object they add up to.
//!
//! A chunk's `choices[0].delta` carries reasoning (`reasoning_content`, as
//! DeepSeek and vLLM send it, or `reasoning`), visible text (`content`, and
//! `refusal`), and `tool_calls` fragments keyed by `index`: the first with
//! the call's `id`, `type` and `function.name`, the others with pieces of
//! `function.arguments`. `finish_reason` ends the choice (and its calls); a
//! last chunk with empty `choices` carries `usage` (with
//! `stream_options.include_usage`); `data: [DONE]` ends the stream. A chunk
//! with an `error` object is the provider's error. Choices other than the
//! first (`n` > 1) are not read, as the whole parse reads `choices[0]`.
//!
//! Servers that repeat a call's `id` in every fragment, that send a call
//! whole in one fragment, or that give a second call the `index` of the
//! first with a new `id`, are read as meant: a fragment with a new `id` is a
//! new call.

use serde_json::Value;

use super::calls::{Args, Calls};
use super::{NativeOptions, finished, present, problem, reasoning, str_at, text};
use crate::stream::{FinishReason, StreamEvent, StreamProblemKind};

/// The reading of one streamed Chat Completion.
#[derive(Debug)]
pub(super) struct Stream {
    pub(super) calls: Calls,
    /// The provider's `index` of each call, and its position.
    by_index: Vec<(u64, usize)>,
    /// The `finish_reason`, once it came.
    reason: Option<String>,
    usage: Option<Value>,
    /// `[DONE]` came, or the bytes ended.
    ended: bool,
}

impl Stream {
    pub(super) fn new(options: &NativeOptions) -> Self {
        Stream {
            calls: Calls::new(options.limits),
            by_index: Vec::new(),
            reason: None,
            usage: None,
            ended: false,
        }
    }

    pub(super) fn event(&mut self, event: &Value, out: &mut Vec<StreamEvent>) {
        if !event.is_object() {
            return out.push(problem(StreamProblemKind::MalformedEvent, event));
        }
        if present(event, "error").is_some() {
            return out.push(problem(StreamProblemKind::ProviderError, event));
        }
        if self.ended {
            return out.push(problem(StreamProblemKind::OutOfOrder, event));
        }
        let usage = present(event, "usage");
        if let Some(usage) = usage {
            self.usage = Some(usage.clone());
        }
        let Some(choices) = event.get("choices").and_then(Value::as_array) else {
            if usage.is_none() {
                out.push(problem(StreamProblemKind::MalformedEvent, event));
            }
            return;
        };
        for choice in choices {
            if choice.get("index").and_then(Value::as_u64).unwrap_or(0) == 0 {
                self.choice(choice, out);
            }
        }
    }

    fn choice(&mut self, choice: &Value, out: &mut Vec<StreamEvent>) {
        if let Some(delta) = present(choice, "delta") {
            if self.reason.is_some() && writes(delta) {
                out.push(problem(StreamProblemKind::OutOfOrder, choice));
            } else {
                reasoning(out, reasoning_text(delta));
                text(out, str_at(delta, "refusal"));
                text(out, str_at(delta, "content"));
                for fragment in delta
                    .get("tool_calls")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    self.fragment(fragment, out);
                }
            }
        }
        if let Some(reason) = str_at(choice, "finish_reason") {
            if self.reason.is_some() {
                return out.push(problem(StreamProblemKind::OutOfOrder, choice));
            }
            self.calls.end_all(reason == "length", out);
            self.reason = Some(reason.to_owned());
        }
    }

    /// One `tool_calls` fragment.
    fn fragment(&mut self, fragment: &Value, out: &mut Vec<StreamEvent>) {
        let index = fragment.get("index").and_then(Value::as_u64);
        let id = str_at(fragment, "id").filter(|id| !id.is_empty());
        let function = fragment.get("function");
        let name = function
            .and_then(|f| str_at(f, "name"))
            .filter(|n| !n.is_empty());
        let known = match index {
            Some(index) => self
                .by_index
                .iter()
                .rev()
                .find(|(i, _)| *i == index)
                .map(|&(_, pos)| pos),
            None => self.calls.len().checked_sub(1),
        };
        let pos = match known {
            // A new id on a known index is a new call.
            Some(pos)
                if id.is_none_or(|id| {
                    self.calls.id(pos).is_none_or(|known| known.as_str() == id)
                }) =>
            {
                self.calls.identify(pos, id, name, out);
                pos
            }
            _ if id.is_none() && name.is_none() => {
                return out.push(problem(StreamProblemKind::UnknownIndex, fragment));
            }
            _ => {
                let pos = self.calls.open(Args::Text, id, name, out);
                self.by_index.push((index.unwrap_or(pos as u64), pos));
                pos
            }
        };
        match function.and_then(|f| present(f, "arguments")) {
            Some(Value::String(text)) => self.calls.fragment(pos, text, out),
            // Some compatible servers send the arguments as an object.
            Some(value) => self.calls.value(pos, value, out),
            None => {}
        }
    }

    /// `[DONE]`, or the end of the bytes.
    pub(super) fn end(&mut self, out: &mut Vec<StreamEvent>) {
        if self.ended {
            return;
        }
        self.ended = true;
        self.calls.end_all(true, out);
        finished(
            out,
            finish_reason(self.reason.as_deref()),
            self.usage.as_ref(),
        );
    }
}

/// Whether a delta writes anything (text, reasoning or a call).
fn writes(delta: &Value) -> bool {
    let non_empty = |key| str_at(delta, key).is_some_and(|s| !s.is_empty());
    non_empty("content")
        || non_empty("refusal")
        || reasoning_text(delta).is_some_and(|s| !s.is_empty())
        || delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .is_some_and(|calls| !calls.is_empty())
}

/// The reasoning of a delta or a message: `reasoning_content` (DeepSeek,
/// vLLM), else `reasoning`.
fn reasoning_text(message: &Value) -> Option<&str> {
    str_at(message, "reasoning_content").or_else(|| str_at(message, "reasoning"))
}

fn finish_reason(reason: Option<&str>) -> FinishReason {
    match reason {
        None => FinishReason::EndOfStream,
        Some("stop") => FinishReason::Stop,
        Some("tool_calls") => FinishReason::ToolCalls,
        Some("length") => FinishReason::Length,
        Some("content_filter") => FinishReason::ContentFilter,
        Some(other) => FinishReason::Other(other.to_owned()),
    }
}

/// The whole `chat.completion` object: `choices[0].message` (reasoning,
/// refusal, content, then `tool_calls`), its `finish_reason`, and `usage`.
pub(super) fn parse(response: &Value, options: &NativeOptions, out: &mut Vec<StreamEvent>) {
    let mut calls = Calls::new(options.limits);
    let choice = response.pointer("/choices/0");
    let Some(message) = choice.and_then(|c| present(c, "message")) else {
        out.push(problem(StreamProblemKind::MalformedEvent, response));
        return finished(out, FinishReason::EndOfStream, present(response, "usage"));
    };
    reasoning(out, reasoning_text(message));
    text(out, str_at(message, "refusal"));
    text(out, str_at(message, "content"));
    for call in message
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let id = str_at(call, "id");
        let function = call.get("function");
        let is_function = str_at(call, "type").is_none_or(|t| t == "function");
        let name = function
            .and_then(|f| str_at(f, "name"))
            .filter(|_| is_function);
        match function.and_then(|f| present(f, "arguments")) {
            // Some compatible servers send the arguments as an object.
            Some(value) if !value.is_string() => {
                calls.whole(id, name, value, None, false, out);
            }
            arguments => {
                let pos = calls.open(Args::Text, id, name, out);
                if let Some(text) = arguments.and_then(Value::as_str) {
                    calls.fragment(pos, text, out);
                }
            }
        }
    }
    let reason = choice.and_then(|c| str_at(c, "finish_reason"));
    calls.end_all(reason.is_none_or(|r| r == "length"), out);
    finished(out, finish_reason(reason), present(response, "usage"));
}
