//! Anthropic Messages: the `message_start` ... `message_stop` events and
//! the `message` they add up to.
//!
//! `content_block_start` opens block `index`: `text`, `thinking` (its text
//! in `thinking_delta`s, its `signature` in a `signature_delta` before the
//! block stops), `redacted_thinking` (whole: its `data` is the signature of
//! a reasoning block with no text), or `tool_use` (`id`, `name`, and the
//! `input` used when no argument text comes; the text in
//! `input_json_delta.partial_json` fragments). `content_block_stop` closes
//! a block; `message_delta` carries `stop_reason` and the usage so far,
//! which overwrites the usage of `message_start` key by key, as the SDK
//! merges them; `message_stop` ends the message; `ping` says nothing;
//! `error` is the provider's error. Blocks of server tools
//! (`server_tool_use`, their results) are not calls of this output and are
//! not read.

use serde_json::{Map, Value};

use super::calls::{Args, Calls};
use super::{NativeOptions, finished, present, problem, reasoning, signature, str_at, text};
use crate::stream::{FinishReason, StreamEvent, StreamProblemKind};

/// The reading of one streamed message.
#[derive(Debug)]
pub(super) struct Stream {
    pub(super) calls: Calls,
    /// The blocks by index.
    blocks: Vec<(u64, Block)>,
    usage: Option<Map<String, Value>>,
    stop_reason: Option<String>,
    /// Calls whose block stopped with their arguments still open: judged
    /// once the stop reason says whether the message was cut.
    waiting: Vec<usize>,
    started: bool,
    ended: bool,
}

#[derive(Debug)]
struct Block {
    kind: Kind,
    stopped: bool,
}

#[derive(Debug)]
enum Kind {
    Text,
    Thinking {
        signed: bool,
    },
    Redacted,
    Call(usize),
    /// A block this reader does not read (a server tool's).
    Other,
}

impl Stream {
    pub(super) fn new(options: &NativeOptions) -> Self {
        Stream {
            calls: Calls::new(options.limits),
            blocks: Vec::new(),
            usage: None,
            stop_reason: None,
            waiting: Vec::new(),
            started: false,
            ended: false,
        }
    }

