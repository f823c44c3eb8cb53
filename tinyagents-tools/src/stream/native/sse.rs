//! A provider stream's bytes cut into its events: server-sent events
//! (`event:`, `data:`, `id:` and `retry:` fields, `:` comments, an event
//! ending at a blank line, LF or CRLF line ends, `data: [DONE]`), or one
//! event JSON a line, fed in pieces that may end anywhere, inside a line or
//! a UTF-8 sequence.
//!
//! Each byte is looked at once and a line is decoded and parsed once, when
//! it is complete; a line (or an event's data) longer than the bound is
//! reported and skipped without being kept.
//!
//! [`NativeReader`](super::NativeReader) reads its bytes through it; a
//! reader of a stream no [`NativeFormat`](super::NativeFormat) describes
//! (a text-completion endpoint's, say) uses [`SseReader`] directly.

use serde_json::Value;

use crate::stream::{StreamProblem, StreamProblemKind};

/// One event of a stream, as [`SseReader`] hands it on.
#[derive(Debug, Clone, PartialEq)]
pub enum SseFrame {
    /// One event's JSON: the data lines of a server-sent event joined by
    /// `\n`, or one line that is a JSON value by itself.
    Event(Value),
    /// `data: [DONE]`: the provider says the stream is over.
    Done,
    /// An event that could not be read: not JSON, not UTF-8, too long, or
    /// cut off by the end of the stream (the problem keeps the start of its
    /// text). Reading goes on with the next event.
    Lost(StreamProblem),
}

/// Cuts the bytes of a streamed response into its events, fed in pieces
/// that may end anywhere (inside a line, or inside a UTF-8 sequence).
///
/// Server-sent events (`data:` lines joined up to the blank line that ends
/// the event; `event:`, `id:`, `retry:` and `:` comment lines skipped; LF or
/// CRLF line ends) and one event JSON a line are both read.
///
/// ```
/// use serde_json::json;
/// use tinyagents_tools::stream::native::{SseFrame, SseReader};
///
/// // A streamed `/v1/completions` response, cut mid-line and mid-character.
/// let body = "data: {\"choices\":[{\"text\":\"caf\u{e9}\",\"index\":0}]}\n\ndata: [DONE]\n\n";
/// let (head, tail) = body.as_bytes().split_at(31);
/// let mut sse = SseReader::new(1 << 20);
/// let mut frames = Vec::new();
/// sse.push(head, &mut |f| frames.push(f));
/// sse.push(tail, &mut |f| frames.push(f));
/// sse.finish(&mut |f| frames.push(f));
/// assert_eq!(
///     frames,
///     [SseFrame::Event(json!({"choices": [{"text": "café", "index": 0}]})), SseFrame::Done]
/// );
/// ```
#[derive(Debug)]
pub struct SseReader {
    /// The start of a line whose end has not arrived.
    line: Vec<u8>,
    /// Inside a line already refused as too long: skip to its end.
    skipping: bool,
    /// The data lines of the event being read, joined by `\n`.
    data: String,
    /// Whether a data line came since the last event ended.
    pending: bool,
    /// The longest line or event data read.
    max: usize,
}

impl SseReader {
    /// A reader that reads lines, and events' data, of up to `max` bytes;
    /// a longer one is an [`SseFrame::Lost`] with a
    /// [`StreamProblemKind::MalformedEvent`] problem, skipped without being
    /// kept.
    pub fn new(max: usize) -> Self {
        SseReader {
            line: Vec::new(),
            skipping: false,
            data: String::new(),
            pending: false,
            max,
        }
    }

    /// Reads the next piece, handing `sink` every event it completes, in
    /// order.
    pub fn push(&mut self, mut piece: &[u8], sink: &mut impl FnMut(SseFrame)) {
        while !piece.is_empty() {
            let Some(newline) = piece.iter().position(|&b| b == b'\n') else {
                if !self.skipping {
                    if self.line.len() + piece.len() > self.max {
                        self.line
                            .extend_from_slice(&piece[..StreamProblem::MAX_RAW.min(piece.len())]);
                        sink(too_long(&self.line));
                        self.line.clear();
                        self.skipping = true;
                    } else {
                        self.line.extend_from_slice(piece);
                    }
                }
                return;
            };
            let (head, rest) = (&piece[..newline], &piece[newline + 1..]);
            piece = rest;
            if self.skipping {
                self.skipping = false;
            } else if self.line.is_empty() {
                self.read_line(head, false, sink);
            } else {
                let mut line = std::mem::take(&mut self.line);
                line.extend_from_slice(head);
                self.read_line(&line, false, sink);
                line.clear();
                self.line = line;
            }
        }
    }

    /// The stream ended: a last line without its newline, and an event
    /// without its blank line, are read now; what does not parse then is
    /// [`StreamProblemKind::EndedMidEvent`].
    pub fn finish(&mut self, sink: &mut impl FnMut(SseFrame)) {
        let line = std::mem::take(&mut self.line);
        if !self.skipping && !line.is_empty() {
            self.read_line(&line, true, sink);
        }
        self.skipping = false;
        self.dispatch(true, sink);
    }

