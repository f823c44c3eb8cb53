//! Anthropic Messages streams: a recorded-shape stream against the message
//! it adds up to, thinking with its signature, calls ready at their close.

use serde_json::{Value, json};
use tinyagents_tools::call::RawArguments;
use tinyagents_tools::providers::anthropic::parse_tool_uses;
use tinyagents_tools::stream::native::{NativeFormat, NativeOptions, NativeReader, parse_response};
use tinyagents_tools::stream::{FinishReason, OutputPart, OutputReader, StreamEvent};
use tinyagents_tools::testkit::Chunking;

use super::native_common::{fixture, fixture_json, read};

const ANTHROPIC: NativeFormat = NativeFormat::Anthropic;

#[test]
fn a_recorded_anthropic_stream_collects_to_its_whole_message_for_every_chunking() {
    let stream = fixture("anthropic.sse");
    let message = fixture_json("anthropic.json");
    let whole = parse_response(ANTHROPIC, &message, &NativeOptions::default());

    // Thinking with its signature, redacted thinking (a signature alone),
    // the text, then the calls.
    assert_eq!(
        whole.parts[..3],
        [
            OutputPart::Reasoning {
                text: "The user wants the weather in Paris and 東京; both calls can run at once."
                    .into(),
                signature: Some("EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds".into()),
            },
            OutputPart::Reasoning {
                text: String::new(),
                signature: Some(
                    "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP".into()
                ),
            },
            OutputPart::Text("I'll check both: {\"a\"} and </tool_call> are just text ✓.".into()),
        ]
    );
    let calls: Vec<_> = whole.calls().cloned().collect();
    assert_eq!(calls, parse_tool_uses(&message).unwrap());
    assert_eq!(
        calls[0].arguments,
        RawArguments::Json(json!({"city": "Paris", "note": "quote \" brace } </tool_call>"}))
    );
    assert_eq!(calls[2].arguments, RawArguments::Json(json!({})));
    let finish = whole.finish.as_ref().unwrap();
    assert_eq!(finish.reason, FinishReason::ToolCalls);
    // message_delta's usage over message_start's, key by key.
    assert_eq!(finish.usage.as_ref().unwrap()["output_tokens"], 186);
    assert_eq!(finish.usage.as_ref().unwrap()["input_tokens"], 472);

    for chunking in Chunking::matrix(24) {
        assert_eq!(
            read(ANTHROPIC, stream.as_bytes(), chunking),
            whole,
            "{chunking:?}"
        );
    }
}

fn events(sse: &str) -> Vec<Value> {
    sse.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str(d).unwrap())
        .collect()
}

#[test]
fn a_tool_use_is_ready_at_its_last_input_fragment_before_its_block_stops() {
    let stream = fixture("anthropic.sse");
    let mut reader = NativeReader::new(ANTHROPIC);
    let mut out = Vec::new();
    let mut ready_after = Vec::new();
    for event in events(&stream) {
        let before = out.len();
        reader.push_event(&event, &mut out);
        if out[before..]
            .iter()
            .any(|e| matches!(e, StreamEvent::CallReady(_)))
        {
            ready_after.push(event);
        }
    }
    reader.finish(&mut out);
    let kinds: Vec<_> = ready_after
        .iter()
        .map(|e| {
            (
                e["type"].as_str().unwrap(),
                e.pointer("/delta/partial_json").cloned(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            (
                "content_block_delta",
                Some(json!("\" brace } </tool_call>\"}"))
            ),
            ("content_block_delta", Some(json!("}"))),
            // A call without input text is ready when its block stops.
            ("content_block_stop", None),
        ]
    );
}

#[test]
fn a_plain_text_message_and_a_refusal_read_as_text_and_a_filtered_finish() {
    let message = json!({"content": "Just text.", "stop_reason": "refusal", "usage": null});
    let out = parse_response(ANTHROPIC, &message, &NativeOptions::default());
    assert_eq!(out.text(), "Just text.");
    assert_eq!(out.finish.unwrap().reason, FinishReason::ContentFilter);
}
