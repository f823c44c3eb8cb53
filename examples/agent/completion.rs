//! [`CompletionReader`]: a streamed `/v1/completions` response read as the
//! text of a [`TextFormat`](tinyagents_tools::stream::text::TextFormat).
//!
//! The body is server-sent events of `text_completion` objects (OpenAI's
//! legacy Completions API, as vLLM, SGLang and llama.cpp serve it): each
//! `choices[0].text` is the next piece of the model's raw output, the last
//! chunk's `finish_reason` says why it stopped, and `data: [DONE]` ends the
//! stream. The pieces of text go to a [`TextReader`], which reads the calls
//! out of them; the events it yields are the text reader's, with the
//! finish reason the server gave.

use serde_json::Value;
use tinyagents_tools::stream::native::{SseFrame, SseReader};
use tinyagents_tools::stream::text::TextReader;
use tinyagents_tools::stream::{
    FinishReason, OutputReader, StreamEvent, StreamProblem, StreamProblemKind,
};

/// The longest event (one SSE event's data) read: a completion chunk holds a
/// few tokens.
const MAX_EVENT_BYTES: usize = 1 << 20;

/// Reads a streamed Completions response: the SSE framing, then the text
/// of each chunk through a [`TextReader`].
#[derive(Debug)]
pub struct CompletionReader {
    sse: SseReader,
    text: TextReader,
    /// Everything the model wrote, as it arrived.
    raw: String,
    /// The server's `finish_reason`, once a chunk gave one.
    reason: Option<FinishReason>,
    /// The text reader has been finished.
    done: bool,
}

impl CompletionReader {
    /// A reader that hands each chunk's text to `text`.
    pub fn new(text: TextReader) -> Self {
        CompletionReader {
            sse: SseReader::new(MAX_EVENT_BYTES),
            text,
            raw: String::new(),
            reason: None,
            done: false,
        }
    }

    /// Everything the model wrote so far, as the server sent it.
    pub fn raw(&self) -> &str {
        &self.raw
    }

    fn frame(&mut self, frame: SseFrame, out: &mut Vec<StreamEvent>) {
        match frame {
            SseFrame::Event(event) => self.event(&event, out),
            SseFrame::Done => self.end(out),
            SseFrame::Lost(problem) => out.push(StreamEvent::Problem(problem)),
        }
    }

    fn event(&mut self, event: &Value, out: &mut Vec<StreamEvent>) {
        if self.done {
            return out.push(problem(StreamProblemKind::OutOfOrder, event));
        }
        if event.get("error").is_some() {
            return out.push(problem(StreamProblemKind::ProviderError, event));
        }
        let Some(choice) = event.pointer("/choices/0") else {
            // A chunk without choices (a usage chunk) carries no text.
            if event.get("choices").is_some() || event.get("usage").is_some() {
                return;
            }
            return out.push(problem(StreamProblemKind::MalformedEvent, event));
        };
        match choice.get("text") {
            Some(Value::String(text)) => {
                self.raw.push_str(text);
                self.text.push(text.as_bytes(), out);
            }
            None | Some(Value::Null) => {}
            Some(_) => out.push(problem(StreamProblemKind::MalformedEvent, event)),
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.reason = Some(match reason {
                "stop" => FinishReason::Stop,
                "length" => FinishReason::Length,
                "content_filter" => FinishReason::ContentFilter,
                other => FinishReason::Other(other.to_owned()),
            });
        }
    }

    /// Finishes the text reader, giving its `Finished` event the server's
    /// reason: `length` always (the output was cut), any other reason when
    /// the reader could not tell one itself.
    fn end(&mut self, out: &mut Vec<StreamEvent>) {
        if self.done {
            return;
        }
        self.done = true;
        let start = out.len();
        self.text.finish(out);
        let Some(reason) = self.reason.clone() else {
            return;
        };
        for event in &mut out[start..] {
            if let StreamEvent::Finished(finish) = event
                && (reason == FinishReason::Length || finish.reason == FinishReason::EndOfStream)
            {
                finish.reason = reason.clone();
            }
        }
    }
}

impl OutputReader for CompletionReader {
    fn push(&mut self, piece: &[u8], out: &mut Vec<StreamEvent>) {
        let mut frames = Vec::new();
        self.sse.push(piece, &mut |frame| frames.push(frame));
        for frame in frames {
            self.frame(frame, out);
        }
    }

    fn finish(&mut self, out: &mut Vec<StreamEvent>) {
        let mut frames = Vec::new();
        self.sse.finish(&mut |frame| frames.push(frame));
        for frame in frames {
            self.frame(frame, out);
        }
        self.end(out);
    }
}

/// A reader lent to [`execute_streamed`](tinyagents_tools::stream::execute_streamed),
/// so that its [`raw`](CompletionReader::raw) text can be read after the
/// turn.
impl OutputReader for &mut CompletionReader {
    fn push(&mut self, piece: &[u8], out: &mut Vec<StreamEvent>) {
        (**self).push(piece, out);
    }

    fn finish(&mut self, out: &mut Vec<StreamEvent>) {
        (**self).finish(out);
    }
}

/// A problem keeping the event's JSON text (bounded).
fn problem(kind: StreamProblemKind, event: &Value) -> StreamEvent {
    StreamEvent::Problem(StreamProblem::new(kind, &event.to_string()))
}
