//! A call written as one JSON object, seen as it streams: started the
//! moment its name (and the id its format may write) is read, its
//! arguments sent piece by piece as their raw text, and the same call
//! ready at the close, for every JSON-object format and every chunking.

use tinyagents_tools::call::RawArguments;
use tinyagents_tools::stream::text::TextFormat;
use tinyagents_tools::stream::{CallProblem, OutputReader, StreamEvent, StreamLimits};
use tinyagents_tools::testkit::{Chunking, chunk_text};

use super::text_support::{argument_texts, everywhere, reader};

/// `output` fed in `pieces`: each event with the number of bytes fed when
/// it came out (the end of the output for those `finish` gave).
fn timed(
    format: &TextFormat,
    limits: Option<StreamLimits>,
    pieces: &[&str],
) -> Vec<(usize, StreamEvent)> {
    let mut r = reader(format);
    if let Some(limits) = limits {
        r = r.with_limits(limits);
    }
    let (mut events, mut timed, mut fed) = (Vec::new(), Vec::new(), 0);
    for piece in pieces {
        fed += piece.len();
        r.push(piece.as_bytes(), &mut events);
        timed.extend(events.drain(..).map(|e| (fed, e)));
    }
    r.finish(&mut events);
    timed.extend(events.drain(..).map(|e| (fed, e)));
    timed
}

/// The events with adjacent text, reasoning and same-call argument
/// fragments joined: what the whole-text parse gives.
fn merged(events: impl IntoIterator<Item = StreamEvent>) -> Vec<StreamEvent> {
    let mut out: Vec<StreamEvent> = Vec::new();
    for event in events {
        match (out.last_mut(), event) {
            (Some(StreamEvent::Text(last)), StreamEvent::Text(t)) => last.push_str(&t),
            (Some(StreamEvent::Reasoning(last)), StreamEvent::Reasoning(t)) => last.push_str(&t),
            (Some(StreamEvent::ArgumentsDelta(last)), StreamEvent::ArgumentsDelta(d))
                if last.index == d.index =>
            {
                last.fragment.push_str(&d.fragment)
            }
            (_, event) => out.push(event),
        }
    }
    out
}

/// The argument fragments of call `index`, joined.
fn fragments(events: &[(usize, StreamEvent)], index: usize) -> String {
    events
        .iter()
        .filter_map(|(_, e)| match e {
            StreamEvent::ArgumentsDelta(d) if d.index == index => Some(d.fragment.as_str()),
            _ => None,
        })
        .collect()
}

/// How many bytes had been fed when call `index` started.
fn started_at(events: &[(usize, StreamEvent)], index: usize) -> Option<usize> {
    events.iter().find_map(|(fed, e)| match e {
        StreamEvent::CallStarted(s) if s.index == index => Some(*fed),
        _ => None,
    })
}

/// One call as a format writes it, and where its pieces are.
struct Case {
    format: TextFormat,
    output: String,
    /// The text the call may start after: its name's value (and its id's,
    /// for a format that may write one).
    starts_after: &'static str,
    /// The call's arguments, as written.
    arguments: &'static str,
    /// Whether they go out piece by piece (or all at once when the call
    /// starts after them).
    streams: bool,
}

impl Case {
    fn new(
        format: TextFormat,
        output: String,
        starts_after: &'static str,
        arguments: &'static str,
    ) -> Case {
        Case {
            format,
            output,
            starts_after,
            arguments,
            streams: true,
        }
    }

    /// The offset just after `starts_after`, where the arguments begin and
    /// end, and where the object closes.
    fn offsets(&self) -> (usize, usize, usize, usize) {
        let at = |s: &str| self.output.find(s).unwrap_or_else(|| panic!("{s}"));
        let start = at(self.starts_after) + self.starts_after.len();
        let args = at(self.arguments);
        let close = self.output[args + self.arguments.len()..]
            .find('}')
            .map(|i| args + self.arguments.len() + i)
            .unwrap();
        (start, args, args + self.arguments.len(), close)
    }
}

const ARGS: &str = r##"{"path": "notes/a.md", "content": "# A\n{\"}\" ]} <tool_call> [TOOL_CALLS]\n", "lines": ["x", "y"]}"##;

