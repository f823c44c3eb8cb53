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
    // It is still answered, by id, without running.
    let answer = failed.answer().unwrap();
    assert_eq!(answer.tool_call_id.as_str(), "c");
    assert_eq!(answer.outcome(), "invalid_arguments");
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
    // The provider expects an answer to every call id it gave: answered
    // by that id, under no name, without running.
    let answer = failed.answer().unwrap();
    assert_eq!(answer.tool_call_id.as_str(), "anon");
    assert_eq!(answer.outcome(), "invalid_arguments");
}

const ANTHROPIC: NativeFormat = NativeFormat::Anthropic;
const RESPONSES: NativeFormat = NativeFormat::OpenAiResponses;
const GEMINI: NativeFormat = NativeFormat::Gemini;

fn tool_use_start(index: u64, id: &str, name: &str) -> Value {
    json!({"type": "content_block_start", "index": index,
           "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}})
}

fn input_delta(index: u64, partial: &str) -> Value {
    json!({"type": "content_block_delta", "index": index,
           "delta": {"type": "input_json_delta", "partial_json": partial}})
}

fn block_stop(index: u64) -> Value {
    json!({"type": "content_block_stop", "index": index})
}

fn message_end(reason: &str) -> [Value; 2] {
    [
        json!({"type": "message_delta", "delta": {"stop_reason": reason}, "usage": {"output_tokens": 9}}),
        json!({"type": "message_stop"}),
    ]
}

fn anthropic(list: &[Value], options: NativeOptions) -> ModelOutput {
    collect(ANTHROPIC, options, &sse(list), Chunking::Fixed(5))
}

#[test]
fn an_anthropic_tool_use_cut_by_the_token_limit_is_truncated_though_its_block_stopped() {
    for (reason, truncated) in [("max_tokens", true), ("end_turn", false)] {
        let mut list = vec![
            json!({"type": "message_start", "message": {"usage": {"input_tokens": 3}}}),
            tool_use_start(0, "toolu_ok", "ok"),
            input_delta(0, "{}"),
            block_stop(0),
            tool_use_start(1, "toolu_cut", "weather"),
            input_delta(1, "{\"city\": \"Pa"),
            block_stop(1),
        ];
        list.extend(message_end(reason));
        let out = anthropic(&list, NativeOptions::default());
        assert_eq!(
            out.calls().map(|c| c.id.as_str()).collect::<Vec<_>>(),
            ["toolu_ok"]
        );
        if truncated {
            let cut = out.truncated().next().unwrap();
            assert_eq!(cut.id.as_ref().unwrap().as_str(), "toolu_cut");
            assert_eq!(cut.raw, "{\"city\": \"Pa");
        } else {
            let failed = only_failed(&out);
            assert_eq!(failed.kind, CallProblem::MalformedArguments);
            assert_eq!(failed.name.as_ref().unwrap().as_str(), "weather");
        }
    }
}

#[test]
fn an_anthropic_stream_that_ends_inside_a_block_truncates_its_call() {
    let list = [
        tool_use_start(0, "toolu_1", "f"),
        input_delta(0, "{\"a\": [1,"),
    ];
    let out = collect(
        ANTHROPIC,
        NativeOptions::default(),
        &sse(&list),
        Chunking::ONE,
    );
    let cut = out.truncated().next().unwrap();
    assert_eq!(
        (cut.id.as_ref().unwrap().as_str(), cut.raw.as_str()),
        ("toolu_1", "{\"a\": [1,")
    );
    assert_eq!(
        out.finish.unwrap().reason,
        tinyagents_tools::stream::FinishReason::EndOfStream
    );
}

#[test]
fn anthropic_input_over_the_size_limit_is_refused_while_it_streams_and_the_next_call_goes_on() {
    let mut reader = NativeReader::with_options(ANTHROPIC, small_limits(24, 8));
    let mut out = Vec::new();
    reader.push_event(&tool_use_start(0, "toolu_big", "write"), &mut out);
    reader.push_event(&input_delta(0, "{\"text\": \"0123456789"), &mut out);
    assert!(!out.iter().any(|e| matches!(e, StreamEvent::CallFailed(_))));
    reader.push_event(&input_delta(0, "0123456789"), &mut out);
    let Some(StreamEvent::CallFailed(failed)) = out.last() else {
        panic!("{out:?}");
    };
    assert_eq!((failed.kind, failed.raw.len()), (CallProblem::TooLarge, 24));
    for event in [
        input_delta(0, "\"}"),
        block_stop(0),
        tool_use_start(1, "toolu_small", "read"),
        input_delta(1, "{\"k\": 1}"),
        block_stop(1),
    ] {
        reader.push_event(&event, &mut out);
    }
    reader.finish(&mut out);
    let out = ModelOutput::collect(out);
    assert_eq!(
        out.calls().map(|c| c.id.as_str()).collect::<Vec<_>>(),
        ["toolu_small"]
    );
    assert!(out.problems.is_empty(), "{:?}", out.problems);
}

#[test]
fn anthropic_events_out_of_order_repeated_or_for_unknown_blocks_are_reported() {
    let mut list = vec![
        input_delta(7, "{}"),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "s1"}}),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "s2"}}),
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        block_stop(0),
        json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "late"}}),
        block_stop(0),
    ];
    list.extend(message_end("end_turn"));
    list.push(json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": "after"}}));
    let out = anthropic(&list, NativeOptions::default());
    assert_eq!(
        problem_kinds(&out),
        [
            StreamProblemKind::UnknownIndex,
            StreamProblemKind::OutOfOrder,
            StreamProblemKind::OutOfOrder,
            StreamProblemKind::OutOfOrder,
            StreamProblemKind::OutOfOrder,
            StreamProblemKind::OutOfOrder,
        ]
    );
    assert_eq!(out.reasoning(), "");
    assert_eq!(out.text(), "");
    assert_eq!(
        out.parts.len(),
        1,
        "one signed (empty) reasoning block: {:?}",
        out.parts
    );
}

