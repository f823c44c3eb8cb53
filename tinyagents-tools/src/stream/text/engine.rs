//! The one engine that reads every [`TextFormat`]: a state machine over the
//! text decoded so far, linear in the input.
//!
//! The engine keeps the text it cannot decide yet (a partial marker, a call
//! whose arguments have not closed) and a cursor into it; each piece only
//! moves the cursor forward, so no byte is scanned more than a bounded
//! number of times whatever the chunking. Every decision is made only when
//! the bytes that decide it are there (a partial marker at the end of the
//! text waits for the next piece), which is why every chunking gives the
//! same [`ModelOutput`](crate::stream::ModelOutput): the whole-text parse is
//! this engine fed one piece.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashSet;
use std::mem;
use std::ops::Range;
use std::sync::{Arc, OnceLock};

use serde_json::{Map, Value};

use super::format::{CallBody, CallRun, HarmonyMarkers, Join, NameForm, RunStart, TextFormat};
use super::json_call::{CallKeys, Checked, JsonCall, MemberWalk, read_walked_call};
use super::python::{PyCallScan, PyStep, parse_call};
use super::typing::typed_value;
use crate::call::{RawArguments, ToolCall};
use crate::ids::{CallName, ToolCallId};
use crate::spec::ToolSchema;
use crate::stream::json_check::JsonCheck;
use crate::stream::json_scan::{JsonScanner, Scan, string_goes_on};
use crate::stream::{
    ArgumentsDelta, CallProblem, CallStarted, FailedCall, FinishReason, ReadyCall, StreamEvent,
    StreamLimits, StreamProblem, StreamProblemKind, TruncatedCall,
};
use crate::util::fasthash::NameMap;

/// The longest name, id or harmony header read before the markup counts as
/// malformed.
const MAX_HEAD: usize = 1024;

/// What a marker met in the visible text starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TextHit {
    Reasoning,
    Run(usize),
    /// A [`RunStart::BodyOpening`] run: the marker is its call's first
    /// markup, left for the call to read.
    Opening(usize),
}

/// What a marker met inside a run ends or starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// The run's end marker: consumed, the run is over.
    RunEnd,
    /// The call's end marker: consumed, the next call may follow.
    CallEnd,
    /// The next call's start marker: left for the run to read.
    CallStart,
    /// A marker that starts a run: left for the visible text to read.
    RunStart,
}

/// A format, with the marker lists the engine looks for made once.
#[derive(Debug)]
pub(crate) struct Compiled {
    pub(crate) format: TextFormat,
    text_markers: Vec<String>,
    /// Where one of `text_markers` may start.
    text_firsts: Firsts,
    /// What each byte is as a one-byte piece of visible text.
    text_bytes: [TextByte; 256],
    text_hits: Vec<TextHit>,
    /// Per run: the markers that stop a call (with what they mean).
    stops: Vec<Vec<(String, Stop)>>,
    /// Harmony's: the ends of a message, then the start of the next.
    harmony_stops: Vec<(String, Stop)>,
    /// Where one of `harmony_stops` may start.
    harmony_firsts: Firsts,
    /// Per run: the markers that end a raw parameter value (XML and
    /// key-value bodies; none for the others).
    value_ends: Vec<Vec<String>>,
    /// Per run: where its markers may start.
    firsts: Vec<RunFirsts>,
    /// Per run of a pythonic format: its stop markers alone, what stops a
    /// call (none for the other formats).
    stop_markers: Vec<Markers>,
    /// Per run: what ends a call's name written as text, the body's own
    /// markers first (name-then-JSON: the arguments marker, then the id
    /// marker; XML: the name's end; key-value: its four pair markers),
    /// then the run's stops (none for the other bodies).
    name_ends: Vec<Markers>,
    /// Per run of a name-then-JSON format that writes ids: what ends a
    /// call's id (its arguments marker), then the run's stops.
    id_ends: Vec<Markers>,
    /// A JSON-object format none of whose stop markers can be met in a
    /// valid JSON object: a call whose object is all in the text is then
    /// read by its member walk alone (see [`Engine::walk_whole_call`]).
    json_whole: bool,
    /// The markers each step that may wait on a partial one looks for
    /// (see [`Compiled::waits`]).
    waits: OnceLock<Vec<WaitList>>,
}

impl Compiled {
    pub(crate) fn new(format: TextFormat) -> Compiled {
        let mut text_markers = Vec::new();
        let mut text_hits = Vec::new();
        if let Some(r) = &format.reasoning {
            text_markers.push(r.start.clone());
            text_hits.push(TextHit::Reasoning);
        }
        let opening = format.body.opening();
        for (i, run) in format.runs.iter().enumerate() {
            match (&run.start, opening) {
                (RunStart::Marker(m), _) => {
                    text_markers.push(m.clone());
                    text_hits.push(TextHit::Run(i));
                }
                (RunStart::BodyOpening, Some(m)) => {
                    text_markers.push(m.to_owned());
                    text_hits.push(TextHit::Opening(i));
                }
                (RunStart::BodyOpening, None) | (RunStart::OutputStart, _) => {}
            }
        }
        let run_starts: Vec<String> = format
            .runs
            .iter()
            .filter_map(|r| match &r.start {
                RunStart::Marker(m) => Some(m.clone()),
                RunStart::OutputStart | RunStart::BodyOpening => None,
            })
            .collect();
        let stops: Vec<Vec<(String, Stop)>> = format
            .runs
            .iter()
            .map(|run| {
                let mut s = Vec::new();
                s.extend(run.end.iter().map(|m| (m.clone(), Stop::RunEnd)));
                s.extend(run.call_end.iter().map(|m| (m.clone(), Stop::CallEnd)));
                s.extend(run.call_start.iter().map(|m| (m.clone(), Stop::CallStart)));
                s.extend(run_starts.iter().map(|m| (m.clone(), Stop::RunStart)));
                if run.start == RunStart::BodyOpening {
                    s.extend(opening_run_stops(&format.body));
                }
                s
            })
            .collect();
        let harmony_stops = match &format.body {
            CallBody::Harmony(h) => [&h.end, &h.call, &h.return_]
                .into_iter()
                .map(|m| (m.clone(), Stop::CallEnd))
                .chain([(h.start.clone(), Stop::RunStart)])
                .collect(),
            _ => Vec::new(),
        };
        let value_ends: Vec<Vec<String>> = format
            .runs
            .iter()
            .map(|run| match &format.body {
                CallBody::XmlParameters(x) => [&x.parameter_end, &x.function_end]
                    .into_iter()
                    .chain(&run.end)
                    .cloned()
                    .collect(),
                CallBody::KeyValue(kv) => vec![kv.value_end.clone()],
                _ => Vec::new(),
            })
            .collect();
        let own_heads: Vec<&str> = match &format.body {
            CallBody::NameThenJson {
                arguments_marker,
                id_marker,
                ..
            } => [Some(arguments_marker), id_marker.as_ref()]
                .into_iter()
                .flatten()
                .map(String::as_str)
                .collect(),
            CallBody::KeyValue(kv) => [&kv.key_start, &kv.value_start, &kv.key_end, &kv.value_end]
                .into_iter()
                .map(String::as_str)
                .collect(),
            _ => Vec::new(),
        };
        let fence_end = match &format.body {
            CallBody::NameThenJson { fence: Some(f), .. } => Some(f.end.as_str()),
            _ => None,
        };
        let firsts = stops
            .iter()
            .zip(&value_ends)
            .map(|(stops, ends)| {
                let stops = || stops.iter().map(|(m, _)| m.as_str());
                let json = Firsts::of(stops().chain(fence_end));
                RunFirsts {
                    json,
                    json_ascii: json.ascii(),
                    value: Firsts::of(ends.iter().map(String::as_str)),
                    head: Firsts::of(own_heads.iter().copied().chain(stops())),
                }
            })
            .collect();
        let harmony_firsts = Firsts::of(harmony_stops.iter().map(|(m, _)| m.as_str()));
        // Only the lists the body's steps search are made.
        let (name_own, id_own): (Option<Vec<&str>>, Option<Vec<&str>>) = match &format.body {
            CallBody::NameThenJson {
                arguments_marker,
                id_marker,
                ..
            } => (
                Some(
                    [Some(arguments_marker), id_marker.as_ref()]
                        .into_iter()
                        .flatten()
                        .map(String::as_str)
                        .collect(),
                ),
                id_marker.as_ref().map(|_| vec![arguments_marker.as_str()]),
            ),
            CallBody::XmlParameters(x) => (Some(vec![x.name_end.as_str()]), None),
            CallBody::KeyValue(kv) => (
                Some(
                    [&kv.key_start, &kv.value_start, &kv.key_end, &kv.value_end]
                        .into_iter()
                        .map(String::as_str)
                        .collect(),
                ),
                None,
            ),
            _ => (None, None),
        };
        let pythonic = matches!(format.body, CallBody::Pythonic).then_some(Vec::new());
        let with_stops = |own: &[&str], stops: &[(String, Stop)]| {
            Markers::of(
                own.iter()
                    .copied()
                    .chain(stops.iter().map(|(m, _)| m.as_str())),
            )
        };
        let lists = |own: Option<Vec<&str>>| match own {
            Some(own) => stops.iter().map(|s| with_stops(&own, s)).collect(),
            None => Vec::new(),
        };
        let stop_markers = lists(pythonic);
        let name_ends = lists(name_own);
        let id_ends = lists(id_own);
        let json_whole = matches!(format.body, CallBody::JsonObject { .. })
            && stops.iter().flatten().all(|(m, _)| never_in_json_object(m));
        let text_firsts = Firsts::of(text_markers.iter().map(String::as_str));
        Compiled {
            waits: OnceLock::new(),
            json_whole,
            stop_markers,
            name_ends,
            id_ends,
            text_bytes: text_bytes(&text_firsts),
            text_firsts,
            value_ends,
            firsts,
            format,
            text_markers,
            text_hits,
            stops,
            harmony_stops,
            harmony_firsts,
        }
    }
}

/// What else ends a call of a [`RunStart::BodyOpening`] run, which no
/// marker of its own encloses: the body's closing marker (a malformed
/// call ends there), and its opening marker (the next call starts there).
fn opening_run_stops(body: &CallBody) -> Vec<(String, Stop)> {
    match body {
        CallBody::XmlParameters(x) => vec![
            (x.function_end.clone(), Stop::CallEnd),
            (x.function_start.clone(), Stop::RunStart),
        ],
        _ => Vec::new(),
    }
}

/// The marker lists of the steps that may wait on a partial marker (see
/// [`WaitOn`]), by [`Compiled::wait_slot`]: the ones outside runs, then
/// each run's.
fn wait_lists(c: &Compiled) -> Vec<WaitList> {
    let (format, text_markers, value_ends) = (&c.format, &c.text_markers, &c.value_ends);
    let (name_ends, id_ends) = (&c.name_ends, &c.id_ends);
    let mut waits: Vec<WaitList> = (0..WAITS * (1 + format.runs.len()))
        .map(|_| WaitList::default())
        .collect();
    let mut set = |run: Option<usize>, on: WaitOn, markers: Vec<&str>| {
        let list = &mut waits[Compiled::wait_slot(run, on)];
        list.markers = markers.into_iter().map(str::to_owned).collect();
        list.ws = on.after_whitespace();
    };
    set(
        None,
        WaitOn::Text,
        text_markers.iter().map(String::as_str).collect(),
    );
    if let Some(r) = &format.reasoning {
        set(None, WaitOn::Reasoning, vec![r.end.as_str()]);
    }
    for (i, run) in format.runs.iter().enumerate() {
        let r = Some(i);
        set(
            r,
            WaitOn::Value,
            value_ends[i].iter().map(String::as_str).collect(),
        );
        if let Some(m) = name_ends.get(i) {
            set(r, WaitOn::Name, m.list.iter().map(String::as_str).collect());
        }
        if let Some(m) = id_ends.get(i) {
            set(r, WaitOn::Id, m.list.iter().map(String::as_str).collect());
        }
        let end = run.end.as_deref();
        set(r, WaitOn::End, end.into_iter().collect());
        set(
            r,
            WaitOn::CallEnd,
            run.call_end.as_deref().into_iter().collect(),
        );
        set(
            r,
            WaitOn::Next,
            end.into_iter().chain(run.call_start.as_deref()).collect(),
        );
        match &format.body {
            CallBody::KeyValue(kv) => {
                set(r, WaitOn::Key, vec![kv.key_end.as_str()]);
                set(
                    r,
                    WaitOn::Pairs,
                    [Some(kv.key_start.as_str()), end]
                        .into_iter()
                        .flatten()
                        .collect(),
                );
                set(r, WaitOn::ExpectValue, vec![kv.value_start.as_str()]);
            }
            CallBody::XmlParameters(x) => set(
                r,
                WaitOn::Params,
                [
                    Some(x.parameter_start.as_str()),
                    Some(x.function_end.as_str()),
                    end,
                ]
                .into_iter()
                .flatten()
                .collect(),
            ),
            _ => {}
        }
    }
    waits
}

impl Compiled {
    /// Where the markers step `on` of run `run` (`None`: outside runs)
    /// waits on are in [`Compiled::waits`].
    fn wait_slot(run: Option<usize>, on: WaitOn) -> usize {
        run.map_or(0, |r| r + 1) * WAITS + on as usize
    }

    /// The markers of the steps that may wait on a partial one, by
    /// [`Compiled::wait_slot`]: made the first time a reader of the
    /// format waits on one (a whole text never does).
    fn waits(&self) -> &[WaitList] {
        self.waits.get_or_init(|| wait_lists(self))
    }

    /// The compiled parts of `format`, shared by the readers one thread
    /// makes of an equal format: they depend on the format alone and never
    /// change, and a reader is made per turn, so the last format a thread
    /// compiled is kept and its parts handed out again while the next
    /// reader's format equals it.
    pub(crate) fn shared(format: &TextFormat) -> Arc<Compiled> {
        thread_local! {
            static LAST: RefCell<Option<Arc<Compiled>>> = const { RefCell::new(None) };
        }
        LAST.with(|last| {
            let mut last = last.borrow_mut();
            match &*last {
                Some(c) if c.format == *format => Arc::clone(c),
                _ => {
                    let c = Arc::new(Compiled::new(format.clone()));
                    *last = Some(Arc::clone(&c));
                    c
                }
            }
        })
    }

    /// Whether the format may write call ids (then a call may reuse one,
    /// its own or a generated one).
    fn writes_ids(&self) -> bool {
        match &self.format.body {
            CallBody::JsonObject { id_key, .. } => id_key.is_some(),
            CallBody::NameThenJson {
                id_marker, name, ..
            } => id_marker.is_some() || matches!(name, NameForm::IdWithName { .. }),
            _ => false,
        }
    }

    /// Whether the format writes raw parameter values, which the tools'
    /// input schemas type.
    pub(crate) fn types_values(&self) -> bool {
        matches!(
            self.format.body,
            CallBody::XmlParameters(_) | CallBody::KeyValue(_)
        )
    }
}

/// The ids an output's calls were given so far, to find one given twice.
///
/// Only a format that writes ids can give one twice: a generated id is
/// the prefix and the call's index, which no other call has, so without
/// ids written by the model nothing is kept. The few ids of an output are
/// looked through in order; past [`SeenIds::FEW`], they are hashed.
#[derive(Debug)]
struct SeenIds {
    kept: bool,
    few: Vec<ToolCallId>,
    many: HashSet<ToolCallId>,
}

impl SeenIds {
    const FEW: usize = 16;

    /// Ids kept when `kept` (the format writes ids).
    fn new(kept: bool) -> SeenIds {
        SeenIds {
            kept,
            few: Vec::new(),
            many: HashSet::new(),
        }
    }

    /// Adds `id`: false when an earlier call was given it.
    fn insert(&mut self, id: &ToolCallId) -> bool {
        if !self.kept {
            return true;
        }
        if !self.many.is_empty() {
            return self.many.insert(id.clone());
        }
        if self.few.contains(id) {
            return false;
        }
        if self.few.len() < Self::FEW {
            self.few.push(id.clone());
        } else {
            self.many.extend(self.few.drain(..));
            self.many.insert(id.clone());
        }
        true
    }
}

/// A list of markers a step looks for, with where they may start.
#[derive(Debug)]
struct Markers {
    list: Vec<String>,
    firsts: Firsts,
}

impl Markers {
    fn of<'m>(markers: impl IntoIterator<Item = &'m str>) -> Markers {
        let list: Vec<String> = markers.into_iter().map(str::to_owned).collect();
        let firsts = Firsts::of(list.iter().map(String::as_str));
        Markers { list, firsts }
    }
}

/// A step that waits when the text ends inside one of the markers it
/// looks for: while the text only goes on inside one of them (none of
/// them whole yet), the step would wait again, changed in nothing, so a
/// piece that only does that is appended without the steps (see
/// [`InPlace::Marker`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WaitOn {
    /// Visible text: the markers that start a run or reasoning.
    Text,
    /// Reasoning: its end marker.
    Reasoning,
    /// A raw parameter value: the markers that end it.
    Value,
    /// A name written as text: what ends it (see [`Compiled::name_ends`]).
    Name,
    /// An id written as text (see [`Compiled::id_ends`]).
    Id,
    /// A key-value call's key: the key's end marker.
    Key,
    /// Between a key-value call's pairs, after whitespace: the next key's
    /// start, or the run's end.
    Pairs,
    /// After a key, after whitespace: the value's start marker.
    ExpectValue,
    /// Between an XML call's parameters, after whitespace: the next
    /// parameter's start, the function's end or the run's end.
    Params,
    /// After a call, after whitespace: its end marker.
    CallEnd,
    /// After whitespace: the run's end marker.
    End,
    /// Before a call, after whitespace: the run's end or the call's start
    /// marker.
    Next,
}

/// The number of [`WaitOn`] kinds.
const WAITS: usize = 12;

impl WaitOn {
    /// Whether the step skips whitespace before the markers it looks for.
    fn after_whitespace(self) -> bool {
        matches!(
            self,
            WaitOn::Pairs
                | WaitOn::ExpectValue
                | WaitOn::Params
                | WaitOn::CallEnd
                | WaitOn::End
                | WaitOn::Next
        )
    }
}

/// The markers a step of [`WaitOn`] looks for, and whether whitespace may
/// come before them.
#[derive(Debug, Default)]
struct WaitList {
    markers: Vec<String>,
    ws: bool,
}

/// Where the markers a run's steps look for may start.
#[derive(Debug)]
struct RunFirsts {
    /// A marker that stops a JSON scan (the run's stops, and the closing
    /// fence of a fenced body).
    json: Firsts,
    /// The ASCII bytes that may start one of `json`'s markers, a bit each
    /// (every one when any byte may).
    json_ascii: u128,
    /// A marker that ends a raw parameter value.
    value: Firsts,
    /// A marker that ends a call's name written as text (name-then-JSON
    /// and key-value bodies), the run's stops included.
    head: Firsts,
}

/// A marker search's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hit {
    /// Marker `which` starts at `at`.
    Found { at: usize, which: usize },
    /// A marker may start at `at`: the text ends inside it.
    Partial { at: usize },
    /// No marker starts before the end of the text.
    None,
}

/// Whether a marker is at a position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tri {
    Yes,
    No,
    Maybe,
}

/// The distinct first bytes of a set of markers: where one of them may
/// start, found with `memchr` instead of trying every position.
#[derive(Debug, Clone, Copy)]
struct Firsts {
    bytes: [u8; 3],
    len: usize,
    /// More than three distinct first bytes: every position is a candidate.
    many: bool,
}

impl Firsts {
    fn of<'m>(markers: impl IntoIterator<Item = &'m str>) -> Firsts {
        let mut firsts = Firsts {
            bytes: [0; 3],
            len: 0,
            many: false,
        };
        for m in markers {
            let Some(&b) = m.as_bytes().first() else {
                continue;
            };
            if firsts.bytes[..firsts.len].contains(&b) {
                continue;
            }
            if firsts.len == firsts.bytes.len() {
                firsts.many = true;
            } else {
                firsts.bytes[firsts.len] = b;
                firsts.len += 1;
            }
        }
        firsts
    }

    /// The ASCII bytes where a marker may start, as the bits of their
    /// codes: every one when more than three bytes may.
    fn ascii(&self) -> u128 {
        if self.many {
            return u128::MAX;
        }
        self.bytes[..self.len]
            .iter()
            .filter(|b| b.is_ascii())
            .fold(0, |mask, &b| mask | 1 << b)
    }

    /// Whether a marker may start in `piece`.
    fn in_piece(&self, piece: &[u8]) -> bool {
        if self.many || piece.len() >= 16 {
            return self.next(piece, 0).is_some();
        }
        let firsts = &self.bytes[..self.len];
        piece.iter().any(|b| firsts.contains(b))
    }

    /// The first position from `from` on where a marker may start.
    fn next(&self, hay: &[u8], from: usize) -> Option<usize> {
        let rest = hay.get(from..).filter(|r| !r.is_empty())?;
        if self.many {
            return Some(from);
        }
        if rest.len() < 16 {
            // A few bytes (the text after a short piece): looked through
            // directly, as memchr's set-up costs more.
            let firsts = &self.bytes[..self.len];
            return rest
                .iter()
                .position(|b| firsts.contains(b))
                .map(|i| from + i);
        }
        let [a, b, c] = self.bytes;
        let found = match self.len {
            0 => None,
            1 => memchr::memchr(a, rest),
            2 => memchr::memchr2(a, b, rest),
            _ => memchr::memchr3(a, b, c, rest),
        };
        found.map(|i| from + i)
    }
}