fn cases() -> Vec<Case> {
    let hermes = format!(
        "Writing it.\n<tool_call>\n{{\"name\": \"write_file\", \"arguments\": {ARGS}}}\n</tool_call>"
    );
    let tags =
        format!("[TOOL_CALL]{{\"name\": \"write_file\", \"args\": {ARGS}}}[/TOOL_CALL] done");
    let llama_bare = format!("{{\"name\": \"write_file\", \"parameters\": {ARGS}}}");
    let llama_tag = format!(
        "<|python_tag|>{{\"name\": \"get_location\", \"parameters\": {{}}}}; \
         {{\"name\": \"write_file\", \"parameters\": {ARGS}}}"
    );
    let mistral_id_first = format!(
        "[TOOL_CALLS] [{{\"name\": \"write_file\", \"id\": \"a1b2c3d4e\", \"arguments\": {ARGS}}}]"
    );
    let mistral_id_last = format!(
        "[TOOL_CALLS] [{{\"name\": \"write_file\", \"arguments\": {ARGS}, \"id\": \"a1b2c3d4e\"}}]"
    );
    vec![
        Case::new(TextFormat::hermes(), hermes, "\"write_file\"", ARGS),
        Case::new(
            TextFormat::tags("[TOOL_CALL]", "[/TOOL_CALL]"),
            tags,
            "\"write_file\"",
            ARGS,
        ),
        Case::new(
            TextFormat::llama3_json(),
            llama_bare,
            "\"write_file\"",
            ARGS,
        ),
        Case::new(TextFormat::llama3_json(), llama_tag, "\"write_file\"", ARGS),
        Case::new(
            TextFormat::mistral(),
            mistral_id_first,
            "\"a1b2c3d4e\"",
            ARGS,
        ),
        Case {
            streams: false,
            ..Case::new(
                TextFormat::mistral(),
                mistral_id_last,
                "\"a1b2c3d4e\"",
                ARGS,
            )
        },
    ]
}

#[test]
fn every_json_object_format_starts_a_call_before_it_closes_and_streams_its_arguments() {
    for case in cases() {
        let (start, args_from, args_to, close) = case.offsets();
        let name = &case.format.name;
        let whole = timed(&case.format, None, &[&case.output]);
        let whole_events: Vec<StreamEvent> = whole.iter().map(|(_, e)| e.clone()).collect();
        let last = whole_events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::CallReady(r) => Some(r.clone()),
                _ => None,
            })
            .next_back()
            .unwrap();
        assert_eq!(
            last.call.arguments,
            RawArguments::Text(case.arguments.to_owned()),
            "{name}"
        );
        for chunking in Chunking::matrix(16) {
            let pieces = chunk_text(&case.output, chunking);
            let events = timed(&case.format, None, &pieces);
            let what = format!("{name} {chunking:?} {}", case.output);
            // Started in the piece that completed its name (and id).
            let ends: Vec<usize> = pieces
                .iter()
                .scan(0, |fed, p| {
                    *fed += p.len();
                    Some(*fed)
                })
                .collect();
            let expected_start = ends.iter().copied().find(|&e| e >= start).unwrap();
            assert_eq!(
                started_at(&events, last.index),
                Some(expected_start),
                "{what}"
            );
            // The fragments so far are always the arguments as far as they
            // were fed, at most one byte held back (a possible marker).
            let mut sent = String::new();
            for (fed, event) in &events {
                if let StreamEvent::ArgumentsDelta(d) = event
                    && d.index == last.index
                {
                    sent.push_str(&d.fragment);
                    assert!(case.arguments.starts_with(&sent), "{what}");
                    if *fed < args_to {
                        let fed_args = fed.saturating_sub(args_from);
                        assert!(sent.len() + 1 >= fed_args, "{what}: {sent:?}");
                    }
                }
            }
            assert_eq!(fragments(&events, last.index), case.arguments, "{what}");
            // More than one piece inside the arguments: more than one
            // fragment before the object closed (one, when the call starts
            // after its arguments but before the close).
            let inside = ends.iter().filter(|&&e| e > args_from && e < close).count();
            let inside = match case.streams {
                true => inside,
                false => usize::from(expected_start <= close),
            };
            let early = events
                .iter()
                .filter(|(fed, e)| {
                    matches!(e, StreamEvent::ArgumentsDelta(d) if d.index == last.index)
                        && *fed <= close
                })
                .count();
            assert!(early >= inside.min(2), "{what}: {early} of {inside}");
            // The whole-text parse gives the same events, merged.
            assert_eq!(
                merged(events.into_iter().map(|(_, e)| e)),
                whole_events,
                "{what}"
            );
        }
    }
}

