//! Gemini streams: a recorded-shape stream (CRLF server-sent events)
//! against the response it adds up to, thought parts and signatures, the
//! ids made up for calls without one.

use serde_json::json;
use tinyagents_tools::call::RawArguments;
use tinyagents_tools::providers::gemini::parse_function_calls;
use tinyagents_tools::stream::native::{NativeFormat, NativeOptions, NativeReader, parse_response};
use tinyagents_tools::stream::{FinishReason, OutputPart};
use tinyagents_tools::testkit::{Chunking, ScriptedStream};

use super::native_common::{fixture, fixture_json, read};

const GEMINI: NativeFormat = NativeFormat::Gemini;

#[test]
fn a_recorded_gemini_stream_collects_to_its_whole_response_for_every_chunking() {
    let stream = fixture("gemini.sse");
    assert!(stream.contains("\r\n\r\n"));
    let response = fixture_json("gemini.json");
    let whole = parse_response(GEMINI, &response, &NativeOptions::default());

    assert_eq!(
        whole.parts[..2],
        [
            OutputPart::Reasoning {
                text: "**Checking two cities**\nParis and 東京, at once.".into(),
                signature: Some(
                    "CiQB0e2Kb7Gmgk8n0Xz4yQ3UArVp+fdjzvGhvQAvtX1Gq8J2vAwKagHR7Ypvw".into()
                ),
            },
            OutputPart::Text("Looking up both: {\"k\"} and </tool_call> stay text ✓".into()),
        ]
    );
    let calls: Vec<_> = whole.calls().cloned().collect();
    assert_eq!(calls, parse_function_calls(&response, 0).unwrap());
    assert_eq!(calls[0].id.as_str(), "gemini-call-0-0-get_weather");
    assert_eq!(calls[1].id.as_str(), "gemini-call-0-1-get_weather");
    // The first call's part is signed; the signature stays on the call.
    assert_eq!(
        calls[0].thought_signature.as_deref(),
        Some("CiwB0e2Kb3yQ8P0pS9Ox1mC6n4Gq2tH7w5Rk3Jd8LfUe1zVb9aNcXyE=")
    );
    assert_eq!(
        calls[1].arguments,
        RawArguments::Json(json!({"city": "東京", "days": [1, 2]}))
    );
    let finish = whole.finish.as_ref().unwrap();
    assert_eq!(finish.reason, FinishReason::ToolCalls);
    assert_eq!(finish.usage.as_ref().unwrap()["totalTokenCount"], 129);

    for chunking in Chunking::matrix(24) {
        assert_eq!(
            read(GEMINI, stream.as_bytes(), chunking),
            whole,
            "{chunking:?}"
        );
    }
}

#[test]
fn made_up_ids_follow_the_turn_and_given_ids_are_kept() {
    let response = json!({"candidates": [{"content": {"parts": [
        {"functionCall": {"name": "a", "args": {}}},
        {"functionCall": {"name": "b", "id": "given-7", "args": {"x": 1}}},
        {"functionCall": {"name": "c"}},
    ]}, "finishReason": "STOP"}]});
    let options = NativeOptions {
        turn: 4,
        ..NativeOptions::default()
    };
    let whole = parse_response(GEMINI, &response, &options);
    let calls: Vec<_> = whole.calls().cloned().collect();
    assert_eq!(calls, parse_function_calls(&response, 4).unwrap());
    let ids: Vec<_> = calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["gemini-call-4-0-a", "given-7", "gemini-call-4-2-c"]);

    let stream = ScriptedStream::from_response(GEMINI, &response);
    let streamed = stream.read(NativeReader::with_options(GEMINI, options), Chunking::ONE);
    assert_eq!(streamed, whole);
}

#[test]
fn a_signature_on_the_last_empty_text_part_is_kept_as_a_reasoning_signature() {
    // Gemini 3 signs the last part of an answer without calls, often an
    // empty text part in the last chunk.
    let chunks = concat!(
        "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"Hello\"}]}}]}\r\n\r\n",
        "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"\",",
        "\"thoughtSignature\":\"c2ln\"}]},\"finishReason\":\"STOP\"}]}\r\n\r\n",
    );
    let out = read(GEMINI, chunks.as_bytes(), Chunking::ONE);
    assert_eq!(
        out.parts,
        [
            OutputPart::Text("Hello".into()),
            OutputPart::Reasoning {
                text: String::new(),
                signature: Some("c2ln".into())
            }
        ]
    );
    assert_eq!(out.finish.unwrap().reason, FinishReason::Stop);
}

#[test]
fn a_prompt_blocked_before_any_candidate_ends_filtered() {
    let response = json!({"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": {"promptTokenCount": 8}});
    let out = parse_response(GEMINI, &response, &NativeOptions::default());
    assert_eq!(
        out.finish.as_ref().unwrap().reason,
        FinishReason::ContentFilter
    );
    assert!(out.problems.is_empty());
    let stream = ScriptedStream::from_response(GEMINI, &response);
    assert_eq!(
        stream.read(NativeReader::new(GEMINI), Chunking::Fixed(3)),
        out
    );
}