/// How the next piece may be read where the state is, before it is
/// decoded and without the steps: set after the steps read a piece. Its
/// tag is a byte of its own, so the way a piece is read is told by one
/// comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum InPlace {
    /// By the steps.
    No,
    /// Visible text with nothing held back: a piece with no byte that may
    /// start a marker is shown as it is.
    Text,
    /// Inside a string of a JSON call's object (the scanner and the walk
    /// at the end of the text): bytes that continue the string are
    /// appended, while the text stays within `limit` (the size bound),
    /// and counted by the scanner and the walk only when the steps next
    /// run ([`Engine::settle`]). `escaped`: the last byte is a backslash
    /// that escapes the next; `fragment`: they are call `index`'s
    /// arguments, sent as they come. (The engine keeps the bound a plain
    /// byte is read under, and the fragment's call, beside it: see
    /// [`Plain`].)
    JsonString {
        limit: usize,
        escaped: bool,
        fragment: Option<usize>,
    },
    /// Inside a raw parameter value of run `run` (XML and key-value
    /// bodies), searched to the end of the text: bytes that cannot start
    /// a marker ending it are appended while the value stays within
    /// `limit` (the size bound); the value's search then goes on from
    /// the end of the text ([`Engine::settle`]).
    RawValue { run: usize, limit: usize },
    /// The steps wait because the text from `at` on is the start of one
    /// of the markers of list `slot` ([`Compiled::wait_slot`]; `mask`:
    /// those it may still become), or, for a list that whitespace may
    /// precede, because only whitespace follows `at`: a piece that leaves
    /// the text inside one of them (none of them whole), or, before one,
    /// in whitespace, is appended, and the steps, which would wait again
    /// changed in nothing, run once a marker is whole or none can be
    /// ([`Engine::continue_marker`]).
    Marker { at: usize, slot: usize, mask: u32 },
    /// Between the tokens of a JSON call's object of run `run`, outside
    /// its strings (the scanner and the walk at the end of the text): a
    /// one-byte piece that only moves them on (whitespace, a colon, a
    /// comma, a quote that opens a string, a value's first byte, any byte
    /// inside the arguments that does not end them) is read by both and
    /// appended, and sent when it continues the call's arguments
    /// ([`Engine::continue_json_member`]).
    JsonMember { run: usize },
    /// Inside the array or object of a started call's arguments member
    /// (the call's arguments, sent as they come), the scanner and the
    /// walk where this began: every byte that does not close the value,
    /// break a bound or may start a marker (outside its strings) is
    /// appended, sent and followed by [`ArgsInPlace`] alone; the scanner
    /// and the walk read them at once when the steps next run
    /// ([`Engine::settle`]).
    JsonArgs(ArgsInPlace),
}

/// Where [`InPlace::JsonArgs`] is in the arguments' value: the brackets
/// and strings of it read in place since the scanner last ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ArgsInPlace {
    /// The JSON call's run.
    run: u32,
    /// The held text's length past which a byte breaks the size bound.
    limit: usize,
    /// The call's index.
    index: u32,
    /// Arrays and objects open inside the value (1: directly inside it).
    depth: u32,
    /// How many more may open before the depth bound breaks.
    room: u32,
    /// Inside a string of it, and after a backslash that escapes the
    /// next byte.
    string: bool,
    escaped: bool,
    /// The value's validity, followed through every byte read in place
    /// (a plain byte of a string changes nothing, see [`JsonCheck`]).
    check: JsonCheck,
}

impl ArgsInPlace {
    /// Reads the ASCII byte `b` as the scanner would, when it leaves the
    /// value open and within the depth bound and, outside a string, may
    /// start none of the markers that stop the call (`json_ascii`: their
    /// first bytes). Says whether it did; otherwise nothing changed.
    #[inline(always)]
    fn step(&mut self, b: u8, json_ascii: u128) -> bool {
        if b >= 0x80 {
            return false;
        }
        if self.string {
            self.string_step(b);
            return true;
        }
        if json_ascii >> b & 1 != 0 {
            return false;
        }
        match b {
            b'"' => self.string = true,
            b'[' | b'{' => {
                if self.room == 0 {
                    return false;
                }
                self.depth += 1;
                self.room -= 1;
            }
            b']' | b'}' => {
                // The value's own closing bracket is the steps' to read.
                if self.depth <= 1 {
                    return false;
                }
                self.depth -= 1;
                self.room += 1;
            }
            _ => {}
        }
        self.check.step(b);
        true
    }

    /// Reads the ASCII byte `b` of a string of the value: its backslashes
    /// are followed here, and the check is handed the string's closing
    /// quote and every other byte but a backslash that escapes the next
    /// ([`JsonCheck::string_byte`]).
    #[inline(always)]
    fn string_step(&mut self, b: u8) {
        match string_byte(b, self.escaped) {
            StringByte::Close => {
                self.string = false;
                self.check.step(b);
            }
            StringByte::Escape => self.escaped = true,
            StringByte::Plain => {
                self.check.string_byte(b, self.escaped);
                self.escaped = false;
            }
        }
    }

    /// Reads `piece` (whole UTF-8) as [`step`](Self::step) reads each of
    /// its bytes, a byte past ASCII only inside a string and not after a
    /// backslash (as a character's bytes are there); `None`, changing
    /// nothing, unless every byte was read.
    fn steps(mut self, piece: &[u8], json_ascii: u128) -> Option<ArgsInPlace> {
        for &b in piece {
            if b >= 0x80 && self.string && !self.escaped {
                continue;
            }
            if !self.step(b, json_ascii) {
                return None;
            }
        }
        Some(self)
    }
}

impl InPlace {
    /// [`InPlace::JsonString`] within `limit`, after a backslash that
    /// escapes the next byte when `escaped`.
    fn json_string(limit: usize, escaped: bool, fragment: Option<usize>) -> InPlace {
        InPlace::JsonString {
            limit,
            escaped,
            fragment,
        }
    }
}

/// The common byte's test, kept beside [`InPlace`] so that it reads no
/// tag: inside a JSON string read in place and not after a backslash
/// ([`InPlace::JsonString`]), a byte that neither ends the string nor
/// escapes the next is appended while the held text is shorter than
/// `below` (the string's `limit`; 0 in every other state, so that one
/// comparison tells), and sent as call `fragment`'s arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Plain {
    below: usize,
    fragment: Option<usize>,
}

impl Plain {
    /// The test for the state `in_place`, read by reference: only the
    /// fields it needs are loaded (a copy of the whole state, just after
    /// one of its fields was written, waits for that store).
    #[inline(always)]
    fn of(in_place: &InPlace) -> Plain {
        match *in_place {
            InPlace::JsonString {
                limit,
                escaped: false,
                fragment,
            } => Plain {
                below: limit,
                fragment,
            },
            InPlace::JsonArgs(ArgsInPlace {
                limit,
                index,
                string: true,
                escaped: false,
                ..
            }) => Plain {
                below: limit,
                fragment: Some(index as usize),
            },
            _ => Plain::NONE,
        }
    }

    /// The test no byte passes: every state but a JSON string's.
    const NONE: Plain = Plain {
        below: 0,
        fragment: None,
    };
}

impl State {
    /// The raw parameter value being read, when the state reads one (XML
    /// and key-value bodies): its run, where it begins, how far it was
    /// searched (no marker ending it starts before that) and how many
    /// bytes the call's arguments held before it.
    fn raw_value(&mut self) -> Option<(usize, usize, &mut usize, usize)> {
        let State::Run(RunState {
            run,
            phase:
                Phase::Body(
                    Body::Xml {
                        step: XmlStep::Value { from, at, .. },
                        bytes,
                        ..
                    }
                    | Body::Kv {
                        step: KvStep::Value { from, at, .. },
                        bytes,
                        ..
                    },
                ),
            ..
        }) = self
        else {
            return None;
        };
        Some((*run, *from, at, *bytes))
    }
}

/// What is known of the call being read.
#[derive(Debug, Clone, Default)]
struct CallInfo {
    index: Option<usize>,
    id: Option<ToolCallId>,
    name: Option<CallName>,
    /// The id was used by an earlier call of this output.
    reused: bool,
    /// The call was already reported failed (refused for its size or
    /// depth as soon as it broke the bound); what follows is skipped.
    reported: bool,
}

/// A JSON value being scanned for its end.
#[derive(Debug, Clone)]
struct JsonArgs {
    scan: JsonScanner,
    /// Where the value's text begins (leading whitespace included).
    from: usize,
    /// The next byte to scan.
    at: usize,
    /// The check of the call's arguments array or object (the walk's
    /// arguments member), once they were first read in place: the offset
    /// the check has read to, and the check there. It reads what the
    /// steps read in between when the read in place goes on, and the
    /// rest when the arguments end (see [`arguments_checked`]).
    checked: Option<(usize, JsonCheck)>,
}

enum JsonOutcome {
    Need,
    Complete { start: usize, end: usize },
    Stopped { at: usize, which: usize },
    TooLarge,
    TooDeep,
    Eof,
}

#[derive(Debug)]
enum State {
    Text,
    Reasoning,
    Run(RunState),
    Harmony(HState),
}

#[derive(Debug)]
struct RunState {
    run: usize,
    /// Begun without a marker at the output start, and no call is known
    /// yet: if what follows is not a call, it is all text.
    bare: bool,
    /// Where the current call's markup begins (for its raw text).
    raw_start: usize,
    /// A call of this run has ended.
    done: bool,
    phase: Phase,
}

#[derive(Debug)]
enum Phase {
    /// Just after the run's start marker.
    Open,
    /// A call, the run's end or (with `first` false) a separator may come.
    Next {
        first: bool,
    },
    Body(Body),
    /// After a call: its end marker comes next.
    CallEnd,
    /// After a call and its end marker: how the run goes on.
    After,
    /// After a list separator: a call comes next.
    ListItem,
    /// The run's end marker comes next.
    ExpectEnd,
    /// Malformed: skipping to where the call ends.
    Skip {
        info: CallInfo,
        kind: CallProblem,
        from: usize,
    },
}

#[derive(Debug)]
enum Body {
    Json {
        info: CallInfo,
        args: JsonArgs,
        // The call's member walk is the engine's `walk`: one call is read
        // at a time, and a run's phase stays small for the other bodies.
    },
    Name {
        info: CallInfo,
        step: NameStep,
    },
    Xml {
        info: CallInfo,
        step: XmlStep,
        args: Map<String, Value>,
        bytes: usize,
    },
    Kv {
        info: CallInfo,
        step: KvStep,
        args: Map<String, Value>,
        bytes: usize,
    },
    Py {
        info: CallInfo,
        scan: PyCallScan,
        from: usize,
        at: usize,
    },
}

#[derive(Debug)]
enum NameStep {
    Prefix,
    Name { from: usize },
    Id { from: usize, name: String },
    Fence,
    Args(JsonArgs),
    FenceEnd,
}

#[derive(Debug)]
enum XmlStep {
    Name {
        from: usize,
    },
    Params,
    ParamName {
        from: usize,
    },
    /// A raw value from `from`; no end marker starts before `at`.
    Value {
        key: String,
        from: usize,
        at: usize,
    },
}

#[derive(Debug)]
enum KvStep {
    Name {
        from: usize,
    },
    Pairs,
    Key {
        from: usize,
    },
    ExpectValue {
        key: String,
    },
    /// A raw value from `from`; no end marker starts before `at`.
    Value {
        key: String,
        from: usize,
        at: usize,
    },
}

#[derive(Debug)]
enum HState {
    Between,
    Header {
        raw_start: usize,
        from: usize,
    },
    Text,
    Reasoning,
    Call {
        info: CallInfo,
        raw_start: usize,
        args: JsonArgs,
    },
    /// After a call's arguments: its end marker comes next.
    AfterCall,
    Skip {
        info: CallInfo,
        kind: CallProblem,
        raw_start: usize,
        from: usize,
    },
}

/// What the output ended with, as far as it has been read: what its
/// finish reason says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ending {
    /// Text or reasoning (or nothing): the text cannot tell a stop from a
    /// cut.
    Content,
    /// A call, ready or failed (a call section ended by its markers).
    Call,
    /// A call cut off by the end of the output.
    Cut,
    /// An explicit end of the turn (harmony's `<|return|>`, or `<|end|>`
    /// closing a message that is not a call).
    Stop,
}

/// What a step did to the state it was handed (by reference: a step
/// changes the state in place, so moving on does not move it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flow {
    /// It moved on: run the next step.
    Go,
    /// It needs more text (at the end of the output it never says this).
    Wait,
    /// The run of calls is over: visible text follows (what a run's step,
    /// handed the run alone, cannot write in the state itself).
    Text,
}

/// The engine behind [`TextReader`](super::TextReader).
#[derive(Debug)]
pub(crate) struct Engine {
    c: Arc<Compiled>,
    schemas: NameMap<String, ToolSchema>,
    limits: StreamLimits,
    id_prefix: Cow<'static, str>,
    buf: String,
    pos: usize,
    cur: usize,
    utf8: Vec<u8>,
    eof: bool,
    state: Option<State>,
    anchor: bool,
    next_index: usize,
    ids: SeenIds,
    ending: Ending,
    /// The member walk of the JSON-object call being read.
    walk: MemberWalk,
    /// Whether call starts and argument fragments are sent: a caller that
    /// only collects the output has no use for them, as they add nothing
    /// to a [`ModelOutput`](crate::stream::ModelOutput).
    progress: bool,
    in_place: InPlace,
    /// The common byte's test for `in_place` (set with it, by
    /// [`Engine::set_in_place`]).
    plain: Plain,
    /// Set by the step that waits because the text ends inside a marker
    /// it looks for (or in whitespace before one): where that marker
    /// starts and the list it is one of (its [`Compiled::wait_slot`]).
    partial: Option<(usize, usize)>,
}

impl Engine {
    /// An engine at the start of an output, outside reasoning.
    pub(crate) fn new(
        c: Arc<Compiled>,
        schemas: NameMap<String, ToolSchema>,
        limits: StreamLimits,
        id_prefix: Cow<'static, str>,
    ) -> Engine {
        let harmony = matches!(c.format.body, CallBody::Harmony(_));
        let state = if harmony {
            State::Harmony(HState::Between)
        } else {
            State::Text
        };
        let anchor = c
            .format
            .runs
            .iter()
            .any(|r| r.start == RunStart::OutputStart);
        let ids = SeenIds::new(c.writes_ids());
        Engine {
            c,
            schemas,
            limits,
            id_prefix,
            buf: String::with_capacity(HELD_START),
            pos: 0,
            cur: 0,
            utf8: Vec::new(),
            eof: false,
            state: Some(state),
            anchor,
            next_index: 0,
            ids,
            ending: Ending::Content,
            walk: MemberWalk::new(0),
            progress: true,
            in_place: InPlace::No,
            plain: Plain::NONE,
            partial: None,
        }
    }

    /// Plain bytes of a string read in place are appended without the
    /// arguments' check, which they leave as it is: it is then inside a
    /// string, not after a backslash (or knows nothing). Debug builds
    /// check it.
    #[inline(always)]
    fn debug_plain_for_check(&self) {
        if let InPlace::JsonArgs(read) = &self.in_place {
            debug_assert!(!read.check.known() || read.check.in_plain_string());
        }
    }

    /// Sets the way the next piece is read in place, and the common
    /// byte's test with it.
    #[inline(always)]
    fn set_in_place(&mut self, in_place: InPlace) {
        // The test is taken from the new state before it is stored: read
        // back at once, its fields would wait for the store.
        self.plain = Plain::of(&in_place);
        self.in_place = in_place;
    }

    /// The output begins inside reasoning (before the first piece): a
    /// harmony `analysis` message, or the format's reasoning markers (a
    /// format without them has no reasoning to begin in).
    pub(crate) fn start_in_reasoning(&mut self) {
        match self.state {
            Some(State::Harmony(_)) => self.state = Some(State::Harmony(HState::Reasoning)),
            Some(_) if self.c.format.reasoning.is_some() => self.state = Some(State::Reasoning),
            _ => {}
        }
    }

    /// Holds arguments to `limits` (before the first piece).
    pub(crate) fn set_limits(&mut self, limits: StreamLimits) {
        self.limits = limits;
    }

    /// Gives generated ids the prefix `prefix` (before the first piece).
    pub(crate) fn set_id_prefix(&mut self, prefix: Cow<'static, str>) {
        self.id_prefix = prefix;
    }

    /// Reads the whole output, `text`, at once (before any piece): what
    /// [`push`](Self::push) of `text` then [`finish`](Self::finish) read,
    /// minus what only a piece that may be followed by another needs (the
    /// UTF-8 carry, the in-place read, the hold-back of what the next
    /// piece decides); the steps are the same, with the end of the output
    /// known. Call starts and argument fragments are not sent: the caller
    /// only collects the output.
    pub(crate) fn read_whole(&mut self, text: &str, out: &mut Vec<StreamEvent>) {
        debug_assert!(self.buf.is_empty() && !self.eof, "a fresh engine");
        self.progress = false;
        self.buf.push_str(text);
        self.eof = true;
        self.drive(out);
    }

    /// Decodes `piece` (holding back a UTF-8 sequence it cuts) and reads
    /// as far as the text decides; after the end of the output, nothing.
    /// A piece of one byte, or of one character of two, is first tried
    /// where the state is read in place (the in-place way is set only
    /// when the output has not ended and no UTF-8 sequence is held back,
    /// [`set_in_place_now`](Self::set_in_place_now)); every other, or one
    /// that does not only continue it, takes one out-of-line call.
    #[inline(always)]
    pub(crate) fn push(&mut self, piece: &[u8], out: &mut Vec<StreamEvent>) {
        if let &[b] = piece
            && self.push_byte_in_place(b, out)
        {
            return;
        }
        self.push_other(piece, out);
    }

    /// The common piece, one byte, when it only continues what is read
    /// in place: an ASCII byte of a JSON string that does not end it
    /// (within the size bound), or visible text that cannot start a
    /// marker. Inlined where the pieces are pushed: a check of the byte
    /// against [`Plain`], then the appends (other states: a check of the
    /// state). Says whether it read the byte.
    #[inline(always)]
    fn push_byte_in_place(&mut self, b: u8, out: &mut Vec<StreamEvent>) -> bool {
        // The common byte: one test for the state, the bound and the
        // escape, one for the byte.
        if self.buf.len() < self.plain.below && JSON_PLAIN[usize::from(b)] {
            self.debug_plain_for_check();
            push_ascii(&mut self.buf, b);
            if let Some(index) = self.plain.fragment {
                push_fragment_byte(index, b, out);
            }
            return true;
        }
        match self.in_place {
            InPlace::JsonString {
                limit,
                escaped,
                fragment,
            } if self.buf.len() < limit => {
                // The plain byte not after a backslash took the way above;
                // one past ASCII is not a character alone.
                if !b.is_ascii() {
                    return false;
                }
                let now = match string_byte(b, escaped) {
                    StringByte::Close => return self.close_string_in_place(out),
                    StringByte::Escape => true,
                    StringByte::Plain => false,
                };
                self.set_in_place(InPlace::json_string(limit, now, fragment));
                push_ascii(&mut self.buf, b);
                if let Some(index) = fragment {
                    push_fragment_byte(index, b, out);
                }
                true
            }
            InPlace::Text => match self.c.text_bytes[usize::from(b)] {
                TextByte::Held | TextByte::High => false,
                class => {
                    match out.last_mut() {
                        Some(StreamEvent::Text(last)) => push_ascii(last, b),
                        _ => push_text(&ASCII[usize::from(b)..][..1], out),
                    }
                    if class == TextByte::Content {
                        self.ending = Ending::Content;
                    }
                    true
                }
            },
            InPlace::JsonMember { run } => self.continue_json_member(run, b, out),
            InPlace::JsonArgs(read) if read.string && self.buf.len() < read.limit => {
                // As in a string above; its closing quote too. Changed
                // where it is: a copy of the state, changed and written
                // back, costs more than the byte's own reading.
                if !b.is_ascii() {
                    return false;
                }
                let InPlace::JsonArgs(read) = &mut self.in_place else {
                    unreachable!("matched above")
                };
                read.string_step(b);
                let index = read.index as usize;
                self.plain = Plain::of(&self.in_place);
                push_ascii(&mut self.buf, b);
                push_fragment_byte(index, b, out);
                true
            }
            InPlace::JsonArgs(_) => self.continue_json_args(b, out),
            _ => false,
        }
    }

    /// A piece of more than one byte inside a started call's arguments
    /// array or object ([`InPlace::JsonArgs`], `args`): appended and sent
    /// when it is whole UTF-8 within the size bound and either only
    /// continues a string of the value ([`string_run`], the common piece:
    /// one pass, and the state changes only when the escape does) or
    /// [`ArgsInPlace::steps`] reads all of it. Says whether it read the
    /// piece.
    #[inline(never)]
    fn continue_json_args_piece(&mut self, piece: &[u8], out: &mut Vec<StreamEvent>) -> bool {
        // Changed where it is (see the string arm of `push_byte_in_place`):
        // in a string run only the escape and the check change.
        let InPlace::JsonArgs(args) = &mut self.in_place else {
            return false;
        };
        if self.buf.len() + piece.len() > args.limit {
            return false;
        }
        let mut check = args.check;
        let before = (args.string, args.escaped);
        let text = if args.string
            && let Some((text, escaped)) = string_run(piece, args.escaped, &mut check)
        {
            args.escaped = escaped;
            args.check = check;
            text
        } else {
            let Some(next) = args.steps(piece, self.c.firsts[args.run as usize].json_ascii) else {
                return false;
            };
            let Some(text) = Piece::of(piece, piece.is_ascii()) else {
                return false;
            };
            *args = next;
            text
        };
        let index = args.index as usize;
        // The common byte's test changes only with the string and its
        // escape.
        let replan = (args.string, args.escaped) != before;
        if replan {
            self.plain = Plain::of(&self.in_place);
        }
        text.push_to(&mut self.buf);
        push_arguments(index, text, out);
        true
    }