#[test]
fn an_anthropic_error_event_is_a_provider_error_and_the_open_call_is_cut() {
    let list = [
        tool_use_start(0, "toolu_1", "f"),
        input_delta(0, "{\"a\""),
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
    ];
    let out = anthropic(&list, NativeOptions::default());
    assert_eq!(problem_kinds(&out), [StreamProblemKind::ProviderError]);
    assert!(out.problems[0].raw.contains("overloaded_error"));
    assert_eq!(out.truncated().next().unwrap().raw, "{\"a\"");
}

#[test]
fn an_anthropic_tool_use_that_reuses_an_id_fails_and_the_others_run() {
    let mut list = vec![
        tool_use_start(0, "toolu_same", "f"),
        input_delta(0, "{\"a\": 1}"),
        block_stop(0),
        tool_use_start(1, "toolu_same", "g"),
        input_delta(1, "{\"b\": 2}"),
        block_stop(1),
    ];
    list.extend(message_end("tool_use"));
    let out = anthropic(&list, NativeOptions::default());
    assert_eq!(
        out.calls().map(|c| c.name.as_str()).collect::<Vec<_>>(),
        ["f"]
    );
    let failed = only_failed(&out);
    assert_eq!(
        (failed.kind, failed.raw.as_str()),
        (CallProblem::ReusedId, "{\"b\": 2}")
    );
}

fn numbered(list: Vec<Value>) -> Vec<Value> {
    list.into_iter()
        .enumerate()
        .map(|(i, mut e)| {
            e["sequence_number"] = json!(i);
            e
        })
        .collect()
}

fn call_added(index: u64, call_id: &str) -> Value {
    json!({"type": "response.output_item.added", "output_index": index,
           "item": {"type": "function_call", "id": format!("fc_{index}"), "call_id": call_id,
                    "name": "f", "arguments": "", "status": "in_progress"}})
}

fn args_delta(index: u64, delta: &str) -> Value {
    json!({"type": "response.function_call_arguments.delta", "output_index": index,
           "item_id": format!("fc_{index}"), "delta": delta})
}

#[test]
fn a_repeated_responses_event_is_reported_and_does_not_corrupt_the_arguments() {
    let mut list = numbered(vec![
        call_added(0, "call_1"),
        args_delta(0, "{\"q\": \"ab"),
        args_delta(0, "c\"}"),
        json!({"type": "response.completed", "response": {"status": "completed", "output": []}}),
    ]);
    // The second delta arrives twice (a retried write upstream).
    let repeat = list[1].clone();
    list.insert(2, repeat);
    let out = collect(
        RESPONSES,
        NativeOptions::default(),
        &sse(&list),
        Chunking::Fixed(7),
    );
    assert_eq!(problem_kinds(&out), [StreamProblemKind::OutOfOrder]);
    let call = out.calls().next().unwrap();
    assert_eq!(call.arguments, "{\"q\": \"abc\"}".into());
}

