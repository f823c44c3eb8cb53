//! OpenAI Chat Completions streams: a recorded-shape stream against the
//! completion it adds up to, calls ready at their close, and the shapes
//! OpenAI-compatible servers send.

use serde_json::{Value, json};
use tinyagents_tools::call::RawArguments;
use tinyagents_tools::providers::openai::parse_chat_tool_calls;
use tinyagents_tools::stream::native::{NativeFormat, NativeOptions, NativeReader, parse_response};
use tinyagents_tools::stream::{
    CallProblem, FinishReason, ModelOutput, OutputPart, OutputReader, StreamEvent,
    StreamProblemKind,
};
use tinyagents_tools::testkit::{Chunking, ScriptedStream};

use super::native_common::{events, fixture, fixture_json, problem_kinds, read, sse};

const CHAT: NativeFormat = NativeFormat::OpenAiChat;

fn chunk(delta: Value) -> Value {
    json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": null}]})
}

fn finish_chunk(reason: &str) -> Value {
    json!({"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]})
}

fn call_start(index: u64, id: &str, name: &str, arguments: &str) -> Value {
    chunk(
        json!({"tool_calls": [{"index": index, "id": id, "type": "function",
        "function": {"name": name, "arguments": arguments}}]}),
    )
}

fn call_args(index: u64, arguments: &str) -> Value {
    chunk(json!({"tool_calls": [{"index": index, "function": {"arguments": arguments}}]}))
}

#[test]
fn a_recorded_chat_stream_collects_to_its_whole_completion_for_every_chunking() {
    let stream = fixture("openai_chat.sse");
    let completion = fixture_json("openai_chat.json");
    let whole = parse_response(CHAT, &completion, &NativeOptions::default());

    assert_eq!(
        whole.reasoning(),
        "The user asks about two cities — Paris and 東京. I will call get_weather for both."
    );
    assert_eq!(
        whole.text(),
        "Checking both: {\"braces\"} and </tool_call> stay text ✓"
    );
    let calls: Vec<_> = whole.calls().cloned().collect();
    assert_eq!(calls, parse_chat_tool_calls(&completion).unwrap());
    assert_eq!(
        calls[0].arguments,
        RawArguments::Text(
            r#"{"city": "Paris", "note": "quote \" and brace } and </tool_call>"}"#.into()
        )
    );
    let finish = whole.finish.as_ref().unwrap();
    assert_eq!(finish.reason, FinishReason::ToolCalls);
    assert_eq!(finish.usage.as_ref().unwrap()["total_tokens"], 137);
    assert!(whole.problems.is_empty() && whole.failed().count() == 0);

    for chunking in Chunking::matrix(24) {
        assert_eq!(
            read(CHAT, stream.as_bytes(), chunking),
            whole,
            "{chunking:?}"
        );
    }
}

#[test]
fn the_same_stream_as_one_event_json_a_line_reads_the_same() {
    let stream = fixture("openai_chat.sse");
    let lines: String = stream
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|data| format!("{data}\r\n"))
        .collect();
    let whole = read(CHAT, stream.as_bytes(), Chunking::Whole);
    for chunking in [
        Chunking::ONE,
        Chunking::Fixed(3),
        Chunking::Random { seed: 9, max: 11 },
    ] {
        assert_eq!(
            read(CHAT, lines.as_bytes(), chunking),
            whole,
            "{chunking:?}"
        );
    }
}

#[test]
fn a_call_is_ready_the_moment_its_arguments_close_before_the_turn_ends() {
    let mut reader = NativeReader::new(CHAT);
    let mut out = Vec::new();
    reader.push_event(&call_start(0, "call_a", "search", "{\"q\": "), &mut out);
    reader.push_event(&call_args(0, "\"rust"), &mut out);
    assert!(!out.iter().any(|e| matches!(e, StreamEvent::CallReady(_))));
    // The fragment that closes the object makes the call ready, at once.
    reader.push_event(&call_args(0, "\"}"), &mut out);
    let StreamEvent::CallReady(ready) = out.last().unwrap() else {
        panic!("{out:?}");
    };
    assert_eq!(ready.index, 0);
    assert_eq!(ready.call.id.as_str(), "call_a");
    assert_eq!(
        ready.call.arguments,
        RawArguments::Text(r#"{"q": "rust"}"#.into())
    );

    // The argument fragments add up to the ready call's text.
    let fragments: String = out
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ArgumentsDelta(d) => Some(d.fragment.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(fragments, r#"{"q": "rust"}"#);
    assert!(matches!(&out[0], StreamEvent::CallStarted(s) if s.name == "search" && s.index == 0));

    let before = out.len();
    reader.push_event(&finish_chunk("tool_calls"), &mut out);
    reader.finish(&mut out);
    assert_eq!(out.len(), before + 1, "only the finish follows: {out:?}");
    assert!(
        matches!(out.last(), Some(StreamEvent::Finished(f)) if f.reason == FinishReason::ToolCalls)
    );
}

#[test]
fn whitespace_after_the_close_is_dropped_and_other_text_there_is_a_problem() {
    let completion = |first: &str, second: &str| {
        json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "f", "arguments": first}},
            {"id": "b", "type": "function", "function": {"name": "g", "arguments": second}},
        ]}}]})
    };
    let response = completion(" {\"x\": 1}\n  ", "{\"y\": 2} {\"z\": 3}");
    let whole = parse_response(CHAT, &response, &NativeOptions::default());
    let args: Vec<_> = whole.calls().map(|c| c.arguments.clone()).collect();
    // Leading whitespace is part of the value's text; trailing is not.
    assert_eq!(
        args,
        [
            RawArguments::Text(" {\"x\": 1}".into()),
            RawArguments::Text("{\"y\": 2}".into())
        ]
    );
    assert_eq!(
        problem_kinds(&whole),
        [StreamProblemKind::ArgumentsAfterClose]
    );
    assert_eq!(whole.problems[0].raw, "{\"z\": 3}");

    let stream = ScriptedStream::from_response_with(CHAT, &response, Chunking::ONE);
    for chunking in Chunking::matrix(8) {
        assert_eq!(
            stream.read(NativeReader::new(CHAT), chunking),
            whole,
            "{chunking:?}"
        );
    }
}

