//! A call written as one JSON object (`{"name": "f", "arguments": {..}}`,
//! [`CallBody::JsonObject`](super::CallBody::JsonObject)), read two ways
//! that agree: whole, once the object closed ([`read_json_call`]), and
//! member by member as it streams ([`MemberWalk`]), so a call can be shown
//! started, and its arguments as they are written, before it closes.
//!
//! Both read the object's top-level members the same way: a key counts by
//! its unescaped text, the first member of a key is the one that counts,
//! and a value is its exact text, from its first byte to its last.

use std::mem;

use crate::ids::{CallName, ToolCallId};
use crate::stream::json_scan::{JsonScanner, Scan};
use crate::stream::text::format::CallBody;

/// The keys a JSON-object call is read by.
#[derive(Debug, Clone, Copy)]
pub(super) struct CallKeys<'a> {
    /// The tool name's key.
    pub(super) name: &'a str,
    /// The keys the arguments may be under, the preferred first.
    pub(super) arguments: &'a [String],
    /// The call id's key, when the format has one.
    pub(super) id: Option<&'a str>,
}

impl<'a> CallKeys<'a> {
    /// The keys of a JSON-object call body; `None` for other bodies.
    #[inline]
    pub(super) fn of(body: &'a CallBody) -> Option<Self> {
        match body {
            CallBody::JsonObject {
                name_key,
                argument_keys,
                id_key,
            } => Some(CallKeys {
                name: name_key,
                arguments: argument_keys,
                id: id_key.as_deref(),
            }),
            _ => None,
        }
    }
}

/// What a JSON-object call body reads as.
pub(super) enum JsonCall<'a> {
    Call {
        name: CallName,
        arguments: Option<&'a str>,
        id: Option<&'a str>,
    },
    /// Valid JSON, but not an object with a string name.
    NotACall,
    Invalid,
}

/// Reads a JSON-object call: its name, the exact text of its arguments
/// member and its id, found by walking the object's top-level members.
/// A call without an arguments member has none (`{}`), unless another
/// member holds an object: that is arguments under a key the format does
/// not know, and the call is invalid rather than run without them.
pub(super) fn read_json_call<'a>(text: &'a str, keys: CallKeys<'_>) -> JsonCall<'a> {
    if serde_json::from_str::<serde::de::IgnoredAny>(text).is_err() {
        return JsonCall::Invalid;
    }
    let Some(members) = top_level_members(text) else {
        return JsonCall::NotACall;
    };
    let member = |key: &str| members.iter().find(|(k, _)| k == key).map(|(_, v)| *v);
    let Some(Ok(name)) = member(keys.name).map(serde_json::from_str::<String>) else {
        return JsonCall::NotACall;
    };
    let arguments = keys.arguments.iter().find_map(|k| member(k));
    if arguments.is_none()
        && members
            .iter()
            .any(|(k, v)| k != keys.name && Some(k.as_str()) != keys.id && v.starts_with('{'))
    {
        // An object under a key that is not the arguments' (`args`,
        // `input`, a misspelling): read as no arguments, the call would
        // run on `{}`, its real arguments silently dropped.
        return JsonCall::Invalid;
    }
    let id = keys.id.and_then(member).and_then(id_text);
    JsonCall::Call {
        name: CallName::from(name),
        arguments,
        id,
    }
}

/// How much of a JSON-object call's text is known to be valid JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Checked {
    /// Nothing: the text is parsed to know.
    Nothing,
    /// Its arguments member's array or object (checked as it was read):
    /// the rest of the object is parsed to know.
    Arguments,
    /// All of it.
    Whole,
}

/// Reads the JSON-object call at `start..end` of `text`, which `walk` has
/// read to its end: what [`read_json_call`] reads, taken from the walk when
/// it found the name and the preferred arguments member (the text is then
/// checked once as JSON, not walked again; what `checked` says is valid
/// is not checked again).
pub(super) fn read_walked_call<'a>(
    text: &'a str,
    start: usize,
    end: usize,
    walk: &'a MemberWalk,
    keys: CallKeys<'_>,
    checked: Checked,
) -> JsonCall<'a> {
    let whole = &text[start..end];
    let (Step::Done, Some(name), Some((from, Some(to)))) = (
        &walk.step,
        walk.name.as_ref().and_then(Option::as_ref),
        walk.arguments,
    ) else {
        return read_json_call(whole, keys);
    };
    let valid = match checked {
        Checked::Whole => true,
        Checked::Arguments => valid_around(whole, from - start, to - start),
        Checked::Nothing => serde_json::from_str::<serde::de::IgnoredAny>(whole).is_ok(),
    };
    if !valid {
        return JsonCall::Invalid;
    }
    JsonCall::Call {
        name: name.clone(),
        arguments: Some(&text[from..to]),
        id: walk.id().flatten(),
    }
}