    pub(super) fn event(&mut self, event: &Value, out: &mut Vec<StreamEvent>) {
        let kind = str_at(event, "type").unwrap_or_default();
        if kind == "error" {
            return out.push(problem(StreamProblemKind::ProviderError, event));
        }
        if self.ended && kind != "ping" {
            return out.push(problem(StreamProblemKind::OutOfOrder, event));
        }
        match kind {
            "message_start" => {
                if self.started {
                    return out.push(problem(StreamProblemKind::OutOfOrder, event));
                }
                self.started = true;
                let usage = event.pointer("/message/usage").and_then(Value::as_object);
                self.usage = usage.cloned();
            }
            "content_block_start" => self.block_start(event, out),
            "content_block_delta" => self.block_delta(event, out),
            "content_block_stop" => self.block_stop(event, out),
            "message_delta" => {
                if let Some(reason) = event.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(reason.to_owned());
                    let cut = is_cut(reason);
                    for pos in std::mem::take(&mut self.waiting) {
                        self.calls.end(pos, cut, out);
                    }
                }
                if let Some(usage) = event.get("usage").and_then(Value::as_object) {
                    let merged = self.usage.get_or_insert_with(Map::new);
                    for (key, value) in usage.iter().filter(|(_, v)| !v.is_null()) {
                        merged.insert(key.clone(), value.clone());
                    }
                }
            }
            "message_stop" => self.end(out),
            "ping" => {}
            _ => out.push(problem(StreamProblemKind::MalformedEvent, event)),
        }
    }

    fn block_start(&mut self, event: &Value, out: &mut Vec<StreamEvent>) {
        let (Some(index), Some(block)) = (
            event.get("index").and_then(Value::as_u64),
            present(event, "content_block"),
        ) else {
            return out.push(problem(StreamProblemKind::MalformedEvent, event));
        };
        if self.blocks.iter().any(|(i, _)| *i == index) {
            return out.push(problem(StreamProblemKind::OutOfOrder, event));
        }
        let kind = match str_at(block, "type").unwrap_or_default() {
            "text" => {
                text(out, str_at(block, "text"));
                Kind::Text
            }
            "thinking" => {
                reasoning(out, str_at(block, "thinking"));
                let signed = str_at(block, "signature").is_some_and(|s| !s.is_empty());
                signature(out, str_at(block, "signature"));
                Kind::Thinking { signed }
            }
            "redacted_thinking" => {
                signature(out, str_at(block, "data"));
                Kind::Redacted
            }
            "tool_use" => {
                let pos =
                    self.calls
                        .open(Args::Json, str_at(block, "id"), str_at(block, "name"), out);
                if let Some(input) = present(block, "input") {
                    self.calls.set_fallback(pos, input.clone());
                }
                Kind::Call(pos)
            }
            _ => Kind::Other,
        };
        self.blocks.push((
            index,
            Block {
                kind,
                stopped: false,
            },
        ));
    }

    fn block_delta(&mut self, event: &Value, out: &mut Vec<StreamEvent>) {
        let index = event.get("index").and_then(Value::as_u64);
        let Some(block) = self.block(index) else {
            return out.push(problem(StreamProblemKind::UnknownIndex, event));
        };
        if block.stopped {
            return out.push(problem(StreamProblemKind::OutOfOrder, event));
        }
        let delta = event.get("delta").unwrap_or(&Value::Null);
        match (&mut block.kind, str_at(delta, "type").unwrap_or_default()) {
            (Kind::Text, "text_delta") => text(out, str_at(delta, "text")),
            (Kind::Thinking { signed: false }, "thinking_delta") => {
                reasoning(out, str_at(delta, "thinking"))
            }
            (Kind::Thinking { signed }, "signature_delta") if !*signed => {
                *signed = str_at(delta, "signature").is_some_and(|s| !s.is_empty());
                signature(out, str_at(delta, "signature"));
            }
            (Kind::Call(pos), "input_json_delta") => {
                let pos = *pos;
                if let Some(fragment) = str_at(delta, "partial_json") {
                    self.calls.fragment(pos, fragment, out);
                }
            }
            // Citations ride on text the deltas already gave.
            (Kind::Text, "citations_delta") | (Kind::Other, _) => {}
            (Kind::Thinking { signed: true }, "thinking_delta" | "signature_delta") => {
                out.push(problem(StreamProblemKind::OutOfOrder, event))
            }
            _ => out.push(problem(StreamProblemKind::MalformedEvent, event)),
        }
    }

    fn block_stop(&mut self, event: &Value, out: &mut Vec<StreamEvent>) {
        let index = event.get("index").and_then(Value::as_u64);
        let Some(block) = self.block(index) else {
            return out.push(problem(StreamProblemKind::UnknownIndex, event));
        };
        if block.stopped {
            return out.push(problem(StreamProblemKind::OutOfOrder, event));
        }
        block.stopped = true;
        if let Kind::Call(pos) = block.kind {
            if self.calls.decided(pos) {
                self.calls.end(pos, false, out);
            } else {
                self.waiting.push(pos);
            }
        }
    }

    fn block(&mut self, index: Option<u64>) -> Option<&mut Block> {
        let index = index?;
        self.blocks
            .iter_mut()
            .find(|(i, _)| *i == index)
            .map(|(_, block)| block)
    }

    /// `message_stop`, or the end of the bytes.
    pub(super) fn end(&mut self, out: &mut Vec<StreamEvent>) {
        if self.ended {
            return;
        }
        self.ended = true;
        // A call still open when the message ends was cut, whatever the
        // stop reason.
        let cut_waiting = self.stop_reason.as_deref().is_none_or(is_cut);
        for pos in std::mem::take(&mut self.waiting) {
            self.calls.end(pos, cut_waiting, out);
        }
        self.calls.end_all(true, out);
        let usage = self.usage.take().map(Value::Object);
        finished(
            out,
            finish_reason(self.stop_reason.as_deref()),
            usage.as_ref(),
        );
    }
}

/// Whether a stop reason means the message was cut off.
fn is_cut(reason: &str) -> bool {
    matches!(reason, "max_tokens" | "model_context_window_exceeded")
}

fn finish_reason(reason: Option<&str>) -> FinishReason {
    match reason {
        None => FinishReason::EndOfStream,
        Some("end_turn" | "stop_sequence") => FinishReason::Stop,
        Some("tool_use") => FinishReason::ToolCalls,
        Some(reason) if is_cut(reason) => FinishReason::Length,
        Some("refusal") => FinishReason::ContentFilter,
        Some(other) => FinishReason::Other(other.to_owned()),
    }
}

/// The whole `message`: its `content` blocks in order (`text`, `thinking`
/// with its `signature`, `redacted_thinking`, `tool_use` with its `input`),
/// `stop_reason` and `usage`. A plain string `content` is its text.
pub(super) fn parse(message: &Value, options: &NativeOptions, out: &mut Vec<StreamEvent>) {
    let mut calls = Calls::new(options.limits);
    match message.get("content") {
        Some(Value::String(content)) => text(out, Some(content)),
        Some(Value::Array(blocks)) => {
            for block in blocks {
                match str_at(block, "type").unwrap_or_default() {
                    "text" => text(out, str_at(block, "text")),
                    "thinking" => {
                        reasoning(out, str_at(block, "thinking"));
                        signature(out, str_at(block, "signature"));
                    }
                    "redacted_thinking" => signature(out, str_at(block, "data")),
                    "tool_use" => {
                        let input = block.get("input").unwrap_or(&Value::Null);
                        calls.whole(
                            str_at(block, "id"),
                            str_at(block, "name"),
                            input,
                            None,
                            false,
                            out,
                        );
                    }
                    _ => {}
                }
            }
        }
        _ => out.push(problem(StreamProblemKind::MalformedEvent, message)),
    }
    let reason = str_at(message, "stop_reason");
    finished(out, finish_reason(reason), present(message, "usage"));
}