    /// A one-byte piece inside a started call's arguments array or object
    /// ([`InPlace::JsonArgs`], `args`) that the string arm of
    /// [`push_byte_in_place`](Self::push_byte_in_place) did not take (a
    /// byte outside the value's strings, or one past the size bound):
    /// appended and sent when [`ArgsInPlace::step`] reads it within the
    /// bound. Says whether it read the byte.
    #[inline(never)]
    fn continue_json_args(&mut self, b: u8, out: &mut Vec<StreamEvent>) -> bool {
        let InPlace::JsonArgs(args) = &mut self.in_place else {
            return false;
        };
        // Read where the state is (see the string arm of
        // `push_byte_in_place`); a byte not read changes nothing.
        let json_ascii = self.c.firsts[args.run as usize].json_ascii;
        if self.buf.len() >= args.limit || !args.step(b, json_ascii) {
            return false;
        }
        let index = args.index as usize;
        self.plain = Plain::of(&self.in_place);
        // `b` is ASCII: a character of one byte.
        self.buf.push(char::from(b));
        match out.last_mut() {
            Some(StreamEvent::ArgumentsDelta(last)) if last.index == index => {
                last.fragment.push(char::from(b))
            }
            _ => push_arguments(index, Piece::Char(char::from(b)), out),
        }
        true
    }

    /// The quote that ends a string of a JSON call's object read in place
    /// (not after a backslash): what [`push_steps`](Self::push_steps)
    /// does with it first, without the way there. The bytes read in place
    /// are counted, then the quote is read as the object's next byte
    /// ([`continue_json_member`](Self::continue_json_member)); when that
    /// declines it, the steps read it, finding the bytes counted (says
    /// whether it read the quote).
    #[inline(never)]
    fn close_string_in_place(&mut self, out: &mut Vec<StreamEvent>) -> bool {
        self.settle();
        let Some(State::Run(RunState { run, .. })) = &self.state else {
            return false;
        };
        let run = *run;
        self.continue_json_member(run, b'"', out)
    }

    /// A piece of two bytes whose first may begin a character (as most
    /// accented Latin letters are; a longer character takes the general
    /// way, as testing for it would cost every longer piece), when it is
    /// one whole character that only continues what is
    /// read in place: a JSON string (within the size bound, not after a
    /// backslash), visible text (no marker starts with its first byte) or
    /// a raw value (none that ends it does, within the bound). It is
    /// decoded by its length and appended as a character, without the
    /// piece's scan and the UTF-8 check; says whether it read the piece
    /// (what it does is what [`continue_in_place`] would do).
    ///
    /// [`continue_in_place`]: Self::continue_in_place
    #[inline(never)]
    fn push_wide(&mut self, piece: &[u8], out: &mut Vec<StreamEvent>) -> bool {
        let Some(c) = one_char(piece) else {
            return false;
        };
        let lead = usize::from(piece[0]);
        match self.in_place {
            // Inside a string, not after a backslash (see [`Plain`]).
            InPlace::JsonString { .. } | InPlace::JsonArgs(_)
                if self.buf.len() + piece.len() <= self.plain.below =>
            {
                self.debug_plain_for_check();
                self.buf.push(c);
                if let Some(index) = self.plain.fragment {
                    match out.last_mut() {
                        Some(StreamEvent::ArgumentsDelta(last)) if last.index == index => {
                            last.fragment.push(c)
                        }
                        _ => push_arguments(index, Piece::Char(c), out),
                    }
                }
                true
            }
            InPlace::Text if self.c.text_bytes[lead] == TextByte::High => {
                match out.last_mut() {
                    Some(StreamEvent::Text(last)) => last.push(c),
                    _ => out.push(StreamEvent::Text(Piece::Char(c).started())),
                }
                if !c.is_whitespace() {
                    self.ending = Ending::Content;
                }
                true
            }
            InPlace::RawValue { run, limit }
                if self.buf.len() + piece.len() <= limit
                    && !self.c.firsts[run].value.in_piece(&piece[..1]) =>
            {
                self.buf.push(c);
                true
            }
            _ => false,
        }
    }

    /// Every piece but the common one: read in place when it only
    /// continues what is read there, otherwise by the steps.
    #[inline(never)]
    fn push_other(&mut self, piece: &[u8], out: &mut Vec<StreamEvent>) {
        if let &[lead, _] = piece
            && lead >= 0xc2
            && self.push_wide(piece, out)
        {
            // One character of two bytes.
            return;
        }
        if (2..=SHORT_PIECE).contains(&piece.len())
            && self.buf.len() + piece.len() <= self.plain.below
            && piece.iter().all(|&b| JSON_PLAIN[usize::from(b)])
        {
            // The common piece of more than one byte inside a JSON
            // string: plain bytes, ASCII, none ending the string or
            // escaping the next (see [`Plain`]).
            self.debug_plain_for_check();
            Piece::Ascii(piece).push_to(&mut self.buf);
            if let Some(index) = self.plain.fragment {
                push_arguments(index, Piece::Ascii(piece), out);
            }
            return;
        }
        if !self.continue_in_place(piece, out) {
            self.push_steps(piece, out);
        }
    }

    /// [`push`](Self::push)'s general way: decodes the piece into the held
    /// text and reads it with the steps.
    #[inline(never)]
    fn push_steps(&mut self, piece: &[u8], out: &mut Vec<StreamEvent>) {
        if self.eof {
            return;
        }
        let (marker, member, string) = match self.in_place {
            InPlace::Marker { .. } => (true, false, false),
            InPlace::JsonMember { .. } => (false, true, false),
            InPlace::JsonString { .. } | InPlace::JsonArgs(_) => (false, false, true),
            _ => (false, false, false),
        };
        self.settle();
        if string
            && piece.len() == 1
            && let Some(State::Run(RunState { run, .. })) = &self.state
        {
            // The quote that ends a string of a JSON call's object (what
            // was read in place before it now counted): read in place too.
            let run = *run;
            if self.continue_json_member(run, piece[0], out) {
                return;
            }
        }
        self.compact();
        if let &[b] = piece
            && b.is_ascii()
            && self.utf8.is_empty()
        {
            push_ascii(&mut self.buf, b);
        } else if self.utf8.is_empty() && piece.len() <= SHORT_ASCII && piece.is_ascii() {
            // A short ASCII piece (markup, mostly) is whole text: appended
            // byte by byte, without the UTF-8 check and the copy.
            for &b in piece {
                push_ascii(&mut self.buf, b);
            }
        } else if self.utf8.is_empty() {
            let rest = decode_into(&mut self.buf, piece, false, out);
            self.utf8.extend_from_slice(rest);
        } else {
            let mut pending = mem::take(&mut self.utf8);
            pending.extend_from_slice(piece);
            let kept = decode_into(&mut self.buf, &pending, false, out).len();
            pending.drain(..pending.len() - kept);
            self.utf8 = pending;
        }
        self.partial = None;
        // A piece after a partial marker it did not only continue makes a
        // marker whole (or shows it was none), and a byte the in-place
        // read of a JSON object declined ends the object, breaks a bound
        // or may start a marker: the steps read them.
        if marker || (member && piece.len() == 1) || !self.read_in_place(out) {
            self.drive(out);
        }
        self.set_in_place_now();
    }

    /// The text from `at` on is the start of a marker of list `slot` the
    /// steps wait on (or, for a list whitespace may precede, nothing):
    /// [`InPlace::Marker`] with the markers it may still become, or
    /// [`InPlace::No`] when it is none of them (or one is whole).
    fn marker_in_place(&self, at: usize, slot: usize) -> InPlace {
        let tail = &self.bytes()[at..];
        let mut mask = 0u32;
        for (i, m) in self.c.waits()[slot].markers.iter().enumerate() {
            let m = m.as_bytes();
            if tail.starts_with(m) || i >= 32 {
                return InPlace::No;
            }
            if m.starts_with(tail) {
                mask |= 1 << i;
            }
        }
        if mask == 0 {
            return InPlace::No;
        }
        InPlace::Marker { at, slot, mask }
    }

    /// A piece after the start of a marker the steps wait on
    /// ([`InPlace::Marker`]): appended when the text then still ends
    /// inside one of the markers it may become (and none is whole), or,
    /// before one that whitespace may precede, in whitespace; the steps
    /// would wait again, changed in nothing. Says whether it read the
    /// piece; a piece that makes a marker whole, or none, or cuts a
    /// character of one, is left to the steps.
    fn continue_marker(&mut self, at: usize, slot: usize, mask: u32, piece: &[u8]) -> bool {
        let list = &self.c.waits()[slot];
        let held = self.buf.len() - at;
        let ws = if held == 0 && list.ws {
            piece.iter().take_while(|b| b.is_ascii_whitespace()).count()
        } else {
            0
        };
        let rest = &piece[ws..];
        let (at, mut left, mut text) = (at + ws, 0u32, None);
        if !rest.is_empty() {
            let mut bits = mask;
            while bits != 0 {
                let i = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let m = &list.markers[i];
                let need = &m.as_bytes()[held..];
                if rest.len() >= need.len() {
                    if rest.starts_with(need) {
                        // Whole: the steps read it.
                        return false;
                    }
                } else if need.starts_with(rest) {
                    left |= 1 << i;
                    text = text.or_else(|| m.get(held..held + rest.len()));
                }
            }
            if left == 0 {
                return false;
            }
        } else {
            left = mask;
        }
        // Whitespace is ASCII; the rest is a marker's start, appended
        // from the marker itself when it ends at a character boundary.
        let text = match text {
            Some(text) => text,
            None if rest.is_empty() => "",
            None => return false,
        };
        for &b in &piece[..ws] {
            push_ascii(&mut self.buf, b);
        }
        self.buf.push_str(text);
        // Read after a marker's start: the common byte's test was and
        // stays off ([`Plain`]).
        debug_assert_eq!(self.plain, Plain::of(&self.in_place));
        self.in_place = InPlace::Marker {
            at,
            slot,
            mask: left,
        };
        true
    }

    /// A one-byte piece of a JSON call's object ([`InPlace::JsonMember`],
    /// or the quote that ends a string of it): read as the steps would
    /// read it, when it cannot start a marker, the scanner reads it with
    /// the object still open and within the bounds, and the member walk
    /// follows it ([`MemberWalk::step`]: whitespace, punctuation, the
    /// first and last bytes of keys and member values); the call started,
    /// or its name not known yet (then nothing is sent, and a byte that
    /// ends the name starts the call, as the steps would start it there).
    /// Says whether it read the piece; the way the next piece is read in
    /// place is then set.
    fn continue_json_member(&mut self, run: usize, b: u8, out: &mut Vec<StreamEvent>) -> bool {
        let c = &*self.c;
        if b >= 0x80 || c.firsts[run].json_ascii >> b & 1 != 0 {
            return false;
        }
        let len = self.buf.len();
        let Some(State::Run(RunState {
            phase: Phase::Body(Body::Json { info, args }),
            ..
        })) = &mut self.state
        else {
            return false;
        };
        let started = info.id.is_some();
        if args.at != len || (!started && self.walk.name().is_some()) {
            return false;
        }
        let before = args.scan.clone();
        if !args.scan.step_within(b) {
            return false;
        }
        push_ascii(&mut self.buf, b);
        let keys = || {
            CallKeys::of(&c.format.body)
                .unwrap_or_else(|| unreachable!("a JSON body belongs to a JSON-object format"))
        };
        let Some(sends) = self.walk.step(&self.buf, len, keys, started) else {
            self.buf.truncate(len);
            args.scan = before;
            return false;
        };
        args.at = len + 1;
        match (started, info.index) {
            (true, Some(index)) if sends => push_fragment_byte(index, b, out),
            (false, _) if self.walk.name().is_some() => {
                // The byte ended the name: the call starts (and what the
                // walk read of its arguments goes out) as the steps would
                // start it.
                self.start_json_call(out);
                self.set_in_place_now();
                return true;
            }
            _ => {}
        }
        // Inside the object, the scanner is in a string or between tokens.
        let next = match args.scan.string_escape() {
            Some(_) => json_in_place(self.buf.as_bytes(), &self.walk, run, info, args),
            None => json_args_in_place(self.buf.as_bytes(), &self.walk, run, info, args)
                .unwrap_or(InPlace::JsonMember { run }),
        };
        self.set_in_place(next);
        true
    }

    /// The JSON-object call read in place whose name the walk now knows:
    /// started as [`json_body`](Self::json_body) starts it (unless its id
    /// is still to come, or a bare object has not shown itself a call).
    fn start_json_call(&mut self, out: &mut Vec<StreamEvent>) {
        let compiled = Arc::clone(&self.c);
        let Some(keys) = CallKeys::of(&compiled.format.body) else {
            return;
        };
        let Some(State::Run(RunState {
            bare,
            phase: Phase::Body(Body::Json { info, args }),
            ..
        })) = &mut self.state
        else {
            return;
        };
        let (bare, from, to) = (*bare, args.from, args.at);
        let mut taken = mem::take(info);
        self.walk_json_call(bare, &mut taken, from, to, keys, out);
        if let Some(State::Run(RunState {
            phase: Phase::Body(Body::Json { info, .. }),
            ..
        })) = &mut self.state
        {
            *info = taken;
        }
    }

    /// The step that returns this waits because the text ends inside one
    /// of the markers of `on` starting at `at` (or, where whitespace may
    /// precede them, in whitespace, `at` being the end of the text).
    fn wait_on(&mut self, at: usize, run: Option<usize>, on: WaitOn) -> Flow {
        if !self.eof {
            self.partial = Some((at, Compiled::wait_slot(run, on)));
        }
        Flow::Wait
    }

    /// Reads a piece that only continues what the state reads, before it
    /// is decoded into the held text and without the steps (see
    /// [`InPlace`]): visible text where no marker starts, bytes that
    /// continue a string of a JSON call's object, or a raw parameter
    /// value's bytes that cannot start its end, within the size bound (a
    /// short piece read in one pass, see [`Piece`]). Says whether it read
    /// the piece (what it does is what the steps would do); a piece that
    /// is not whole UTF-8 is never read here.
    #[inline]
    fn continue_in_place(&mut self, piece: &[u8], out: &mut Vec<StreamEvent>) -> bool {
        match self.in_place {
            InPlace::No => false,
            // Nothing to read: what is read in place goes on as it was.
            _ if piece.is_empty() => true,
            InPlace::Marker { at, slot, mask } => self.continue_marker(at, slot, mask, piece),
            InPlace::JsonMember { run } => match *piece {
                [b] => self.continue_json_member(run, b, out),
                _ => false,
            },
            InPlace::JsonArgs(_) => self.continue_json_args_piece(piece, out),
            InPlace::RawValue { run, limit } => {
                if self.buf.len() + piece.len() > limit || self.c.firsts[run].value.in_piece(piece)
                {
                    return false;
                }
                let Some(piece) = Piece::of(piece, piece.is_ascii()) else {
                    return false;
                };
                piece.push_to(&mut self.buf);
                true
            }
            InPlace::Text => {
                let Some((piece, content)) = self.text_run(piece) else {
                    return false;
                };
                match out.last_mut() {
                    Some(StreamEvent::Text(last)) => piece.push_to(last),
                    _ => out.push(StreamEvent::Text(piece.started())),
                }
                if content {
                    self.ending = Ending::Content;
                }
                true
            }
            InPlace::JsonString {
                limit,
                escaped,
                fragment,
                ..
            } => {
                if self.buf.len() + piece.len() > limit {
                    return false;
                }
                // No check follows the call's own strings.
                let mut unchecked = JsonCheck::UNKNOWN;
                let Some((piece, now)) = string_run(piece, escaped, &mut unchecked) else {
                    return false;
                };
                piece.push_to(&mut self.buf);
                if let Some(index) = fragment {
                    push_arguments(index, piece, out);
                }
                if now != escaped {
                    self.set_in_place(InPlace::json_string(limit, now, fragment));
                }
                true
            }
        }
    }