#[test]
fn a_mistral_call_whose_id_comes_after_its_arguments_starts_with_that_id_once_it_is_read() {
    let format = TextFormat::mistral();
    let output = format!(
        "[TOOL_CALLS] [{{\"name\": \"write_file\", \"arguments\": {ARGS}, \"id\": \"a1b2c3d4e\"}}, \
         {{\"name\": \"get_location\", \"arguments\": {{}}}}]"
    );
    for chunking in Chunking::matrix(8) {
        let events = timed(&format, None, &chunk_text(&output, chunking));
        let started: Vec<(usize, String)> = events
            .iter()
            .filter_map(|(_, e)| match e {
                StreamEvent::CallStarted(s) => Some((s.index, s.id.as_str().to_owned())),
                _ => None,
            })
            .collect();
        // The model's id, never a generated one replaced later; a call
        // without one gets the generated id at its close.
        assert_eq!(
            started,
            [(0, "a1b2c3d4e".to_owned()), (1, "text-call-1".to_owned())],
            "{chunking:?}"
        );
        let first_fragment = events
            .iter()
            .position(|(_, e)| matches!(e, StreamEvent::ArgumentsDelta(d) if d.index == 0))
            .unwrap();
        let start = events
            .iter()
            .position(|(_, e)| matches!(e, StreamEvent::CallStarted(s) if s.index == 0))
            .unwrap();
        assert!(start < first_fragment, "{chunking:?}");
        assert_eq!(fragments(&events, 0), ARGS);
        // One character at a time: started right after the id, before the
        // object's close.
        if chunking == Chunking::ONE {
            let id_end = output.find("\"a1b2c3d4e\"").unwrap() + "\"a1b2c3d4e\"".len();
            assert_eq!(started_at(&events, 0), Some(id_end));
        }
    }
    let out = everywhere(&format, &output);
    assert_eq!(argument_texts(&out), [ARGS, "{}"]);
}

#[test]
fn only_the_preferred_arguments_key_streams_and_competing_keys_never_disagree_with_the_call() {
    let llama = TextFormat::llama3_json();
    let tags = TextFormat::tags("[TOOL_CALL]", "[/TOOL_CALL]");
    // (format, output, the ready call's arguments, whether they stream
    // before the close)
    let cases = [
        (
            &llama,
            r#"<|python_tag|>{"name": "get_weather", "arguments": {"city": "Lyon"}, "parameters": {"city": "Paris"}}"#,
            r#"{"city": "Paris"}"#,
            true,
        ),
        (
            &llama,
            r#"<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}, "arguments": {"city": "Lyon"}}"#,
            r#"{"city": "Paris"}"#,
            true,
        ),
        (
            &llama,
            r#"<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}, "parameters": {"city": "Lyon"}}"#,
            r#"{"city": "Paris"}"#,
            true,
        ),
        (
            &llama,
            r#"<|python_tag|>{"name": "get_weather", "arguments": {"city": "Lyon"}}"#,
            r#"{"city": "Lyon"}"#,
            false,
        ),
        (
            &tags,
            r#"[TOOL_CALL]{"name": "get_weather", "arguments": {"city": "Lyon"}, "args": {"city": "Paris"}}[/TOOL_CALL]"#,
            r#"{"city": "Paris"}"#,
            true,
        ),
        (
            &tags,
            r#"[TOOL_CALL]{"name": "get_weather", "name": "write_file", "args": {"city": "Paris"}}[/TOOL_CALL]"#,
            r#"{"city": "Paris"}"#,
            true,
        ),
    ];
    for (format, output, arguments, streams) in cases {
        let close = output.rfind('}').unwrap();
        for chunking in Chunking::matrix(16) {
            let events = timed(format, None, &chunk_text(output, chunking));
            let what = format!("{} {chunking:?} {output}", format.name);
            let mut sent = String::new();
            for (_, e) in &events {
                if let StreamEvent::ArgumentsDelta(d) = e {
                    sent.push_str(&d.fragment);
                    assert!(arguments.starts_with(&sent), "{what}: {sent:?}");
                }
            }
            assert_eq!(sent, arguments, "{what}");
            let ready = events
                .iter()
                .find_map(|(_, e)| match e {
                    StreamEvent::CallReady(r) => Some(r.call.clone()),
                    _ => None,
                })
                .unwrap();
            assert_eq!(ready.arguments, RawArguments::Text(arguments.into()));
            // The first name member names the call, from its start on.
            let started = events
                .iter()
                .find_map(|(fed, e)| match e {
                    StreamEvent::CallStarted(s) => Some((*fed, s.name.clone())),
                    _ => None,
                })
                .unwrap();
            assert_eq!(started.1, ready.name, "{what}");
            assert_eq!(ready.name.as_str(), "get_weather", "{what}");
            if chunking == Chunking::ONE {
                assert!(started.0 < close, "{what}");
                let streamed_early = events
                    .iter()
                    .any(|(fed, e)| matches!(e, StreamEvent::ArgumentsDelta(_)) && *fed <= close);
                assert_eq!(streamed_early, streams, "{what}");
            }
        }
    }
}

