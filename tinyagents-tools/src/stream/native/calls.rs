//! The calls of one output while their arguments arrive: each call's
//! argument text scanned as it streams (refused the moment it breaks the
//! limits), judged once when it closes, and reported exactly once, as
//! ready, failed or truncated.
//!
//! The stream readers and the whole-response parses both go through this
//! table (a whole response is one fragment per call), so a call is judged
//! by the same rules however its arguments were cut.

use std::cell::RefCell;
use std::collections::HashSet;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::call::{RawArguments, ToolCall, compact_json_len};
use crate::ids::{CallName, ToolCallId};
use crate::stream::json_scan::{JsonScanner, Scan};
use crate::stream::{
    ArgumentsDelta, CallProblem, CallStarted, FailedCall, ReadyCall, StreamEvent, StreamLimits,
    StreamProblem, StreamProblemKind, TruncatedCall,
};

/// How a format hands a ready call's arguments to the executor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Args {
    /// As the JSON text written (OpenAI): [`RawArguments::Text`].
    Text,
    /// As the parsed object (Anthropic, Gemini): [`RawArguments::Json`].
    Json,
}

/// The calls of one output, by position (the order they began in).
#[derive(Debug)]
pub(super) struct Calls {
    limits: StreamLimits,
    calls: Vec<Call>,
    ids: HashSet<ToolCallId>,
}

#[derive(Debug)]
struct Call {
    id: Option<ToolCallId>,
    name: Option<CallName>,
    args: Args,
    /// Its id was an earlier call's.
    reused: bool,
    /// [`StreamEvent::CallStarted`] went out (id and name both known).
    started: bool,
    /// The argument text so far, up to where the value closed.
    text: String,
    /// The bytes of every fragment received, after the close too.
    received: usize,
    scan: JsonScanner,
    state: State,
    /// Text after the close that is not whitespace, bounded.
    trailing: String,
    /// An event was lost while the arguments were open.
    tainted: bool,
    /// The arguments when no text comes (Anthropic's `input` at the block's
    /// start).
    fallback: Option<Value>,
    /// Gemini's `thoughtSignature`, kept on the ready call.
    signature: Option<Box<str>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// The arguments are open.
    Open,
    /// They closed; the call waits for its id or name before it is reported.
    Closed,
    /// Reported after its close: later text is trailing.
    Reported,
    /// Refused while streaming, or ended: later text is dropped.
    Over,
}

impl Calls {
    pub(super) fn new(limits: StreamLimits) -> Self {
        Calls {
            limits,
            calls: Vec::new(),
            ids: HashSet::new(),
        }
    }

    /// How many calls began.
    pub(super) fn len(&self) -> usize {
        self.calls.len()
    }

    /// Begins a call; it starts (and says so) once its id and name are both
    /// known. Returns its position.
    pub(super) fn open(
        &mut self,
        args: Args,
        id: Option<&str>,
        name: Option<&str>,
        out: &mut Vec<StreamEvent>,
    ) -> usize {
        let limits = self.limits;
        self.calls.push(Call {
            id: None,
            name: None,
            args,
            reused: false,
            started: false,
            text: String::new(),
            received: 0,
            scan: JsonScanner::new(limits.max_argument_bytes, limits.max_argument_depth),
            state: State::Open,
            trailing: String::new(),
            tainted: false,
            fallback: None,
            signature: None,
        });
        let pos = self.calls.len() - 1;
        self.identify(pos, id, name, out);
        pos
    }

    /// The call's id, once known.
    pub(super) fn id(&self, pos: usize) -> Option<&ToolCallId> {
        self.calls[pos].id.as_ref()
    }

    /// Gives the call the id and name it lacks (a later fragment may carry
    /// them); a second, different id or name is ignored.
    pub(super) fn identify(
        &mut self,
        pos: usize,
        id: Option<&str>,
        name: Option<&str>,
        out: &mut Vec<StreamEvent>,
    ) {
        let call = &mut self.calls[pos];
        if let (None, Some(id)) = (&call.id, id) {
            let id = ToolCallId::from(id);
            call.reused = !self.ids.insert(id.clone());
            call.id = Some(id);
        }
        if let (None, Some(name)) = (&call.name, name) {
            call.name = Some(CallName::from(name));
        }
        self.start(pos, out);
    }

    /// Whether any argument text (or value) came for the call.
    pub(super) fn received_any(&self, pos: usize) -> bool {
        self.calls[pos].received > 0
    }

