//! Audio and embedded resources: MCP clients get them as MCP content blocks
//! (and the MCP client keeps a remote server's as such), other providers
//! show the model a note or the text, a secret in resource text is masked
//! like text, and the content bound applies to them as to any content.

use serde_json::{Value, json};
use tinyagents_tools::prelude::*;
use tinyagents_tools::providers::{anthropic, gemini, openai};
use tinyagents_tools::{ToolResult, Turn};
use tinyagents_tools_mcp::McpServer;
use tinyagents_tools_mcp::client::ImportOptions;
use tinyagents_tools_mcp::rmcp::ServiceExt;
use tinyagents_tools_mcp::rmcp::model::ClientConfig;
use tinyagents_tools_tests::execute_in;

use crate::client::{call, executor_over};
use crate::common::{SecretText, call_on, mcp_client_of, pipe_to};

const SECRET: &str = "hunter2-resource-secret";

/// How much audio to return.
#[derive(Deserialize, JsonSchema)]
struct MediaArgs {
    /// Bytes of base64 audio data.
    audio_bytes: usize,
}

/// Returns audio, an embedded text resource and an embedded binary one.
#[tool(read_only, idempotent, local)]
async fn media(args: MediaArgs) -> ToolOutput {
    ToolOutput::text("three blocks:")
        .with_block(ContentBlock::audio(
            "A".repeat(args.audio_bytes),
            "audio/wav",
        ))
        .with_block(ContentBlock::resource(
            format!("test://notes?token={SECRET}"),
            Some("text/plain"),
            format!("the password is {SECRET}"),
        ))
        .with_block(ContentBlock::ResourceBlob {
            uri: "test://blob".to_owned(),
            mime_type: Some("application/octet-stream".to_owned()),
            blob: "AAEC".to_owned(),
        })
}

fn registry() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    registry.register(MediaTool).unwrap();
    registry
}

fn run() -> RunContext {
    RunContext::builder(()).secret(SecretText(SECRET)).build()
}

async fn media_result(audio_bytes: usize, max_content_bytes: usize) -> ToolResult {
    let executor = ToolExecutor::builder(registry(), ())
        .configure(|c| c.max_content_bytes = max_content_bytes)
        .build()
        .unwrap();
    executor
        .execute(
            &run(),
            &Turn::new(1),
            call("m1", "media", json!({"audio_bytes": audio_bytes})),
        )
        .await
}

#[tokio::test]
async fn audio_and_embedded_resources_reach_an_mcp_client_as_mcp_content() {
    let server = McpServer::builder(ToolExecutor::builder(registry(), ()))
        .build(run)
        .unwrap();
    let client = ClientConfig::default()
        .serve(pipe_to(server))
        .await
        .unwrap();
    let answer = call_on(&client, "media", json!({"audio_bytes": 8})).await;
    assert_eq!(answer["isError"], false, "{answer}");
    let content = answer["content"].as_array().unwrap();
    assert_eq!(
        content[1],
        json!({"type": "audio", "data": "AAAAAAAA", "mimeType": "audio/wav"})
    );
    assert_eq!(content[2]["type"], "resource");
    assert_eq!(content[2]["resource"]["mimeType"], "text/plain");
    assert_eq!(content[2]["resource"]["text"], "the password is [redacted]");
    assert_eq!(
        content[3]["resource"],
        json!({"uri": "test://blob", "mimeType": "application/octet-stream", "blob": "AAEC"})
    );
    assert!(!answer.to_string().contains(SECRET), "{answer}");
}

#[tokio::test]
async fn a_secret_in_an_embedded_resource_is_masked_like_text() {
    let result = media_result(8, 64 * 1024).await;
    assert!(!result.is_error, "{}", result.text());
    match &result.content[2] {
        ContentBlock::Resource { uri, text, .. } => {
            assert_eq!(uri, "test://notes?token=[redacted]");
            assert_eq!(text, "the password is [redacted]");
        }
        other => panic!("not a resource: {other:?}"),
    }
}

#[tokio::test]
async fn providers_without_audio_show_a_note_and_the_embedded_text() {
    let result = media_result(4096, 64 * 1024).await;
    let formatted: Vec<(&str, Value)> = vec![
        ("openai chat", openai::chat_tool_message(&result)),
        ("anthropic", anthropic::tool_result_block(&result)),
        ("gemini", gemini::function_response_part(&result)),
    ];
    for (provider, out) in formatted {
        let out = out.to_string();
        assert!(out.contains("[audio: audio/wav]"), "{provider}: {out}");
        assert!(
            out.contains("[resource: test://notes?token=[redacted]]"),
            "{provider}: {out}"
        );
        assert!(out.contains("the password is [redacted]"), "{provider}");
        assert!(
            out.contains("[resource: test://blob, binary contents not shown]"),
            "{provider}: {out}"
        );
        assert!(!out.contains(&"A".repeat(64)), "{provider} sent the audio");
        assert!(!out.contains(SECRET), "{provider}");
    }
}

#[tokio::test]
async fn audio_over_the_content_limit_is_cut_like_any_content() {
    let result = media_result(20_000, 4096).await;
    assert!(!result.is_error, "{}", result.text());
    assert_eq!(result.content.len(), 1, "{:?}", result.content);
    let text = result.text();
    assert!(text.contains("output truncated"), "{text}");
    assert!(text.len() < 4096 + 200, "{} bytes", text.len());
    assert!(!text.contains(SECRET));
}

#[tokio::test]
async fn the_mcp_client_keeps_a_remote_servers_audio_and_resources_as_such() {
    let server = McpServer::builder(ToolExecutor::builder(registry(), ()))
        .build(RunContext::empty)
        .unwrap();
    let client = mcp_client_of(server).await;
    let executor = executor_over(&client, &ImportOptions::new()).await;
    // Here the secret is the importing side's: its redaction applies to
    // what the remote server sent.
    let result = execute_in(
        &executor,
        &run(),
        call("r1", "media", json!({"audio_bytes": 8})),
    )
    .await;
    assert!(!result.is_error, "{}", result.text());
    assert_eq!(
        result.content[1],
        ContentBlock::audio("AAAAAAAA", "audio/wav")
    );
    assert_eq!(
        result.content[2],
        ContentBlock::resource(
            "test://notes?token=[redacted]",
            Some("text/plain"),
            "the password is [redacted]"
        )
    );
    assert!(matches!(
        &result.content[3],
        ContentBlock::ResourceBlob { blob, .. } if blob == "AAEC"
    ));
}
