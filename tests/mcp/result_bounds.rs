//! Model-facing content is bounded on every path: each provider's result
//! formatter, given a 1 MB output, sends no more than the canonical tool
//! message carries (the executor's bounded content, or its preview and
//! artifact reference), while `ToolMessage::structured` keeps the whole value.

use serde_json::{Value, json};
use tinyagents_tools::artifacts::InMemoryArtifactStore;
use tinyagents_tools::executor::ExecutorConfig;
use tinyagents_tools::providers::{MAX_STRUCTURED_BYTES, anthropic, gemini, mcp, openai};
use tinyagents_tools::{
    RunContext, ToolCall, ToolCallId, ToolExecutor, ToolMessage, ToolRegistry, ToolResult, Turn,
};

use tinyagents_tools_mcp::McpServer;

use crate::protocol::{EchoSizeTool, Wire};

const MB: usize = 1 << 20;

/// Every formatter's output for `result`, by name.
fn formatted(result: &ToolResult) -> Vec<(&'static str, Value)> {
    vec![
        ("openai chat", openai::chat_tool_message(result)),
        (
            "openai responses",
            openai::responses_function_call_output(result),
        ),
        ("anthropic", anthropic::tool_result_block(result)),
        ("gemini", gemini::function_response_part(result)),
        ("mcp", mcp::call_tool_result(result)),
    ]
}

/// Every formatter's output for `result` as text, by name, each checked to
/// be under `limit` bytes plus 1 KiB of envelope.
fn formatted_under(result: &ToolResult, limit: usize) -> Vec<(&'static str, String)> {
    formatted(result)
        .into_iter()
        .map(|(provider, out)| {
            let text = out.to_string();
            assert!(
                text.len() < limit + 1024,
                "{provider}: {} bytes",
                text.len()
            );
            (provider, text)
        })
        .collect()
}

async fn one_mb(with_store: bool) -> ToolResult {
    let mut registry = ToolRegistry::new();
    registry.register(EchoSizeTool).unwrap();
    let mut builder = ToolExecutor::builder(registry, ());
    if with_store {
        builder = builder.artifact_store(InMemoryArtifactStore::new());
    }
    let executor = builder.build().unwrap();
    executor
        .execute(
            &RunContext::empty(),
            &Turn::new(1),
            ToolCall::new("big-1", "echo_size", json!({"bytes": MB}).to_string()),
        )
        .await
}

fn full_size(result: &ToolResult) -> usize {
    result.structured.as_ref().unwrap().to_string().len()
}

#[tokio::test]
async fn every_result_formatter_bounds_a_1_mb_output_to_the_content_limit() {
    let result = one_mb(false).await;
    assert!(!result.is_error, "{}", result.text());
    // The application has the whole value.
    assert!(full_size(&result) > MB);
    let limit = ExecutorConfig::default().max_content_bytes;
    for (provider, text) in formatted_under(&result, limit) {
        assert!(text.contains("output truncated"), "{provider}");
    }
    let part = gemini::function_response_part(&result);
    assert!(
        part["functionResponse"]["response"]["output"].is_string(),
        "gemini"
    );
    assert!(
        mcp::call_tool_result(&result)
            .get("structuredContent")
            .is_none()
    );
}

#[tokio::test]
async fn with_an_artifact_store_every_formatter_sends_the_preview_and_the_artifact_reference() {
    let result = one_mb(true).await;
    assert!(full_size(&result) > MB);
    let artifact = result.artifacts.first().expect("the output was stored");
    let preview = ExecutorConfig::default().preview_bytes;
    for (provider, text) in formatted_under(&result, preview) {
        assert!(text.contains(&artifact.key), "{provider}: {text}");
    }
}

#[test]
fn a_hand_built_result_without_content_is_cut_at_the_structured_limit() {
    let result = ToolResult::new(ToolMessage {
        tool_call_id: ToolCallId::from("call-1"),
        name: "echo_size".into(),
        content: Vec::new(),
        structured: Some(json!({"text": "x".repeat(MB)})),
        is_error: false,
    });
    for (provider, text) in formatted_under(&result, MAX_STRUCTURED_BYTES) {
        assert!(text.contains("output truncated"), "{provider}");
    }
}

#[test]
fn a_small_structured_value_is_still_sent_as_data_and_the_limit_is_adjustable() {
    let value = json!({"text": "x".repeat(20_000)});
    let result = ToolResult::new(ToolMessage {
        tool_call_id: ToolCallId::from("call-2"),
        name: "echo_size".into(),
        content: vec![tinyagents_tools::ContentBlock::text("twenty thousand x")],
        structured: Some(value.clone()),
        is_error: false,
    });
    // 20 KB is over the default 16 KiB: left out.
    assert!(
        mcp::call_tool_result(&result)
            .get("structuredContent")
            .is_none()
    );
    assert_eq!(
        gemini::function_response_part(&result)["functionResponse"]["response"]["output"],
        "twenty thousand x"
    );
    // A larger limit lets it through, as data.
    let mcp = mcp::call_tool_result_bounded(&result, 32 << 10);
    assert_eq!(mcp["structuredContent"], value);
    let part = gemini::function_response_part_bounded(&result, 32 << 10);
    assert_eq!(part["functionResponse"]["response"]["output"], value);
}

#[tokio::test]
async fn the_mcp_server_sends_a_bounded_result_for_a_1_mb_output() {
    let mut wire = Wire::at("2025-11-25").await;
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": "echo_size", "arguments": {"bytes": MB}}});
    wire.send_line(&call.to_string()).await;
    let answer = wire.answer_to(&json!(1)).await;
    let size = answer.to_string().len();
    let limit = ExecutorConfig::default().max_content_bytes;
    assert!(size < limit + 1024, "{size} bytes");
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert!(answer["result"].get("structuredContent").is_none());
}

#[tokio::test]
async fn the_mcp_server_s_structured_limit_is_its_builders_choice() {
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": "echo_size", "arguments": {"bytes": 20_000}}});
    let mut default = Wire::at("2025-11-25").await;
    default.send_line(&call.to_string()).await;
    let answer = default.answer_to(&json!(1)).await;
    assert!(
        answer["result"].get("structuredContent").is_none(),
        "{answer}"
    );

    let mut registry = ToolRegistry::new();
    registry.register(EchoSizeTool).unwrap();
    let raised = McpServer::builder(ToolExecutor::builder(registry, ()))
        .max_structured_bytes(32 << 10)
        .build(RunContext::empty)
        .unwrap();
    let mut wire = Wire::at_on("2025-11-25", raised).await;
    wire.send_line(&call.to_string()).await;
    let answer = wire.answer_to(&json!(1)).await;
    let text = answer["result"]["structuredContent"]["text"]
        .as_str()
        .unwrap();
    assert_eq!(text.len(), 20_000);
}