    /// The arguments to use when no argument text comes.
    pub(super) fn set_fallback(&mut self, pos: usize, value: Value) {
        self.calls[pos].fallback = Some(value);
    }

    /// Whether ending the call now needs no word on whether the output was
    /// cut: its arguments closed, never began, or it is over.
    pub(super) fn decided(&self, pos: usize) -> bool {
        let call = &self.calls[pos];
        call.state != State::Open || !call.scan.started()
    }

    /// Marks every call whose arguments are open: an event that may have
    /// carried a piece of them was lost, so they never run.
    pub(super) fn taint_open(&mut self) {
        for call in &mut self.calls {
            if call.state == State::Open {
                call.tainted = true;
            }
        }
    }

    /// The next fragment of a call's argument text.
    pub(super) fn fragment(&mut self, pos: usize, fragment: &str, out: &mut Vec<StreamEvent>) {
        if fragment.is_empty() {
            return;
        }
        let call = &mut self.calls[pos];
        call.received += fragment.len();
        match call.state {
            State::Over => {}
            State::Closed | State::Reported => call.trail(fragment),
            State::Open => match call.scan.push(fragment) {
                Scan::Incomplete => {
                    call.text.push_str(fragment);
                    call.delta(pos, fragment, out);
                }
                Scan::Complete { end } => {
                    let (value, rest) = fragment.split_at(end);
                    call.text.push_str(value);
                    call.delta(pos, value, out);
                    call.state = State::Closed;
                    call.trail(rest);
                    self.report_closed(pos, out);
                }
                refused @ (Scan::TooLarge | Scan::TooDeep) => {
                    let kept = self.limits.max_argument_bytes.min(call.scan.len());
                    let room = kept.saturating_sub(call.text.len());
                    call.text
                        .push_str(&fragment[..floor_boundary(fragment, room)]);
                    let kind = match refused {
                        Scan::TooLarge => CallProblem::TooLarge,
                        _ => CallProblem::TooDeep,
                    };
                    call.state = State::Over;
                    out.push(call.failed(pos, kind));
                }
            },
        }
    }

    /// A call's arguments came as a parsed value in one fragment (some
    /// OpenAI-compatible servers send Chat Completions' `arguments` as an
    /// object, not as text): read as their compact JSON text, then as the
    /// object it parses back to, so the ready call is the one the whole
    /// response gives ([`RawArguments::Json`]). After argument text, or a
    /// second time, the value cannot be part of the arguments: the open
    /// call fails as malformed, and after the close it is trailing text.
    pub(super) fn value(&mut self, pos: usize, value: &Value, out: &mut Vec<StreamEvent>) {
        let call = &mut self.calls[pos];
        match call.state {
            State::Over => return,
            State::Closed | State::Reported => {
                call.trail(&compact_prefix(value, StreamProblem::MAX_RAW, usize::MAX));
                return;
            }
            State::Open if call.received > 0 => {
                call.state = State::Over;
                out.push(call.failed(pos, CallProblem::MalformedArguments));
                return;
            }
            State::Open => {}
        }
        call.args = Args::Json;
        let (Ok(text) | Err(text)) = compact_within(self.limits, value);
        self.fragment(pos, &text, out);
    }

    /// The whole argument text the fragments so far should begin (the
    /// Responses API's `function_call_arguments.done`): the rest of it is
    /// read as the next fragment. When it does not begin with what came, a
    /// fragment was lost or repeated: that is a problem, and a call still
    /// open then never runs.
    pub(super) fn complete(&mut self, pos: usize, whole: &str, out: &mut Vec<StreamEvent>) {
        let call = &mut self.calls[pos];
        if call.state == State::Over {
            return;
        }
        let agrees = whole.is_char_boundary(call.received.min(whole.len()))
            && whole.len() >= call.received
            && whole.starts_with(call.text.as_str());
        if !agrees {
            if call.state == State::Open {
                call.tainted = true;
            }
            out.push(StreamEvent::Problem(StreamProblem::new(
                StreamProblemKind::MalformedEvent,
                whole,
            )));
            return;
        }
        let rest = &whole[call.received..];
        self.fragment(pos, rest, out);
    }