    /// `piece` as visible text that no marker starts in (nothing is held
    /// back before it), with whether it holds more than whitespace; `None`
    /// when a marker may start in it or it is not whole UTF-8. A short
    /// piece is read in one pass over the compiled table, a byte that may
    /// start a marker tried against the markers where it is (`a<b` is
    /// text in Hermes); a long one is searched for the markers' first
    /// bytes.
    #[inline(never)]
    fn text_run<'p>(&self, piece: &'p [u8]) -> Option<(Piece<'p>, bool)> {
        let c = &*self.c;
        if piece.len() > SHORT_PIECE {
            if c.text_firsts.in_piece(piece) {
                return None;
            }
            let text = std::str::from_utf8(piece).ok()?;
            return Some((Piece::Text(text), !text.trim().is_empty()));
        }
        let (mut content, mut ascii) = (false, true);
        for (i, &b) in piece.iter().enumerate() {
            match c.text_bytes[usize::from(b)] {
                TextByte::Content => content = true,
                TextByte::Space => {}
                TextByte::High => ascii = false,
                TextByte::Held => {
                    let rest = &piece[i..];
                    if c.text_markers
                        .iter()
                        .any(|m| at(rest, false, 0, m) != Tri::No)
                    {
                        return None;
                    }
                    if b.is_ascii() {
                        content |= !char::from(b).is_whitespace();
                    } else {
                        ascii = false;
                    }
                }
            }
        }
        let piece = Piece::of(piece, ascii)?;
        if !content {
            // Only ASCII whitespace and other characters: those may be
            // whitespace too.
            content = match piece {
                Piece::Ascii(_) => false,
                Piece::Char(c) => !c.is_whitespace(),
                Piece::Text(text) => !text.trim().is_empty(),
            };
        }
        Some((piece, content))
    }

    /// Sets what the next piece may be read as in place, with the state
    /// as the steps left it: nothing while a UTF-8 sequence is held back
    /// (the piece completes it first). Only a JSON body's states have a
    /// common byte's test ([`Plain`]); the others set none without
    /// matching the state they set.
    fn set_in_place_now(&mut self) {
        self.plain = Plain::NONE;
        let partial = self.partial.take();
        if !self.utf8.is_empty() {
            self.in_place = InPlace::No;
            return;
        }
        if let Some((at, slot)) = partial {
            self.in_place = self.marker_in_place(at, slot);
            return;
        }
        let len = self.buf.len();
        if let Some((run, from, at, bytes)) = self.state.as_mut().and_then(State::raw_value) {
            self.in_place = if *at == len {
                InPlace::RawValue {
                    run,
                    limit: from + self.limits.max_argument_bytes.saturating_sub(bytes),
                }
            } else {
                InPlace::No
            };
            return;
        }
        self.in_place = match &mut self.state {
            Some(State::Text) if !self.anchor && self.pos == self.buf.len() => InPlace::Text,
            Some(State::Run(RunState {
                run,
                phase: Phase::Body(Body::Json { info, args }),
                ..
            })) if args.at == self.buf.len() => {
                let json = json_in_place(self.buf.as_bytes(), &self.walk, *run, info, args);
                self.plain = Plain::of(&json);
                json
            }
            _ => InPlace::No,
        };
    }

    /// Hands the bytes read in place since the steps last ran to the
    /// scanner and the walk that had not counted them, before the steps
    /// run again.
    fn settle(&mut self) {
        if matches!(
            self.in_place,
            InPlace::No | InPlace::Text | InPlace::Marker { .. } | InPlace::JsonMember { .. }
        ) {
            // Nothing read in place to count: the common case, without a
            // copy of the state.
            self.set_in_place(InPlace::No);
            return;
        }
        let in_place = self.in_place;
        self.set_in_place(InPlace::No);
        if let InPlace::JsonArgs(read) = in_place {
            // The scanner and the walk count the bytes, which end neither
            // the value nor the call and break no bound, and are left
            // where the read in place ends (what it read was sent).
            let Some(State::Run(RunState {
                phase: Phase::Body(Body::Json { args, .. }),
                ..
            })) = &mut self.state
            else {
                unreachable!("the arguments are read in place only in a JSON body")
            };
            let n = self.buf.len() - args.at;
            if n > 0 {
                let (depth, string) = (read.depth as usize, read.string.then_some(read.escaped));
                let Some(entry) = self.walk.skip_in_arguments(n, depth, string) else {
                    unreachable!("the walk is in the arguments read in place")
                };
                // The scanner is as much deeper (or less deep) as the walk.
                let outer = args.scan.depth() + depth - entry;
                args.scan.skip_nested(n, outer, string);
                args.at += n;
            }
            // Kept with the escape the read in place followed (the check
            // is then handed every byte again).
            let mut check = read.check;
            check.set_escaped(read.string && read.escaped);
            args.checked = Some((args.at, check));
            return;
        }
        if let InPlace::RawValue { .. } = in_place {
            let len = self.buf.len();
            if let Some((_, _, at, _)) = self.state.as_mut().and_then(State::raw_value) {
                *at = len;
            }
            return;
        }
        let InPlace::JsonString {
            escaped, fragment, ..
        } = in_place
        else {
            return;
        };
        let Some(State::Run(RunState {
            phase: Phase::Body(Body::Json { args, .. }),
            ..
        })) = &mut self.state
        else {
            unreachable!("bytes of a JSON string are read in place only in a JSON body")
        };
        let n = self.buf.len() - args.at;
        if n > 0 {
            args.scan.skip_in_string(n, escaped);
            self.walk.skip_in_string(n, escaped, fragment.is_some());
            args.at += n;
        }
    }

    /// Reads the common piece where the state is, without the steps that
    /// move it: visible text holding no byte that can start a marker, or
    /// more of a started call's JSON arguments that does not end them.
    /// Says whether it read the piece (what it does is what the steps
    /// would do); otherwise the steps read it.
    fn read_in_place(&mut self, out: &mut Vec<StreamEvent>) -> bool {
        let len = self.buf.len();
        if let Some((run, from, &mut searched, bytes)) =
            self.state.as_mut().and_then(State::raw_value)
        {
            // More of a raw value: it goes on while it holds none of the
            // markers that end it and stays in bounds; the text may end
            // inside one, as long as the value before it is in bounds.
            let budget = self.limits.max_argument_bytes.saturating_sub(bytes);
            let c = &*self.c;
            let firsts = &c.firsts[run].value;
            let to = match firsts.next(self.buf.as_bytes(), searched) {
                None => len,
                Some(_) => match self.find_in(searched, &c.value_ends[run], firsts) {
                    Hit::Partial { at } => at,
                    Hit::None => len,
                    Hit::Found { .. } => return false,
                },
            };
            if to - from > budget {
                return false;
            }
            if to < len {
                self.partial = Some((to, Compiled::wait_slot(Some(run), WaitOn::Value)));
            }
            if let Some((_, _, at, _)) = self.state.as_mut().and_then(State::raw_value) {
                *at = to;
            }
            return true;
        }
        match &mut self.state {
            Some(State::Text) if !self.anchor => {
                // No marker, or only the start of one at the end: what is
                // before it is shown, the rest held back.
                let c = &*self.c;
                let shown = match c.text_firsts.next(self.buf.as_bytes(), self.cur) {
                    None => len,
                    Some(_) => match self.find_in(self.cur, &c.text_markers, &c.text_firsts) {
                        Hit::Partial { at } => {
                            self.partial = Some((at, Compiled::wait_slot(None, WaitOn::Text)));
                            at
                        }
                        Hit::None => len,
                        Hit::Found { .. } => return false,
                    },
                };
                self.emit_text(shown, out);
                true
            }
            Some(State::Run(RunState {
                run,
                phase: Phase::Body(Body::Json { info, args }),
                ..
            })) => {
                let Some(keys) = CallKeys::of(&self.c.format.body) else {
                    return false;
                };
                let mut probe = args.clone();
                let stops = &self.c.stops[*run];
                if !matches!(
                    scan_json(
                        &self.buf,
                        false,
                        &mut probe,
                        stops,
                        &[],
                        &self.c.firsts[*run].json
                    ),
                    JsonOutcome::Need
                ) {
                    return false;
                }
                *args = probe;
                self.walk.walk(&self.buf, args.at, keys);
                let Some(index) = info.index.filter(|_| info.id.is_some()) else {
                    // Not started: the walk may now know its name (and the
                    // id its format may write); the steps, finding the text
                    // scanned and walked, then start it.
                    let named = self.walk.name().is_some()
                        && (keys.id.is_none() || self.walk.id().is_some());
                    return !named;
                };
                if let Some((from, to)) = self.walk.next_fragment(&self.buf) {
                    push_arguments(index, &self.buf[from..to], out);
                }
                true
            }
            Some(State::Run(RunState {
                run,
                phase:
                    Phase::Body(Body::Name {
                        info,
                        step: NameStep::Args(args),
                    }),
                ..
            })) => {
                let Some(index) = info.index else {
                    return false;
                };
                let CallBody::NameThenJson { fence, .. } = &self.c.format.body else {
                    return false;
                };
                let fence_end = fence.as_ref().map(|f| [f.end.as_str()]);
                let before = value_text_from(self.buf.as_bytes(), args);
                let mut probe = args.clone();
                let stops = &self.c.stops[*run];
                let also = fence_end.as_ref().map_or(&[][..], |f| &f[..]);
                if !matches!(
                    scan_json(
                        &self.buf,
                        false,
                        &mut probe,
                        stops,
                        also,
                        &self.c.firsts[*run].json
                    ),
                    JsonOutcome::Need
                ) {
                    return false;
                }
                *args = probe;
                if args.at > before {
                    push_arguments(index, &self.buf[before..args.at], out);
                }
                true
            }
            _ => self.only_waits(),
        }
    }

    /// Whether the text decoded so far leaves a step of a call's markup
    /// waiting, with nothing to say yet: a name or a key with no byte
    /// that may start the marker ending it (or only the start of one at
    /// the end), or the whitespace or the partial marker between calls or
    /// between a key-value call's pairs. Such a step is left as it is
    /// (what the steps would do is give it back unchanged); where it waits
    /// on a partial marker, that is noted as the step would note it.
    fn only_waits(&mut self) -> bool {
        match self.waits_here() {
            Some(partial) => {
                self.partial = partial;
                true
            }
            None => false,
        }
    }

    /// [`only_waits`](Self::only_waits)' test: `None` when the steps would
    /// do more than wait, otherwise the partial marker they would wait on
    /// (where it starts and its list), if any.
    fn waits_here(&self) -> Option<Option<(usize, usize)>> {
        let Some(State::Run(RunState { run, phase, .. })) = &self.state else {
            return None;
        };
        let run = *run;
        let len = self.buf.len();
        let def = &self.c.format.runs[run];
        let wait = |p: usize, on: WaitOn| Some(Some((p, Compiled::wait_slot(Some(run), on))));
        let body = match phase {
            Phase::Body(body) => body,
            // Between calls: whitespace, or the start of the marker that
            // comes next.
            Phase::CallEnd | Phase::ExpectEnd => {
                let (end, on) = match phase {
                    Phase::CallEnd => (&def.call_end, WaitOn::CallEnd),
                    _ => (&def.end, WaitOn::End),
                };
                let p = self.skip_ws(self.cur);
                let end = end.as_deref()?;
                return match self.at(p, end) {
                    Tri::Maybe => wait(p, on),
                    _ => None,
                };
            }
            Phase::Next { first } => {
                let p = self.skip_ws(self.cur);
                if !first && def.start == RunStart::BodyOpening {
                    // Only its end marker may follow a bare call.
                    let end = def.end.as_deref()?;
                    return match self.at(p, end) {
                        Tri::Maybe => wait(p, WaitOn::End),
                        _ => None,
                    };
                }
                if p == len {
                    return wait(p, WaitOn::Next);
                }
                let maybe =
                    |m: &Option<String>| m.as_deref().map(|m| self.at(p, m)).unwrap_or(Tri::No);
                return match maybe(&def.end) {
                    Tri::Maybe => wait(p, WaitOn::Next),
                    Tri::Yes => None,
                    Tri::No if maybe(&def.call_start) == Tri::Maybe => wait(p, WaitOn::Next),
                    Tri::No => None,
                };
            }
            _ => return None,
        };
        match (body, &self.c.format.body) {
            (
                Body::Kv {
                    step: KvStep::Name { from },
                    ..
                }
                | Body::Name {
                    step: NameStep::Name { from } | NameStep::Id { from, .. },
                    ..
                },
                _,
            ) => {
                if len - from > MAX_HEAD {
                    return None;
                }
                if self.c.firsts[run].head.next(self.bytes(), *from).is_none() {
                    return Some(None);
                }
                let (markers, on) = match body {
                    Body::Name {
                        step: NameStep::Id { .. },
                        ..
                    } => (self.c.id_ends.get(run)?, WaitOn::Id),
                    _ => (self.c.name_ends.get(run)?, WaitOn::Name),
                };
                match self.find_in(*from, &markers.list, &markers.firsts) {
                    Hit::Partial { at } => wait(at, on),
                    Hit::None => Some(None),
                    Hit::Found { .. } => None,
                }
            }
            (
                Body::Kv {
                    step: KvStep::Key { from },
                    ..
                },
                CallBody::KeyValue(kv),
            ) => match self.find(*from, &[kv.key_end.as_str()]) {
                Hit::Partial { at } if at - from <= MAX_HEAD => wait(at, WaitOn::Key),
                Hit::None if len - from <= MAX_HEAD => Some(None),
                _ => None,
            },
            (
                Body::Kv {
                    step: step @ (KvStep::Pairs | KvStep::ExpectValue { .. }),
                    ..
                },
                CallBody::KeyValue(kv),
            ) => {
                let pairs = matches!(step, KvStep::Pairs);
                let (marker, on) = if pairs {
                    (&kv.key_start, WaitOn::Pairs)
                } else {
                    (&kv.value_start, WaitOn::ExpectValue)
                };
                let p = self.skip_ws(self.cur);
                if p == len {
                    return wait(p, on);
                }
                match self.at(p, marker) {
                    Tri::Maybe => wait(p, on),
                    Tri::Yes => None,
                    Tri::No => {
                        let run_end = def.end.as_deref();
                        if pairs && run_end.is_some_and(|end| self.at(p, end) == Tri::Maybe) {
                            wait(p, on)
                        } else {
                            None
                        }
                    }
                }
            }
            _ => None,
        }
    }

    /// The output ended: decides everything held back.
    pub(crate) fn finish(&mut self, out: &mut Vec<StreamEvent>) {
        if self.eof {
            return;
        }
        self.settle();
        let pending = mem::take(&mut self.utf8);
        decode_into(&mut self.buf, &pending, true, out);
        self.eof = true;
        self.drive(out);
    }

    /// Drops the text already decided when no state points into it.
    fn compact(&mut self) {
        let free = match &mut self.state {
            Some(State::Text | State::Reasoning)
            | Some(State::Harmony(HState::Between | HState::Text | HState::Reasoning)) => true,
            Some(State::Run(RunState {
                phase: Phase::Skip { info, from, .. },
                raw_start,
                ..
            })) if info.reported && *from == self.pos => {
                *from = 0;
                *raw_start = 0;
                true
            }
            _ => false,
        };
        if free && self.pos > 0 && self.pos == self.cur {
            self.buf.drain(..self.pos);
            self.cur = 0;
            self.pos = 0;
        }
    }

    /// Runs the steps until one waits for more text. The state is taken
    /// out once and handed to each step by reference.
    fn drive(&mut self, out: &mut Vec<StreamEvent>) {
        let Some(mut state) = self.state.take() else {
            return;
        };
        // The compiled format is shared: one change of its reference count
        // for the whole drive, not one for each step (an atomic change
        // costs about as much as a short step's own work).
        let compiled = Arc::clone(&self.c);
        let compiled = &*compiled;
        loop {
            let flow = match &mut state {
                State::Text => self.text(compiled, &mut state, out),
                State::Reasoning => self.reasoning(compiled, &mut state, out),
                State::Run(rs) => self.run(compiled, rs, out),
                State::Harmony(h) => self.harmony(compiled, h, out),
            };
            match flow {
                Flow::Go => {}
                Flow::Text => state = State::Text,
                Flow::Wait => break,
            }
        }
        self.state = Some(state);
    }

    // ---- searching the text -------------------------------------------

    fn bytes(&self) -> &[u8] {
        self.buf.as_bytes()
    }

    fn skip_ws(&self, p: usize) -> usize {
        skip_ws(self.bytes(), p)
    }

    fn at(&self, p: usize, marker: &str) -> Tri {
        at(self.bytes(), self.eof, p, marker)
    }

    /// The first of `markers` from `from` on (the longest where several
    /// start at one position).
    fn find<S: AsRef<str>>(&self, from: usize, markers: &[S]) -> Hit {
        self.find_in(
            from,
            markers,
            &Firsts::of(markers.iter().map(AsRef::as_ref)),
        )
    }

    /// [`find`](Self::find), told where the markers may start.
    fn find_in<S: AsRef<str>>(&self, from: usize, markers: &[S], firsts: &Firsts) -> Hit {
        let b = self.bytes();
        let mut next = from;
        while let Some(i) = firsts.next(b, next) {
            let byte = b[i];
            let mut partial = false;
            let mut best: Option<(usize, usize)> = None;
            for (w, m) in markers.iter().enumerate() {
                let m = m.as_ref();
                if m.as_bytes().first() != Some(&byte) {
                    continue;
                }
                match self.at(i, m) {
                    Tri::Yes if best.is_none_or(|(_, len)| m.len() > len) => {
                        best = Some((w, m.len()))
                    }
                    Tri::Maybe => partial = true,
                    _ => {}
                }
            }
            if let Some((which, _)) = best {
                return Hit::Found { at: i, which };
            }
            if partial {
                return Hit::Partial { at: i };
            }
            next = i + 1;
        }
        Hit::None
    }

    /// Scans a JSON value for its end, stopping at a marker met outside
    /// its strings.
    fn scan_json(
        &self,
        j: &mut JsonArgs,
        stops: &[(String, Stop)],
        also: &[&str],
        firsts: &Firsts,
    ) -> JsonOutcome {
        scan_json(&self.buf, self.eof, j, stops, also, firsts)
    }

    /// Whether one of `markers` starts exactly at `p`.
    fn find_at<S: AsRef<str>>(&self, p: usize, markers: &[S]) -> Tri {
        let mut maybe = false;
        for m in markers {
            match self.at(p, m.as_ref()) {
                Tri::Yes => return Tri::Yes,
                Tri::Maybe => maybe = true,
                Tri::No => {}
            }
        }
        if maybe { Tri::Maybe } else { Tri::No }
    }

    /// Where the text of the value `args` scans goes on from: the next
    /// byte to scan, past the whitespace before the value (which is not
    /// part of the arguments a call carries).
    fn value_text_from(&self, args: &JsonArgs) -> usize {
        value_text_from(self.bytes(), args)
    }

    fn json_args(&self, from: usize) -> JsonArgs {
        JsonArgs {
            scan: JsonScanner::new(
                self.limits.max_argument_bytes,
                self.limits.max_argument_depth,
            ),
            from,
            at: from,
            checked: None,
        }
    }

    // ---- events ---------------------------------------------------------

    fn emit_text(&mut self, to: usize, out: &mut Vec<StreamEvent>) {
        if to > self.pos {
            self.saw_content(self.pos, to);
            let text = &self.buf[self.pos..to];
            match out.last_mut() {
                Some(StreamEvent::Text(last)) => last.push_str(text),
                _ => out.push(StreamEvent::Text(text.to_owned())),
            }
        }
        self.pos = to;
        self.cur = to;
    }

    fn emit_reasoning(&mut self, to: usize, out: &mut Vec<StreamEvent>) {
        if to > self.pos {
            self.saw_content(self.pos, to);
            let text = &self.buf[self.pos..to];
            match out.last_mut() {
                Some(StreamEvent::Reasoning(last)) => last.push_str(text),
                _ => out.push(StreamEvent::Reasoning(text.to_owned())),
            }
        }
        self.pos = to;
        self.cur = to;
    }

    /// A fragment of call `index`'s arguments, `from..to` of the text:
    /// appended to the last event when that is a fragment of the same
    /// call.
    fn emit_arguments(&self, index: usize, from: usize, to: usize, out: &mut Vec<StreamEvent>) {
        if self.progress {
            push_arguments(index, &self.buf[from..to], out);
        }
    }

    /// Text or reasoning was written at `from..to`: unless it is all
    /// whitespace, the output no longer ends with a call.
    fn saw_content(&mut self, from: usize, to: usize) {
        if self.ending != Ending::Content && !self.buf[from..to].trim().is_empty() {
            self.ending = Ending::Content;
        }
    }

    /// Why the output ended, as far as its text tells (see
    /// [`TextReader`](super::TextReader)'s `finish`): by what it ended with.
    pub(crate) fn finish_reason(&self) -> FinishReason {
        match self.ending {
            Ending::Content => FinishReason::EndOfStream,
            Ending::Call => FinishReason::ToolCalls,
            Ending::Cut => FinishReason::Length,
            Ending::Stop => FinishReason::Stop,
        }
    }

    /// Harmony's end marker `ends[which]` (`<|end|>`, `<|call|>`,
    /// `<|return|>`) closed a message: `<|end|>` and `<|return|>` closing
    /// one that is not a call end the turn as a stop; a call's end keeps
    /// the call the output ends with.
    fn harmony_closed(&mut self, which: usize) {
        if which != 1 && self.ending != Ending::Call {
            self.ending = Ending::Stop;
        }
    }

    /// Consumes markup up to `to`.
    fn consume(&mut self, to: usize) {
        self.pos = to;
        self.cur = to;
    }

    fn raw(&self, from: usize, to: usize) -> String {
        let mut end = to.min(self.buf.len());
        while !self.buf.is_char_boundary(end) {
            end -= 1;
        }
        let cap = from + self.limits.max_argument_bytes.saturating_add(MAX_HEAD);
        if end > cap {
            end = cap;
            while !self.buf.is_char_boundary(end) {
                end -= 1;
            }
        }
        self.buf[from.min(end)..end].to_owned()
    }

    fn index(&mut self, info: &mut CallInfo) -> usize {
        *info.index.get_or_insert_with(|| {
            self.next_index += 1;
            self.next_index - 1
        })
    }

    /// Adds the raw parameter `value` under `key` to a call's arguments,
    /// typed by its tool's input schema, and counts its bytes. Says whether
    /// the key was new (a repeated key makes the call malformed).
    fn add_raw_value(
        &self,
        info: &CallInfo,
        key: &mut String,
        value: &str,
        args: &mut Map<String, Value>,
        bytes: &mut usize,
    ) -> bool {
        *bytes += value.len();
        let schema = info
            .name
            .as_ref()
            .and_then(|n| self.schemas.get(n.as_str()))
            .map(ToolSchema::as_value);
        let value = typed_value(schema, key, value);
        args.insert(mem::take(key), value).is_none()
    }

    /// The call's name is known: gives it its index and id and says so.
    fn start_call(
        &mut self,
        info: &mut CallInfo,
        name: CallName,
        given_id: Option<ToolCallId>,
        out: &mut Vec<StreamEvent>,
    ) {
        let index = self.index(info);
        let id = match given_id {
            Some(id) => {
                info.reused = !self.ids.insert(&id);
                id
            }
            None => {
                let id = self.generated_id(index);
                self.ids.insert(&id);
                id
            }
        };
        if self.progress {
            out.push(StreamEvent::CallStarted(CallStarted {
                index,
                id: id.clone(),
                name: name.clone(),
            }));
        }
        info.id = Some(id);
        info.name = Some(name);
    }

    /// The call's arguments closed and read: it is ready, unless it has
    /// no name or reuses an id (then it fails, with its markup `raw` of the
    /// text as its raw text).
    fn ready(
        &mut self,
        mut info: CallInfo,
        arguments: RawArguments,
        raw: Range<usize>,
        out: &mut Vec<StreamEvent>,
    ) {
        let index = self.index(&mut info);
        if info.id.is_none() || info.name.is_none() {
            let raw = self.raw(raw.start, raw.end);
            return self.failed(info, CallProblem::MalformedMarkup, raw, out);
        }
        if info.reused {
            let raw = self.raw(raw.start, raw.end);
            return self.failed(info, CallProblem::ReusedId, raw, out);
        }
        let (Some(id), Some(name)) = (info.id, info.name) else {
            unreachable!("both were just found")
        };
        self.ending = Ending::Call;
        out.push(StreamEvent::CallReady(ReadyCall {
            index,
            call: ToolCall::new(id, name, object_in_a_string(arguments)),
        }));
    }

    /// The id the reader gives call `index`: its prefix, then the index in
    /// decimal (written in place, not on the heap, when it is short enough
    /// to be kept in place).
    fn generated_id(&self, index: usize) -> ToolCallId {
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        let mut n = index;
        loop {
            at -= 1;
            digits[at] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        let digits = &digits[at..];
        let prefix = self.id_prefix.as_bytes();
        let mut id = [0u8; 64];
        let len = prefix.len() + digits.len();
        match id.get_mut(..len) {
            Some(id) => {
                id[..prefix.len()].copy_from_slice(prefix);
                id[prefix.len()..].copy_from_slice(digits);
                ToolCallId::from(std::str::from_utf8(id).expect("a prefix and digits"))
            }
            None => {
                let mut id = String::with_capacity(len);
                id.push_str(&self.id_prefix);
                id.extend(digits.iter().map(|&d| char::from(d)));
                ToolCallId::from(id)
            }
        }
    }

    /// The id of a call that failed or was cut off before its format gave
    /// one: the generated one, so the executor can still answer it.
    fn ensure_id(&mut self, info: &mut CallInfo) -> usize {
        let index = self.index(info);
        if info.id.is_none() {
            let id = self.generated_id(index);
            self.ids.insert(&id);
            info.id = Some(id);
        }
        index
    }

    fn failed(
        &mut self,
        mut info: CallInfo,
        kind: CallProblem,
        raw: String,
        out: &mut Vec<StreamEvent>,
    ) {
        let index = self.ensure_id(&mut info);
        self.ending = Ending::Call;
        out.push(StreamEvent::CallFailed(FailedCall {
            index: Some(index),
            id: info.id,
            name: info.name,
            kind,
            raw,
        }));
    }

    fn truncated(&mut self, mut info: CallInfo, raw: String, out: &mut Vec<StreamEvent>) {
        let index = self.ensure_id(&mut info);
        self.ending = Ending::Cut;
        out.push(StreamEvent::Truncated(TruncatedCall {
            index: Some(index),
            id: info.id,
            name: info.name,
            raw,
        }));
    }

    // ---- visible text and reasoning -------------------------------------

    /// Visible text, `state` being [`State::Text`]: shown up to the next
    /// marker, which `state` then becomes the reading of.
    fn text(&mut self, compiled: &Compiled, state: &mut State, out: &mut Vec<StreamEvent>) -> Flow {
        if self.anchor {
            let p = self.skip_ws(self.cur);
            if p == self.buf.len() && !self.eof {
                self.emit_text(p, out);
                return Flow::Wait;
            }
            self.anchor = false;
            if let Some(run) = self.bare_run_at(p) {
                self.emit_text(p, out);
                *state = State::Run(RunState {
                    run,
                    bare: true,
                    raw_start: p,
                    done: false,
                    phase: Phase::Open,
                });
                return Flow::Go;
            }
        }
        match self.find_in(self.cur, &compiled.text_markers, &compiled.text_firsts) {
            Hit::Found { at, which } => {
                self.emit_text(at, out);
                let hit = compiled.text_hits[which];
                if !matches!(hit, TextHit::Opening(_)) {
                    self.consume(at + compiled.text_markers[which].len());
                }
                *state = match hit {
                    TextHit::Reasoning => State::Reasoning,
                    TextHit::Run(run) | TextHit::Opening(run) => State::Run(RunState {
                        run,
                        bare: false,
                        raw_start: at,
                        done: false,
                        phase: Phase::Open,
                    }),
                };
                Flow::Go
            }
            Hit::Partial { at } => {
                self.emit_text(at, out);
                self.wait_on(at, None, WaitOn::Text)
            }
            Hit::None => {
                self.emit_text(self.buf.len(), out);
                Flow::Wait
            }
        }
    }

    /// The bare run (one without a start marker) whose opening is at `p`.
    fn bare_run_at(&self, p: usize) -> Option<usize> {
        let b = self.bytes();
        let first = *b.get(p)?;
        self.c.format.runs.iter().position(|run| {
            run.start == RunStart::OutputStart
                && match (&run.join, &self.c.format.body) {
                    (Join::List { open, .. }, _) => open.as_bytes().first() == Some(&first),
                    (_, CallBody::JsonObject { .. }) => first == b'{',
                    _ => false,
                }
        })
    }

    /// Reasoning, `state` being [`State::Reasoning`]: up to its end
    /// marker, after which `state` is visible text.
    fn reasoning(
        &mut self,
        compiled: &Compiled,
        state: &mut State,
        out: &mut Vec<StreamEvent>,
    ) -> Flow {
        let Some(end) = compiled.format.reasoning.as_ref().map(|r| r.end.as_str()) else {
            *state = State::Text;
            return Flow::Go;
        };
        match self.find(self.cur, &[end]) {
            Hit::Found { at, .. } => {
                self.emit_reasoning(at, out);
                self.consume(at + end.len());
                *state = State::Text;
                Flow::Go
            }
            Hit::Partial { at } => {
                self.emit_reasoning(at, out);
                self.wait_on(at, None, WaitOn::Reasoning)
            }
            Hit::None => {
                self.emit_reasoning(self.buf.len(), out);
                Flow::Wait
            }
        }
    }

    // ---- runs of calls ---------------------------------------------------

    fn run_def(&self, run: usize) -> &CallRun {
        &self.c.format.runs[run]
    }

    /// A run of calls: the step its phase says, which changes the phase
    /// in place.
    fn run(&mut self, compiled: &Compiled, rs: &mut RunState, out: &mut Vec<StreamEvent>) -> Flow {
        match rs.phase {
            Phase::Open => {
                if let Join::List { open, .. } = &compiled.format.runs[rs.run].join {
                    let p = self.skip_ws(self.cur);
                    match self.at(p, open) {
                        Tri::Yes => {
                            if !rs.bare {
                                self.consume(p + open.len());
                            } else {
                                self.cur = p + open.len();
                            }
                            rs.phase = Phase::ListItem;
                            Flow::Go
                        }
                        Tri::Maybe => Flow::Wait,
                        Tri::No if self.eof && p == self.buf.len() => {
                            let raw = self.raw(rs.raw_start, self.buf.len());
                            self.truncated(CallInfo::default(), raw, out);
                            self.consume(self.buf.len());
                            Flow::Text
                        }
                        Tri::No => self.junk(rs, p),
                    }
                } else {
                    rs.phase = Phase::Next { first: true };
                    Flow::Go
                }
            }
            Phase::Next { first } => self.next_call(compiled, rs, first, out),
            Phase::ListItem => {
                let p = self.skip_ws(self.cur);
                if p == self.buf.len() {
                    return self.run_eof_or_wait(rs, Phase::ListItem, out);
                }
                let close = match &compiled.format.runs[rs.run].join {
                    Join::List { close, .. } => close.as_str(),
                    _ => "",
                };
                if !close.is_empty() && self.at(p, close) == Tri::Yes {
                    if rs.bare {
                        // `[]` at the output start is text.
                        return self.give_back(rs);
                    }
                    self.consume(p + close.len());
                    rs.phase = self.after_list();
                    return Flow::Go;
                }
                self.begin_body(rs, p, out)
            }
            Phase::Body(_) => self.body(compiled, rs, out),
            Phase::CallEnd => {
                let Some(end) = compiled.format.runs[rs.run].call_end.as_deref() else {
                    rs.phase = Phase::After;
                    return Flow::Go;
                };
                let p = self.skip_ws(self.cur);
                match self.at(p, end) {
                    Tri::Yes => {
                        self.consume(p + end.len());
                        rs.phase = Phase::After;
                        Flow::Go
                    }
                    Tri::Maybe => self.wait_on(p, Some(rs.run), WaitOn::CallEnd),
                    Tri::No if p == self.buf.len() => {
                        self.consume(p);
                        Flow::Text
                    }
                    Tri::No => self.junk(rs, p),
                }
            }
            Phase::After => self.after_call(compiled, rs, out),
            Phase::ExpectEnd => {
                let Some(end) = compiled.format.runs[rs.run].end.as_deref() else {
                    return Flow::Text;
                };
                let p = self.skip_ws(self.cur);
                match self.at(p, end) {
                    Tri::Yes => {
                        self.consume(p + end.len());
                        Flow::Text
                    }
                    Tri::Maybe => self.wait_on(p, Some(rs.run), WaitOn::End),
                    Tri::No if p == self.buf.len() => {
                        self.consume(p);
                        Flow::Text
                    }
                    Tri::No => self.junk(rs, p),
                }
            }
            Phase::Skip { .. } => self.skip(compiled, rs, out),
        }
    }

    /// The bare run was not a call after all: its text is visible text.
    fn give_back(&mut self, rs: &RunState) -> Flow {
        self.cur = rs.raw_start;
        self.pos = rs.raw_start;
        Flow::Text
    }

    fn after_list(&self) -> Phase {
        Phase::ExpectEnd
    }

    /// At the end of the text inside a run: waits, or (at the end of the
    /// output) reports what was begun as truncated.
    fn run_eof_or_wait(
        &mut self,
        rs: &mut RunState,
        phase: Phase,
        out: &mut Vec<StreamEvent>,
    ) -> Flow {
        if !self.eof {
            rs.phase = phase;
            return Flow::Wait;
        }
        if rs.bare {
            return self.give_back(rs);
        }
        let raw = self.raw(rs.raw_start, self.buf.len());
        self.truncated(CallInfo::default(), raw, out);
        self.consume(self.buf.len());
        Flow::Text
    }

    fn next_call(
        &mut self,
        compiled: &Compiled,
        rs: &mut RunState,
        first: bool,
        out: &mut Vec<StreamEvent>,
    ) -> Flow {
        let run = &compiled.format.runs[rs.run];
        if !first && run.start == RunStart::BodyOpening {
            return self.after_opening_call(rs, run.end.as_deref());
        }
        let p = self.skip_ws(self.cur);
        if p == self.buf.len() {
            if !self.eof {
                rs.phase = Phase::Next { first };
                return self.wait_on(p, Some(rs.run), WaitOn::Next);
            }
            if first {
                let raw = self.raw(rs.raw_start, p);
                self.truncated(CallInfo::default(), raw, out);
            }
            self.consume(p);
            return Flow::Text;
        }
        if let Some(end) = &run.end {
            match self.at(p, end) {
                Tri::Yes => {
                    self.consume(p + end.len());
                    return Flow::Text;
                }
                Tri::Maybe => {
                    rs.phase = Phase::Next { first };
                    return self.wait_on(p, Some(rs.run), WaitOn::Next);
                }
                Tri::No => {}
            }
        }
        if let Some(call_start) = &run.call_start {
            return match self.at(p, call_start) {
                Tri::Yes => {
                    if rs.done {
                        rs.raw_start = p;
                    }
                    let after = p + call_start.len();
                    self.consume(after);
                    let after = if self.name_first() {
                        after
                    } else {
                        self.skip_ws(after)
                    };
                    self.begin_body(rs, after, out)
                }
                Tri::Maybe => {
                    rs.phase = Phase::Next { first };
                    self.wait_on(p, Some(rs.run), WaitOn::Next)
                }
                Tri::No => self.junk(rs, p),
            };
        }
        if !first && run.end.is_none() {
            return Flow::Text;
        }
        if !first {
            let starts: Vec<&str> = self.c.stops[rs.run]
                .iter()
                .filter(|(_, s)| *s == Stop::RunStart)
                .map(|(m, _)| m.as_str())
                .collect();
            match self.find_at(p, &starts) {
                Tri::Yes => {
                    self.consume(p);
                    return Flow::Text;
                }
                Tri::Maybe => {
                    rs.phase = Phase::Next { first };
                    return Flow::Wait;
                }
                Tri::No => {}
            }
        }
        if !first {
            rs.raw_start = p;
        }
        let at = if self.name_first() { self.cur } else { p };
        self.begin_body(rs, at, out)
    }

    /// After the call of a [`RunStart::BodyOpening`] run: the run's `end`
    /// marker is markup when it follows (whitespace between); otherwise the
    /// run ends with its call, and what follows, whitespace included, is
    /// visible text.
    fn after_opening_call(&mut self, rs: &mut RunState, end: Option<&str>) -> Flow {
        let p = self.skip_ws(self.cur);
        if let Some(end) = end {
            match self.at(p, end) {
                Tri::Yes => self.consume(p + end.len()),
                Tri::Maybe => {
                    rs.phase = Phase::Next { first: false };
                    return self.wait_on(p, Some(rs.run), WaitOn::End);
                }
                Tri::No => {}
            }
        }
        Flow::Text
    }

    /// Whether the body begins with a name written as text (whitespace
    /// before it is part of what the name reader trims).
    fn name_first(&self) -> bool {
        matches!(
            self.c.format.body,
            CallBody::NameThenJson { .. } | CallBody::KeyValue(_)
        )
    }

    /// Starts reading a call at `p`.
    fn begin_body(&mut self, rs: &mut RunState, p: usize, out: &mut Vec<StreamEvent>) -> Flow {
        let body = match &self.c.format.body {
            CallBody::JsonObject { .. } => {
                if p >= self.buf.len() {
                    return self.run_eof_or_wait(rs, Phase::Next { first: true }, out);
                }
                if self.bytes()[p] != b'{' {
                    return self.junk(rs, p);
                }
                self.walk = MemberWalk::new(p);
                Body::Json {
                    info: CallInfo::default(),
                    args: self.json_args(p),
                }
            }
            CallBody::NameThenJson { name_prefix, .. } => Body::Name {
                info: CallInfo::default(),
                step: if name_prefix.is_some() {
                    NameStep::Prefix
                } else {
                    NameStep::Name { from: p }
                },
            },
            CallBody::XmlParameters(x) => {
                let start = x.function_start.clone();
                match self.at(p, &start) {
                    Tri::Yes => Body::Xml {
                        info: CallInfo::default(),
                        step: XmlStep::Name {
                            from: p + start.len(),
                        },
                        args: Map::new(),
                        bytes: 0,
                    },
                    Tri::Maybe => {
                        rs.phase = Phase::Next { first: true };
                        return Flow::Wait;
                    }
                    Tri::No if p >= self.buf.len() => {
                        return self.run_eof_or_wait(rs, Phase::Next { first: true }, out);
                    }
                    Tri::No => return self.junk(rs, p),
                }
            }
            CallBody::KeyValue(_) => Body::Kv {
                info: CallInfo::default(),
                step: KvStep::Name { from: p },
                args: Map::new(),
                bytes: 0,
            },
            CallBody::Pythonic => Body::Py {
                info: CallInfo::default(),
                scan: PyCallScan::new(self.limits.max_argument_depth),
                from: p,
                at: p,
            },
            CallBody::Harmony(_) => return Flow::Text,
        };
        if !rs.bare {
            self.consume(p);
        } else {
            self.cur = p;
        }
        rs.phase = Phase::Body(body);
        Flow::Go
    }

    /// Text inside a run that is no call: a malformed call from `p` to the
    /// point where calls resume.
    fn junk(&mut self, rs: &mut RunState, p: usize) -> Flow {
        if rs.bare {
            return self.give_back(rs);
        }
        if rs.done {
            rs.raw_start = p;
        }
        rs.phase = Phase::Skip {
            info: CallInfo::default(),
            kind: CallProblem::MalformedMarkup,
            from: p,
        };
        Flow::Go
    }

    /// Skips a malformed call to its end marker, the next call's start
    /// marker or the end of the output.
    fn skip(&mut self, compiled: &Compiled, rs: &mut RunState, out: &mut Vec<StreamEvent>) -> Flow {
        let Phase::Skip { info, kind, from } = &mut rs.phase else {
            unreachable!("a skip step skips")
        };
        let stops = &compiled.stops[rs.run];
        let markers: Vec<&str> = stops.iter().map(|(m, _)| m.as_str()).collect();
        let hit = self.find(*from, &markers);
        let (raw_start, kind) = (rs.raw_start, *kind);
        let report = |this: &mut Self, info: CallInfo, end: usize, out: &mut Vec<StreamEvent>| {
            if !info.reported && end > raw_start {
                let raw = this.raw(raw_start, end);
                this.failed(info, kind, raw, out);
            }
        };
        match hit {
            Hit::Found { at, which } => {
                let (m, stop) = &stops[which];
                let end = match stop {
                    Stop::RunEnd | Stop::CallEnd => at + m.len(),
                    Stop::CallStart | Stop::RunStart => at,
                };
                report(self, mem::take(info), end, out);
                self.consume(end);
                match stop {
                    Stop::RunEnd | Stop::RunStart => Flow::Text,
                    Stop::CallEnd | Stop::CallStart => {
                        rs.phase = Phase::Next { first: false };
                        Flow::Go
                    }
                }
            }
            Hit::Partial { .. } | Hit::None if !self.eof => {
                *from = match hit {
                    Hit::Partial { at } => at,
                    _ => self.buf.len(),
                };
                if info.reported {
                    // Nothing of a refused call is kept.
                    self.consume(*from);
                }
                Flow::Wait
            }
            _ => {
                report(self, mem::take(info), self.buf.len(), out);
                self.consume(self.buf.len());
                Flow::Text
            }
        }
    }

    /// After a call: the run's join says what may follow.
    fn after_call(
        &mut self,
        compiled: &Compiled,
        rs: &mut RunState,
        out: &mut Vec<StreamEvent>,
    ) -> Flow {
        let run = &compiled.format.runs[rs.run];
        rs.bare = false;
        rs.done = true;
        match &run.join {
            Join::Single => {
                if run.end.is_some() && !matches!(self.c.format.body, CallBody::KeyValue(_)) {
                    rs.phase = Phase::ExpectEnd;
                    Flow::Go
                } else {
                    Flow::Text
                }
            }
            Join::Adjacent => {
                if run.end.is_none() && run.call_start.is_none() {
                    return Flow::Text;
                }
                rs.phase = Phase::Next { first: false };
                Flow::Go
            }
            Join::Separator(sep) => {
                let sep = sep.trim();
                let p = self.skip_ws(self.cur);
                let wait = |rs: &mut RunState| {
                    rs.phase = Phase::After;
                    Flow::Wait
                };
                if p == self.buf.len() && !self.eof {
                    return wait(rs);
                }
                match self.at(p, sep) {
                    Tri::Yes => {
                        let q = self.skip_ws(p + sep.len());
                        if q == self.buf.len() && !self.eof {
                            return wait(rs);
                        }
                        if self.bytes().get(q) == Some(&b'{') {
                            self.consume(q);
                            rs.raw_start = q;
                            return self.begin_body(rs, q, out);
                        }
                        self.end_or_text(rs)
                    }
                    Tri::Maybe => wait(rs),
                    Tri::No => self.end_or_text(rs),
                }
            }
            Join::List {
                separator, close, ..
            } => {
                let p = self.skip_ws(self.cur);
                if p == self.buf.len() {
                    if !self.eof {
                        rs.phase = Phase::After;
                        return Flow::Wait;
                    }
                    self.consume(p);
                    return Flow::Text;
                }
                if self.at(p, separator) == Tri::Yes {
                    self.consume(p + separator.len());
                    rs.raw_start = self.cur;
                    rs.phase = Phase::ListItem;
                    return Flow::Go;
                }
                if self.at(p, close) == Tri::Yes {
                    self.consume(p + close.len());
                    rs.phase = self.after_list();
                    return Flow::Go;
                }
                rs.raw_start = p;
                self.junk(rs, p)
            }
        }
    }

    fn end_or_text(&mut self, rs: &mut RunState) -> Flow {
        if self.run_def(rs.run).end.is_some() {
            rs.phase = Phase::ExpectEnd;
            Flow::Go
        } else {
            Flow::Text
        }
    }

    // ---- call bodies -----------------------------------------------------

    /// A call's body, read by its format's step: a step that waits leaves
    /// the body as far as it read it, in place.
    fn body(&mut self, compiled: &Compiled, rs: &mut RunState, out: &mut Vec<StreamEvent>) -> Flow {
        let Phase::Body(body) = &rs.phase else {
            unreachable!("a body step reads a body")
        };
        match body {
            Body::Json { .. } => self.json_body(compiled, rs, out),
            Body::Name { .. } => self.name_body(compiled, rs, out),
            Body::Xml { .. } => self.xml_body(compiled, rs, out),
            Body::Kv { .. } => self.kv_body(compiled, rs, out),
            Body::Py { .. } => self.py_body(compiled, rs, out),
        }
    }

    /// A failure met inside a call: ends the call where `stop` says.
    fn stopped(
        &mut self,
        rs: &mut RunState,
        info: CallInfo,
        kind: CallProblem,
        at: usize,
        which: usize,
        out: &mut Vec<StreamEvent>,
    ) -> Flow {
        let (m, stop) = &self.c.stops[rs.run][which];
        let (len, stop) = (m.len(), *stop);
        let end = match stop {
            Stop::RunEnd | Stop::CallEnd => at + len,
            Stop::CallStart | Stop::RunStart => at,
        };
        let raw = self.raw(rs.raw_start, end);
        self.failed(info, kind, raw, out);
        self.consume(end);
        match stop {
            Stop::RunEnd | Stop::RunStart => Flow::Text,
            Stop::CallEnd | Stop::CallStart => {
                rs.phase = Phase::Next { first: false };
                Flow::Go
            }
        }
    }

    /// A call whose arguments closed but do not read: it ends at its end
    /// marker (or the next call's start) when the run has end markers, and
    /// where its arguments ended otherwise.
    fn fail_at_end(
        &mut self,
        rs: &mut RunState,
        info: CallInfo,
        kind: CallProblem,
        end: usize,
        out: &mut Vec<StreamEvent>,
    ) -> Flow {
        let run = self.run_def(rs.run);
        let list = matches!(run.join, Join::List { .. });
        if !list && (run.end.is_some() || run.call_end.is_some()) {
            rs.phase = Phase::Skip {
                info,
                kind,
                from: end,
            };
            return Flow::Go;
        }
        let raw = self.raw(rs.raw_start, end);
        self.failed(info, kind, raw, out);
        self.consume(end);
        rs.phase = Phase::CallEnd;
        Flow::Go
    }

    /// Where a raw value that starts at `from` breaks the size bound, when
    /// it does (the call's values so far took `bytes`): decided from the
    /// value's length alone, so every chunking cuts it at the same byte.
    fn over_budget(&self, hit: Hit, from: usize, bytes: usize) -> Option<usize> {
        let budget = self.limits.max_argument_bytes.saturating_sub(bytes);
        let seen = match hit {
            Hit::Found { at, .. } | Hit::Partial { at } => at,
            Hit::None => self.buf.len(),
        } - from;
        (seen > budget).then_some(from + budget + 1)
    }

    fn refuse(
        &mut self,
        rs: &mut RunState,
        mut info: CallInfo,
        kind: CallProblem,
        mut from: usize,
        out: &mut Vec<StreamEvent>,
    ) -> Flow {
        from = from.min(self.buf.len());
        while !self.buf.is_char_boundary(from) {
            from += 1;
        }
        if matches!(kind, CallProblem::TooLarge | CallProblem::TooDeep) {
            // Refused now, with what arrived up to the bound; the rest of
            // the call is skipped without being kept.
            self.index(&mut info);
            let raw = self.raw(rs.raw_start, from);
            self.failed(info.clone(), kind, raw, out);
            info.reported = true;
            self.consume(from);
        }
        rs.phase = Phase::Skip { info, kind, from };
        Flow::Go
    }

    fn json_body(
        &mut self,
        compiled: &Compiled,
        rs: &mut RunState,
        out: &mut Vec<StreamEvent>,
    ) -> Flow {
        // The compiled format is shared: a reference count, not a copy of
        // the run's stop markers on every piece.
        let stops = &compiled.stops[rs.run];
        let Some(keys) = CallKeys::of(&compiled.format.body) else {
            unreachable!("a JSON body belongs to a JSON-object format")
        };
        let Phase::Body(Body::Json { info, args }) = &mut rs.phase else {
            unreachable!("a JSON body step reads a JSON body")
        };
        let whole = self.walk_whole_call(args, keys);
        let valid = whole.is_some();
        let outcome = match whole {
            Some(end) => {
                args.at = end;
                JsonOutcome::Complete {
                    start: args.from,
                    end,
                }
            }
            None => self.scan_json(args, stops, &[], &compiled.firsts[rs.run].json),
        };
        // The members are read as far as the scan decided the object:
        // the same bytes whatever the chunking.
        let decided = match outcome {
            JsonOutcome::Need => args.at,
            JsonOutcome::Complete { end, .. } => end,
            JsonOutcome::Stopped { at, .. } => at,
            JsonOutcome::TooLarge | JsonOutcome::TooDeep => args.from + args.scan.len(),
            JsonOutcome::Eof => self.buf.len(),
        };
        self.walk_json_call(rs.bare, info, args.from, decided, keys, out);
        // A bare object (Llama's, at the output start) that is not a call
        // is text; once it has started as a call, it is one.
        let may_give_back = rs.bare && info.id.is_none();
        match outcome {
            JsonOutcome::Need => Flow::Wait,
            JsonOutcome::Eof => {
                if may_give_back && !self.buf[args.from..].starts_with("{\"") {
                    return self.give_back(rs);
                }
                let info = mem::take(info);
                let raw = self.raw(rs.raw_start, self.buf.len());
                self.truncated(info, raw, out);
                self.consume(self.buf.len());
                Flow::Text
            }
            JsonOutcome::Stopped { at, which } => {
                if may_give_back {
                    return self.give_back(rs);
                }
                let info = mem::take(info);
                self.stopped(rs, info, CallProblem::MalformedArguments, at, which, out)
            }
            JsonOutcome::TooLarge | JsonOutcome::TooDeep => {
                let kind = if matches!(outcome, JsonOutcome::TooLarge) {
                    CallProblem::TooLarge
                } else {
                    CallProblem::TooDeep
                };
                let from = args.from + args.scan.len();
                let info = mem::take(info);
                self.refuse(rs, info, kind, from, out)
            }
            JsonOutcome::Complete { start, end } => {
                let text = &self.buf[start..end];
                let checked = if valid {
                    Checked::Whole
                } else if arguments_checked(self.buf.as_bytes(), &self.walk, args) {
                    Checked::Arguments
                } else {
                    Checked::Nothing
                };
                let read = read_walked_call(&self.buf, start, end, &self.walk, keys, checked);
                let raw_end = end;
                match read {
                    JsonCall::Call {
                        name,
                        arguments,
                        id,
                    } => {
                        let arguments = arguments.map(str::to_owned);
                        let id = id.map(ToolCallId::from);
                        if rs.bare {
                            self.pos = rs.raw_start;
                        }
                        if info.id.is_none() {
                            self.start_call(info, name, id, out);
                        } else {
                            debug_assert_eq!(info.name.as_ref(), Some(&name));
                        }
                        let arguments = arguments.unwrap_or_else(|| "{}".to_owned());
                        if self.walk.follows_arguments() {
                            // The member read as it streamed is the one the
                            // call carries: what is left of it goes now.
                            self.send_arguments(info, out);
                        } else if self.progress {
                            out.push(StreamEvent::ArgumentsDelta(ArgumentsDelta {
                                index: info.index.unwrap_or(0),
                                fragment: arguments.clone(),
                            }));
                        }
                        let info = mem::take(info);
                        self.ready(
                            info,
                            RawArguments::Text(arguments),
                            rs.raw_start..raw_end,
                            out,
                        );
                    }
                    JsonCall::NotACall if may_give_back => return self.give_back(rs),
                    JsonCall::Invalid if may_give_back && !text.starts_with("{\"") => {
                        return self.give_back(rs);
                    }
                    JsonCall::NotACall => {
                        let info = mem::take(info);
                        let kind = CallProblem::MalformedMarkup;
                        return self.fail_at_end(rs, info, kind, raw_end, out);
                    }
                    JsonCall::Invalid => {
                        let info = mem::take(info);
                        let kind = CallProblem::MalformedArguments;
                        return self.fail_at_end(rs, info, kind, raw_end, out);
                    }
                }
                self.consume(end);
                rs.phase = Phase::CallEnd;
                Flow::Go
            }
        }
    }

    /// A JSON-object call not scanned yet whose whole object is in the
    /// text, valid JSON within the bounds, read in one pass
    /// ([`MemberWalk::whole`]): the walk and where the object ends. The
    /// scan would end it at the same byte (the format's stop markers cannot
    /// be met in valid JSON, see [`never_in_json_object`]), so the call
    /// reads as it would, in two passes fewer. `None` for anything else:
    /// the scan reads it. The walk is the engine's from then on.
    fn walk_whole_call(&mut self, args: &JsonArgs, keys: CallKeys<'_>) -> Option<usize> {
        if !self.c.json_whole || args.at != args.from {
            return None;
        }
        // The object is one level: its members' values may nest one
        // level less than the arguments' bound.
        let depth = self.limits.max_argument_depth.checked_sub(1)?;
        let walk = MemberWalk::whole(
            &self.buf,
            args.from,
            keys,
            depth,
            self.limits.max_argument_bytes,
        )?;
        let end = walk.end()?;
        self.walk = walk;
        Some(end)
    }

    /// Reads a JSON-object call's members on to `to`: the call starts once
    /// its name is known (and, for a format that may write an id, once its
    /// id member has ended: the id a call starts with is the one it keeps),
    /// then the arguments text read so far goes out. A bare object starts
    /// only when it opens with a key (`{"`), the rule by which its end
    /// keeps it a call rather than text. Inlined in the JSON body's step
    /// (the whole-text read's way), whose only other caller is the rare
    /// call started in place.
    #[inline(always)]
    fn walk_json_call(
        &mut self,
        bare: bool,
        info: &mut CallInfo,
        from: usize,
        to: usize,
        keys: CallKeys<'_>,
        out: &mut Vec<StreamEvent>,
    ) {
        self.walk.walk(&self.buf, to, keys);
        if info.id.is_none() {
            let Some(name) = self.walk.name() else { return };
            let id = match (keys.id, self.walk.id()) {
                (None, _) => None,
                (Some(_), Some(id)) => id,
                (Some(_), None) => return,
            };
            if bare && !self.buf[from..].starts_with("{\"") {
                return;
            }
            let (name, id) = (CallName::from(name), id.map(ToolCallId::from));
            self.start_call(info, name, id, out);
        }
        self.send_arguments(info, out);
    }

    /// Sends what the walk has read of a started call's arguments and not
    /// sent yet.
    fn send_arguments(&mut self, info: &CallInfo, out: &mut Vec<StreamEvent>) {
        if let Some((from, to)) = self.walk.next_fragment(&self.buf) {
            self.emit_arguments(info.index.unwrap_or(0), from, to, out);
        }
    }

    fn name_body(
        &mut self,
        compiled: &Compiled,
        rs: &mut RunState,
        out: &mut Vec<StreamEvent>,
    ) -> Flow {
        // The compiled format is shared: borrowed through a reference
        // count, not copied on every piece.
        let CallBody::NameThenJson {
            name_prefix,
            id_marker,
            fence,
            name: form,
            ..
        } = &compiled.format.body
        else {
            unreachable!("a name body belongs to a name-then-JSON format")
        };
        let stops = &compiled.stops[rs.run];
        let Phase::Body(Body::Name { info, step }) = &mut rs.phase else {
            unreachable!("a name body step reads a name body")
        };
        match step {
            NameStep::Prefix => {
                let prefix = name_prefix.as_deref().unwrap_or_default();
                let p = self.skip_ws(self.cur);
                match self.at(p, prefix) {
                    Tri::Yes => {
                        self.consume(p + prefix.len());
                        *step = NameStep::Name { from: self.cur };
                        Flow::Go
                    }
                    Tri::Maybe => Flow::Wait,
                    Tri::No if p == self.buf.len() && self.eof => {
                        let info = mem::take(info);
                        let raw = self.raw(rs.raw_start, p);
                        self.truncated(info, raw, out);
                        self.consume(p);
                        Flow::Text
                    }
                    Tri::No if p == self.buf.len() => Flow::Wait,
                    // Read leniently: the name without its prefix.
                    Tri::No => {
                        *step = NameStep::Name { from: p };
                        Flow::Go
                    }
                }
            }
            NameStep::Name { from } | NameStep::Id { from, .. } => {
                let from = *from;
                let reading_id = matches!(step, NameStep::Id { .. });
                let (markers, n_own) = if reading_id {
                    (&compiled.id_ends[rs.run], 1)
                } else {
                    (
                        &compiled.name_ends[rs.run],
                        1 + usize::from(id_marker.is_some()),
                    )
                };
                match self.find_in(from, &markers.list, &markers.firsts) {
                    // Longer than a head may be, as it streams.
                    Hit::Found { at, .. } if at - from > MAX_HEAD => {
                        let info = mem::take(info);
                        self.refuse(rs, info, CallProblem::MalformedMarkup, from, out)
                    }
                    Hit::Found { at, which } if which < n_own => {
                        let head = self.buf[from..at].trim().to_owned();
                        let marker_len = markers.list[which].len();
                        if head.is_empty() || head.len() > MAX_HEAD {
                            let info = mem::take(info);
                            return self.refuse(rs, info, CallProblem::MalformedMarkup, at, out);
                        }
                        if !reading_id && which == 1 {
                            self.consume(at + marker_len);
                            *step = NameStep::Id {
                                from: self.cur,
                                name: head,
                            };
                            return Flow::Go;
                        }
                        let name = match step {
                            NameStep::Id { name, .. } => Some(mem::take(name)),
                            _ => None,
                        };
                        let (name, id) = match (name, form) {
                            (Some(name), _) => (name, Some(head)),
                            (None, NameForm::Plain) => (head, None),
                            (
                                None,
                                NameForm::IdWithName {
                                    prefix,
                                    index_separator,
                                },
                            ) => (name_in_id(&head, prefix, index_separator), Some(head)),
                        };
                        let id = id.as_deref().map(ToolCallId::from);
                        self.start_call(info, CallName::from(name), id, out);
                        self.consume(at + marker_len);
                        *step = if fence.is_some() {
                            NameStep::Fence
                        } else {
                            NameStep::Args(self.json_args(self.cur))
                        };
                        Flow::Go
                    }
                    Hit::Found { at, which } => {
                        let info = mem::take(info);
                        let kind = CallProblem::MalformedMarkup;
                        self.stopped(rs, info, kind, at, which - n_own, out)
                    }
                    Hit::Partial { at } if at - from <= MAX_HEAD => {
                        let on = if reading_id { WaitOn::Id } else { WaitOn::Name };
                        self.wait_on(at, Some(rs.run), on)
                    }
                    Hit::None if self.eof => {
                        let info = mem::take(info);
                        let raw = self.raw(rs.raw_start, self.buf.len());
                        self.truncated(info, raw, out);
                        self.consume(self.buf.len());
                        Flow::Text
                    }
                    Hit::None if self.buf.len() - from <= MAX_HEAD => Flow::Wait,
                    _ => {
                        let info = mem::take(info);
                        self.refuse(rs, info, CallProblem::MalformedMarkup, from, out)
                    }
                }
            }
            NameStep::Fence => {
                let open = fence.as_ref().map_or("", |f| f.start.as_str());
                let p = self.skip_ws(self.cur);
                match self.at(p, open) {
                    Tri::Yes => {
                        self.consume(p + open.len());
                        *step = NameStep::Args(self.json_args(self.cur));
                        Flow::Go
                    }
                    Tri::Maybe => Flow::Wait,
                    Tri::No if p == self.buf.len() && !self.eof => Flow::Wait,
                    Tri::No => {
                        *step = NameStep::Args(self.json_args(self.cur));
                        Flow::Go
                    }
                }
            }
            NameStep::Args(args) => {
                let fence_end = fence.as_ref().map(|f| [f.end.as_str()]);
                let before = self.value_text_from(args);
                let outcome = self.scan_json(
                    args,
                    stops,
                    fence_end.as_ref().map_or(&[], |f| f),
                    &compiled.firsts[rs.run].json,
                );
                if args.at > before {
                    self.emit_arguments(info.index.unwrap_or(0), before, args.at, out);
                }
                match outcome {
                    JsonOutcome::Need => Flow::Wait,
                    JsonOutcome::Complete { start, end } => {
                        let sent = args.at.max(before);
                        if end > sent {
                            self.emit_arguments(info.index.unwrap_or(0), sent, end, out);
                        }
                        let info = mem::take(info);
                        let text = self.buf[start..end].to_owned();
                        if !is_json_object(&text) {
                            let kind = CallProblem::MalformedArguments;
                            return self.fail_at_end(rs, info, kind, end, out);
                        }
                        self.ready(info, RawArguments::Text(text), rs.raw_start..end, out);
                        self.consume(end);
                        if fence.is_some() {
                            rs.phase = Phase::Body(Body::Name {
                                info: CallInfo::default(),
                                step: NameStep::FenceEnd,
                            });
                        } else {
                            rs.phase = Phase::CallEnd;
                        }
                        Flow::Go
                    }
                    JsonOutcome::Stopped { at, which } if which < stops.len() => {
                        let info = mem::take(info);
                        let kind = CallProblem::MalformedArguments;
                        self.stopped(rs, info, kind, at, which, out)
                    }
                    JsonOutcome::Stopped { at, .. } => {
                        // The closing fence before the JSON closed.
                        let info = mem::take(info);
                        rs.phase = Phase::Skip {
                            info,
                            kind: CallProblem::MalformedArguments,
                            from: at,
                        };
                        Flow::Go
                    }
                    JsonOutcome::TooLarge | JsonOutcome::TooDeep => {
                        let kind = if matches!(outcome, JsonOutcome::TooLarge) {
                            CallProblem::TooLarge
                        } else {
                            CallProblem::TooDeep
                        };
                        let from = args.from + args.scan.len();
                        let info = mem::take(info);
                        self.refuse(rs, info, kind, from, out)
                    }
                    JsonOutcome::Eof => {
                        let info = mem::take(info);
                        let raw = self.raw(rs.raw_start, self.buf.len());
                        self.truncated(info, raw, out);
                        self.consume(self.buf.len());
                        Flow::Text
                    }
                }
            }
            NameStep::FenceEnd => {
                let close = fence.as_ref().map_or("", |f| f.end.as_str());
                let p = self.skip_ws(self.cur);
                match self.at(p, close) {
                    Tri::Yes => {
                        self.consume(p + close.len());
                        rs.phase = Phase::CallEnd;
                        Flow::Go
                    }
                    Tri::Maybe => Flow::Wait,
                    Tri::No if p == self.buf.len() && !self.eof => Flow::Wait,
                    Tri::No => {
                        rs.phase = Phase::CallEnd;
                        Flow::Go
                    }
                }
            }
        }
    }

    fn xml_body(
        &mut self,
        compiled: &Compiled,
        rs: &mut RunState,
        out: &mut Vec<StreamEvent>,
    ) -> Flow {
        let CallBody::XmlParameters(x) = &compiled.format.body else {
            unreachable!("an XML body belongs to an XML-parameter format")
        };
        let run_end = compiled.format.runs[rs.run].end.as_ref();
        let Phase::Body(Body::Xml {
            info,
            step,
            args,
            bytes,
        }) = &mut rs.phase
        else {
            unreachable!("an XML body step reads an XML body")
        };
        match step {
            XmlStep::Name { from } | XmlStep::ParamName { from } => {
                let from = *from;
                let param = matches!(step, XmlStep::ParamName { .. });
                let markers = &compiled.name_ends[rs.run];
                match self.find_in(from, &markers.list, &markers.firsts) {
                    Hit::Found { at, which: 0 } => {
                        let head = self.buf[from..at].trim().to_owned();
                        if head.is_empty() || head.len() > MAX_HEAD {
                            let info = mem::take(info);
                            return self.refuse(rs, info, CallProblem::MalformedMarkup, at, out);
                        }
                        self.consume(at + x.name_end.len());
                        *step = if param {
                            XmlStep::Value {
                                key: head,
                                from: self.cur,
                                at: self.cur,
                            }
                        } else {
                            self.start_call(info, CallName::from(head.as_str()), None, out);
                            XmlStep::Params
                        };
                        Flow::Go
                    }
                    Hit::Found { at, which } => {
                        let info = mem::take(info);
                        let kind = CallProblem::MalformedMarkup;
                        self.stopped(rs, info, kind, at, which - 1, out)
                    }
                    Hit::None if self.eof => {
                        let info = mem::take(info);
                        self.eof_truncated(rs.raw_start, info, out)
                    }
                    Hit::Partial { .. } | Hit::None if self.buf.len() - from <= MAX_HEAD => {
                        Flow::Wait
                    }
                    _ => {
                        let info = mem::take(info);
                        self.refuse(rs, info, CallProblem::MalformedMarkup, from, out)
                    }
                }
            }
            XmlStep::Params => {
                let p = self.skip_ws(self.cur);
                if p == self.buf.len() {
                    if !self.eof {
                        return self.wait_on(p, Some(rs.run), WaitOn::Params);
                    }
                    let info = mem::take(info);
                    let raw = self.raw(rs.raw_start, p);
                    self.truncated(info, raw, out);
                    self.consume(p);
                    return Flow::Text;
                }
                for (marker, kind) in [
                    (Some(&x.parameter_start), 0),
                    (Some(&x.function_end), 1),
                    (run_end, 2),
                ] {
                    let Some(marker) = marker else { continue };
                    match self.at(p, marker) {
                        Tri::Yes if kind == 0 => {
                            self.consume(p + marker.len());
                            *step = XmlStep::ParamName { from: self.cur };
                            return Flow::Go;
                        }
                        Tri::Yes => {
                            // The arguments close: the call is ready.
                            let end = if kind == 1 { p + marker.len() } else { p };
                            let info = mem::take(info);
                            let args = RawArguments::Json(Value::Object(mem::take(args)));
                            self.ready(info, args, rs.raw_start..end, out);
                            self.consume(end);
                            rs.done = true;
                            rs.phase = Phase::Next { first: false };
                            return Flow::Go;
                        }
                        Tri::Maybe => return self.wait_on(p, Some(rs.run), WaitOn::Params),
                        Tri::No => {}
                    }
                }
                let info = mem::take(info);
                self.refuse(rs, info, CallProblem::MalformedMarkup, p, out)
            }
            XmlStep::Value { key, from, at } => {
                let from = *from;
                let markers = &compiled.value_ends[rs.run];
                let hit = self.find_in(*at, markers, &compiled.firsts[rs.run].value);
                if let Some(cut) = self.over_budget(hit, from, *bytes) {
                    let info = mem::take(info);
                    return self.refuse(rs, info, CallProblem::TooLarge, cut, out);
                }
                match hit {
                    Hit::Found { at, which } => {
                        let value = trim_one_newline(&self.buf[from..at]);
                        if !self.add_raw_value(info, key, value, args, bytes) {
                            let info = mem::take(info);
                            let kind = CallProblem::MalformedArguments;
                            return self.refuse(rs, info, kind, at, out);
                        }
                        let end = if which == 0 {
                            at + markers[0].len()
                        } else {
                            at
                        };
                        self.consume(end);
                        *step = XmlStep::Params;
                        Flow::Go
                    }
                    Hit::None if self.eof => {
                        let info = mem::take(info);
                        self.eof_truncated(rs.raw_start, info, out)
                    }
                    Hit::Partial { at: p } => {
                        *at = p;
                        self.wait_on(p, Some(rs.run), WaitOn::Value)
                    }
                    Hit::None => {
                        *at = self.buf.len();
                        Flow::Wait
                    }
                }
            }
        }
    }

    fn kv_body(
        &mut self,
        compiled: &Compiled,
        rs: &mut RunState,
        out: &mut Vec<StreamEvent>,
    ) -> Flow {
        let CallBody::KeyValue(kv) = &compiled.format.body else {
            unreachable!("a key-value body belongs to a key-value format")
        };
        let stops = &compiled.stops[rs.run];
        let run_end = compiled.format.runs[rs.run]
            .end
            .as_deref()
            .unwrap_or_default();
        let Phase::Body(Body::Kv {
            info,
            step,
            args,
            bytes,
        }) = &mut rs.phase
        else {
            unreachable!("a key-value body step reads a key-value body")
        };
        match step {
            KvStep::Name { from } => {
                let from = *from;
                // The pair markers other than a key's start cannot follow
                // the name: met first, they make the call malformed.
                let markers = &compiled.name_ends[rs.run];
                const OWN: usize = 4;
                match self.find_in(from, &markers.list, &markers.firsts) {
                    // Longer than a name may be, as it streams.
                    Hit::Found { at, .. } if at - from > MAX_HEAD => {
                        let info = mem::take(info);
                        self.refuse(rs, info, CallProblem::MalformedMarkup, from, out)
                    }
                    Hit::Found { at, which } if (1..OWN).contains(&which) => {
                        let mut info = mem::take(info);
                        let name = self.buf[from..at].trim();
                        if !name.is_empty() && name.len() <= MAX_HEAD {
                            info.name = Some(CallName::from(name));
                        }
                        self.refuse(rs, info, CallProblem::MalformedMarkup, at, out)
                    }
                    Hit::Found { at, which } => {
                        let name = self.buf[from..at].trim().to_owned();
                        let stop = which.checked_sub(OWN);
                        let is_end = stop.is_some_and(|s| stops[s].1 == Stop::RunEnd);
                        if name.is_empty() || name.len() > MAX_HEAD || (which > 0 && !is_end) {
                            let info = mem::take(info);
                            let kind = CallProblem::MalformedMarkup;
                            let Some(stop) = stop else {
                                return self.refuse(rs, info, kind, at, out);
                            };
                            return self.stopped(rs, info, kind, at, stop, out);
                        }
                        self.start_call(info, CallName::from(name.as_str()), None, out);
                        if which == 0 {
                            self.consume(at + kv.key_start.len());
                            *step = KvStep::Key { from: self.cur };
                            return Flow::Go;
                        }
                        let end = at + run_end.len();
                        let info = mem::take(info);
                        let args = RawArguments::Json(Value::Object(mem::take(args)));
                        self.ready(info, args, rs.raw_start..end, out);
                        self.consume(end);
                        Flow::Text
                    }
                    Hit::None if self.eof => {
                        let info = mem::take(info);
                        self.eof_truncated(rs.raw_start, info, out)
                    }
                    Hit::Partial { at } if at - from <= MAX_HEAD => {
                        self.wait_on(at, Some(rs.run), WaitOn::Name)
                    }
                    Hit::None if self.buf.len() - from <= MAX_HEAD => Flow::Wait,
                    _ => {
                        let info = mem::take(info);
                        self.refuse(rs, info, CallProblem::MalformedMarkup, from, out)
                    }
                }
            }
            KvStep::Pairs | KvStep::ExpectValue { .. } => {
                let p = self.skip_ws(self.cur);
                let on = match step {
                    KvStep::Pairs => WaitOn::Pairs,
                    _ => WaitOn::ExpectValue,
                };
                if p == self.buf.len() {
                    if self.eof {
                        let info = mem::take(info);
                        return self.eof_truncated(rs.raw_start, info, out);
                    }
                    return self.wait_on(p, Some(rs.run), on);
                }
                let (marker, end_ok) = match step {
                    KvStep::Pairs => (kv.key_start.as_str(), true),
                    _ => (kv.value_start.as_str(), false),
                };
                match self.at(p, marker) {
                    Tri::Yes => {
                        self.consume(p + marker.len());
                        *step = match step {
                            KvStep::ExpectValue { key } => KvStep::Value {
                                key: mem::take(key),
                                from: self.cur,
                                at: self.cur,
                            },
                            _ => KvStep::Key { from: self.cur },
                        };
                        return Flow::Go;
                    }
                    Tri::Maybe => return self.wait_on(p, Some(rs.run), on),
                    Tri::No => {}
                }
                if end_ok {
                    match self.at(p, run_end) {
                        Tri::Yes => {
                            let end = p + run_end.len();
                            let info = mem::take(info);
                            let args = RawArguments::Json(Value::Object(mem::take(args)));
                            self.ready(info, args, rs.raw_start..end, out);
                            self.consume(end);
                            return Flow::Text;
                        }
                        Tri::Maybe => return self.wait_on(p, Some(rs.run), on),
                        Tri::No => {}
                    }
                }
                let info = mem::take(info);
                self.refuse(rs, info, CallProblem::MalformedMarkup, p, out)
            }
            KvStep::Key { from } => {
                let from = *from;
                match self.find(from, &[kv.key_end.as_str()]) {
                    // A key as long as a name may be, whole as in pieces:
                    // the bound is where its end marker starts.
                    Hit::Found { at, .. } if at - from <= MAX_HEAD => {
                        let key = self.buf[from..at].trim().to_owned();
                        self.consume(at + kv.key_end.len());
                        *step = KvStep::ExpectValue { key };
                        Flow::Go
                    }
                    Hit::None if self.eof => {
                        let info = mem::take(info);
                        self.eof_truncated(rs.raw_start, info, out)
                    }
                    Hit::Partial { at } if at - from <= MAX_HEAD => {
                        self.wait_on(at, Some(rs.run), WaitOn::Key)
                    }
                    Hit::None if self.buf.len() - from <= MAX_HEAD => Flow::Wait,
                    _ => {
                        let info = mem::take(info);
                        self.refuse(rs, info, CallProblem::MalformedMarkup, from, out)
                    }
                }
            }
            KvStep::Value { key, from, at } => {
                let from = *from;
                let ends = &compiled.value_ends[rs.run];
                let hit = self.find_in(*at, ends, &compiled.firsts[rs.run].value);
                if let Some(cut) = self.over_budget(hit, from, *bytes) {
                    let info = mem::take(info);
                    return self.refuse(rs, info, CallProblem::TooLarge, cut, out);
                }
                match hit {
                    Hit::Found { at, .. } => {
                        let value = &self.buf[from..at];
                        if !self.add_raw_value(info, key, value, args, bytes) {
                            let info = mem::take(info);
                            let kind = CallProblem::MalformedArguments;
                            return self.refuse(rs, info, kind, at, out);
                        }
                        self.consume(at + kv.value_end.len());
                        *step = KvStep::Pairs;
                        Flow::Go
                    }
                    Hit::None if self.eof => {
                        let info = mem::take(info);
                        self.eof_truncated(rs.raw_start, info, out)
                    }
                    Hit::Partial { at: p } => {
                        *at = p;
                        self.wait_on(p, Some(rs.run), WaitOn::Value)
                    }
                    Hit::None => {
                        *at = self.buf.len();
                        Flow::Wait
                    }
                }
            }
        }
    }

    /// A call cut off by the end of the output, its markup from
    /// `raw_start` on.
    fn eof_truncated(
        &mut self,
        raw_start: usize,
        info: CallInfo,
        out: &mut Vec<StreamEvent>,
    ) -> Flow {
        let raw = self.raw(raw_start, self.buf.len());
        self.truncated(info, raw, out);
        self.consume(self.buf.len());
        Flow::Text
    }

    fn py_body(
        &mut self,
        compiled: &Compiled,
        rs: &mut RunState,
        out: &mut Vec<StreamEvent>,
    ) -> Flow {
        let stops = &compiled.stops[rs.run];
        let markers = &compiled.stop_markers[rs.run].list;
        let len = self.buf.len();
        let Phase::Body(Body::Py {
            info,
            scan,
            from,
            at,
        }) = &mut rs.phase
        else {
            unreachable!("a pythonic body step reads a pythonic body")
        };
        let from = *from;
        while *at < len {
            let i = *at;
            let b = self.bytes()[i];
            if !scan.in_string() && markers.iter().any(|m| m.as_bytes().first() == Some(&b)) {
                match self.find_at(i, markers) {
                    Tri::Yes => {
                        if rs.bare && !scan.opened() {
                            return self.give_back(rs);
                        }
                        let which = stops
                            .iter()
                            .position(|(m, _)| self.bytes()[i..].starts_with(m.as_bytes()))
                            .unwrap_or(0);
                        let info = mem::take(info);
                        let kind = CallProblem::MalformedArguments;
                        return self.stopped(rs, info, kind, i, which, out);
                    }
                    Tri::Maybe => return Flow::Wait,
                    Tri::No => {}
                }
            }
            if i - from > self.limits.max_argument_bytes {
                let info = mem::take(info);
                return self.refuse(rs, info, CallProblem::TooLarge, i, out);
            }
            match scan.step(b) {
                PyStep::Going => {}
                PyStep::Opened => {
                    let name = self.buf[from..i].trim().to_owned();
                    if rs.bare {
                        // The call is known: what came before it is markup.
                        self.pos = rs.raw_start;
                    }
                    self.start_call(info, CallName::from(name.as_str()), None, out);
                }
                PyStep::NotACall => {
                    if rs.bare {
                        return self.give_back(rs);
                    }
                    let info = mem::take(info);
                    return self.refuse(rs, info, CallProblem::MalformedMarkup, i, out);
                }
                PyStep::TooDeep => {
                    let info = mem::take(info);
                    return self.refuse(rs, info, CallProblem::TooDeep, i, out);
                }
                PyStep::Closed => {
                    let end = i + 1;
                    let raw = rs.raw_start..end;
                    let info = mem::take(info);
                    match parse_call(&self.buf[from..end]) {
                        Ok((_, args)) => {
                            self.ready(info, RawArguments::Json(Value::Object(args)), raw, out)
                        }
                        Err(_) => {
                            let raw = self.raw(raw.start, raw.end);
                            self.failed(info, CallProblem::MalformedArguments, raw, out)
                        }
                    }
                    self.consume(end);
                    rs.bare = false;
                    rs.phase = Phase::After;
                    return Flow::Go;
                }
            }
            *at += 1;
        }
        if !self.eof {
            return Flow::Wait;
        }
        if rs.bare && !scan.opened() {
            return self.give_back(rs);
        }
        let info = mem::take(info);
        self.eof_truncated(rs.raw_start, info, out)
    }

    // ---- harmony -----------------------------------------------------------

    /// A harmony call whose header broke or was cut off: its name is the
    /// recipient's.
    fn recipient_info(&self, h: &HarmonyMarkers, recipient: &str) -> CallInfo {
        let name = recipient
            .strip_prefix(h.recipient_prefix.as_str())
            .unwrap_or(recipient);
        CallInfo {
            name: Some(CallName::from(name)),
            ..CallInfo::default()
        }
    }

    /// Harmony's messages: the step `state` says, which changes it in place.
    fn harmony(
        &mut self,
        compiled: &Compiled,
        state: &mut HState,
        out: &mut Vec<StreamEvent>,
    ) -> Flow {
        let CallBody::Harmony(h) = &compiled.format.body else {
            unreachable!("harmony states belong to the harmony format")
        };
        let ends = [h.end.as_str(), h.call.as_str(), h.return_.as_str()];
        match state {
            HState::Between => {
                let markers = [
                    h.start.as_str(),
                    h.channel.as_str(),
                    h.message.as_str(),
                    ends[0],
                    ends[1],
                    ends[2],
                ];
                match self.find(self.cur, &markers) {
                    Hit::Found { at, which } => {
                        self.emit_text(at, out);
                        if which >= 3 {
                            self.harmony_closed(which - 3);
                        }
                        let after = at + markers[which].len();
                        let next = match which {
                            0 => HState::Header {
                                raw_start: at,
                                from: after,
                            },
                            1 => HState::Header {
                                raw_start: at,
                                from: at,
                            },
                            2 => HState::Text,
                            _ => HState::Between,
                        };
                        self.consume(if which == 1 { at } else { after });
                        if which == 1 {
                            self.cur = after;
                        }
                        *state = next;
                        Flow::Go
                    }
                    Hit::Partial { at } => {
                        self.emit_text(at, out);
                        Flow::Wait
                    }
                    Hit::None => {
                        self.emit_text(self.buf.len(), out);
                        Flow::Wait
                    }
                }
            }
            HState::Header { raw_start, from } => {
                let (raw_start, from) = (*raw_start, *from);
                let markers = [
                    h.message.as_str(),
                    h.start.as_str(),
                    ends[0],
                    ends[1],
                    ends[2],
                ];
                let scan_from = self.cur.max(from);
                match self.find(scan_from, &markers) {
                    Hit::Found { at, which: 0 } => {
                        let header = self.buf[from..at].to_owned();
                        let end = at + h.message.len();
                        self.consume(end);
                        let (channel, recipient) = parse_header(h, &header);
                        let next = match recipient {
                            Some(recipient) => {
                                let mut info = CallInfo::default();
                                let name = recipient
                                    .strip_prefix(h.recipient_prefix.as_str())
                                    .unwrap_or(&recipient)
                                    .to_owned();
                                let name = CallName::from(name.as_str());
                                self.start_call(&mut info, name, None, out);
                                HState::Call {
                                    info,
                                    raw_start,
                                    args: self.json_args(end),
                                }
                            }
                            None if channel.as_deref() == Some(h.reasoning_channel.as_str()) => {
                                HState::Reasoning
                            }
                            None => HState::Text,
                        };
                        *state = next;
                        Flow::Go
                    }
                    Hit::Found { at, which } => {
                        // A header that never reached its content.
                        let header = self.buf[from..at].to_owned();
                        let end = if which == 1 {
                            at
                        } else {
                            at + markers[which].len()
                        };
                        if let Some(recipient) = parse_header(h, &header).1 {
                            let raw = self.raw(raw_start, end);
                            let info = self.recipient_info(h, &recipient);
                            self.failed(info, CallProblem::MalformedMarkup, raw, out);
                        }
                        self.consume(end);
                        *state = HState::Between;
                        Flow::Go
                    }
                    Hit::None | Hit::Partial { .. } if self.eof => {
                        let header = self.buf[from..].to_owned();
                        if let Some(recipient) = parse_header(h, &header).1 {
                            let raw = self.raw(raw_start, self.buf.len());
                            let info = self.recipient_info(h, &recipient);
                            self.truncated(info, raw, out);
                        }
                        self.consume(self.buf.len());
                        *state = HState::Between;
                        Flow::Wait
                    }
                    Hit::Partial { at } if at - from <= MAX_HEAD => {
                        self.cur = at;
                        Flow::Wait
                    }
                    Hit::None if self.buf.len() - from <= MAX_HEAD => {
                        self.cur = self.buf.len();
                        Flow::Wait
                    }
                    _ => {
                        // Too long for a header: skip the message.
                        self.cur = from;
                        *state = HState::Skip {
                            info: CallInfo::default(),
                            kind: CallProblem::MalformedMarkup,
                            raw_start,
                            from,
                        };
                        Flow::Go
                    }
                }
            }
            HState::Text | HState::Reasoning => {
                let reasoning = matches!(*state, HState::Reasoning);
                let markers = [ends[0], ends[1], ends[2], h.start.as_str()];
                let emit = |this: &mut Self, to, out: &mut Vec<StreamEvent>| {
                    if reasoning {
                        this.emit_reasoning(to, out)
                    } else {
                        this.emit_text(to, out)
                    }
                };
                match self.find(self.cur, &markers) {
                    Hit::Found { at, which } => {
                        emit(self, at, out);
                        if which < 3 {
                            self.harmony_closed(which);
                            self.consume(at + markers[which].len());
                        }
                        *state = HState::Between;
                        Flow::Go
                    }
                    Hit::Partial { at } => {
                        emit(self, at, out);
                        Flow::Wait
                    }
                    Hit::None => {
                        emit(self, self.buf.len(), out);
                        Flow::Wait
                    }
                }
            }
            HState::Call {
                info,
                raw_start,
                args,
            } => {
                let raw_start = *raw_start;
                let stops = &compiled.harmony_stops;
                let before = self.value_text_from(args);
                let outcome = self.scan_json(args, stops, &[], &compiled.harmony_firsts);
                if args.at > before {
                    self.emit_arguments(info.index.unwrap_or(0), before, args.at, out);
                }
                match outcome {
                    JsonOutcome::Need => Flow::Wait,
                    JsonOutcome::Complete { start, end } => {
                        let sent = args.at.max(before);
                        if end > sent {
                            self.emit_arguments(info.index.unwrap_or(0), sent, end, out);
                        }
                        let info = mem::take(info);
                        let text = self.buf[start..end].to_owned();
                        if !is_json_object(&text) {
                            // Malformed: the call ends at its end marker.
                            *state = HState::Skip {
                                info,
                                kind: CallProblem::MalformedArguments,
                                raw_start,
                                from: end,
                            };
                            return Flow::Go;
                        }
                        self.ready(info, RawArguments::Text(text), raw_start..end, out);
                        self.consume(end);
                        *state = HState::AfterCall;
                        Flow::Go
                    }
                    JsonOutcome::Stopped { at, which } => {
                        let end = if which < 3 {
                            at + stops[which].0.len()
                        } else {
                            at
                        };
                        let info = mem::take(info);
                        let raw = self.raw(raw_start, end);
                        self.failed(info, CallProblem::MalformedArguments, raw, out);
                        self.consume(end);
                        *state = HState::Between;
                        Flow::Go
                    }
                    JsonOutcome::TooLarge | JsonOutcome::TooDeep => {
                        let kind = if matches!(outcome, JsonOutcome::TooLarge) {
                            CallProblem::TooLarge
                        } else {
                            CallProblem::TooDeep
                        };
                        let from = args.at;
                        let info = mem::take(info);
                        *state = HState::Skip {
                            info,
                            kind,
                            raw_start,
                            from,
                        };
                        Flow::Go
                    }
                    JsonOutcome::Eof => {
                        let info = mem::take(info);
                        let raw = self.raw(raw_start, self.buf.len());
                        self.truncated(info, raw, out);
                        self.consume(self.buf.len());
                        *state = HState::Between;
                        Flow::Wait
                    }
                }
            }
            HState::AfterCall => {
                let p = self.skip_ws(self.cur);
                if p == self.buf.len() {
                    if self.eof {
                        self.consume(p);
                        *state = HState::Between;
                    }
                    return Flow::Wait;
                }
                match self.find_at(p, &ends) {
                    Tri::Yes => {
                        let m = ends
                            .iter()
                            .find(|m| self.buf[p..].starts_with(*m))
                            .unwrap_or(&"");
                        self.consume(p + m.len());
                        *state = HState::Between;
                        Flow::Go
                    }
                    Tri::Maybe => Flow::Wait,
                    Tri::No => {
                        *state = HState::Skip {
                            info: CallInfo::default(),
                            kind: CallProblem::MalformedMarkup,
                            raw_start: p,
                            from: p,
                        };
                        Flow::Go
                    }
                }
            }
            HState::Skip {
                info,
                kind,
                raw_start,
                from,
            } => {
                let (kind, raw_start) = (*kind, *raw_start);
                let markers = [ends[0], ends[1], ends[2], h.start.as_str()];
                match self.find(*from, &markers) {
                    Hit::Found { at, which } => {
                        let end = if which < 3 {
                            at + markers[which].len()
                        } else {
                            at
                        };
                        let info = mem::take(info);
                        let raw = self.raw(raw_start, end);
                        self.failed(info, kind, raw, out);
                        self.consume(end);
                        *state = HState::Between;
                        Flow::Go
                    }
                    Hit::Partial { at } => {
                        *from = at;
                        Flow::Wait
                    }
                    Hit::None if !self.eof => {
                        *from = self.buf.len();
                        Flow::Wait
                    }
                    Hit::None => {
                        let info = mem::take(info);
                        let raw = self.raw(raw_start, self.buf.len());
                        self.failed(info, kind, raw, out);
                        self.consume(self.buf.len());
                        *state = HState::Between;
                        Flow::Wait
                    }
                }
            }
        }
    }
}

