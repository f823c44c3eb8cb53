//! Bad provider streams: each defect a classified event that keeps the
//! call's id and raw text; nothing runs on a partial argument, and the
//! other calls of the turn go on.

use serde_json::{Value, json};
use tinyagents_tools::stream::native::{NativeFormat, NativeOptions, NativeReader};
use tinyagents_tools::stream::{
    CallProblem, FailedCall, ModelOutput, OutputReader, StreamEvent, StreamProblemKind,
    TruncatedCall,
};
use tinyagents_tools::testkit::{Chunking, chunk_bytes};

use super::native_common::{any_ready, events, problem_kinds, small_limits, sse};

const CHAT: NativeFormat = NativeFormat::OpenAiChat;

fn chat_chunk(delta: Value) -> Value {
    json!({"choices": [{"index": 0, "delta": delta, "finish_reason": null}]})
}

fn chat_start(index: u64, id: &str, name: &str, arguments: &str) -> Value {
    chat_chunk(
        json!({"tool_calls": [{"index": index, "id": id, "type": "function",
        "function": {"name": name, "arguments": arguments}}]}),
    )
}

fn chat_args(index: u64, arguments: &str) -> Value {
    chat_chunk(json!({"tool_calls": [{"index": index, "function": {"arguments": arguments}}]}))
}