    /// A call refused whole, as it came (`raw`, kept as its compact JSON
    /// text up to the size limit), for `kind`.
    pub(super) fn refuse(
        &mut self,
        id: Option<&str>,
        name: Option<&str>,
        raw: &Value,
        kind: CallProblem,
        out: &mut Vec<StreamEvent>,
    ) -> usize {
        let pos = self.open(Args::Json, id, name, out);
        let max = self.limits.max_argument_bytes;
        let call = &mut self.calls[pos];
        let text = compact_prefix(raw, max, usize::MAX);
        call.text = text[..floor_boundary(&text, max)].to_owned();
        call.state = State::Over;
        out.push(call.failed(pos, kind));
        pos
    }

    /// A call whose arguments came whole, as a parsed value (Gemini's
    /// `args`, Anthropic's `input` in a whole message): bounded by the same
    /// limits as streamed text (its compact JSON text's size and depth), and
    /// reported at once. With `delta`, its compact text goes out as one
    /// argument fragment (for UIs).
    pub(super) fn whole(
        &mut self,
        id: Option<&str>,
        name: Option<&str>,
        value: &Value,
        signature: Option<&str>,
        delta: bool,
        out: &mut Vec<StreamEvent>,
    ) -> usize {
        let pos = self.open(Args::Json, id, name, out);
        let call = &mut self.calls[pos];
        call.signature = signature.map(Box::from);
        let text = match compact_within(self.limits, value) {
            Ok(text) => text,
            Err(refused) => {
                self.fragment(pos, &refused, out);
                self.end(pos, false, out);
                return pos;
            }
        };
        call.text = text;
        if delta && call.started {
            out.push(StreamEvent::ArgumentsDelta(ArgumentsDelta {
                index: pos,
                fragment: call.text.clone(),
            }));
        }
        call.state = State::Closed;
        let event = call.judge(pos, Some(value));
        call.state = State::Over;
        out.push(event);
        pos
    }

    /// The call ended (its block stopped, its item is done, or the output
    /// ended): a call not yet reported is reported now. `cut` says the
    /// output was cut off (the token limit, or the stream's end), so that a
    /// call whose arguments never closed is truncated, not malformed.
    pub(super) fn end(&mut self, pos: usize, cut: bool, out: &mut Vec<StreamEvent>) {
        let call = &mut self.calls[pos];
        match call.state {
            State::Over => return,
            State::Reported => {}
            State::Closed => out.push(call.judge(pos, None)),
            State::Open if !call.scan.started() => {
                if cut {
                    out.push(call.truncated(pos));
                } else {
                    let fallback = match call.args {
                        Args::Json => {
                            Some(call.fallback.take().unwrap_or_else(|| Map::new().into()))
                        }
                        Args::Text => None,
                    };
                    call.state = State::Closed;
                    out.push(call.judge(pos, fallback.as_ref()));
                }
            }
            State::Open => {
                if let Scan::Complete { .. } = call.scan.finish() {
                    call.state = State::Closed;
                    out.push(call.judge(pos, None));
                } else if call.tainted {
                    out.push(call.failed(pos, CallProblem::LostEvent));
                } else if cut {
                    out.push(call.truncated(pos));
                } else {
                    out.push(call.failed(pos, CallProblem::MalformedArguments));
                }
            }
        }
        call.state = State::Over;
        if !call.trailing.is_empty() {
            out.push(StreamEvent::Problem(StreamProblem::new(
                StreamProblemKind::ArgumentsAfterClose,
                &call.trailing,
            )));
        }
    }

    /// Ends every call (see [`end`](Self::end)), in the order they began.
    pub(super) fn end_all(&mut self, cut: bool, out: &mut Vec<StreamEvent>) {
        for pos in 0..self.calls.len() {
            self.end(pos, cut, out);
        }
    }

    /// Says that a call started, once its id and name are known, with the
    /// argument text that came before.
    fn start(&mut self, pos: usize, out: &mut Vec<StreamEvent>) {
        let call = &mut self.calls[pos];
        let (false, Some(id), Some(name)) = (call.started, &call.id, &call.name) else {
            return;
        };
        if matches!(call.state, State::Over | State::Reported) {
            return;
        }
        call.started = true;
        out.push(StreamEvent::CallStarted(CallStarted {
            index: pos,
            id: id.clone(),
            name: name.clone(),
        }));
        if !call.text.is_empty() {
            out.push(StreamEvent::ArgumentsDelta(ArgumentsDelta {
                index: pos,
                fragment: call.text.clone(),
            }));
        }
        self.report_closed(pos, out);
    }