/// Whether `text` is valid JSON, its array or object at `from..to` known
/// to be valid: it is parsed with an empty one of the same kind in its
/// place. JSON's grammar has no context (serde_json reads a value the
/// same at any depth), and an empty array or object ends as the one it
/// stands for does, so the text is valid exactly when the one with the
/// stand-in is.
fn valid_around(text: &str, from: usize, to: usize) -> bool {
    let empty = if text.as_bytes()[from] == b'{' {
        "{}"
    } else {
        "[]"
    };
    let mut around = String::with_capacity(text.len() - (to - from) + empty.len());
    around.push_str(&text[..from]);
    around.push_str(empty);
    around.push_str(&text[to..]);
    serde_json::from_str::<serde::de::IgnoredAny>(&around).is_ok()
}

/// A JSON string value's text, unescaped: borrowed when it holds no
/// escape (nor a control character, which JSON refuses in a string).
/// `None` when the value is not a string.
fn string_value(value: &str) -> Option<std::borrow::Cow<'_, str>> {
    let plain = value.strip_prefix('"').and_then(|v| v.strip_suffix('"'));
    match plain {
        Some(plain) if !plain.bytes().any(|b| b == b'\\' || b == b'"' || b < 0x20) => {
            Some(std::borrow::Cow::Borrowed(plain))
        }
        _ => serde_json::from_str::<String>(value)
            .ok()
            .map(std::borrow::Cow::Owned),
    }
}

/// Just after the JSON string that begins at `at` of `b`, when it holds no
/// escape nor control character: such a string is valid JSON as it is
/// (the text is UTF-8), read without a parser. `None` for anything else,
/// which serde_json then reads.
fn plain_string_end(b: &[u8], at: usize) -> Option<usize> {
    if b.get(at) != Some(&b'"') {
        return None;
    }
    let close = at + 1 + memchr::memchr2(b'"', b'\\', &b[at + 1..])?;
    (b[close] == b'"' && !b[at + 1..close].iter().any(|&c| c < 0x20)).then_some(close + 1)
}

/// An id member's value as the call's id: a string without escapes, its
/// text between the quotes. Any other value gives no id.
fn id_text(value: &str) -> Option<&str> {
    value
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .filter(|v| !v.contains('\\'))
}

/// The top-level members of a valid JSON object: each key (unescaped) and
/// its value's exact text. `None` when the text is not an object.
fn top_level_members(text: &str) -> Option<Vec<(String, &str)>> {
    let b = text.as_bytes();
    let skip = |mut i: usize| {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        i
    };
    let mut i = skip(0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i = skip(i + 1);
    let mut members = Vec::new();
    if b.get(i) == Some(&b'}') {
        return Some(members);
    }
    loop {
        let mut scan = JsonScanner::new(usize::MAX, usize::MAX);
        let Scan::Complete { end } = scan.push(&text[i..]) else {
            return None;
        };
        let key: String = serde_json::from_str(&text[i..i + end]).ok()?;
        i = skip(i + end);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = skip(i + 1);
        let mut scan = JsonScanner::new(usize::MAX, usize::MAX);
        let end = match scan.push(&text[i..]) {
            Scan::Complete { end } => i + end,
            _ => match scan.finish() {
                Scan::Complete { .. } => text.len(),
                _ => return None,
            },
        };
        members.push((key, &text[i..end]));
        i = skip(end);
        match b.get(i) {
            Some(b',') => i = skip(i + 1),
            Some(b'}') => return Some(members),
            _ => return None,
        }
    }
}

/// A JSON-object call read member by member as its text arrives: the name
/// once the first name member's string closed, the id once the first id
/// member's value did, and where the first member under the preferred
/// arguments key begins and how far it has been read.
///
/// Only the preferred key is followed: the whole read takes it over any
/// other wherever it appears, so text read under it is the call's
/// arguments, while text under a less preferred key may still lose to a
/// preferred member further on. Text that is not a JSON object stops the
/// walk (the whole read then finds it invalid); nothing it learned before
/// is taken back.
#[derive(Debug, Clone)]
pub(super) struct MemberWalk {
    /// Where the object begins, then the next byte to read (offsets into
    /// the text the walk is given).
    at: usize,
    step: Step,
    /// Just after the object's `}`, once it closed.
    end: Option<usize>,
    /// The keys met so far, by role: a member counts only as the first of
    /// its key.
    seen_name: bool,
    seen_id: bool,
    seen_arguments: bool,
    /// The first name member's value, once it ended: the name when it is a
    /// string.
    name: Option<Option<CallName>>,
    /// The first id member's value, once it ended: the id it gives.
    id: Option<Option<ToolCallId>>,
    /// The first member under the preferred arguments key: where its value
    /// begins and, once it ended, where it ends.
    arguments: Option<(usize, Option<usize>)>,
    /// How far the arguments text has been handed out.
    sent: usize,
}

#[derive(Debug, Clone)]
enum Step {
    /// Before the `{`.
    Open,
    /// After the `{`: a key or the `}`.
    FirstKey,
    /// After a `,`: a key.
    Key,
    InKey {
        from: usize,
        scan: JsonScanner,
    },
    Colon {
        role: Role,
    },
    Value {
        role: Role,
    },
    InValue {
        role: Role,
        from: usize,
        scan: JsonScanner,
    },
    /// After a value: a `,` or the `}`.
    After,
    /// The object closed.
    Done,
    /// The text is not a JSON object.
    Lost,
}

/// What a member is to the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Name,
    Id,
    Arguments,
    Other,
}

