//! What the server does with a JSON-RPC message before rmcp reads it.
//!
//! rmcp parses a message into typed values: serde_json's value keeps the last
//! of a repeated key, refuses nesting deeper than 128 levels (and rmcp then
//! drops the message without an answer), and a `tools/call` whose params do
//! not fit its type is read as an unknown method. The screen reads the top
//! of each message itself, without recursion, so that:
//!
//! - a message that is not JSON is answered `-32700` (parse error);
//! - a `tools/call` without a string `name`, or whose `arguments` is not an
//!   object, is answered `-32602` (invalid params);
//! - a `tools/call`'s `arguments` reach the executor as the text the client
//!   sent, so they meet the same rules as arguments from any provider
//!   (repeated keys refused, size and depth bounded before parsing);
//! - any other message nested deeper than rmcp can read is answered
//!   `-32600` (invalid request) with its id.

use std::borrow::Cow;

use serde::de::IgnoredAny;
use serde_json::{Map, Value, json};

/// The request `_meta` key carrying a `tools/call`'s argument text, as sent,
/// from the screen to the session.
pub(crate) const ARGUMENTS_KEY: &str = "dev.tinyagents/arguments";
/// The request `_meta` key carrying a refusal (`{"code", "message"}`) that
/// the session answers instead of running the call.
pub(crate) const REFUSAL_KEY: &str = "dev.tinyagents/refusal";

/// Nesting rmcp (serde_json) reads safely; the argument text is exempt, since
/// the executor bounds it before parsing.
const MAX_MESSAGE_DEPTH: usize = 100;

/// The JSON-RPC error the screen asked for (`{"code", "message"}`).
pub(crate) fn refusal_error(refusal: &Value) -> rmcp::model::ErrorData {
    let code = refusal
        .get("code")
        .and_then(Value::as_i64)
        .and_then(|c| i32::try_from(c).ok())
        .map_or(
            rmcp::model::ErrorCode::INVALID_PARAMS,
            rmcp::model::ErrorCode,
        );
    let message = refusal
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("invalid params")
        .to_owned();
    rmcp::model::ErrorData::new(code, message, None)
}

/// What to do with one incoming message.
#[derive(Debug, PartialEq)]
pub(crate) enum Screened {
    /// Blank: nothing to read, nothing to answer.
    Skip,
    /// Hand these bytes to rmcp (the message as sent, or rewritten).
    Pass(Vec<u8>),
    /// Answer with this JSON-RPC error response; rmcp never sees the message.
    Answer(Value),
}

/// Screens one message (a line over stdio, a request body over HTTP).
pub(crate) fn screen(message: &[u8]) -> Screened {
    let b = trimmed(message);
    if b.is_empty() {
        return Screened::Skip;
    }
    if b[0] == b'[' {
        // A batch: rmcp decides (MCP has no batches since 2025-06-18).
        return pass_if_readable(b, Value::Null);
    }
    if let Some(rewritten) = plain::plain_call(b) {
        return Screened::Pass(rewritten);
    }
    let Some((members, end)) = members(b, 0) else {
        return Screened::Answer(parse_error());
    };
    if skip_ws(b, end) != b.len() {
        return Screened::Answer(parse_error());
    }
    let get = |key: &str| {
        members
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, r)| &b[r.clone()])
    };
    let id = get("id").filter(|raw| is_id(raw));
    let method = get("method").and_then(string_of);
    let Some(id) = id.filter(|_| method.as_deref() == Some("tools/call")) else {
        return pass_if_readable(b, id.map_or(Value::Null, id_value));
    };
    match tools_call(b, &members) {
        Ok(rewritten) => Screened::Pass(rewritten),
        Err(Problem::Parse) => Screened::Answer(parse_error()),
        Err(Problem::TooDeep) => Screened::Answer(too_deep(id_value(id))),
        Err(Problem::InvalidParams(why)) => match refused(b, &members, -32602, &why) {
            Some(rewritten) => Screened::Pass(rewritten),
            None => Screened::Answer(error(id_value(id), -32602, &why)),
        },
    }
}

/// The text of a plain `tools/call`'s arguments, as the client sent them,
/// put by the HTTP transport beside the message it hands to rmcp (the call
/// without its arguments, see [`split_plain_call`]): rmcp then reads no
/// arguments it would not use, and the session takes the text as it is.
#[cfg(feature = "http")]
#[derive(Debug, Clone)]
pub(crate) struct ArgumentsText(pub(crate) String);