    /// A closed call is reported as soon as it started.
    fn report_closed(&mut self, pos: usize, out: &mut Vec<StreamEvent>) {
        let call = &mut self.calls[pos];
        if call.state == State::Closed && call.started {
            out.push(call.judge(pos, None));
            call.state = State::Reported;
        }
    }
}

impl Call {
    /// Says that a fragment came, once the call started.
    fn delta(&self, pos: usize, fragment: &str, out: &mut Vec<StreamEvent>) {
        if self.started && !fragment.is_empty() {
            out.push(StreamEvent::ArgumentsDelta(ArgumentsDelta {
                index: pos,
                fragment: fragment.to_owned(),
            }));
        }
    }

    /// Keeps text after the close that is not whitespace, bounded.
    fn trail(&mut self, text: &str) {
        let text = if self.trailing.is_empty() {
            text.trim_start_matches([' ', '\t', '\n', '\r'])
        } else {
            text
        };
        let room = StreamProblem::MAX_RAW.saturating_sub(self.trailing.len());
        self.trailing.push_str(&text[..floor_boundary(text, room)]);
    }

    /// The verdict on a closed call: ready, or failed for a missing id or
    /// name, a lost event, a reused id or arguments that are not one JSON
    /// object. `value` is its already parsed arguments, if any; otherwise
    /// its text is parsed (once, bounded by the limits it was scanned to).
    fn judge(&mut self, pos: usize, value: Option<&Value>) -> StreamEvent {
        if !self.started {
            return self.failed(pos, CallProblem::MalformedMarkup);
        }
        if self.tainted {
            return self.failed(pos, CallProblem::LostEvent);
        }
        if self.reused {
            return self.failed(pos, CallProblem::ReusedId);
        }
        let blank = value.is_none() && self.text.trim().is_empty();
        let arguments = match (self.args, value) {
            // No argument text at all: the executor reads it as none.
            (Args::Text, None) if blank => RawArguments::Text(std::mem::take(&mut self.text)),
            (Args::Json, Some(value)) if value.is_object() => RawArguments::Json(value.clone()),
            (_, Some(_)) => return self.failed(pos, CallProblem::MalformedArguments),
            (args, None) => match parse_object(&self.text) {
                Some(_) if args == Args::Text => RawArguments::Text(std::mem::take(&mut self.text)),
                Some(value) => RawArguments::Json(value),
                None => return self.failed(pos, CallProblem::MalformedArguments),
            },
        };
        let (Some(id), Some(name)) = (self.id.clone(), self.name.clone()) else {
            return self.failed(pos, CallProblem::MalformedMarkup);
        };
        let mut call = ToolCall::new(id, name, arguments);
        call.thought_signature = self.signature.take();
        StreamEvent::CallReady(ReadyCall { index: pos, call })
    }

    fn failed(&mut self, pos: usize, kind: CallProblem) -> StreamEvent {
        StreamEvent::CallFailed(FailedCall {
            index: Some(pos),
            id: self.id.clone(),
            name: self.name.clone(),
            kind,
            raw: std::mem::take(&mut self.text),
        })
    }

    fn truncated(&mut self, pos: usize) -> StreamEvent {
        StreamEvent::Truncated(TruncatedCall {
            index: Some(pos),
            id: self.id.clone(),
            name: self.name.clone(),
            raw: std::mem::take(&mut self.text),
        })
    }
}

/// `value`'s compact JSON text when it is within `limits`' size and
/// depth; otherwise `Err` with the prefix a stream of that text would have
/// delivered when the limit refused it, so that it is refused exactly so.
fn compact_within(limits: StreamLimits, value: &Value) -> Result<String, String> {
    if depth(value) <= limits.max_argument_depth
        && compact_json_len(value) <= limits.max_argument_bytes
    {
        Ok(serde_json::to_string(value).unwrap_or_default())
    } else {
        Err(compact_prefix(
            value,
            limits.max_argument_bytes,
            limits.max_argument_depth,
        ))
    }
}

/// The longest prefix of `text` of at most `max` bytes that ends at a
/// character boundary.
fn floor_boundary(text: &str, max: usize) -> usize {
    let mut end = max.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    end
}

/// How deep `value`'s arrays and objects nest (a scalar is 0), walked
/// without recursion.
fn depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut todo = vec![(value, 1)];
    while let Some((value, level)) = todo.pop() {
        match value {
            Value::Array(items) => {
                deepest = deepest.max(level);
                todo.extend(items.iter().map(|child| (child, level + 1)));
            }
            Value::Object(map) => {
                deepest = deepest.max(level);
                todo.extend(map.values().map(|child| (child, level + 1)));
            }
            _ => {}
        }
    }
    deepest
}