impl MemberWalk {
    /// A walk of the object that begins at `from`.
    pub(super) fn new(from: usize) -> MemberWalk {
        MemberWalk {
            at: from,
            step: Step::Open,
            end: None,
            seen_name: false,
            seen_id: false,
            seen_arguments: false,
            name: None,
            id: None,
            arguments: None,
            sent: 0,
        }
    }

    /// The walk of the whole JSON object that begins at `from` of `text`,
    /// read in one pass where [`walk`](Self::walk) would scan each member
    /// value and a parser then check the whole: each value's end is found,
    /// and its text checked, by serde_json, and the members between them
    /// are read here to JSON's grammar (its four whitespace bytes, keys
    /// without escapes). The walk it gives is the one [`walk`](Self::walk)
    /// gives reading the object to its end, and the object is valid JSON.
    ///
    /// `None` unless the object is all in the text, valid JSON with plain
    /// keys, at most `max_bytes` long, and no member value nests deeper
    /// than `max_depth` (at most 100, well inside serde_json's own bound):
    /// the caller then reads it the streaming way, which decides every
    /// other case.
    pub(super) fn whole(
        text: &str,
        from: usize,
        keys: CallKeys<'_>,
        max_depth: usize,
        max_bytes: usize,
    ) -> Option<MemberWalk> {
        let b = text.as_bytes();
        let ws = |mut i: usize| {
            while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
                i += 1;
            }
            i
        };
        if b.get(from) != Some(&b'{') {
            return None;
        }
        let max_depth = max_depth.min(100);
        let mut walk = MemberWalk::new(from);
        let mut i = ws(from + 1);
        if b.get(i) != Some(&b'}') {
            loop {
                if b.get(i) != Some(&b'"') {
                    return None;
                }
                let close = i + 1 + memchr::memchr2(b'"', b'\\', &b[i + 1..])?;
                let key = &text[i + 1..close];
                if b[close] != b'"' || key.bytes().any(|c| c < 0x20) {
                    return None;
                }
                let role = walk.role(key, keys);
                i = ws(close + 1);
                if b.get(i) != Some(&b':') {
                    return None;
                }
                let value = ws(i + 1);
                walk.at = match plain_string_end(b, value) {
                    Some(end) => end,
                    None => {
                        let mut values = serde_json::Deserializer::from_str(&text[value..])
                            .into_iter::<serde::de::IgnoredAny>();
                        values.next()?.ok()?;
                        value + values.byte_offset()
                    }
                };
                // Only an array or object nests, no deeper than it is long
                // nor than it has brackets (strings' included); past both,
                // its depth is scanned.
                let text_of_value = &text[value..walk.at];
                if matches!(b[value], b'[' | b'{')
                    && text_of_value.len() > max_depth
                    && memchr::memchr2_iter(b'[', b'{', text_of_value.as_bytes())
                        .nth(max_depth)
                        .is_some()
                    && !matches!(
                        JsonScanner::new(usize::MAX, max_depth).push(text_of_value),
                        Scan::Complete { .. }
                    )
                {
                    return None;
                }
                if role == Role::Arguments {
                    walk.sent = value;
                }
                walk.value_ended(role, value, text);
                i = ws(walk.at);
                match b.get(i) {
                    Some(b',') => i = ws(i + 1),
                    Some(b'}') => break,
                    _ => return None,
                }
            }
        }
        let end = i + 1;
        if end - from > max_bytes {
            return None;
        }
        walk.at = end;
        walk.end = Some(end);
        walk.step = Step::Done;
        Some(walk)
    }

    /// Reads `text` on to `to` (cut back to a character boundary).
    pub(super) fn walk(&mut self, text: &str, to: usize, keys: CallKeys<'_>) {
        let to = text.floor_char_boundary(to.min(text.len()));
        let b = text.as_bytes();
        while self.at < to {
            let byte = b[self.at];
            let step = mem::replace(&mut self.step, Step::Lost);
            self.step = match step {
                Step::InKey { from, mut scan } => match scan.push(&text[self.at..to]) {
                    Scan::Complete { end } => {
                        self.at += end;
                        // A key without escapes or control characters is
                        // its text between the quotes.
                        let quoted = &text[from..self.at];
                        let plain = &quoted[1..quoted.len() - 1];
                        if !plain.bytes().any(|b| b == b'\\' || b < 0x20) {
                            Step::Colon {
                                role: self.role(plain, keys),
                            }
                        } else {
                            match serde_json::from_str::<String>(quoted) {
                                Ok(key) => Step::Colon {
                                    role: self.role(&key, keys),
                                },
                                Err(_) => Step::Lost,
                            }
                        }
                    }
                    Scan::Incomplete => {
                        self.at = to;
                        Step::InKey { from, scan }
                    }
                    Scan::TooLarge | Scan::TooDeep => Step::Lost,
                },
                Step::InValue {
                    role,
                    from,
                    mut scan,
                } => match scan.push(&text[self.at..to]) {
                    Scan::Complete { end } => {
                        self.at += end;
                        self.value_ended(role, from, text);
                        Step::After
                    }
                    Scan::Incomplete => {
                        self.at = to;
                        Step::InValue { role, from, scan }
                    }
                    Scan::TooLarge | Scan::TooDeep => Step::Lost,
                },
                step if byte.is_ascii_whitespace() && !matches!(step, Step::Done | Step::Lost) => {
                    self.at += 1;
                    step
                }
                Step::Open if byte == b'{' => {
                    self.at += 1;
                    Step::FirstKey
                }
                Step::FirstKey | Step::Key if byte == b'"' => Step::InKey {
                    from: self.at,
                    scan: JsonScanner::new(usize::MAX, usize::MAX),
                },
                Step::FirstKey | Step::After if byte == b'}' => {
                    self.at += 1;
                    self.end = Some(self.at);
                    Step::Done
                }
                Step::Colon { role } if byte == b':' => {
                    self.at += 1;
                    Step::Value { role }
                }
                Step::Value { role } => {
                    if role == Role::Arguments {
                        self.arguments = Some((self.at, None));
                        self.sent = self.at;
                    }
                    Step::InValue {
                        role,
                        from: self.at,
                        scan: JsonScanner::new(usize::MAX, usize::MAX),
                    }
                }
                Step::After if byte == b',' => {
                    self.at += 1;
                    Step::Key
                }
                Step::Done | Step::Lost => {
                    self.at = to;
                    step
                }
                _ => {
                    self.at = to;
                    Step::Lost
                }
            };
        }
    }

    /// Whether the walk is at `at` inside a key or a value's string, so
    /// that what continues the string is read by
    /// [`skip_in_string`](Self::skip_in_string): `Some(sends)`, `sends`
    /// saying that the string is in the arguments member and all of it
    /// before `at` has been handed out.
    pub(super) fn in_string_at(&self, at: usize) -> Option<bool> {
        let (Step::InKey { scan, .. } | Step::InValue { scan, .. }) = &self.step else {
            return None;
        };
        if self.at != at || scan.string_escape().is_none() {
            return None;
        }
        Some(matches!(self.arguments, Some((_, None))) && self.sent == at)
    }

    /// Whether the walk is at `at` inside the array or object of the
    /// arguments member, all of its text before `at` handed out:
    /// `Some((depth, string))`, `depth` 1 directly inside it, `string`
    /// whether the walk is in one of its strings there (`Some(escaped)`,
    /// as [`JsonScanner::string_escape`]). Every byte from there on is
    /// the scanner's alone until the value closes: [`walk`](Self::walk)
    /// reads them at once.
    pub(super) fn in_arguments_at(&self, at: usize) -> Option<(usize, Option<bool>)> {
        let Step::InValue {
            role: Role::Arguments,
            scan,
            ..
        } = &self.step
        else {
            return None;
        };
        if self.at != at || self.sent != at || scan.depth() == 0 {
            return None;
        }
        Some((scan.depth(), scan.string_escape()))
    }

    /// Reads `n` bytes inside the arguments' array or object (see
    /// [`in_arguments_at`](Self::in_arguments_at)), all handed out, after
    /// which the walk is `depth` deep in it and in a string of it when
    /// `string` is `Some(escaped)`: the state [`walk`](Self::walk) of
    /// them would leave. Gives the depth the walk was at before them.
    pub(super) fn skip_in_arguments(
        &mut self,
        n: usize,
        depth: usize,
        string: Option<bool>,
    ) -> Option<usize> {
        let Step::InValue {
            role: Role::Arguments,
            scan,
            ..
        } = &mut self.step
        else {
            return None;
        };
        let before = scan.depth();
        scan.skip_nested(n, depth, string);
        self.at += n;
        self.sent = self.at;
        Some(before)
    }

    /// Reads `n` bytes that continue the string the walk is in (see
    /// [`in_string_at`](Self::in_string_at) and
    /// [`JsonScanner::skip_in_string`]), the last leaving it `escaped` or
    /// not; `sent`: they were handed out as arguments text.
    pub(super) fn skip_in_string(&mut self, n: usize, escaped: bool, sent: bool) {
        if let Step::InKey { scan, .. } | Step::InValue { scan, .. } = &mut self.step {
            scan.skip_in_string(n, escaped);
            self.at += n;
            if sent {
                self.sent = self.at;
            }
        }
    }

    /// Reads the byte at `at` of `text` (the walk is there) as
    /// [`walk`](Self::walk) would, when it is one the walk follows without
    /// a parser and it does not end the object: whitespace between tokens,
    /// the colon after a key, the comma after a member, the quote that
    /// opens a key or closes one without escapes, a member value's first
    /// byte, a byte that ends a value (its closing quote or bracket, or
    /// what follows a number or literal but the object's `}`) or any byte
    /// inside a key or value. `None`, changing nothing, for any other byte.
    /// `sending`: the arguments text read so far has been handed out (the
    /// call started); a byte of the arguments member then counts as handed
    /// out, and the answer, `Some(sends)`, says whether it was one. `keys`
    /// are asked for only when a key ends.
    #[inline(always)]
    pub(super) fn step<'k>(
        &mut self,
        text: &str,
        at: usize,
        keys: impl FnOnce() -> CallKeys<'k>,
        sending: bool,
    ) -> Option<bool> {
        let open = matches!(self.arguments, Some((_, None)));
        if self.at != at || (sending && open && self.sent != at) {
            return None;
        }
        let byte = *text.as_bytes().get(at)?;
        if let Step::InKey { scan, .. } | Step::InValue { scan, .. } = &mut self.step
            && scan.step_within(byte)
        {
            // Inside a key or value: only the arguments member may be open.
            self.at = at + 1;
            let sends = sending && open;
            if sends {
                self.sent = self.at;
            }
            return Some(sends);
        }
        self.step_between(text, at, byte, keys, sending)
    }

    /// [`step`](Self::step) of a byte that is not inside a key or value.
    #[inline(never)]
    fn step_between<'k>(
        &mut self,
        text: &str,
        at: usize,
        byte: u8,
        keys: impl FnOnce() -> CallKeys<'k>,
        sending: bool,
    ) -> Option<bool> {
        // The arguments member ended with this byte, which is part of it.
        let mut closed = false;
        let next = match &mut self.step {
            Step::InKey { from, .. } => {
                // Its closing quote (a key is a string, scanned without
                // bounds).
                let plain = &text[*from + 1..at];
                if plain.bytes().any(|c| c == b'\\' || c < 0x20) {
                    return None;
                }
                Some(Step::Colon {
                    role: self.role(plain, keys()),
                })
            }
            Step::InValue { role, from, .. } => {
                // The value ends: with this byte (a string's closing quote,
                // an array's or object's bracket), or before it (a number
                // or literal).
                let (role, from) = (*role, *from);
                if matches!(text.as_bytes()[from], b'"' | b'[' | b'{') {
                    self.at = at + 1;
                    self.value_ended(role, from, text);
                    closed = role == Role::Arguments;
                    Some(Step::After)
                } else if byte == b',' || byte.is_ascii_whitespace() {
                    self.at = at;
                    self.value_ended(role, from, text);
                    Some(if byte == b',' { Step::Key } else { Step::After })
                } else {
                    return None;
                }
            }
            Step::Done | Step::Lost => return None,
            _ if byte.is_ascii_whitespace() => None,
            Step::Colon { role } if byte == b':' => Some(Step::Value { role: *role }),
            Step::After if byte == b',' => Some(Step::Key),
            Step::FirstKey | Step::Key if byte == b'"' => {
                let mut scan = JsonScanner::new(usize::MAX, usize::MAX);
                scan.step_within(byte);
                Some(Step::InKey { from: at, scan })
            }
            Step::Value { role } => {
                let role = *role;
                let mut scan = JsonScanner::new(usize::MAX, usize::MAX);
                if !scan.step_within(byte) {
                    return None;
                }
                if role == Role::Arguments {
                    self.arguments = Some((at, None));
                    self.sent = at;
                }
                Some(Step::InValue {
                    role,
                    from: at,
                    scan,
                })
            }
            _ => return None,
        };
        if let Some(step) = next {
            self.step = step;
        }
        self.at = at + 1;
        let sends = sending && (closed || matches!(self.arguments, Some((_, None))));
        if sends {
            self.sent = self.at;
        }
        Some(sends)
    }

    /// What the member under `key` is to the call: the first of the name,
    /// id or preferred arguments key; a key that is more than one of them
    /// is followed as none (the whole read decides).
    fn role(&mut self, key: &str, keys: CallKeys<'_>) -> Role {
        let name = key == keys.name;
        let id = keys.id == Some(key);
        let arguments = keys.arguments.first().map(String::as_str) == Some(key);
        let role = match (name, id, arguments) {
            (true, false, false) if !self.seen_name => Role::Name,
            (false, true, false) if !self.seen_id => Role::Id,
            (false, false, true) if !self.seen_arguments => Role::Arguments,
            _ => Role::Other,
        };
        self.seen_name |= name;
        self.seen_id |= id;
        self.seen_arguments |= arguments;
        role
    }

    fn value_ended(&mut self, role: Role, from: usize, text: &str) {
        let value = &text[from..self.at];
        match role {
            Role::Name => self.name = Some(string_value(value).map(CallName::from)),
            Role::Id => self.id = Some(id_text(value).map(ToolCallId::from)),
            Role::Arguments => self.arguments = Some((from, Some(self.at))),
            Role::Other => {}
        }
    }

    /// Just after the object's closing `}`, once the walk read it.
    pub(super) fn end(&self) -> Option<usize> {
        self.end
    }

    /// The call's name, once the first name member closed as a string.
    pub(super) fn name(&self) -> Option<&str> {
        self.name.as_ref()?.as_ref().map(CallName::as_str)
    }

    /// The id the call's first id member gives (`Some(None)`: none), once
    /// that member ended; `None` while it may still come.
    pub(super) fn id(&self) -> Option<Option<&str>> {
        self.id
            .as_ref()
            .map(|id| id.as_ref().map(ToolCallId::as_str))
    }

    /// Where the value of the member under the preferred arguments key
    /// begins (its first byte) and, once it ended, where it ends.
    pub(super) fn arguments_span(&self) -> Option<(usize, Option<usize>)> {
        self.arguments
    }

    /// Whether a member under the preferred arguments key has begun: its
    /// text is then the call's arguments.
    pub(super) fn follows_arguments(&self) -> bool {
        self.arguments.is_some()
    }

    /// Where the arguments text read since the last call is in `text`,
    /// if there is any: the part of the preferred member's value not
    /// handed out yet.
    pub(super) fn next_fragment(&mut self, text: &str) -> Option<(usize, usize)> {
        let (_, end) = self.arguments?;
        let end = text.floor_char_boundary(end.unwrap_or(self.at).min(text.len()));
        if end <= self.sent {
            return None;
        }
        let from = mem::replace(&mut self.sent, end);
        Some((from, end))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(arguments: &[String]) -> CallKeys<'_> {
        CallKeys {
            name: "name",
            arguments,
            id: Some("id"),
        }
    }

    #[test]
    fn top_level_members_keep_each_value_s_exact_text() {
        let text = r#" { "name" : "f", "arguments": {"a": "}\"", "b": [1, 2]} , "n": 12 }"#;
        let members = top_level_members(text).unwrap();
        assert_eq!(
            members,
            vec![
                ("name".to_owned(), "\"f\""),
                ("arguments".to_owned(), r#"{"a": "}\"", "b": [1, 2]}"#),
                ("n".to_owned(), "12"),
            ]
        );
        assert!(top_level_members("[1]").is_none());
    }

    /// Walks `text` in pieces of `size` bytes, collecting the arguments
    /// fragments, and returns them with the name and id it found.
    fn walk_in_pieces(
        text: &str,
        size: usize,
        arguments: &[String],
    ) -> (Option<String>, Option<Option<String>>, String) {
        let mut walk = MemberWalk::new(0);
        let mut fragments = String::new();
        let mut to = 0;
        while to < text.len() {
            to = (to + size).min(text.len());
            walk.walk(text, to, keys(arguments));
            if let Some((from, to)) = walk.next_fragment(text) {
                fragments.push_str(&text[from..to]);
            }
        }
        let id = walk.id().map(|id| id.map(str::to_owned));
        (walk.name().map(str::to_owned), id, fragments)
    }

    #[test]
    fn the_walk_finds_what_the_whole_read_finds_in_every_piece_size() {
        let preferred = ["parameters".to_owned(), "arguments".to_owned()];
        let cases = [
            r#"{"name": "f", "parameters": {"a": "}\"{", "b": [1, {"c": null}]}}"#,
            r#"{ "id" : "abc123", "na\u006de":"f" , "parameters" : 12.5e3 }"#,
            r#"{"arguments": {"x": 1}, "name": "g", "parameters": [1, 2], "id": 7}"#,
            r#"{"name": "f", "name": "g", "parameters": "s", "parameters": {}}"#,
            r#"{"name": "é🦀", "other": {"name": "x"}, "parameters": true}"#,
            r#"{"name": "f", "arguments": {"x": 1}}"#,
        ];
        for text in cases {
            let JsonCall::Call {
                name,
                arguments,
                id,
            } = read_json_call(text, keys(&preferred))
            else {
                panic!("{text}")
            };
            for size in 1..=text.len() {
                let (walked_name, walked_id, fragments) = walk_in_pieces(text, size, &preferred);
                assert_eq!(walked_name.as_deref(), Some(name.as_str()), "{text} {size}");
                assert_eq!(walked_id.flatten().as_deref(), id, "{text} {size}");
                // The preferred key's text is the call's arguments;
                // another key's text is not handed out while streaming.
                let expected = match text.contains("\"parameters\"") {
                    true => arguments.unwrap_or_default(),
                    false => "",
                };
                assert_eq!(fragments, expected, "{text} {size}");
            }
        }
    }

    #[test]
    fn a_byte_stepped_leaves_the_walk_as_walking_to_it_does() {
        // A byte at a time: `step` where it reads the byte, `walk` where it
        // does not; the two walks agree after every byte, and `step` never
        // reads the object's last brace nor what follows.
        let preferred = ["parameters".to_owned(), "arguments".to_owned()];
        let cases = [
            r#"{"name": "f", "parameters": {"a": "}\"{", "b": [1, {"c": null}]}}"#,
            "{ \"id\" : \"abc123\" ,\r\n\t\"na\\u006de\":\"f\" , \"parameters\" : 12.5e3 }",
            r#"{"arguments": {"x": 1}, "name": "g", "parameters": [1, 2], "id": 7}"#,
            r#"{"name": "f", "name": "g", "parameters": "s", "parameters": {}}"#,
            r#"{"name": "é🦀", "other": {"name": "x"}, "parameters": true, "n": 1,"m":2}"#,
            r#"{"name" x, "parameters": 1}"#,
            r#"{"name": "f", "parameters": 12 3}"#,
            r#"{"name": 3}; {"name": "g"}"#,
        ];
        for text in cases {
            let (mut stepped, mut walked) = (MemberWalk::new(0), MemberWalk::new(0));
            let mut read = 0;
            for at in 0..text.len() {
                walked.walk(text, at + 1, keys(&preferred));
                if !text.is_char_boundary(at) || !text.as_bytes()[at].is_ascii() {
                    stepped.walk(text, at + 1, keys(&preferred));
                } else if stepped.step(text, at, || keys(&preferred), false).is_some() {
                    read += 1;
                    assert!(walked.end().is_none_or(|end| end > at + 1), "{text} {at}");
                } else {
                    stepped.walk(text, at + 1, keys(&preferred));
                }
                assert_eq!(format!("{stepped:?}"), format!("{walked:?}"), "{text} {at}");
            }
            assert!(read > 0, "{text}");
        }
    }

    #[test]
    fn a_started_call_s_arguments_go_out_byte_by_byte_as_they_are_stepped() {
        let preferred = ["arguments".to_owned()];
        let text = r#"{"name": "f", "arguments": {"a": [1, "x"]}, "n": 2}"#;
        let mut walk = MemberWalk::new(0);
        walk.walk(text, 1, keys(&preferred));
        let mut sent = String::new();
        for at in 1..text.len() {
            match walk.step(text, at, || keys(&preferred), true) {
                Some(true) => sent.push_str(&text[at..=at]),
                Some(false) => {}
                None => {
                    walk.walk(text, at + 1, keys(&preferred));
                    if let Some((from, to)) = walk.next_fragment(text) {
                        sent.push_str(&text[from..to]);
                    }
                }
            }
        }
        assert_eq!(sent, r#"{"a": [1, "x"]}"#);
        assert_eq!(walk.end(), Some(text.len()));
    }

    /// What a read gives, as values to compare.
    fn read_as_values(read: JsonCall<'_>) -> Result<(String, Option<&str>, Option<&str>), &str> {
        match read {
            JsonCall::Call {
                name,
                arguments,
                id,
            } => Ok((name.as_str().to_owned(), arguments, id)),
            JsonCall::NotACall => Err("not a call"),
            JsonCall::Invalid => Err("invalid"),
        }
    }

    #[test]
    fn a_walked_call_reads_as_the_whole_read_reads_it() {
        let preferred = ["parameters".to_owned(), "arguments".to_owned()];
        let cases = [
            r#"{"name": "f", "parameters": {"a": "}\"{", "b": [1, {"c": null}]}}"#,
            r#"{ "id" : "abc123", "na\u006de":"f" , "parameters" : 12.5e3 }"#,
            r#"{"arguments": {"x": 1}, "name": "g", "parameters": [1, 2], "id": 7}"#,
            r#"{"name": "f", "name": "g", "parameters": "s", "parameters": {}}"#,
            r#"{"name": "é🦀", "other": {"name": "x"}, "parameters": true, "id": "a\"b"}"#,
            r#"{"name": "f", "arguments": {"x": 1}}"#,
            r#"{"name": 3, "parameters": {}}"#,
            r#"{"name": "f", "parameters": {"x": 01}}"#,
            r#"{"name": "f", "parameters": {"x": 1},}"#,
            r#"{"name": "f", "parameters": {"x": 1}, "id": "i"}"#,
        ];
        for text in cases {
            let mut walk = MemberWalk::new(0);
            walk.walk(text, text.len(), keys(&preferred));
            let walked = read_walked_call(
                text,
                0,
                text.len(),
                &walk,
                keys(&preferred),
                Checked::Nothing,
            );
            let whole = read_json_call(text, keys(&preferred));
            assert_eq!(read_as_values(walked), read_as_values(whole), "{text}");
        }
    }

    #[test]
    fn an_object_under_an_unknown_key_is_no_call_without_arguments() {
        let preferred = ["arguments".to_owned()];
        let read = |text: &'static str| read_as_values(read_json_call(text, keys(&preferred)));
        assert_eq!(read(r#"{"name": "f", "args": {"x": 1}}"#), Err("invalid"));
        assert_eq!(
            read(r#"{"name": "f", "input": {}, "id": "i"}"#),
            Err("invalid")
        );
        // No object beside the name: a call without arguments.
        assert_eq!(
            read(r#"{"name": "f", "type": "function"}"#),
            Ok(("f".to_owned(), None, None))
        );
        // The arguments member is there: other members do not matter.
        assert_eq!(
            read(r#"{"name": "f", "arguments": {}, "meta": {"a": 1}}"#),
            Ok(("f".to_owned(), Some("{}"), None))
        );
    }

    #[test]
    fn an_object_read_whole_in_one_pass_walks_as_the_streaming_walk_does() {
        let preferred = ["parameters".to_owned(), "arguments".to_owned()];
        let valid = [
            r#"{"name": "f", "parameters": {"a": "}\"{", "b": [1, {"c": null}]}}"#,
            "{ \"id\" : \"abc123\" ,\r\n\t\"name\":\"f\" , \"parameters\" : 12.5e3 }",
            r#"{"arguments": {"x": 1}, "name": "g", "parameters": [1, 2], "id": 7}"#,
            r#"{"name": "f", "name": "g", "parameters": "s", "parameters": {}}"#,
            r#"{"name": "é🦀", "other": {"name": "x"}, "parameters": true, "id": "a\"b"}"#,
            r#"{"name": "f\u0041", "parameters": -0.5}; {"name": "g"}"#,
            r#"{"name": 3, "parameters": null}"#,
            "{}",
        ];
        for text in valid {
            let end = text.find("; ").unwrap_or(text.len());
            let whole = MemberWalk::whole(text, 0, keys(&preferred), 63, 1 << 20)
                .unwrap_or_else(|| panic!("read whole: {text}"));
            let mut walk = MemberWalk::new(0);
            walk.walk(text, text.len(), keys(&preferred));
            assert_eq!(whole.end(), Some(end), "{text}");
            assert_eq!(walk.end(), Some(end), "{text}");
            assert_eq!(whole.name(), walk.name(), "{text}");
            assert_eq!(whole.id(), walk.id(), "{text}");
            let (mut whole, mut walk) = (whole, walk);
            assert_eq!(
                whole.next_fragment(text),
                walk.next_fragment(text),
                "{text}"
            );
        }
        // Not valid JSON, not all there, or a case it leaves to the scan:
        // an escaped key, a value nesting past the bound, an object past
        // the size bound.
        let refused: [(&str, usize, usize); 10] = [
            (r#"{"name": "f", "parameters": {"x": 01}}"#, 63, 1 << 20),
            (r#"{"name": "f", "parameters": {"x": 1},}"#, 63, 1 << 20),
            ("{\u{c}\"name\": \"f\"}", 63, 1 << 20),
            (r#"{"name": "f" "parameters": 1}"#, 63, 1 << 20),
            (r#"{"name": "f", "parameters": {"x": 1}"#, 63, 1 << 20),
            (r#"{"name": "f", "parameters": tru"#, 63, 1 << 20),
            (r#"{"na\u006de": "f"}"#, 63, 1 << 20),
            (r#"{"name": "f", "parameters": [[[1]]]}"#, 2, 1 << 20),
            (r#"{"name": "f", "parameters": {}}"#, 63, 10),
            ("[1]", 63, 1 << 20),
        ];
        for (text, depth, bytes) in refused {
            assert!(
                MemberWalk::whole(text, 0, keys(&preferred), depth, bytes).is_none(),
                "{text}"
            );
        }
        let deep = r#"{"name": "f", "parameters": [[[1]]]}"#;
        assert!(MemberWalk::whole(deep, 0, keys(&preferred), 3, 1 << 20).is_some());
        // Brackets in strings do not nest.
        let braces = r#"{"name": "f", "parameters": {"s": "{{{{[[[[", "t": ["{{{{"]}}"#;
        assert!(MemberWalk::whole(braces, 0, keys(&preferred), 2, 1 << 20).is_some());
        assert!(MemberWalk::whole(braces, 0, keys(&preferred), 1, 1 << 20).is_none());
    }

    #[test]
    fn a_name_that_is_no_string_or_text_that_is_no_object_gives_no_name() {
        let preferred = ["arguments".to_owned()];
        for text in [
            r#"{"name": 3, "arguments": {}}"#,
            r#"{"name" "f", "arguments": {}}"#,
            r#"["name", "f"]"#,
            r#"{name: "f"}"#,
        ] {
            for size in 1..=text.len() {
                assert_eq!(walk_in_pieces(text, size, &preferred).0, None, "{text}");
            }
        }
    }
}
