//! Reading raw JSON bytes without parsing them: whitespace, the end of a
//! string or of a value, an object's members, and how deep the text nests.

use super::*;

pub(super) fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\r' | b'\n') {
        i += 1;
    }
    i
}

/// `b[i]` opens a string: the index just past its closing quote.
fn string_end(b: &[u8], mut i: usize) -> Option<usize> {
    i += 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// The index just past the value starting at `b[i]`, found without
/// recursion (a container is skipped by counting brackets outside strings;
/// its inside is checked later by whoever parses it).
pub(super) fn value_end(b: &[u8], i: usize) -> Option<usize> {
    value_end_within(b, i, usize::MAX)
}

/// [`value_end`] for a value nested at most `max` levels deep (the value
/// itself, when a container, is the first): `None` past that, as for a
/// value that does not end.
pub(super) fn value_end_within(b: &[u8], i: usize, max: usize) -> Option<usize> {
    match *b.get(i)? {
        b'"' => string_end(b, i),
        b'{' | b'[' => {
            let (mut depth, mut j) = (0usize, i);
            while j < b.len() {
                match b[j] {
                    b'"' => {
                        j = string_end(b, j)?;
                        continue;
                    }
                    b'{' | b'[' => {
                        depth += 1;
                        if depth > max {
                            return None;
                        }
                    }
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            None
        }
        _ => {
            let end = (i..b.len())
                .find(|&j| matches!(b[j], b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n'))
                .unwrap_or(b.len());
            (end > i).then_some(end)
        }
    }
}

/// The members of the object starting at `b[i]` (keys decoded, values as
/// byte ranges) and the index just past it.
pub(super) fn members(b: &[u8], i: usize) -> Option<(Vec<Member<'_>>, usize)> {
    let mut out = Vec::with_capacity(8);
    let end = object(b, i, |key, start| {
        let end = value_end(b, start)?;
        out.push((string_of(&b[key])?, start..end));
        Some(end)
    })?;
    Some((out, end))
}

/// Walks the object at `b[i]`: `visit` gets each member's key (where its
/// string is, quotes included) and where its value starts, and gives where
/// the value ends, or `None` to stop the walk. The index just past the
/// object; `None` when it is not one, or the walk stopped.
pub(super) fn object(
    b: &[u8],
    i: usize,
    mut visit: impl FnMut(Range, usize) -> Option<usize>,
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
        let key = j..key_end;
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

/// True when the text nests arrays and objects deeper than `max` (brackets
/// inside strings do not count), found in one pass. The text need not be
/// valid JSON; a parser judges it afterwards.
pub(super) fn depth_over(text: &[u8], max: usize) -> bool {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &b in text {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}