/// How the next piece of a JSON call's object may be read in place, the
/// scanner and the walk having read it to the end of the text: inside a
/// string, its bytes ([`InPlace::JsonString`], sent when the string is of
/// the started call's arguments); between tokens, one byte at a time
/// ([`InPlace::JsonMember`]), unless the name is known and the call has
/// not started (its id is still to come: the steps read it).
fn json_in_place(
    text: &[u8],
    walk: &MemberWalk,
    run: usize,
    info: &CallInfo,
    args: &mut JsonArgs,
) -> InPlace {
    if let Some(in_args) = json_args_in_place(text, walk, run, info, args) {
        return in_args;
    }
    let (Some(escaped), Some(sends)) = (args.scan.string_escape(), walk.in_string_at(args.at))
    else {
        let startable = info.id.is_some() || walk.name().is_none();
        return if args.scan.nested() && startable {
            InPlace::JsonMember { run }
        } else {
            InPlace::No
        };
    };
    InPlace::json_string(
        args.at + args.scan.room(),
        escaped,
        info.index.filter(|_| info.id.is_some() && sends),
    )
}

/// [`InPlace::JsonArgs`], when the walk is inside the arguments' array
/// or object of the started call, everything before handed out, and the
/// scanner there too.
#[inline]
fn json_args_in_place(
    text: &[u8],
    walk: &MemberWalk,
    run: usize,
    info: &CallInfo,
    args: &mut JsonArgs,
) -> Option<InPlace> {
    let (depth, string) = walk.in_arguments_at(args.at)?;
    let index = info.index.filter(|_| info.id.is_some())?;
    if string != args.scan.string_escape() {
        return None;
    }
    // The check goes on from where a read in place left it, or begins at
    // the value's first byte, over what the steps read since. Read in
    // place, a string's backslashes are followed by the read, not the
    // check.
    // What it read is kept, so that no byte is read twice.
    let start = args.checked.or_else(|| {
        let (from, _) = walk.arguments_span()?;
        Some((from, JsonCheck::new()))
    });
    let mut check = start.map_or(JsonCheck::UNKNOWN, |c| checked_to(text, c, args.at));
    args.checked = Some((args.at, check));
    check.set_escaped(false);
    Some(InPlace::JsonArgs(ArgsInPlace {
        run: u32::try_from(run).ok()?,
        limit: args.at + args.scan.room(),
        index: u32::try_from(index).ok()?,
        depth: u32::try_from(depth).ok()?,
        room: u32::try_from(args.scan.depth_room()).unwrap_or(u32::MAX),
        string: string.is_some(),
        escaped: string == Some(true),
        check,
    }))
}

