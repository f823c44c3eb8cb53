//! The common `tools/call`, read in one pass: a request with exactly the
//! members `"jsonrpc": "2.0"`, `id` (a string or a number), `"method":
//! "tools/call"` and `params`, whose params are a string `name` and, if
//! any, an `arguments` object (or null), each key once and written without
//! escapes. rmcp reads such a message as sent, so over HTTP it goes on
//! unchanged with its argument text beside it ([`ArgumentsTo::Beside`]).
//! Anything else (another method, `_meta`, another member, a repeated key,
//! arguments nested deeper than rmcp reads) is left to the screen's general
//! path, which judges it member by member.

use std::ops::Range;

use serde::de::IgnoredAny;

use super::scan::{skip_ws, string_end, value_end};
use super::{MAX_MESSAGE_DEPTH, Screened, depth_over, is_id, string_of};

/// The screen's answer for a plain `tools/call`; `None` for any other
/// message, and for one whose arguments are not JSON (the general path
/// says which error).
pub(super) fn plain_call(b: &[u8]) -> Option<Screened> {
    let mut seen = [false; 4];
    let mut arguments = None;
    let end = object(b, 0, |key, start| {
        let (member, end) = if key == b"params" {
            let (end, inside) = params(b, start)?;
            arguments = inside;
            (3, end)
        } else {
            let end = value_end(b, start)?;
            let value = &b[start..end];
            let member = match key {
                b"jsonrpc" if value == br#""2.0""# => 0,
                b"id" if is_id(value) => 1,
                b"method" if value == br#""tools/call""# => 2,
                _ => return None,
            };
            (member, end)
        };
        (!std::mem::replace(&mut seen[member], true)).then_some(end)
    })?;
    if end != b.len() || seen.contains(&false) {
        return None;
    }
    let text = match arguments {
        Some(range) => {
            let raw = &b[range];
            if depth_over(raw, MAX_MESSAGE_DEPTH)
                || serde_json::from_slice::<IgnoredAny>(raw).is_err()
            {
                return None;
            }
            Some(std::str::from_utf8(raw).ok()?.to_owned())
        }
        None => None,
    };
    Some(Screened::AsSent(text))
}

/// Reads a plain call's params at `b[i]`: the index just past them, and
/// where its arguments object is (none: no arguments, or null).
fn params(b: &[u8], i: usize) -> Option<(usize, Option<Range<usize>>)> {
    let (mut name, mut arguments) = (false, None);
    let end = object(b, i, |key, start| {
        let end = value_end(b, start)?;
        let value = &b[start..end];
        match key {
            b"name" if !name && string_of(value).is_some() => name = true,
            b"arguments" if arguments.is_none() && value[0] == b'{' => {
                arguments = Some(Some(start..end));
            }
            b"arguments" if arguments.is_none() && value == b"null" => arguments = Some(None),
            _ => return None,
        }
        Some(end)
    })?;
    name.then_some((end, arguments.flatten()))
}

/// Walks the object at `b[i]`: `visit` gets each member's key (written
/// without escapes, else the walk fails) and where its value starts, and
/// gives where the value ends, or `None` to stop the walk. The index just
/// past the object.
fn object(
    b: &[u8],
    i: usize,
    mut visit: impl FnMut(&[u8], usize) -> Option<usize>,
) -> Option<usize> {
    if b.get(i) != Some(&b'{') {
        return None;
    }
    let mut j = skip_ws(b, i + 1);
    if b.get(j) == Some(&b'}') {
        return Some(j + 1);
    }
    loop {
        if b.get(j) != Some(&b'"') {
            return None;
        }
        let key_end = string_end(b, j)?;
        let key = &b[j + 1..key_end - 1];
        if key.contains(&b'\\') {
            return None;
        }
        j = skip_ws(b, key_end);
        if b.get(j) != Some(&b':') {
            return None;
        }
        let end = visit(key, skip_ws(b, j + 1))?;
        j = skip_ws(b, end);
        match b.get(j) {
            Some(b',') => j = skip_ws(b, j + 1),
            Some(b'}') => return Some(j + 1),
            _ => return None,
        }
    }
}