/// Reads `message` as a plain `tools/call` (see the `plain` module): the
/// call without its arguments, for rmcp, and the arguments' text (none when
/// it has none); `None` for any other message, which [`screen`] judges.
#[cfg(feature = "http")]
pub(crate) fn split_plain_call(message: &[u8]) -> Option<(Vec<u8>, Option<String>)> {
    let b = trimmed(message);
    let call = plain::read(b)?;
    Some((call.without_arguments(b), call.arguments.map(str::to_owned)))
}

/// Takes the argument text the HTTP transport put beside a request (see
/// [`ArgumentsText`]) out of rmcp's extensions of that request.
pub(crate) fn arguments_beside(extensions: &mut rmcp::model::Extensions) -> Option<String> {
    #[cfg(feature = "http")]
    {
        let parts = extensions.get_mut::<http::request::Parts>()?;
        parts
            .extensions
            .remove::<ArgumentsText>()
            .map(|text| text.0)
    }
    #[cfg(not(feature = "http"))]
    {
        let _ = extensions;
        None
    }
}

/// A `tools/call` request read down to the top level of its arguments, as
/// the HTTP transport checks its `Mcp-Param-*` headers against it.
#[cfg(feature = "http")]
pub(crate) struct CallView<'a> {
    /// The request id.
    pub(crate) id: Value,
    /// The called tool's name.
    pub(crate) name: Cow<'a, str>,
    /// Each member of the arguments object: the key and the value's text
    /// (none when the call has no arguments object).
    pub(crate) arguments: Vec<(Cow<'a, str>, &'a [u8])>,
}

/// Reads `message` as [`screen`] does, as far as a [`CallView`] needs and
/// without recursion; `None` for any other message, and for one whose top
/// levels are not well-formed (the screen answers that one itself).
#[cfg(feature = "http")]
pub(crate) fn call_view(message: &[u8]) -> Option<CallView<'_>> {
    let b = trimmed(message);
    let (top, end) = members(b, 0)?;
    if skip_ws(b, end) != b.len() {
        return None;
    }
    let get = |key: &str| top.iter().find(|(k, _)| k == key).map(|(_, r)| r.clone());
    let id = get("id").map(|r| &b[r]).filter(|raw| is_id(raw))?;
    if get("method").and_then(|r| string_of(&b[r])).as_deref() != Some("tools/call") {
        return None;
    }
    let (params, _) = members(b, get("params")?.start)?;
    let find = |key: &str| {
        params
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, r)| r.clone())
    };
    let name = string_of(&b[find("name")?])?;
    let arguments = match find("arguments") {
        Some(range) if b[range.start] == b'{' => members(b, range.start)?
            .0
            .into_iter()
            .map(|(key, value)| (key, &b[value]))
            .collect(),
        _ => Vec::new(),
    };
    Some(CallView {
        id: id_value(id),
        name,
        arguments,
    })
}

/// True when `raw` is a JSON-RPC id: a string or a number.
fn is_id(raw: &[u8]) -> bool {
    match raw[0] {
        b'"' => string_of(raw).is_some(),
        _ if short_integer(raw) => true,
        _ => serde_json::from_slice::<Value>(raw).is_ok_and(|id| id.is_number()),
    }
}

/// An id [`is_id`] accepted, as a value for an answer.
fn id_value(raw: &[u8]) -> Value {
    serde_json::from_slice(raw).unwrap_or(Value::Null)
}

enum Problem {
    Parse,
    TooDeep,
    InvalidParams(String),
}

/// Passes a message rmcp can read whole; answers one it cannot.
fn pass_if_readable(b: &[u8], id: Value) -> Screened {
    if depth_over(b, MAX_MESSAGE_DEPTH) {
        return Screened::Answer(too_deep(id));
    }
    match serde_json::from_slice::<IgnoredAny>(b) {
        Ok(_) => Screened::Pass(b.to_vec()),
        Err(_) => Screened::Answer(parse_error()),
    }
}