/// `value`'s compact JSON text, exactly as `serde_json::to_string` writes
/// it, but written without recursion and stopped once it is longer than
/// `max_bytes` or just after the first bracket nested deeper than
/// `max_depth`: what a stream of that text would have delivered by the
/// time a limit refused it.
pub(super) fn compact_prefix(value: &Value, max_bytes: usize, max_depth: usize) -> String {
    enum Step<'v> {
        Value(&'v Value, usize),
        Text(&'static str),
        Key(&'v str),
    }
    let mut out = String::new();
    let mut todo = vec![Step::Value(value, 0)];
    while let Some(step) = todo.pop() {
        if out.len() > max_bytes {
            break;
        }
        match step {
            Step::Text(text) => out.push_str(text),
            Step::Key(key) => {
                out.push_str(&Value::from(key).to_string());
                out.push(':');
            }
            Step::Value(Value::Array(items), level) => {
                out.push('[');
                if level + 1 > max_depth {
                    break;
                }
                todo.push(Step::Text("]"));
                for (i, item) in items.iter().enumerate().rev() {
                    todo.push(Step::Value(item, level + 1));
                    if i > 0 {
                        todo.push(Step::Text(","));
                    }
                }
            }
            Step::Value(Value::Object(map), level) => {
                out.push('{');
                if level + 1 > max_depth {
                    break;
                }
                todo.push(Step::Text("}"));
                let entries: Vec<_> = map.iter().collect();
                for (i, (key, item)) in entries.into_iter().enumerate().rev() {
                    todo.push(Step::Value(item, level + 1));
                    todo.push(Step::Key(key));
                    if i > 0 {
                        todo.push(Step::Text(","));
                    }
                }
            }
            Step::Value(scalar, _) => out.push_str(&scalar.to_string()),
        }
    }
    out
}

/// `text` read as one JSON object, or `None`: not JSON, not an object, or
/// a key repeated within one object (readers of JSON disagree on which of
/// two equal keys wins, so neither does).
pub(super) fn parse_object(text: &str) -> Option<Value> {
    let duplicate = RefCell::new(false);
    let mut de = serde_json::Deserializer::from_str(text);
    let value = Strict(&duplicate).deserialize(&mut de).ok()?;
    de.end().ok()?;
    value.is_object().then_some(value)
}

/// A JSON value read as serde_json reads one, refusing a key repeated
/// within one object.
#[derive(Clone, Copy)]
struct Strict<'a>(&'a RefCell<bool>);

impl<'de> DeserializeSeed<'de> for Strict<'_> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Strict<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(self)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut map = Map::new();
        while let Some(key) = access.next_key::<String>()? {
            if map.contains_key(&key) {
                *self.0.borrow_mut() = true;
                return Err(de::Error::custom("a key appears twice in one object"));
            }
            let value = access.next_value_seed(self)?;
            map.insert(key, value);
        }
        Ok(Value::Object(map))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_compact_prefix_is_serde_json_s_text_when_nothing_stops_it() {
        let values = [
            json!({"b": [1, 2.5, {"c": null}], "a": "é \"q\" \\ \n", "z": {}}),
            json!([]),
            json!("text"),
            json!({"deep": [[[[]]]]}),
        ];
        for value in values {
            assert_eq!(
                compact_prefix(&value, usize::MAX, usize::MAX),
                serde_json::to_string(&value).unwrap()
            );
        }
    }

    #[test]
    fn the_compact_prefix_stops_after_the_first_bracket_too_deep() {
        let value = json!({"a": [[1]], "b": 2});
        assert_eq!(compact_prefix(&value, usize::MAX, 2), r#"{"a":[["#);
    }

    #[test]
    fn an_object_with_a_repeated_key_is_not_read() {
        assert_eq!(
            parse_object(r#" {"a": 1, "b": {"a": 2}}"#),
            Some(json!({"a": 1, "b": {"a": 2}}))
        );
        assert_eq!(parse_object(r#"{"a": 1, "a": 2}"#), None);
        assert_eq!(parse_object(r#"{"x": [{"k": 1, "k": 1}]}"#), None);
        assert_eq!(parse_object("[1]"), None);
        assert_eq!(parse_object(r#"{"a": tru}"#), None);
    }
}