#[test]
fn reasoning_comes_as_reasoning_content_or_as_reasoning() {
    let events = [
        chunk(json!({"reasoning_content": "think "})),
        chunk(json!({"reasoning": "more"})),
        chunk(json!({"content": "answer"})),
        finish_chunk("stop"),
    ];
    let out = read(CHAT, sse(&events).as_bytes(), Chunking::Whole);
    assert_eq!(
        out.parts,
        [
            OutputPart::Reasoning {
                text: "think more".into(),
                signature: None
            },
            OutputPart::Text("answer".into())
        ]
    );
    let message = json!({"choices": [{"index": 0, "finish_reason": "stop",
        "message": {"reasoning": "think more", "content": "answer"}}]});
    assert_eq!(
        parse_response(CHAT, &message, &NativeOptions::default()),
        out
    );
}

#[test]
fn usage_comes_from_the_last_chunk_and_the_finish_from_finish_reason() {
    let usage = json!({"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7});
    let events = [
        chunk(json!({"content": "hi"})),
        finish_chunk("length"),
        json!({"choices": [], "usage": usage}),
    ];
    let out = read(CHAT, sse(&events).as_bytes(), Chunking::ONE);
    let finish = out.finish.unwrap();
    assert_eq!(finish.reason, FinishReason::Length);
    assert_eq!(finish.usage, Some(usage));

    // Without a finish_reason the stream ended without saying why.
    let out = read(CHAT, sse(&events[..1]).as_bytes(), Chunking::Whole);
    assert_eq!(out.finish.unwrap().reason, FinishReason::EndOfStream);
}

#[test]
fn servers_that_send_calls_whole_repeat_ids_or_reuse_an_index_lose_no_call() {
    // vLLM and others send a call whole in one fragment; some repeat the
    // id in every fragment; some give every call index 0 with a new id.
    let events = [
        call_start(0, "c1", "f", "{\"a\": 1}"),
        call_start(0, "c2", "g", "{\"b\":"),
        chunk(json!({"tool_calls": [{"index": 0, "id": "c2", "function": {"arguments": " 2}"}}]})),
        chunk(json!({"tool_calls": [{"id": "c3", "function": {"name": "h", "arguments": "{}"}}]})),
        finish_chunk("tool_calls"),
    ];
    let out = read(CHAT, sse(&events).as_bytes(), Chunking::Fixed(2));
    let calls: Vec<_> = out
        .calls()
        .map(|c| {
            (
                c.id.as_str().to_owned(),
                c.name.as_str().to_owned(),
                c.arguments.clone(),
            )
        })
        .collect();
    assert_eq!(
        calls,
        [
            (
                "c1".into(),
                "f".into(),
                RawArguments::Text("{\"a\": 1}".into())
            ),
            (
                "c2".into(),
                "g".into(),
                RawArguments::Text("{\"b\": 2}".into())
            ),
            ("c3".into(), "h".into(), RawArguments::Text("{}".into())),
        ]
    );
    assert!(out.problems.is_empty(), "{:?}", out.problems);
}

#[test]
fn a_call_without_arguments_is_ready_with_none_when_the_choice_finishes() {
    let events = [call_start(0, "c1", "ping", ""), finish_chunk("tool_calls")];
    let all = events_of(&events);
    let ready: Vec<_> = ModelOutput::collect(all).calls().cloned().collect();
    assert_eq!(ready.len(), 1);
    assert_eq!(ready[0].arguments, RawArguments::Text(String::new()));
    assert_eq!(
        ready,
        parse_chat_tool_calls(&json!({"tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "ping", "arguments": ""}}
        ]}))
        .unwrap()
    );
}

#[test]
fn arguments_sent_as_an_object_are_the_call_the_whole_completion_gives() {
    // Some OpenAI-compatible servers write `function.arguments` as an
    // object in the delta (as in their whole completions). Read as text,
    // they were lost: the call ran on no arguments.
    let args = json!({"city": "Paris", "days": [1, 2], "unit": null});
    let events = [
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "c1", "type": "function",
            "function": {"name": "weather", "arguments": args}}]}),
        ),
        call_start(1, "c2", "ping", "{}"),
        finish_chunk("tool_calls"),
    ];
    let completion = json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
    "role": "assistant",
    "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": args}},
        {"id": "c2", "type": "function", "function": {"name": "ping", "arguments": "{}"}}
    ]}}]});
    let whole = parse_response(CHAT, &completion, &NativeOptions::default());
    let calls: Vec<_> = whole.calls().cloned().collect();
    assert_eq!(calls, parse_chat_tool_calls(&completion).unwrap());
    assert_eq!(calls[0].arguments, RawArguments::Json(args.clone()));
    for chunking in Chunking::matrix(8) {
        let out = read(CHAT, sse(&events).as_bytes(), chunking);
        assert_eq!(
            out.calls().cloned().collect::<Vec<_>>(),
            calls,
            "{chunking:?}"
        );
        assert!(
            out.problems.is_empty() && out.failed().count() == 0,
            "{out:?}"
        );
    }
    // A UI sees the object as its compact text, once.
    let fragments: Vec<_> = events_of(&events)
        .into_iter()
        .filter_map(|e| match e {
            StreamEvent::ArgumentsDelta(d) if d.index == 0 => Some(d.fragment),
            _ => None,
        })
        .collect();
    assert_eq!(fragments, [args.to_string()]);
}