/// Rewrites a `tools/call`: its `arguments` leave the params and travel as
/// text under [`ARGUMENTS_KEY`].
fn tools_call(b: &[u8], top: &[Member<'_>]) -> Result<Vec<u8>, Problem> {
    let params = top
        .iter()
        .find(|(k, _)| k == "params")
        .map(|(_, r)| r.clone());
    let invalid = |why: &str| Problem::InvalidParams(why.to_owned());
    let Some(params) = params.filter(|r| b[r.start] == b'{') else {
        return Err(invalid(
            "`tools/call` needs params: an object with the tool's `name`",
        ));
    };
    let (inner, _) = members(b, params.start).ok_or(Problem::Parse)?;
    let find = |key: &str| {
        inner
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, r)| &b[r.clone()])
    };
    if let Some((key, _)) = repeated(&inner) {
        return Err(Problem::InvalidParams(format!(
            "`tools/call` params repeat the key `{key}`"
        )));
    }
    if find("name").and_then(string_of).is_none() {
        return Err(invalid(
            "`tools/call` params need `name`: the tool's name, as a string",
        ));
    }
    let arguments = match find("arguments") {
        None | Some(b"null") => None,
        Some(raw) if raw[0] == b'{' => Some(raw),
        Some(_) => return Err(invalid("`arguments` must be a JSON object")),
    };
    if let Some(raw) = arguments
        && !depth_over(raw, MAX_MESSAGE_DEPTH)
        && serde_json::from_slice::<IgnoredAny>(raw).is_err()
    {
        return Err(Problem::Parse);
    }
    if find("_meta").is_none() && repeated(top).is_none() {
        return splice(b, top, &inner, arguments);
    }
    let mut rebuilt = Map::new();
    for (key, range) in &inner {
        if key != "arguments" {
            rebuilt.insert(key.to_string(), read(&b[range.clone()])?);
        }
    }
    let meta = meta_of(&mut rebuilt).ok_or_else(|| invalid("`_meta` must be an object"))?;
    if let Some(raw) = arguments {
        let text = std::str::from_utf8(raw).map_err(|_| Problem::Parse)?;
        meta.insert(ARGUMENTS_KEY.into(), Value::String(text.to_owned()));
    }
    rebuild(b, top, rebuilt)
}