fn chat_finish(reason: &str) -> Value {
    json!({"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]})
}

fn collect(
    format: NativeFormat,
    options: NativeOptions,
    text: &str,
    chunking: Chunking,
) -> ModelOutput {
    ModelOutput::collect(events(format, options, text.as_bytes(), chunking))
}

fn chat(text: &str) -> ModelOutput {
    collect(CHAT, NativeOptions::default(), text, Chunking::Fixed(3))
}

fn only_failed(out: &ModelOutput) -> &FailedCall {
    let failed: Vec<_> = out.failed().collect();
    assert_eq!(failed.len(), 1, "{out:?}");
    failed[0]
}

#[test]
fn a_chat_call_that_never_closes_is_truncated_with_its_raw_text_and_never_ready() {
    // The stream ends (no finish_reason, no [DONE]), or the token limit
    // cuts it: the call is truncated, with its id, name and text.
    for tail in [vec![], vec![chat_finish("length")]] {
        let mut list = vec![
            chat_start(0, "call_ok", "ok", "{}"),
            chat_start(1, "call_cut", "weather", "{\"city\": "),
            chat_args(1, "\"Par"),
        ];
        list.extend(tail);
        let all = events(
            CHAT,
            NativeOptions::default(),
            sse(&list).as_bytes(),
            Chunking::ONE,
        );
        let out = ModelOutput::collect(all);
        assert_eq!(
            out.calls().map(|c| c.id.as_str()).collect::<Vec<_>>(),
            ["call_ok"]
        );
        let cut: Vec<&TruncatedCall> = out.truncated().collect();
        assert_eq!(cut.len(), 1);
        assert_eq!(cut[0].id.as_ref().unwrap().as_str(), "call_cut");
        assert_eq!(cut[0].name.as_ref().unwrap().as_str(), "weather");
        assert_eq!(cut[0].raw, "{\"city\": \"Par");
        assert_eq!(cut[0].index, Some(1));
    }
}

#[test]
fn a_chat_call_left_open_when_the_model_finished_normally_is_malformed() {
    let list = [
        chat_start(0, "c", "f", "{\"a\": [1, "),
        chat_finish("tool_calls"),
    ];
    let out = chat(&sse(&list));
    let failed = only_failed(&out);
    assert_eq!(failed.kind, CallProblem::MalformedArguments);
    assert_eq!(failed.raw, "{\"a\": [1, ");
    // The executor still answers it, by id, from its raw text.
    let call = failed.as_call().unwrap();
    assert_eq!(call.id.as_str(), "c");
}

#[test]
fn arguments_over_the_size_limit_are_refused_while_they_stream_and_the_rest_dropped() {
    let options = small_limits(32, 8);
    let mut reader = NativeReader::with_options(CHAT, options);
    let mut out = Vec::new();
    reader.push_event(&chat_start(0, "big", "write", "{\"text\": \""), &mut out);
    reader.push_event(&chat_args(0, "0123456789"), &mut out);
    reader.push_event(&chat_args(0, "0123456789é0123"), &mut out);
    // Refused now, before the value is complete or buffered.
    let Some(StreamEvent::CallFailed(failed)) = out.last() else {
        panic!("{out:?}");
    };
    assert_eq!(failed.kind, CallProblem::TooLarge);
    assert_eq!(failed.id.as_ref().unwrap().as_str(), "big");
    assert!(failed.raw.len() <= 32 && failed.raw.starts_with("{\"text\": \"0123456789"));
    let refused_at = out.len();
    reader.push_event(&chat_args(0, "more and more \"}"), &mut out);
    reader.push_event(&chat_start(1, "small", "read", "{\"k\": 1}"), &mut out);
    reader.push_event(&chat_finish("tool_calls"), &mut out);
    reader.finish(&mut out);
    // The later fragments of the refused call are dropped; the next call
    // goes on.
    assert!(
        !out[refused_at..]
            .iter()
            .any(|e| matches!(e, StreamEvent::ArgumentsDelta(d) if d.index == 0))
    );
    let all = ModelOutput::collect(out);
    assert_eq!(
        all.calls().map(|c| c.id.as_str()).collect::<Vec<_>>(),
        ["small"]
    );
    assert_eq!(all.failed().count(), 1);
}

#[test]
fn arguments_nested_deeper_than_the_limit_are_refused_at_the_bracket_too_deep() {
    let list = [
        chat_start(0, "deep", "f", "{\"a\": [[["),
        chat_args(0, "[1]]]]}"),
        chat_start(1, "flat", "g", "{\"a\": \"[[[[[[\"}"),
        chat_finish("tool_calls"),
    ];
    let out = collect(CHAT, small_limits(1 << 20, 4), &sse(&list), Chunking::ONE);
    let failed = only_failed(&out);
    assert_eq!(failed.kind, CallProblem::TooDeep);
    assert_eq!(failed.raw, "{\"a\": [[[[");
    // Brackets inside strings do not nest.
    assert_eq!(
        out.calls().map(|c| c.id.as_str()).collect::<Vec<_>>(),
        ["flat"]
    );
}

#[test]
fn invalid_utf8_split_across_pieces_is_reported_and_the_open_call_never_runs() {
    let mut bytes = sse(&[
        chat_start(0, "done", "f", "{\"a\": 1}"),
        chat_start(1, "open", "g", "{\"b\": \""),
    ])
    .into_bytes();
    // A fragment whose bytes are not UTF-8 (a lone continuation byte and a
    // truncated sequence), cut across pieces.
    bytes.extend_from_slice(b"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"function\":{\"arguments\":\"\x80\xe6\x97\"}}]}}]}\n\n");
    bytes.extend(sse(&[chat_args(1, "x\"}"), chat_finish("tool_calls")]).into_bytes());
    for chunking in [Chunking::ONE, Chunking::Fixed(5), Chunking::Whole] {
        let mut reader = NativeReader::new(CHAT);
        let mut out = Vec::new();
        for piece in chunk_bytes(&bytes, chunking) {
            reader.push(piece, &mut out);
        }
        reader.finish(&mut out);
        let out = ModelOutput::collect(out);
        assert_eq!(
            problem_kinds(&out),
            [StreamProblemKind::InvalidUtf8],
            "{chunking:?}"
        );
        assert_eq!(
            out.calls().map(|c| c.id.as_str()).collect::<Vec<_>>(),
            ["done"]
        );
        let failed = only_failed(&out);
        assert_eq!(failed.kind, CallProblem::LostEvent);
        assert_eq!(failed.id.as_ref().unwrap().as_str(), "open");
        assert_eq!(failed.raw, "{\"b\": \"x\"}");
    }
}

#[test]
fn a_line_that_is_not_json_is_a_malformed_event_and_reading_goes_on() {
    let text = format!(
        "{}data: {{\"choices\": [oops\n\n{}",
        sse(&[chat_chunk(json!({"content": "before "}))]),
        sse(&[chat_chunk(json!({"content": "after"})), chat_finish("stop")]),
    );
    let out = chat(&text);
    assert_eq!(out.text(), "before after");
    assert_eq!(problem_kinds(&out), [StreamProblemKind::MalformedEvent]);
    assert_eq!(out.problems[0].raw, "{\"choices\": [oops");
}

#[test]
fn a_stream_that_ends_mid_event_says_so_and_truncates_the_open_call() {
    let mut text = sse(&[chat_start(0, "c", "f", "{\"a\": ")]);
    text.push_str(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"functi",
    );
    let out = collect(CHAT, NativeOptions::default(), &text, Chunking::ONE);
    assert_eq!(problem_kinds(&out), [StreamProblemKind::EndedMidEvent]);
    assert!(out.problems[0].raw.ends_with("\"functi"));
    // The lost event may have carried a piece of the open call.
    let failed = only_failed(&out);
    assert_eq!(
        (failed.kind, failed.raw.as_str()),
        (CallProblem::LostEvent, "{\"a\": ")
    );
}

#[test]
fn a_fragment_for_an_unknown_index_is_reported_with_its_text() {
    let list = [
        chat_start(0, "c", "f", "{\"a\": 1}"),
        chat_args(4, "{\"stray\": true}"),
        chat_finish("tool_calls"),
    ];
    let out = chat(&sse(&list));
    assert_eq!(problem_kinds(&out), [StreamProblemKind::UnknownIndex]);
    assert!(out.problems[0].raw.contains("stray"));
    assert_eq!(out.calls().count(), 1);
}

#[test]
fn a_reused_call_id_fails_that_call_with_its_id_name_and_text() {
    let list = [
        chat_start(0, "same", "f", "{\"a\": 1}"),
        chat_start(1, "same", "g", "{\"b\": 2}"),
        chat_start(2, "other", "h", "{}"),
        chat_finish("tool_calls"),
    ];
    let out = chat(&sse(&list));
    assert_eq!(
        out.calls().map(|c| c.name.as_str()).collect::<Vec<_>>(),
        ["f", "h"]
    );
    let failed = only_failed(&out);
    assert_eq!(failed.kind, CallProblem::ReusedId);
    assert_eq!(failed.name.as_ref().unwrap().as_str(), "g");
    assert_eq!(failed.raw, "{\"b\": 2}");
    assert_eq!(failed.index, Some(1));
}

#[test]
fn events_out_of_order_or_repeated_are_reported_and_change_nothing() {
    let list = [
        chat_chunk(json!({"content": "a"})),
        chat_finish("stop"),
        chat_chunk(json!({"content": "late"})),
        chat_finish("stop"),
    ];
    let mut text = sse(&list);
    text.push_str("data: [DONE]\n\n");
    text.push_str(&sse(&[chat_chunk(json!({"content": "after the end"}))]));
    let out = chat(&text);
    assert_eq!(out.text(), "a");
    assert_eq!(
        problem_kinds(&out),
        [
            StreamProblemKind::OutOfOrder,
            StreamProblemKind::OutOfOrder,
            StreamProblemKind::OutOfOrder
        ]
    );
    assert!(out.problems[2].raw.contains("after the end"));
}

#[test]
fn a_provider_error_in_the_stream_is_a_provider_error_and_open_calls_are_cut() {
    let mut text = sse(&[chat_start(0, "c", "f", "{\"a\":")]);
    text.push_str(&sse(&[
        json!({"error": {"message": "The server had an error", "type": "server_error"}}),
    ]));
    let out = chat(&text);
    assert_eq!(problem_kinds(&out), [StreamProblemKind::ProviderError]);
    assert!(out.problems[0].raw.contains("The server had an error"));
    assert_eq!(out.truncated().next().unwrap().raw, "{\"a\":");
}

#[test]
fn arguments_that_close_but_are_not_one_json_object_never_run() {
    let list = [
        chat_start(0, "dup", "f", "{\"path\": \"a\", \"path\": \"/etc\"}"),
        chat_start(1, "arr", "g", "[1, 2]"),
        chat_start(2, "bad", "h", "{\"x\": tru}"),
        chat_start(3, "good", "k", "{\"x\": true}"),
        chat_finish("tool_calls"),
    ];
    let all = events(
        CHAT,
        NativeOptions::default(),
        sse(&list).as_bytes(),
        Chunking::ONE,
    );
    let out = ModelOutput::collect(all.clone());
    assert_eq!(
        out.calls().map(|c| c.id.as_str()).collect::<Vec<_>>(),
        ["good"]
    );
    let kinds: Vec<_> = out
        .failed()
        .map(|f| (f.id.as_ref().unwrap().as_str(), f.kind))
        .collect();
    assert_eq!(
        kinds,
        [
            ("dup", CallProblem::MalformedArguments),
            ("arr", CallProblem::MalformedArguments),
            ("bad", CallProblem::MalformedArguments),
        ]
    );
    assert!(any_ready(&all));
}

#[test]
fn a_call_without_a_name_is_malformed_markup_and_keeps_its_id() {
    let list = [
        chat_chunk(
            json!({"tool_calls": [{"index": 0, "id": "anon", "function": {"arguments": "{}"}}]}),
        ),
        chat_finish("tool_calls"),
    ];
    let out = chat(&sse(&list));
    let failed = only_failed(&out);
    assert_eq!(failed.kind, CallProblem::MalformedMarkup);
    assert_eq!(failed.id.as_ref().unwrap().as_str(), "anon");
    assert!(failed.as_call().is_none());
}