#[test]
fn responses_events_for_unknown_items_and_done_events_that_disagree_are_reported() {
    let list = numbered(vec![
        call_added(0, "call_1"),
        args_delta(5, "{}"),
        args_delta(0, "{\"a\": "),
        json!({"type": "response.function_call_arguments.done", "output_index": 0,
               "item_id": "fc_0", "arguments": "{\"b\": 2}"}),
        json!({"type": "response.completed", "response": {"status": "completed", "output": []}}),
    ]);
    let out = collect(
        RESPONSES,
        NativeOptions::default(),
        &sse(&list),
        Chunking::ONE,
    );
    assert_eq!(
        problem_kinds(&out),
        [
            StreamProblemKind::UnknownIndex,
            StreamProblemKind::MalformedEvent
        ]
    );
    // The call's deltas cannot be trusted: it never runs.
    let failed = only_failed(&out);
    assert_eq!(
        (failed.kind, failed.raw.as_str()),
        (CallProblem::LostEvent, "{\"a\": ")
    );
    assert_eq!(failed.id.as_ref().unwrap().as_str(), "call_1");
}

#[test]
fn an_incomplete_response_truncates_its_open_call_and_an_error_event_is_reported() {
    let list = numbered(vec![
        call_added(0, "call_1"),
        args_delta(0, "{\"a\": [1, "),
        json!({"type": "error", "code": "server_error", "message": "upstream failed"}),
        json!({"type": "response.incomplete", "response": {"status": "incomplete", "output": [],
               "incomplete_details": {"reason": "max_output_tokens"}}}),
    ]);
    let out = collect(
        RESPONSES,
        NativeOptions::default(),
        &sse(&list),
        Chunking::Fixed(2),
    );
    assert_eq!(problem_kinds(&out), [StreamProblemKind::ProviderError]);
    let cut = out.truncated().next().unwrap();
    assert_eq!(
        (cut.id.as_ref().unwrap().as_str(), cut.raw.as_str()),
        ("call_1", "{\"a\": [1, ")
    );
    assert_eq!(
        out.finish.unwrap().reason,
        tinyagents_tools::stream::FinishReason::Length
    );
}

fn gemini_chunk(parts: Value) -> Value {
    json!({"candidates": [{"content": {"role": "model", "parts": parts}, "index": 0}]})
}

#[test]
fn gemini_calls_over_the_limits_fail_with_their_ids_and_the_others_run() {
    let long = "x".repeat(40);
    let list = [
        gemini_chunk(
            json!([{"functionCall": {"name": "big", "id": "g1", "args": {"text": long}}}]),
        ),
        gemini_chunk(json!([{"functionCall": {"name": "deep", "args": {"a": [[[[1]]]]}}}])),
        gemini_chunk(json!([{"functionCall": {"name": "ok", "args": {"a": [1]}}}])),
    ];
    let out = collect(GEMINI, small_limits(32, 3), &sse(&list), Chunking::Fixed(9));
    assert_eq!(
        out.calls().map(|c| c.id.as_str()).collect::<Vec<_>>(),
        ["gemini-call-0-2-ok"]
    );
    let failed: Vec<_> = out
        .failed()
        .map(|f| (f.id.as_ref().unwrap().as_str(), f.kind, f.raw.as_str()))
        .collect();
    assert_eq!(
        failed,
        [
            (
                "g1",
                CallProblem::TooLarge,
                &"{\"text\":\"xxxxxxxxxxxxxxxxxxxxxxxx"[..32]
            ),
            ("gemini-call-0-1-deep", CallProblem::TooDeep, "{\"a\":[[["),
        ]
    );
}

#[test]
fn gemini_streamed_arguments_a_nameless_call_a_reused_id_and_an_error_never_run() {
    let list = [
        gemini_chunk(json!([{"functionCall": {"name": "f", "id": "s1", "willContinue": true}}])),
        gemini_chunk(json!([{"functionCall": {"args": {"a": 1}}}])),
        gemini_chunk(json!([{"functionCall": {"name": "g", "id": "dup", "args": {}}}])),
        gemini_chunk(json!([{"functionCall": {"name": "h", "id": "dup", "args": {}}}])),
        json!({"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}),
    ];
    let out = collect(GEMINI, NativeOptions::default(), &sse(&list), Chunking::ONE);
    assert_eq!(
        out.calls().map(|c| c.name.as_str()).collect::<Vec<_>>(),
        ["g"]
    );
    let failed: Vec<_> = out
        .failed()
        .map(|f| (f.kind, f.id.as_ref().unwrap().as_str()))
        .collect();
    assert_eq!(
        failed,
        [
            (CallProblem::MalformedArguments, "s1"),
            (CallProblem::MalformedMarkup, "gemini-call-0-1-"),
            (CallProblem::ReusedId, "dup"),
        ]
    );
    assert_eq!(problem_kinds(&out), [StreamProblemKind::ProviderError]);
}