/// [`tools_call`]'s rewrite when the params have no `_meta`: every member
/// but `arguments` copied as sent (each checked as [`read`] checks it), and
/// the argument text put in a new `_meta`, written in one buffer.
fn splice(
    b: &[u8],
    top: &[Member<'_>],
    params: &[Member<'_>],
    arguments: Option<&[u8]>,
) -> Result<Vec<u8>, Problem> {
    let kept = || params.iter().filter(|(k, _)| k != "arguments");
    for (_, range) in kept() {
        check(&b[range.clone()])?;
    }
    let text = match arguments {
        Some(raw) => Some(std::str::from_utf8(raw).map_err(|_| Problem::Parse)?),
        None => None,
    };
    // The text grows by its escapes; a few bytes each is the common case.
    let extra = ARGUMENTS_KEY.len() + 16 + text.map_or(0, |t| t.len() / 2);
    let mut out = Vec::with_capacity(b.len() + extra);
    out.push(b'{');
    for (i, (key, range)) in top.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        put_key(&mut out, key);
        if key != "params" {
            let raw = &b[range.clone()];
            check(raw)?;
            out.extend_from_slice(raw);
            continue;
        }
        out.extend_from_slice(b"{\"_meta\":{");
        if let Some(text) = text {
            put_key(&mut out, ARGUMENTS_KEY);
            serde_json::to_writer(&mut out, text).map_err(|_| Problem::Parse)?;
        }
        out.push(b'}');
        for (key, range) in kept() {
            out.push(b',');
            put_key(&mut out, key);
            out.extend_from_slice(&b[range.clone()]);
        }
        out.push(b'}');
    }
    out.push(b'}');
    Ok(out)
}

/// Writes `key` and its colon as serde_json writes them: a key without a
/// quote, backslash or control character as it is, any other escaped.
pub(super) fn put_key(out: &mut Vec<u8>, key: &str) {
    if key.bytes().any(|c| c == b'"' || c == b'\\' || c < 0x20) {
        let _ = serde_json::to_writer(&mut *out, key);
    } else {
        out.push(b'"');
        out.extend_from_slice(key.as_bytes());
        out.push(b'"');
    }
    out.push(b':');
}

/// A `tools/call` made into one the session answers with `code`: rmcp still
/// checks the session and the request's metadata as for any call. `None`
/// when the message cannot be rebuilt.
fn refused(b: &[u8], top: &[Member<'_>], code: i32, why: &str) -> Option<Vec<u8>> {
    let mut params = Map::new();
    if let Some((_, range)) = top.iter().find(|(k, _)| k == "params")
        && b[range.start] == b'{'
        && let Some((inner, _)) = members(b, range.start)
        && let Some((_, meta)) = inner.iter().find(|(k, _)| k == "_meta")
        && let Ok(meta @ Value::Object(_)) = read(&b[meta.clone()])
    {
        params.insert("_meta".into(), meta);
    }
    params.insert("name".into(), Value::String(String::new()));
    meta_of(&mut params)?.insert(REFUSAL_KEY.into(), json!({"code": code, "message": why}));
    rebuild(b, top, params).ok()
}

/// The `_meta` object of rebuilt params (made when absent), without any
/// copy of the screen's own keys a client sent.
fn meta_of(params: &mut Map<String, Value>) -> Option<&mut Map<String, Value>> {
    let meta = params
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()?;
    meta.remove(ARGUMENTS_KEY);
    meta.remove(REFUSAL_KEY);
    Some(meta)
}

/// The message with `params` replaced.
fn rebuild(b: &[u8], top: &[Member<'_>], params: Map<String, Value>) -> Result<Vec<u8>, Problem> {
    let mut message = Map::new();
    for (key, range) in top {
        if key != "params" {
            message.insert(key.to_string(), read(&b[range.clone()])?);
        }
    }
    message.insert("params".into(), Value::Object(params));
    serde_json::to_vec(&Value::Object(message)).map_err(|_| Problem::Parse)
}

/// One member's value, parsed (it is shallow enough for serde_json).
fn read(raw: &[u8]) -> Result<Value, Problem> {
    if depth_over(raw, MAX_MESSAGE_DEPTH) {
        return Err(Problem::TooDeep);
    }
    serde_json::from_slice(raw).map_err(|_| Problem::Parse)
}

/// Checks one member's value as [`read`] does, without building it when it
/// is a string or a short integer.
fn check(raw: &[u8]) -> Result<(), Problem> {
    match raw[0] {
        b'"' => string_of(raw).map(drop).ok_or(Problem::Parse),
        _ if short_integer(raw) => Ok(()),
        _ => read(raw).map(drop),
    }
}

/// The text of the JSON string `raw` (quotes included), `None` when it is
/// not one: borrowed when it has no escapes, decoded by serde_json else.
fn string_of(raw: &[u8]) -> Option<Cow<'_, str>> {
    let inside = raw.strip_prefix(b"\"")?.strip_suffix(b"\"")?;
    if inside.iter().any(|&c| c == b'\\' || c == b'"' || c < 0x20) {
        return serde_json::from_slice::<String>(raw).ok().map(Cow::Owned);
    }
    std::str::from_utf8(inside).ok().map(Cow::Borrowed)
}

/// True when `raw` is an integer serde_json reads as one: no leading zero,
/// at most 18 digits.
fn short_integer(raw: &[u8]) -> bool {
    let digits = raw.strip_prefix(b"-").unwrap_or(raw);
    matches!(digits, [b'0'] | [b'1'..=b'9', ..])
        && digits.len() <= 18
        && digits.iter().all(u8::is_ascii_digit)
}

fn repeated<'m, 'a>(members: &'m [Member<'a>]) -> Option<&'m Member<'a>> {
    members
        .iter()
        .enumerate()
        .find(|(i, (k, _))| members[..*i].iter().any(|(other, _)| other == k))
        .map(|(_, m)| m)
}

/// The JSON-RPC answer to a message that is not JSON.
pub(crate) fn parse_error() -> Value {
    error(
        Value::Null,
        -32700,
        "Parse error: the message is not valid JSON",
    )
}

fn too_deep(id: Value) -> Value {
    error(
        id,
        -32600,
        &format!("Invalid request: the message is nested deeper than {MAX_MESSAGE_DEPTH} levels"),
    )
}

/// A JSON-RPC error response.
pub(crate) fn error(id: Value, code: i32, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

type Range = std::ops::Range<usize>;

/// An object member: its key, decoded, and its value's bytes.
type Member<'a> = (Cow<'a, str>, Range);

mod plain;
mod scan;

use scan::{depth_over, members, skip_ws};

/// The message without surrounding whitespace and a leading byte order mark
/// (and any whitespace after the mark).
fn trimmed(message: &[u8]) -> &[u8] {
    let b = message.trim_ascii();
    b.strip_prefix(b"\xEF\xBB\xBF".as_slice())
        .map_or(b, <[u8]>::trim_ascii_start)
}

#[cfg(test)]
mod tests;