/// Whether the call's arguments array or object, which the walk read to
/// its end, was checked valid as it was read: in place, and over the
/// bytes the steps read after (its closing bracket at least).
fn arguments_checked(text: &[u8], walk: &MemberWalk, args: &JsonArgs) -> bool {
    let (Some(checked), Some((from, Some(to)))) = (args.checked, walk.arguments_span()) else {
        return false;
    };
    matches!(text[from], b'{' | b'[') && checked_to(text, checked, to).complete()
}

/// The arguments' check `checked` (where it stopped, and the check
/// there) brought on to `to` over the bytes the steps read since (a
/// piece that ends or breaks the read in place is theirs); one that
/// stopped past `to`, or knows nothing, knows nothing.
fn checked_to(text: &[u8], (at, mut check): (usize, JsonCheck), to: usize) -> JsonCheck {
    if at > to || !check.known() {
        return JsonCheck::UNKNOWN;
    }
    for &b in &text[at..to] {
        check.step(b);
    }
    check
}

/// Scans a JSON value in `buf` for its end, stopping at a marker met
/// outside its strings (`eof`: the text is all there; `firsts`: where one
/// of `stops` or `also` may start).
fn scan_json(
    buf: &str,
    eof: bool,
    j: &mut JsonArgs,
    stops: &[(String, Stop)],
    also: &[&str],
    firsts: &Firsts,
) -> JsonOutcome {
    let b = buf.as_bytes();
    let markers = || {
        stops
            .iter()
            .map(|(m, _)| m.as_str())
            .chain(also.iter().copied())
    };
    loop {
        if j.at >= b.len() {
            if !eof {
                return JsonOutcome::Need;
            }
            return match j.scan.finish() {
                Scan::Complete { .. } => JsonOutcome::Complete {
                    start: skip_ws(b, j.from),
                    end: j.at,
                },
                _ => JsonOutcome::Eof,
            };
        }
        let k = firsts.next(b, j.at).unwrap_or(b.len());
        let upto = if k > j.at {
            k
        } else {
            if !j.scan.in_string() {
                // The longest marker at `k` (the last of the longest),
                // or, when none is there yet, one the text may still
                // become.
                let mut best: Option<(usize, usize)> = None;
                let mut maybe = false;
                for (w, m) in markers().enumerate() {
                    match at(b, eof, k, m) {
                        Tri::Yes if best.is_none_or(|(_, len)| m.len() >= len) => {
                            best = Some((w, m.len()))
                        }
                        Tri::Maybe => maybe = true,
                        _ => {}
                    }
                }
                if let Some((which, _)) = best {
                    return JsonOutcome::Stopped { at: k, which };
                }
                if maybe {
                    return JsonOutcome::Need;
                }
            }
            // Past the whole character: a marker may begin with a
            // multi-byte one.
            buf.ceil_char_boundary(k + 1)
        };
        let piece = &buf[j.at..upto];
        match j.scan.push(piece) {
            Scan::Complete { end } => {
                return JsonOutcome::Complete {
                    start: skip_ws(b, j.from),
                    end: j.at + end,
                };
            }
            Scan::TooLarge => return JsonOutcome::TooLarge,
            Scan::TooDeep => return JsonOutcome::TooDeep,
            Scan::Incomplete => j.at = upto,
        }
    }
}

