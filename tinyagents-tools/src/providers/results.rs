//! What every result formatter sends to a model or an MCP client, read
//! from the canonical [`ToolMessage`]: its content (bounded by the
//! executor, with the artifact reference when the output was stored), and
//! the structured value beside it only when it is small.
//!
//! A structured value is sent as data (Gemini's `response.output`, MCP's
//! `structuredContent`) only when its compact JSON is at most
//! [`MAX_STRUCTURED_BYTES`] (or the limit given to a `_bounded` formatter);
//! a larger one is left out, and the model reads the content instead: the
//! preview and the artifact reference the executor made for it. The
//! message itself keeps the whole value
//! ([`ToolMessage::structured`](crate::ToolMessage::structured)) for the
//! application.
//!
//! A message with no content blocks (one built by hand) has its structured
//! value sent as text, cut at the same limit with a note saying how much
//! was shown.

use std::io;

use serde_json::Value;

use crate::output::ToolMessage;

/// The largest structured value, in bytes of compact JSON, that a result
/// formatter sends beside the content: 16 KiB, the executor's default
/// artifact threshold (above it, with an artifact store, the model sees a
/// preview and the artifact's key).
pub const MAX_STRUCTURED_BYTES: usize = 16 << 10;

/// The structured value when its compact JSON fits in `max` bytes.
pub(crate) fn structured_within(message: &ToolMessage, max: usize) -> Option<&Value> {
    message
        .structured
        .as_ref()
        .filter(|value| json_len_within(value, max))
}

/// The text a text-only provider gets for a message: the content blocks,
/// or, when there are none, the structured value as JSON cut at `max` bytes.
pub(crate) fn result_text(message: &ToolMessage, max: usize) -> String {
    if message.content.is_empty()
        && let Some(value) = &message.structured
    {
        return bounded_json(value, max);
    }
    message.text()
}

/// `value` as compact JSON, cut at a character boundary at `max` bytes with
/// a note when it is longer. Never writes more than `max` bytes of it.
pub(crate) fn bounded_json(value: &Value, max: usize) -> String {
    let mut out = Capped {
        bytes: Vec::new(),
        max,
        total: 0,
    };
    let _ = serde_json::to_writer(&mut out, value);
    let total = out.total;
    let mut text = String::from_utf8(out.bytes).unwrap_or_else(|e| {
        let valid = e.utf8_error().valid_up_to();
        let mut bytes = e.into_bytes();
        bytes.truncate(valid);
        String::from_utf8(bytes).unwrap_or_default()
    });
    if total > max {
        let shown = text.len();
        text.push_str(&format!(
            "\n[output truncated: showing {shown} of more than {max} bytes]"
        ));
    }
    text
}

/// True when `value`'s compact JSON is at most `max` bytes (it stops
/// writing once past the limit).
fn json_len_within(value: &Value, max: usize) -> bool {
    let mut counter = Counter { left: max };
    serde_json::to_writer(&mut counter, value).is_ok()
}

/// True when `text` is exactly `value`'s compact JSON, checked as it is
/// written: no text is made.
pub(crate) fn json_text_is(value: &Value, text: &str) -> bool {
    let mut rest = Matcher {
        rest: text.as_bytes(),
    };
    serde_json::to_writer(&mut rest, value).is_ok() && rest.rest.is_empty()
}

/// Consumes the expected text as matching bytes are written; stops the
/// writer at the first difference.
struct Matcher<'t> {
    rest: &'t [u8],
}

impl io::Write for Matcher<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.rest.strip_prefix(buf) {
            Some(rest) => {
                self.rest = rest;
                Ok(buf.len())
            }
            None => Err(io::Error::other("not the same text")),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

struct Counter {
    left: usize,
}

impl io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.left = self
            .left
            .checked_sub(buf.len())
            .ok_or_else(|| io::Error::other("over the limit"))?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Keeps the first `max` bytes written and stops the writer just after.
struct Capped {
    bytes: Vec<u8>,
    max: usize,
    total: usize,
}

impl io::Write for Capped {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.total += buf.len();
        let room = self.max.saturating_sub(self.bytes.len());
        self.bytes.extend_from_slice(&buf[..buf.len().min(room)]);
        if self.total > self.max {
            return Err(io::Error::other("over the limit"));
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_text_is_a_values_json_only_when_it_is_all_of_it_and_nothing_more() {
        let value = json!({"a": "x\u{1}y", "b": [1, 2.5, null]});
        let text = value.to_string();
        assert!(json_text_is(&value, &text));
        assert!(!json_text_is(&value, &text[..text.len() - 1]));
        assert!(!json_text_is(&value, &format!("{text} ")));
        assert!(!json_text_is(&value, &text.replace("2.5", "2.6")));
        assert!(!json_text_is(&value, ""));
        assert!(json_text_is(&json!(null), "null"));
    }

    #[test]
    fn a_value_at_the_limit_fits_and_one_byte_more_does_not() {
        let value = json!({"a": "xyz"});
        let len = value.to_string().len();
        assert!(json_len_within(&value, len));
        assert!(!json_len_within(&value, len - 1));
    }

    #[test]
    fn bounded_json_cuts_on_a_character_and_says_so() {
        let value = json!({"text": "é".repeat(100)});
        let text = bounded_json(&value, 20);
        let (shown, note) = text.split_once('\n').unwrap();
        assert!(shown.len() <= 20 && value.to_string().starts_with(shown));
        assert!(note.contains("output truncated"), "{note}");
        assert_eq!(bounded_json(&json!({"a": 1}), 20), r#"{"a":1}"#);
    }
}
