//! OpenAI Responses streams: a recorded-shape stream against the response
//! it adds up to, reasoning summaries with their encrypted content, items
//! given only whole.

use serde_json::json;
use tinyagents_tools::call::RawArguments;
use tinyagents_tools::providers::openai::parse_responses_function_calls;
use tinyagents_tools::stream::native::{NativeFormat, NativeOptions, parse_response};
use tinyagents_tools::stream::{FinishReason, OutputPart};
use tinyagents_tools::testkit::Chunking;

use super::native_common::{fixture, fixture_json, read, sse};

const RESPONSES: NativeFormat = NativeFormat::OpenAiResponses;

#[test]
fn a_recorded_responses_stream_collects_to_its_whole_response_for_every_chunking() {
    let stream = fixture("openai_responses.sse");
    let response = fixture_json("openai_responses.json");
    let whole = parse_response(RESPONSES, &response, &NativeOptions::default());

    assert_eq!(
        whole.parts[..2],
        [
            OutputPart::Reasoning {
                text: "**Planning** two lookups: Paris and 東京.".into(),
                signature: Some("gAAAAABoISQ24OyVRYbkYfukuA1pRDa-QJwi".into()),
            },
            OutputPart::Text("Both cities: {\"x\"} and </tool_call> are text ✓".into()),
        ]
    );
    let calls: Vec<_> = whole.calls().cloned().collect();
    assert_eq!(calls, parse_responses_function_calls(&response).unwrap());
    assert_eq!(calls[0].id.as_str(), "call_unLAR8MvFNptuiZK6K6HCy5k");
    assert_eq!(
        calls[1].arguments,
        RawArguments::Text("{\"city\":\"東京\"}".into())
    );
    let finish = whole.finish.as_ref().unwrap();
    assert_eq!(finish.reason, FinishReason::ToolCalls);
    assert_eq!(finish.usage.as_ref().unwrap()["total_tokens"], 215);

    for chunking in Chunking::matrix(24) {
        assert_eq!(
            read(RESPONSES, stream.as_bytes(), chunking),
            whole,
            "{chunking:?}"
        );
    }
}

#[test]
fn items_a_server_gives_only_whole_are_read_from_their_done_event_or_the_response() {
    let call = json!({"type": "function_call", "call_id": "c1", "name": "f",
        "arguments": "{\"a\": 1}", "status": "completed"});
    let message = json!({"type": "message", "role": "assistant",
        "content": [{"type": "output_text", "text": "hi", "annotations": []}]});
    let reasoning = json!({"type": "reasoning", "summary": [], "content":
        [{"type": "reasoning_text", "text": "thinking"}]});
    let response = json!({"status": "completed", "output": [reasoning, message, call]});
    let events = [
        json!({"type": "response.created", "sequence_number": 0, "response": {"status": "in_progress", "output": []}}),
        json!({"type": "response.output_item.done", "sequence_number": 1, "output_index": 0, "item": reasoning}),
        json!({"type": "response.completed", "sequence_number": 2, "response": response}),
    ];
    let out = read(RESPONSES, sse(&events).as_bytes(), Chunking::Fixed(4));
    assert_eq!(
        out,
        parse_response(RESPONSES, &response, &NativeOptions::default())
    );
    assert_eq!(out.reasoning(), "thinking");
    assert_eq!(out.text(), "hi");
    assert_eq!(out.calls().count(), 1);
}

#[test]
fn an_incomplete_response_ends_by_its_reason_and_a_failed_one_reports_its_error() {
    let incomplete = json!({"status": "incomplete", "output": [],
        "incomplete_details": {"reason": "max_output_tokens"}});
    let out = parse_response(RESPONSES, &incomplete, &NativeOptions::default());
    assert_eq!(out.finish.unwrap().reason, FinishReason::Length);

    let failed = json!({"status": "failed", "output": [],
        "error": {"code": "server_error", "message": "The model crashed"}});
    let out = parse_response(RESPONSES, &failed, &NativeOptions::default());
    assert_eq!(
        out.finish.unwrap().reason,
        FinishReason::Other("failed".into())
    );
    assert!(out.problems[0].raw.contains("The model crashed"));
}

#[test]
fn a_done_event_completes_arguments_whose_last_deltas_never_came() {
    let events = [
        json!({"type": "response.output_item.added", "sequence_number": 0, "output_index": 0,
               "item": {"type": "function_call", "call_id": "c1", "name": "f", "arguments": ""}}),
        json!({"type": "response.function_call_arguments.delta", "sequence_number": 1,
               "output_index": 0, "delta": "{\"a\":"}),
        json!({"type": "response.function_call_arguments.done", "sequence_number": 2,
               "output_index": 0, "arguments": "{\"a\": \"é\"}"}),
        json!({"type": "response.completed", "sequence_number": 3,
               "response": {"status": "completed", "output": []}}),
    ];
    let out = read(RESPONSES, sse(&events).as_bytes(), Chunking::ONE);
    assert!(out.problems.is_empty(), "{:?}", out.problems);
    let call = out.calls().next().unwrap();
    assert_eq!(call.arguments, RawArguments::Text("{\"a\": \"é\"}".into()));
}

#[test]
fn arguments_sent_as_an_object_are_read_in_the_stream_and_the_whole_response() {
    // A compatible server writing a call's `arguments` as an object, in
    // the added item, the done item, or only in the response: the call the
    // provider parser gives, never a call on no arguments.
    let args = json!({"city": "Paris", "days": 2});
    let item = json!({"type": "function_call", "call_id": "c1", "name": "weather",
        "arguments": args, "status": "completed"});
    let response = json!({"status": "completed", "output": [item]});
    let whole = parse_response(RESPONSES, &response, &NativeOptions::default());
    let calls: Vec<_> = whole.calls().cloned().collect();
    assert_eq!(calls, parse_responses_function_calls(&response).unwrap());
    assert_eq!(calls[0].arguments, RawArguments::Json(args.clone()));
    assert!(whole.problems.is_empty() && whole.failed().count() == 0);

    let added = |item: serde_json::Value| json!({"type": "response.output_item.added", "sequence_number": 0, "output_index": 0, "item": item});
    let done = |item: serde_json::Value| json!({"type": "response.output_item.done", "sequence_number": 1, "output_index": 0, "item": item});
    let completed =
        json!({"type": "response.completed", "sequence_number": 2, "response": response});
    let bare = json!({"type": "function_call", "call_id": "c1", "name": "weather"});
    for events in [
        // In both items.
        [added(item.clone()), done(item.clone()), completed.clone()],
        // Only when the item is done.
        [added(bare.clone()), done(item.clone()), completed.clone()],
    ] {
        for chunking in [Chunking::Whole, Chunking::ONE, Chunking::Fixed(5)] {
            let out = read(RESPONSES, sse(&events).as_bytes(), chunking);
            assert_eq!(out, whole, "{chunking:?}");
        }
    }
}