/// Where the text of the value `args` scans goes on from in `b`: the next
/// byte to scan, past the whitespace before the value (which is not part
/// of the arguments a call carries).
fn value_text_from(b: &[u8], args: &JsonArgs) -> usize {
    if args.scan.started() {
        args.at
    } else {
        skip_ws(b, args.at)
    }
}

/// A fragment of call `index`'s arguments: appended to the last event
/// when that is a fragment of the same call.
/// Appends the ASCII byte `b` to call `index`'s arguments: to the last
/// event when it is that call's fragment, otherwise as a new one.
#[inline(always)]
fn push_fragment_byte(index: usize, b: u8, out: &mut Vec<StreamEvent>) {
    match out.last_mut() {
        Some(StreamEvent::ArgumentsDelta(last)) if last.index == index => {
            push_ascii(&mut last.fragment, b)
        }
        _ => push_arguments(index, &ASCII[usize::from(b)..][..1], out),
    }
}

fn push_arguments<'p>(index: usize, fragment: impl Into<Piece<'p>>, out: &mut Vec<StreamEvent>) {
    let fragment = fragment.into();
    match out.last_mut() {
        Some(StreamEvent::ArgumentsDelta(last)) if last.index == index => {
            fragment.push_to(&mut last.fragment)
        }
        _ => out.push(StreamEvent::ArgumentsDelta(ArgumentsDelta {
            index,
            fragment: fragment.started(),
        })),
    }
}