#[test]
fn an_object_after_argument_text_fails_its_call_and_the_others_go_on() {
    let events = [
        call_start(0, "c1", "weather", "{\"city\": "),
        chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": {"city": "Paris"}}}]})),
        call_start(1, "c2", "ping", "{}"),
        chunk(json!({"tool_calls": [{"index": 1, "function": {"arguments": {"again": true}}}]})),
        finish_chunk("tool_calls"),
    ];
    let out = read(CHAT, sse(&events).as_bytes(), Chunking::Whole);
    let failed: Vec<_> = out.failed().collect();
    assert_eq!(failed.len(), 1, "{out:?}");
    assert_eq!(failed[0].kind, CallProblem::MalformedArguments);
    assert_eq!(failed[0].id.as_ref().unwrap().as_str(), "c1");
    assert_eq!(failed[0].name.as_ref().unwrap().as_str(), "weather");
    assert_eq!(failed[0].raw, "{\"city\": ");
    // The second call closed with its text: the object after it is
    // reported as text after the close, and the call still runs.
    let calls: Vec<_> = out.calls().map(|c| c.id.as_str().to_owned()).collect();
    assert_eq!(calls, ["c2"]);
    assert_eq!(
        problem_kinds(&out),
        [StreamProblemKind::ArgumentsAfterClose]
    );
}

#[test]
fn arguments_sent_as_an_object_are_bounded_like_their_text() {
    let events = [
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "c1", "type": "function",
            "function": {"name": "weather", "arguments": {"city": "x".repeat(100)}}}]}),
        ),
        chunk(
            json!({"tool_calls": [{"index": 1, "id": "c2", "type": "function",
            "function": {"name": "deep", "arguments": {"a": [[[[1]]]]}}}]}),
        ),
        call_start(2, "c3", "ping", "{}"),
        finish_chunk("tool_calls"),
    ];
    let out = ModelOutput::collect(super::native_common::events(
        CHAT,
        super::native_common::small_limits(64, 4),
        sse(&events).as_bytes(),
        Chunking::Fixed(7),
    ));
    let kinds: Vec<_> = out
        .failed()
        .map(|f| (f.id.as_ref().unwrap().as_str().to_owned(), f.kind))
        .collect();
    assert_eq!(
        kinds,
        [
            ("c1".to_owned(), CallProblem::TooLarge),
            ("c2".to_owned(), CallProblem::TooDeep)
        ]
    );
    assert_eq!(out.calls().count(), 1);
}

fn events_of(list: &[Value]) -> Vec<StreamEvent> {
    events(
        CHAT,
        NativeOptions::default(),
        sse(list).as_bytes(),
        Chunking::Whole,
    )
}