#[test]
fn a_bare_llama_object_starts_only_once_it_is_sure_to_be_a_call_and_is_never_given_back_after() {
    let format = TextFormat::llama3_json();
    let never_started = [
        // Not a call: text.
        "{\"answer\": 42, \"name\": 3} is the JSON you asked for",
        // Not opened with a key: text when cut off, so never started.
        "{ \"name\": \"get_weather\", \"parameters\": {\"city\": \"Par",
    ];
    for output in never_started {
        for chunking in Chunking::matrix(8) {
            let events = timed(&format, None, &chunk_text(output, chunking));
            assert!(
                !events
                    .iter()
                    .any(|(_, e)| matches!(e, StreamEvent::CallStarted(_))),
                "{chunking:?} {output}"
            );
            let out =
                tinyagents_tools::stream::ModelOutput::collect(events.into_iter().map(|(_, e)| e));
            assert_eq!(out.text(), output, "{chunking:?}");
        }
    }
    // Opened with a key and named: a call from then on, started before it
    // closes; a marker that breaks it makes it a failed call with the
    // id it started with, never text.
    let broken = "{\"name\": \"get_weather\", \"parameters\": {\"city\": <|python_tag|>\
                  {\"name\": \"get_location\", \"parameters\": {}}";
    for chunking in Chunking::matrix(8) {
        let events = timed(&format, None, &chunk_text(broken, chunking));
        let started = started_at(&events, 0).unwrap();
        if chunking == Chunking::ONE {
            let name_end = broken.find("\"get_weather\"").unwrap() + "\"get_weather\"".len();
            assert_eq!(started, name_end, "{chunking:?}");
        }
        let out =
            tinyagents_tools::stream::ModelOutput::collect(events.into_iter().map(|(_, e)| e));
        assert_eq!(out.text(), "", "{chunking:?}");
        let failed = out.failed().next().unwrap();
        assert_eq!(failed.kind, CallProblem::MalformedArguments);
        assert_eq!(
            (failed.index, failed.id.as_ref().unwrap().as_str()),
            (Some(0), "text-call-0")
        );
        assert_eq!(out.calls().next().unwrap().name.as_str(), "get_location");
    }
}