/// A piece known to be text: a short one all ASCII, appended byte by
/// byte (it needs neither the UTF-8 check nor a copy call), or checked
/// UTF-8.
#[derive(Debug, Clone, Copy)]
enum Piece<'p> {
    Ascii(&'p [u8]),
    /// One character longer than a byte (two, as most accented Latin
    /// letters are, or more), decoded without the general UTF-8 check.
    Char(char),
    Text(&'p str),
}

impl<'p> Piece<'p> {
    /// `bytes` as text, `ascii` when they are all ASCII; `None` when they
    /// are not whole UTF-8.
    fn of(bytes: &'p [u8], ascii: bool) -> Option<Piece<'p>> {
        match *bytes {
            _ if ascii && bytes.len() <= SHORT_PIECE => {
                debug_assert!(bytes.is_ascii());
                Some(Piece::Ascii(bytes))
            }
            [a @ 0xc2..=0xdf, b @ 0x80..=0xbf] => {
                char::from_u32(u32::from(a & 0x1f) << 6 | u32::from(b & 0x3f)).map(Piece::Char)
            }
            _ => std::str::from_utf8(bytes).ok().map(Piece::Text),
        }
    }

    #[inline(always)]
    fn push_to(self, to: &mut String) {
        match self {
            // Each byte a character: no copy call for a few bytes, and the
            // compiler knows each is one byte long; four (a piece of four
            // characters) unrolled.
            Piece::Ascii(&[a, b, c, d]) => {
                for b in [a, b, c, d] {
                    to.push(char::from(b & 0x7f));
                }
            }
            Piece::Ascii(bytes) => {
                for &b in bytes {
                    to.push(char::from(b & 0x7f));
                }
            }
            Piece::Char(c) => to.push(c),
            Piece::Text(text) => push_piece(to, text),
        }
    }

    /// The text of a new event that more pieces may extend (see
    /// [`started`]).
    fn started(self) -> String {
        let mut s = String::with_capacity(self.len().max(STARTED));
        self.push_to(&mut s);
        s
    }

    fn len(self) -> usize {
        match self {
            Piece::Ascii(bytes) => bytes.len(),
            Piece::Char(c) => c.len_utf8(),
            Piece::Text(text) => text.len(),
        }
    }
}

impl<'p> From<&'p str> for Piece<'p> {
    fn from(text: &'p str) -> Piece<'p> {
        Piece::Text(text)
    }
}

/// `bytes` as one character, when they are exactly one whole UTF-8
/// sequence of two to four bytes (overlong forms, surrogates and code
/// points past U+10FFFF are not): the common piece fed a character at a
/// time that is not ASCII, decoded without the general UTF-8 check.
#[inline(always)]
fn one_char(bytes: &[u8]) -> Option<char> {
    let low = |b: u8| u32::from(b & 0x3f);
    let code = match *bytes {
        [a @ 0xc2..=0xdf, b @ 0x80..=0xbf] => u32::from(a & 0x1f) << 6 | low(b),
        [a @ 0xe0..=0xef, b @ 0x80..=0xbf, c @ 0x80..=0xbf] => {
            let code = u32::from(a & 0x0f) << 12 | low(b) << 6 | low(c);
            if code < 0x800 {
                return None;
            }
            code
        }
        [
            a @ 0xf0..=0xf4,
            b @ 0x80..=0xbf,
            c @ 0x80..=0xbf,
            d @ 0x80..=0xbf,
        ] => {
            let code = u32::from(a & 0x07) << 18 | low(b) << 12 | low(c) << 6 | low(d);
            if code < 0x1_0000 {
                return None;
            }
            code
        }
        _ => return None,
    };
    char::from_u32(code)
}

/// The longest piece read in one pass over a byte table; a longer one
/// is searched with `memchr` and checked as UTF-8 at once.
const SHORT_PIECE: usize = 16;

/// How `piece` continues a JSON string (`escaped`: the byte before it is
/// a backslash that escapes the next), as text, with whether its last
/// byte is such a backslash; `None` when a quote ends the string in it
/// or it is not whole UTF-8. Its bytes are handed to `check` as
/// [`ArgsInPlace::string_step`] hands them (a caller without a check
/// hands it one that knows nothing). A short piece is read in one pass:
/// each byte's part in the string, whether it is ASCII, and the check.
#[inline(always)]
fn string_run<'p>(
    piece: &'p [u8],
    mut escaped: bool,
    check: &mut JsonCheck,
) -> Option<(Piece<'p>, bool)> {
    if piece.len() > SHORT_PIECE {
        let now = string_goes_on(piece, escaped)?;
        if check.known() {
            for &b in piece {
                if !escaped && b == b'\\' {
                    escaped = true;
                    continue;
                }
                check.string_byte(b, escaped);
                escaped = false;
            }
        }
        return Some((Piece::Text(std::str::from_utf8(piece).ok()?), now));
    }
    let mut high = 0;
    for &b in piece {
        high |= b;
        match string_byte(b, escaped) {
            StringByte::Close => return None,
            StringByte::Escape => escaped = true,
            StringByte::Plain => {
                // The common byte, plain and not escaped, changes no
                // check.
                if escaped || b < 0x20 {
                    check.string_byte(b, escaped);
                }
                escaped = false;
            }
        }
    }
    Some((Piece::of(piece, high < 0x80)?, escaped))
}

/// A new text event holding `text` (the last event is not text).
#[inline(never)]
fn push_text(text: &str, out: &mut Vec<StreamEvent>) {
    out.push(StreamEvent::Text(started(text)));
}

/// The text of a new event that more pieces may extend: room for a few
/// dozen one-byte pieces before it grows, as a call's fragments or a
/// sentence of text often are.
fn started(text: &str) -> String {
    let mut s = String::with_capacity(text.len().max(STARTED));
    s.push_str(text);
    s
}

/// The longest piece [`Engine::push_steps`] appends byte by byte when it
/// is all ASCII.
const SHORT_ASCII: usize = 8;

/// The room a new event's text starts with (see [`started`]).
const STARTED: usize = 64;

/// The room the held text starts with: few outputs are shorter, and their
/// pieces would otherwise grow it from a few bytes, copying it at each
/// doubling.
const HELD_START: usize = 1024;

/// A byte's part in a JSON string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StringByte {
    /// It continues the string: any byte after a backslash that escapes
    /// it, or any but a quote or a backslash.
    Plain,
    /// A backslash that escapes the next byte.
    Escape,
    /// A quote that ends the string.
    Close,
}

/// The part of byte `b` in a JSON string, after a backslash that escapes
/// it when `escaped`: the rule every in-place read of a string follows
/// (a byte past ASCII is plain; a caller that reads single bytes as
/// characters declines it first).
#[inline(always)]
fn string_byte(b: u8, escaped: bool) -> StringByte {
    match b {
        _ if escaped => StringByte::Plain,
        b'\\' => StringByte::Escape,
        b'"' => StringByte::Close,
        _ => StringByte::Plain,
    }
}

/// The bytes that continue a JSON string without ending it or escaping
/// the next, and that JSON allows there: ASCII but `"`, `\\` and the
/// control characters (so that a string read in place of them is valid
/// as far as it goes, see [`JsonCheck`]).
const JSON_PLAIN: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0x20;
    while b < 128 {
        t[b] = b != b'"' as usize && b != b'\\' as usize;
        b += 1;
    }
    t
};

/// What a one-byte piece of visible text read in place is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TextByte {
    /// It may start a marker: the steps read it alone.
    Held,
    /// A byte of a character longer than one byte that cannot start a
    /// marker: alone it is not whole; the steps read it.
    High,
    /// Whitespace: shown, and the output still ends as it did.
    Space,
    /// Shown, and the output now ends with content.
    Content,
}

/// Each byte's [`TextByte`] for visible text whose markers may start at
/// `firsts`.
fn text_bytes(firsts: &Firsts) -> [TextByte; 256] {
    let mut t = [TextByte::Held; 256];
    for (b, class) in t.iter_mut().enumerate() {
        let b = b as u8;
        if !firsts.in_piece(&[b]) {
            *class = if !b.is_ascii() {
                TextByte::High
            } else if char::from(b).is_whitespace() {
                TextByte::Space
            } else {
                TextByte::Content
            };
        }
    }
    t
}

/// Appends `text` to `to`: a one-byte piece (ASCII) as a byte, without
/// the call a copy of any length makes.
fn push_piece(to: &mut String, text: &str) {
    match text.as_bytes() {
        &[b] => push_ascii(to, b),
        _ => to.push_str(text),
    }
}

/// Every ASCII character, at its own code.
const ASCII: &str = "\u{0}\u{1}\u{2}\u{3}\u{4}\u{5}\u{6}\u{7}\u{8}\u{9}\u{a}\u{b}\u{c}\u{d}\u{e}\u{f}\u{10}\u{11}\u{12}\u{13}\u{14}\u{15}\u{16}\u{17}\u{18}\u{19}\u{1a}\u{1b}\u{1c}\u{1d}\u{1e}\u{1f} !\u{22}#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\u{5c}]^_`abcdefghijklmnopqrstuvwxyz{|}~\u{7f}";

/// Appends the ASCII byte `b` to `to`: a one-byte copy the compiler sees
/// as one.
#[inline(always)]
fn push_ascii(to: &mut String, b: u8) {
    let i = usize::from(b & 0x7f);
    to.push_str(&ASCII[i..i + 1]);
}

/// The first byte from `p` on in `b` that is not ASCII whitespace.
fn skip_ws(b: &[u8], mut p: usize) -> usize {
    while p < b.len() && b[p].is_ascii_whitespace() {
        p += 1;
    }
    p
}

/// Whether `marker` is at `p` of `b` (`Maybe`: `b` ends inside it and
/// more text may come, `eof` false).
fn at(b: &[u8], eof: bool, p: usize, marker: &str) -> Tri {
    let rest = &b[p.min(b.len())..];
    let m = marker.as_bytes();
    if rest.starts_with(m) {
        Tri::Yes
    } else if !eof && m.starts_with(rest) {
        Tri::Maybe
    } else {
        Tri::No
    }
}

/// Appends the UTF-8 text of `bytes` to `buf`; each invalid sequence
/// becomes U+FFFD and a [`StreamProblemKind::InvalidUtf8`] problem. Returns
/// the incomplete sequence at the end (none when `last`).
fn decode_into<'b>(
    buf: &mut String,
    mut bytes: &'b [u8],
    last: bool,
    out: &mut Vec<StreamEvent>,
) -> &'b [u8] {
    loop {
        match std::str::from_utf8(bytes) {
            Ok(s) => {
                buf.push_str(s);
                return &[];
            }
            Err(e) => {
                let valid = e.valid_up_to();
                buf.push_str(std::str::from_utf8(&bytes[..valid]).unwrap_or_default());
                let bad = match e.error_len() {
                    Some(n) => n,
                    None if !last => return &bytes[valid..],
                    None => bytes.len() - valid,
                };
                let raw: String = bytes[valid..valid + bad]
                    .iter()
                    .map(|b| format!("\\x{b:02x}"))
                    .collect();
                out.push(StreamEvent::Problem(StreamProblem {
                    kind: StreamProblemKind::InvalidUtf8,
                    raw,
                }));
                buf.push(char::REPLACEMENT_CHARACTER);
                bytes = &bytes[valid + bad..];
            }
        }
    }
}

/// Whether `marker` can be neither met outside the strings of a valid
/// JSON object nor begin in one and run past its closing `}`: before any
/// `"` or `}` it holds a byte that valid JSON has only inside strings.
fn never_in_json_object(marker: &str) -> bool {
    for b in marker.bytes() {
        match b {
            b'"' | b'}' => return false,
            b' ' | b'\t' | b'\n' | b'\r' | b'{' | b'[' | b']' | b',' | b':' | b'+' | b'-'
            | b'.' => {}
            b'0'..=b'9' | b'a' | b'e' | b'f' | b'l' | b'n' | b'r' | b's' | b't' | b'u' | b'E' => {}
            _ => return true,
        }
    }
    false
}

/// Drops one leading and one trailing newline (`\n` or `\r\n`).
fn trim_one_newline(s: &str) -> &str {
    let s = s
        .strip_prefix("\r\n")
        .or_else(|| s.strip_prefix('\n'))
        .unwrap_or(s);
    s.strip_suffix("\r\n")
        .or_else(|| s.strip_suffix('\n'))
        .unwrap_or(s)
}

/// The name inside an id written `PREFIX NAME SEPARATOR INDEX`.
fn name_in_id(id: &str, prefix: &str, separator: &str) -> String {
    let rest = id.strip_prefix(prefix).unwrap_or(id);
    match rest.rsplit_once(separator) {
        Some((name, index)) if index.bytes().all(|b| b.is_ascii_digit()) && !name.is_empty() => {
            name.to_owned()
        }
        _ => rest.to_owned(),
    }
}

/// Arguments written as a JSON string that holds one JSON object
/// (`"arguments": "{\"city\": \"Paris\"}"`, the way OpenAI's own API
/// carries them, which models trained on it write): that object's text.
/// Anything else is kept as it is (the executor refuses arguments that
/// are not an object, a string among them).
fn object_in_a_string(arguments: RawArguments) -> RawArguments {
    let held = match &arguments {
        RawArguments::Text(text) if text.trim_start().starts_with('"') => {
            serde_json::from_str::<String>(text).ok()
        }
        RawArguments::Json(Value::String(text)) => Some(text.clone()),
        _ => None,
    };
    match held {
        Some(text) if is_json_object(text.trim()) => RawArguments::Text(text),
        _ => arguments,
    }
}

/// Whether `text` is one JSON object.
fn is_json_object(text: &str) -> bool {
    text.starts_with('{') && serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
}

/// A harmony header's channel and recipient, read as openai/harmony reads
/// them: the channel is the word after `<|channel|>`; the recipient is the
/// `to=` word in the role part or after the channel (`to=assistant`, a
/// tool's answer, counts as none).
fn parse_header(h: &HarmonyMarkers, header: &str) -> (Option<String>, Option<String>) {
    let mut rest = header.to_owned();
    let mut channel = None;
    if let Some(i) = rest.find(&h.channel) {
        let after = &rest[i + h.channel.len()..];
        let len = after
            .find(|c: char| c.is_whitespace() || c == '<')
            .unwrap_or(after.len());
        channel = Some(after[..len].to_owned());
        rest = format!("{} {}", &rest[..i], &after[len..]);
    }
    let rest = rest.replace(&h.constrain, " ");
    let recipient = rest
        .split_ascii_whitespace()
        .find_map(|w| w.strip_prefix("to="))
        .filter(|r| {
            !r.is_empty() && !matches!(*r, "assistant" | "user" | "all" | "system" | "developer")
        })
        .map(str::to_owned);
    (channel, recipient)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_read_in_place_stays_small() {
        // Every slow piece copies the state read in place at least once;
        // the arguments' check made it grow by a third before it was
        // packed (run and index in 32 bits, the check in 8 bytes), and
        // the text formats that never read JSON paid for it.
        assert_eq!(std::mem::size_of::<JsonCheck>(), 8);
        assert!(
            std::mem::size_of::<InPlace>() <= 48,
            "{}",
            std::mem::size_of::<InPlace>()
        );
    }

    #[test]
    fn one_char_reads_exactly_the_sequences_utf8_makes_one_character_of() {
        // Every sequence of two and three bytes, and every four-byte one
        // whose first byte may begin one (each continuation byte in or
        // out of range), against the standard library's check.
        let check = |bytes: &[u8]| {
            let std = std::str::from_utf8(bytes).ok().and_then(|s| {
                let mut chars = s.chars();
                chars.next().filter(|_| chars.next().is_none())
            });
            assert_eq!(one_char(bytes), std, "{bytes:x?}");
        };
        for a in 0..=255u8 {
            for b in 0..=255u8 {
                check(&[a, b]);
                for c in 0..=255u8 {
                    check(&[a, b, c]);
                }
            }
        }
        let edges = [0x00, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xff];
        for a in 0xf0..=0xffu8 {
            for b in 0..=255u8 {
                for c in edges {
                    for d in edges {
                        check(&[a, b, c, d]);
                    }
                }
            }
        }
        // Every character, and the lengths no character has.
        for c in (0..=0x10_ffff).filter_map(char::from_u32) {
            let mut buf = [0; 4];
            let bytes = c.encode_utf8(&mut buf).as_bytes();
            let expected = (bytes.len() > 1).then_some(c);
            assert_eq!(one_char(bytes), expected, "{c:?}");
        }
        assert_eq!(one_char(b""), None);
        assert_eq!(one_char("\u{e9}\u{e9}\u{e9}".as_bytes()), None);
    }

    #[test]
    fn a_harmony_recipient_is_read_in_the_role_part_or_after_the_channel() {
        let h = match TextFormat::harmony().body {
            CallBody::Harmony(h) => h,
            _ => unreachable!(),
        };
        let cases = [
            (
                "<|channel|>commentary to=functions.f <|constrain|>json",
                Some("commentary"),
                Some("functions.f"),
            ),
            (
                "assistant to=functions.f<|channel|>commentary json",
                Some("commentary"),
                Some("functions.f"),
            ),
            (
                "assistant<|channel|>commentary to=functions.f<|constrain|>json",
                Some("commentary"),
                Some("functions.f"),
            ),
            ("<|channel|>analysis", Some("analysis"), None),
            ("assistant<|channel|>commentary", Some("commentary"), None),
            (
                "functions.f to=assistant<|channel|>commentary",
                Some("commentary"),
                None,
            ),
        ];
        for (header, channel, recipient) in cases {
            let (c, r) = parse_header(&h, header);
            assert_eq!(
                (c.as_deref(), r.as_deref()),
                (channel, recipient),
                "{header}"
            );
        }
    }

    #[test]
    fn an_id_holds_the_name_between_its_prefix_and_its_index() {
        assert_eq!(
            name_in_id("functions.get_weather:0", "functions.", ":"),
            "get_weather"
        );
        assert_eq!(
            name_in_id("get_weather:12", "functions.", ":"),
            "get_weather"
        );
        assert_eq!(name_in_id("functions.a:b", "functions.", ":"), "a:b");
    }

    #[test]
    fn bytes_inside_a_started_call_s_arguments_are_read_in_place_up_to_their_closing_bracket() {
        let c = Arc::new(Compiled::new(TextFormat::hermes()));
        let mut engine = Engine::new(
            c,
            NameMap::default(),
            StreamLimits::default(),
            Cow::Borrowed("c"),
        );
        let text = r#"<tool_call>{"name": "f", "arguments": {"a": [1, {"b": "x\"]}\\"}, "é"], "c": {}}}</tool_call>"#;
        let from = text.find(r#"{"a""#).unwrap();
        // The arguments' closing brace.
        let to = text.rfind("}}</tool_call>").unwrap();
        let mut out = Vec::new();
        let mut i = 0;
        for ch in text.chars() {
            let piece = &text.as_bytes()[i..i + ch.len_utf8()];
            // From the byte after the arguments' `{` to their `}` (which the
            // steps read), every piece meets the arguments read in place.
            let in_args = matches!(engine.in_place, InPlace::JsonArgs(_));
            assert_eq!(in_args, i > from && i <= to, "at {i} ({ch:?})");
            engine.push(piece, &mut out);
            i += piece.len();
        }
        engine.finish(&mut out);
        let output = crate::stream::ModelOutput::collect(out);
        let call = output.calls().next().expect("a call");
        let arguments = match &call.arguments {
            RawArguments::Text(t) => t.clone(),
            RawArguments::Json(v) => v.to_string(),
        };
        assert_eq!(arguments, text[from..=to], "{output:?}");
    }

    #[test]
    fn a_generated_id_is_the_prefix_then_the_index_in_decimal() {
        let c = Arc::new(Compiled::new(TextFormat::hermes()));
        let mut engine = Engine::new(
            c,
            NameMap::default(),
            StreamLimits::default(),
            Cow::Borrowed("turn-"),
        );
        for (index, id) in [
            (0, "turn-0"),
            (7, "turn-7"),
            (10, "turn-10"),
            (40321, "turn-40321"),
        ] {
            assert_eq!(engine.generated_id(index).as_str(), id);
        }
        assert_eq!(
            engine.generated_id(usize::MAX).as_str(),
            format!("turn-{}", usize::MAX)
        );
        // A prefix too long to write in place.
        let long = "p".repeat(60);
        engine.set_id_prefix(Cow::Owned(long.clone()));
        assert_eq!(engine.generated_id(12).as_str(), format!("{long}12"));
    }

    #[test]
    fn an_ascii_byte_is_appended_as_the_character_of_its_code() {
        let mut s = String::from("é");
        for b in 0..=0x7f_u8 {
            push_ascii(&mut s, b);
        }
        let expected: String = std::iter::once('é')
            .chain((0..=0x7f_u8).map(char::from))
            .collect();
        assert_eq!(s, expected);
    }

    #[test]
    fn markers_with_a_byte_json_keeps_in_strings_are_never_in_a_json_object() {
        for marker in ["</tool_call>", "<|python_tag|>", "[TOOL_CALLS]", ";", "[{x"] {
            assert!(never_in_json_object(marker), "{marker}");
        }
        // Each of these can be met in a valid object, or begin at its `}`.
        for marker in ["]", ", ", "\"x", "}X", "[1]", "true", ""] {
            assert!(!never_in_json_object(marker), "{marker}");
        }
    }
}
