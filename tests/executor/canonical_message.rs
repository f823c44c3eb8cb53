//! The executor answers every call with one canonical `ToolMessage` (inside
//! its `ToolResult`), and every result formatter reads that message: a
//! result, its message, or a message built by hand format alike.

use serde_json::json;
use tinyagents_tools::prelude::*;
use tinyagents_tools::providers::{anthropic, gemini, mcp, openai};
use tinyagents_tools::testkit::ToolHarness;
use tinyagents_tools::{ContentBlock, ToolMessage};
use tinyagents_tools_tests::RenderedReadingTool;

/// Asserts that each formatter gives the same answer for `$a` as for `$b`.
macro_rules! assert_formats_alike {
    ($a:expr, $b:expr, [$($format:path),+ $(,)?]) => {
        $(assert_eq!($format(&$a), $format(&$b), "{}", stringify!($format));)+
    };
}

fn harness() -> ToolHarness {
    ToolHarness::builder(RenderedReadingTool).build().unwrap()
}

#[tokio::test]
async fn the_executor_answers_with_the_canonical_message_of_the_call() {
    let result = harness().call_ok(json!({"city": "Oslo"})).await;
    assert_eq!(
        result.message,
        ToolMessage {
            tool_call_id: ToolCallId::from("call-1"),
            name: "rendered_reading".into(),
            content: vec![ContentBlock::text("Oslo: 294 K")],
            structured: Some(json!({"kelvin": 294, "city": "Oslo"})),
            is_error: false,
        }
    );
    // The result reads as its message.
    assert_eq!(result.text(), "Oslo: 294 K");
    assert_eq!(result.to_message(), result.clone().into_message());
}

#[tokio::test]
async fn a_refused_call_has_a_message_with_the_error_text_and_no_structured_value() {
    let result = harness().call(json!({"town": "Oslo"})).await;
    let error = result.error.as_ref().expect("refused");
    assert_eq!(error.kind().as_str(), "invalid_arguments");
    assert!(result.message.is_error);
    assert_eq!(result.message.tool_call_id.as_str(), "call-1");
    assert_eq!(
        result.message.content,
        vec![ContentBlock::text(error.message())]
    );
    assert_eq!(result.message.structured, None);
}

#[tokio::test]
async fn every_formatter_gives_the_same_answer_for_a_result_and_for_its_message() {
    let result = harness().call_ok(json!({"city": "Oslo"})).await;
    let message = result.to_message();
    assert_eq!(
        openai::chat_tool_message(&result),
        json!({"role": "tool", "tool_call_id": "call-1", "content": "Oslo: 294 K"})
    );
    assert_formats_alike!(
        result,
        message,
        [
            openai::chat_tool_message,
            openai::responses_function_call_output
        ]
    );
    assert_eq!(
        gemini::function_response_part(&message)["functionResponse"]["response"]["output"],
        json!({"kelvin": 294, "city": "Oslo"})
    );
    assert_eq!(
        mcp::call_tool_result(&message)["structuredContent"],
        json!({"kelvin": 294, "city": "Oslo"})
    );
    // A turn's results format from the results or from their messages.
    let results = vec![result];
    let messages = vec![message];
    assert_formats_alike!(
        results,
        messages,
        [
            anthropic::tool_results_message,
            gemini::function_responses_content
        ]
    );
}

#[test]
fn a_tool_message_without_a_structured_value_serializes_without_the_key_and_reads_back() {
    let message = ToolMessage {
        tool_call_id: ToolCallId::from("c1"),
        name: "ping".into(),
        content: vec![ContentBlock::text("pong")],
        structured: None,
        is_error: false,
    };
    let written = serde_json::to_value(&message).unwrap();
    assert_eq!(
        written,
        json!({
            "tool_call_id": "c1",
            "name": "ping",
            "content": [{"type": "text", "text": "pong"}],
            "is_error": false
        })
    );
    let read: ToolMessage = serde_json::from_value(written).unwrap();
    assert_eq!(read, message);
}
