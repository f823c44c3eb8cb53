//! The common `tools/call`, read in one pass: a request with exactly the
//! members `"jsonrpc": "2.0"`, `id` (a string or a number), `"method":
//! "tools/call"` and `params`, whose params are a string `name` and, if
//! any, an `arguments` object (or null), each key once and written without
//! escapes. Its rewrite is written straight from that reading, without the
//! general path's member-by-member checks (every member is one it knows).
//! Anything else (another method, `_meta`, another member, a repeated key,
//! arguments nested deeper than rmcp reads or that are not JSON) is left to
//! the screen's general path, which judges it and says which error it is.

use std::ops::Range;

use serde::de::IgnoredAny;

use super::scan::{object, value_end_within};
use super::{ARGUMENTS_KEY, MAX_MESSAGE_DEPTH, is_id, put_key, string_of};

/// Where the parts of a plain `tools/call` are in the message.
pub(super) struct PlainCall<'a> {
    /// The id's text.
    id: Range<usize>,
    /// The name's text (a JSON string, quotes included).
    name: Range<usize>,
    /// The arguments object's text (JSON, shallow enough); none when the
    /// call has no arguments or they are null.
    pub(super) arguments: Option<&'a str>,
}

impl PlainCall<'_> {
    /// The call without its arguments: `{"jsonrpc", "id", "method",
    /// "params": {"name"}}`.
    #[cfg(feature = "http")]
    pub(super) fn without_arguments(&self, b: &[u8]) -> Vec<u8> {
        self.rewrite(b, false).unwrap_or_default()
    }

    /// The call rewritten, its arguments left out; with `text_in_meta`,
    /// their text goes under [`ARGUMENTS_KEY`] in a new `_meta` (as the
    /// general path writes it). `None` only when that text cannot be
    /// written.
    fn rewrite(&self, b: &[u8], text_in_meta: bool) -> Option<Vec<u8>> {
        let text = self.arguments.filter(|_| text_in_meta);
        // The text grows by its escapes; a few bytes each is the common case.
        let extra = 64 + text.map_or(0, |t| ARGUMENTS_KEY.len() + t.len() + t.len() / 2);
        let mut out = Vec::with_capacity(self.id.len() + self.name.len() + extra);
        out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
        out.extend_from_slice(&b[self.id.clone()]);
        out.extend_from_slice(br#","method":"tools/call","params":{"#);
        if text_in_meta {
            out.extend_from_slice(br#""_meta":{"#);
            if let Some(text) = text {
                put_key(&mut out, ARGUMENTS_KEY);
                serde_json::to_writer(&mut out, text).ok()?;
            }
            out.extend_from_slice(b"},");
        }
        out.extend_from_slice(br#""name":"#);
        out.extend_from_slice(&b[self.name.clone()]);
        out.extend_from_slice(b"}}");
        Some(out)
    }
}

/// The rewrite of a plain `tools/call`, as the general path writes it (the
/// arguments' text under [`ARGUMENTS_KEY`] in a new `_meta`); `None` for
/// any other message.
pub(super) fn plain_call(b: &[u8]) -> Option<Vec<u8>> {
    read(b)?.rewrite(b, true)
}

/// Reads `b` as a plain `tools/call`; `None` for any other message. Every
/// value is skipped in one pass that also bounds its nesting (at
/// [`MAX_MESSAGE_DEPTH`]), so the arguments are then read once more only to
/// check that they are JSON.
pub(super) fn read(b: &[u8]) -> Option<PlainCall<'_>> {
    let (mut id, mut method, mut jsonrpc) = (None, false, false);
    let mut params = None;
    let end = object(b, 0, |key, start| {
        let key = plain_key(b, key)?;
        if key == b"params" && params.is_none() {
            let (end, name, arguments) = read_params(b, start)?;
            params = Some((name, arguments));
            return Some(end);
        }
        let end = value_end_within(b, start, MAX_MESSAGE_DEPTH)?;
        let value = &b[start..end];
        match key {
            b"jsonrpc" if !jsonrpc && value == br#""2.0""# => jsonrpc = true,
            b"id" if id.is_none() && is_id(value) => id = Some(start..end),
            b"method" if !method && value == br#""tools/call""# => method = true,
            _ => return None,
        }
        Some(end)
    })?;
    let (Some(id), Some((name, arguments)), true, true) = (id, params, jsonrpc, method) else {
        return None;
    };
    if end != b.len() {
        return None;
    }
    let arguments = match arguments {
        Some(range) => {
            let text = std::str::from_utf8(&b[range]).ok()?;
            serde_json::from_str::<IgnoredAny>(text).ok()?;
            Some(text)
        }
        None => None,
    };
    Some(PlainCall {
        id,
        name,
        arguments,
    })
}

/// Reads a plain call's params at `b[i]`: the index just past them, where
/// its name is, and where its arguments object is (none: no arguments, or
/// null).
fn read_params(b: &[u8], i: usize) -> Option<(usize, Range<usize>, Option<Range<usize>>)> {
    let (mut name, mut arguments) = (None, None);
    let end = object(b, i, |key, start| {
        let key = plain_key(b, key)?;
        let end = value_end_within(b, start, MAX_MESSAGE_DEPTH)?;
        let value = &b[start..end];
        match key {
            b"name" if name.is_none() && string_of(value).is_some() => name = Some(start..end),
            b"arguments" if arguments.is_none() && value[0] == b'{' => {
                arguments = Some(Some(start..end));
            }
            b"arguments" if arguments.is_none() && value == b"null" => arguments = Some(None),
            _ => return None,
        }
        Some(end)
    })?;
    Some((end, name?, arguments.flatten()))
}

/// The key at `range` (quotes included) when it is written without escapes.
fn plain_key(b: &[u8], range: Range<usize>) -> Option<&[u8]> {
    let key = &b[range.start + 1..range.end - 1];
    (!key.contains(&b'\\')).then_some(key)
}