#[test]
fn a_started_call_that_breaks_ends_failed_or_truncated_under_the_index_and_id_it_started_with() {
    let limits = StreamLimits {
        max_argument_bytes: 96,
        max_argument_depth: 4,
    };
    let hermes = TextFormat::hermes();
    let mistral = TextFormat::mistral();
    let cases: Vec<(&TextFormat, String, Option<CallProblem>)> = vec![
        (
            &hermes,
            "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"} oops}</tool_call>".into(),
            Some(CallProblem::MalformedArguments),
        ),
        (
            &hermes,
            "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}<tool_call>".into(),
            Some(CallProblem::MalformedArguments),
        ),
        (
            &hermes,
            "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Par".into(),
            None,
        ),
        (
            &hermes,
            format!(
                "<tool_call>{{\"name\": \"write_file\", \"arguments\": {{\"path\": \"a\", \"content\": \"{}\"}}}}</tool_call>",
                "x".repeat(300)
            ),
            Some(CallProblem::TooLarge),
        ),
        (
            &hermes,
            "<tool_call>{\"name\": \"write_file\", \"arguments\": {\"a\": [[[[[1]]]]]}}</tool_call>".into(),
            Some(CallProblem::TooDeep),
        ),
        (
            &mistral,
            "[TOOL_CALLS] [{\"name\": \"get_weather\", \"id\": \"abc123def\", \"arguments\": {\"city\": 1,}}]".into(),
            Some(CallProblem::MalformedArguments),
        ),
    ];
    for (format, output, problem) in cases {
        let whole: Vec<StreamEvent> = timed(format, Some(limits), &[&output])
            .into_iter()
            .map(|(_, e)| e)
            .collect();
        for chunking in Chunking::matrix(8) {
            let events = timed(format, Some(limits), &chunk_text(&output, chunking));
            let what = format!("{chunking:?} {output}");
            let started = events
                .iter()
                .find_map(|(_, e)| match e {
                    StreamEvent::CallStarted(s) => Some(s.clone()),
                    _ => None,
                })
                .unwrap_or_else(|| panic!("{what}: never started"));
            assert!(
                !events
                    .iter()
                    .any(|(_, e)| matches!(e, StreamEvent::CallReady(_))),
                "{what}"
            );
            let (index, id, name) = events
                .iter()
                .find_map(|(_, e)| match e {
                    StreamEvent::CallFailed(f) => {
                        assert_eq!(Some(f.kind), problem, "{what}");
                        // The executor answers the call it was shown.
                        let answer = f.answer().unwrap();
                        assert_eq!(answer.message.tool_call_id, started.id, "{what}");
                        Some((f.index, f.id.clone(), f.name.clone()))
                    }
                    StreamEvent::Truncated(t) => {
                        assert_eq!(problem, None, "{what}");
                        Some((t.index, t.id.clone(), t.name.clone()))
                    }
                    _ => None,
                })
                .unwrap_or_else(|| panic!("{what}: never ended"));
            assert_eq!(
                (index, id, name),
                (Some(started.index), Some(started.id), Some(started.name)),
                "{what}"
            );
            assert_eq!(merged(events.into_iter().map(|(_, e)| e)), whole, "{what}");
        }
    }
}

#[test]
fn a_glm_value_without_its_key_is_malformed_markup_with_the_name_and_an_id() {
    let output = "<tool_call>get_weather<arg_value>x</arg_value></tool_call>after";
    let out = everywhere(&TextFormat::glm45(), output);
    assert_eq!(out.calls().count(), 0);
    let failed = out.failed().next().unwrap();
    assert_eq!(failed.kind, CallProblem::MalformedMarkup);
    assert_eq!(
        failed.raw,
        "<tool_call>get_weather<arg_value>x</arg_value></tool_call>"
    );
    assert_eq!(failed.name.as_ref().unwrap().as_str(), "get_weather");
    assert_eq!(failed.id.as_ref().unwrap().as_str(), "text-call-0");
    assert_eq!(out.text(), "after");
    // A stray closing marker before any key is malformed too.
    let out = everywhere(
        &TextFormat::glm45(),
        "<tool_call>get_weather</arg_key></tool_call>",
    );
    assert_eq!(
        out.failed().next().unwrap().kind,
        CallProblem::MalformedMarkup
    );
    assert_eq!(out.calls().count(), 0);
    // The well-formed call still reads.
    let out = everywhere(
        &TextFormat::glm45(),
        "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n</tool_call>",
    );
    assert_eq!(out.calls().next().unwrap().name.as_str(), "get_weather");
}