    /// One complete line (without its `\n`).
    fn read_line(&mut self, bytes: &[u8], at_end: bool, sink: &mut impl FnMut(SseFrame)) {
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        if bytes.len() > self.max {
            return sink(too_long(bytes));
        }
        let line = match std::str::from_utf8(bytes) {
            Ok(line) => line,
            Err(e) => {
                // A sequence cut by the end of the stream is a cut event.
                let kind = if at_end && e.error_len().is_none() {
                    StreamProblemKind::EndedMidEvent
                } else {
                    StreamProblemKind::InvalidUtf8
                };
                return sink(SseFrame::Lost(StreamProblem::new(
                    kind,
                    &String::from_utf8_lossy(bytes),
                )));
            }
        };
        if line.is_empty() {
            return self.dispatch(at_end, sink);
        }
        let bare = line.trim_start();
        if bare.starts_with(['{', '[']) {
            // One event JSON a line.
            self.dispatch(at_end, sink);
            return parse(line, at_end, sink);
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            // A comment (`: keep-alive`).
            "" => {}
            "data" => {
                if self.data.len() + value.len() > self.max {
                    self.data.clear();
                    self.pending = false;
                    return sink(too_long(line.as_bytes()));
                }
                if self.pending {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.pending = true;
                if at_end {
                    self.dispatch(at_end, sink);
                }
            }
            // The event name repeats the data's `type`; ids and retry
            // times are for reconnecting, which a reader does not do.
            "event" | "id" | "retry" => {}
            _ => sink(SseFrame::Lost(StreamProblem::new(
                if at_end {
                    StreamProblemKind::EndedMidEvent
                } else {
                    StreamProblemKind::MalformedEvent
                },
                line,
            ))),
        }
    }

    /// The event whose data lines came is complete.
    fn dispatch(&mut self, at_end: bool, sink: &mut impl FnMut(SseFrame)) {
        if self.pending {
            self.pending = false;
            let data = std::mem::take(&mut self.data);
            parse(&data, at_end, sink);
            self.data = data;
            self.data.clear();
        }
    }
}

/// One event's text: `[DONE]` or JSON.
fn parse(text: &str, at_end: bool, sink: &mut impl FnMut(SseFrame)) {
    if text.trim() == "[DONE]" {
        return sink(SseFrame::Done);
    }
    match serde_json::from_str(text) {
        Ok(value) => sink(SseFrame::Event(value)),
        Err(e) => {
            let kind = if at_end && e.is_eof() {
                StreamProblemKind::EndedMidEvent
            } else {
                StreamProblemKind::MalformedEvent
            };
            sink(SseFrame::Lost(StreamProblem::new(kind, text)));
        }
    }
}

fn too_long(start: &[u8]) -> SseFrame {
    let start = &start[..StreamProblem::MAX_RAW.min(start.len())];
    SseFrame::Lost(StreamProblem::new(
        StreamProblemKind::MalformedEvent,
        &String::from_utf8_lossy(start),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn frames(pieces: &[&[u8]]) -> Vec<String> {
        let mut sse = SseReader::new(64);
        let mut got = Vec::new();
        let mut sink = |frame: SseFrame| {
            got.push(match frame {
                SseFrame::Event(value) => value.to_string(),
                SseFrame::Done => "DONE".to_owned(),
                SseFrame::Lost(p) => format!("{}: {}", p.kind.as_str(), p.raw),
            })
        };
        for piece in pieces {
            sse.push(piece, &mut sink);
        }
        sse.finish(&mut sink);
        got
    }

    #[test]
    fn events_are_the_same_however_the_bytes_are_cut() {
        let text = "event: a\r\ndata: {\"t\":\r\ndata: \"é\"}\r\n\r\n: ping\n\n{\"line\": 1}\ndata: [DONE]\n\n";
        let whole = frames(&[text.as_bytes()]);
        assert_eq!(
            whole,
            [
                json!({"t": "é"}).to_string(),
                json!({"line": 1}).to_string(),
                "DONE".into()
            ]
        );
        for size in 1..text.len() {
            let pieces: Vec<&[u8]> = text.as_bytes().chunks(size).collect();
            assert_eq!(frames(&pieces), whole, "pieces of {size}");
        }
    }

    #[test]
    fn a_line_cut_by_the_end_of_the_stream_is_an_event_that_ended_midway() {
        assert_eq!(frames(&[b"data: {\"a\": 1}"]), [r#"{"a":1}"#]);
        assert_eq!(frames(&[b"data: {\"a\": "]), [r#"ended_mid_event: {"a": "#]);
        assert_eq!(
            frames(&[b"{\"a\": \"\xc3"]),
            ["ended_mid_event: {\"a\": \"\u{fffd}"]
        );
    }

    #[test]
    fn bad_lines_are_lost_and_the_next_ones_still_read() {
        let got = frames(&[
            b"data: nope\n\ndata: \"\xff\"\n\nhello\n",
            &[b'x'; 70],
            b"\n{}\n",
        ]);
        assert_eq!(
            got,
            [
                "malformed_event: nope".to_owned(),
                "invalid_utf8: data: \"\u{fffd}\"".to_owned(),
                "malformed_event: hello".to_owned(),
                format!("malformed_event: {}", "x".repeat(70)),
                "{}".to_owned(),
            ]
        );
    }
}
