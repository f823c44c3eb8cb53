//! The reference tools of the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`) that this framework serves, written
//! with `#[tool]`, served over streamable HTTP for the suite to test:
//!
//! ```text
//! cargo run --example mcp_conformance_server -- --http 127.0.0.1:3001
//! npx @modelcontextprotocol/conformance server --url http://127.0.0.1:3001/mcp --scenario tools-call-simple-text
//! ```
//!
//! `.ci/run` runs the suite's tool scenarios these tools answer (see the
//! README's MCP section for the list, and for the scenarios not served).

use serde_json::{Value, json};
use tinyagents_tools::prelude::*;
use tinyagents_tools_examples::conformance_tasks::ask_user_name;
use tinyagents_tools_examples::conformance_tools::{
    JsonSchema202012ToolTool, TestCustomHeadersNullTool, TestCustomHeadersTool,
};
use tinyagents_tools_mcp::{LogLevel, McpPeer, McpServer};

/// A 1x1 red PNG, base64-encoded.
const RED_PIXEL_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVQI12P4z8AAAAMBAQAY3Y2wAAAAAElFTkSuQmCC";

/// What a tool that talks to the client answers: text, or why it failed.
type Reply = Result<String, ToolError>;

/// No arguments.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

/// Returns a simple text response.
#[tool(read_only, idempotent, local)]
async fn test_simple_text(_args: NoArgs) -> String {
    "This is a simple text response for testing.".to_owned()
}

/// Returns a 1x1 red PNG image.
#[tool(read_only, idempotent, local)]
async fn test_image_content(_args: NoArgs) -> ToolOutput {
    ToolOutput::empty().with_block(ContentBlock::Image {
        data: RED_PIXEL_PNG.to_owned(),
        mime_type: "image/png".to_owned(),
    })
}

/// A silent 1 ms mono WAV (8 kHz, 16-bit), base64-encoded.
const SILENT_WAV: &str =
    "UklGRjQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YRAAAAAAAAAAAAAAAAAAAAAAAAAA";

/// Returns a short WAV clip.
#[tool(read_only, idempotent, local)]
async fn test_audio_content(_args: NoArgs) -> ToolOutput {
    ToolOutput::empty().with_block(ContentBlock::audio(SILENT_WAV, "audio/wav"))
}

/// Returns an embedded text resource.
#[tool(read_only, idempotent, local)]
async fn test_embedded_resource(_args: NoArgs) -> ToolOutput {
    ToolOutput::empty().with_block(ContentBlock::resource(
        "test://embedded-resource",
        Some("text/plain"),
        "This is an embedded resource content.",
    ))
}

/// Returns text, an image and an embedded resource.
#[tool(read_only, idempotent, local)]
async fn test_multiple_content_types(_args: NoArgs) -> ToolOutput {
    ToolOutput::text("Multiple content types test:")
        .with_block(ContentBlock::image(RED_PIXEL_PNG, "image/png"))
        .with_block(ContentBlock::resource(
            "test://mixed-content-resource",
            Some("application/json"),
            json!({"test": "data", "value": 123}).to_string(),
        ))
}

/// Sends three info log messages to the client, about 50 ms apart.
#[tool(read_only, idempotent, local)]
async fn test_tool_with_logging(_args: NoArgs, #[inject] client: McpPeer) -> Reply {
    let messages = [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ];
    for (i, message) in messages.into_iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        client.log(LogLevel::Info, message).await?;
    }
    Ok("Logging test completed".to_owned())
}

/// What to ask the client's model.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SamplingArgs {
    /// The prompt to send to the LLM.
    prompt: String,
}

/// Asks the client's model (sampling) and returns its answer.
#[tool(read_only, local)]
async fn test_sampling(args: SamplingArgs, #[inject] client: McpPeer) -> Reply {
    let answer = client.sample(&args.prompt, 100).await?;
    Ok(format!("LLM response: {}", answer.text))
}

/// What to ask the client's user.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ElicitationArgs {
    /// The message to show the user.
    message: String,
}

/// Asks the client's user for a name and an email (elicitation).
#[tool(read_only, local)]
async fn test_elicitation(args: ElicitationArgs, #[inject] client: McpPeer) -> Reply {
    let form = object_form(
        json!({
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        }),
        &["username", "email"],
    );
    let (action, content) = elicit(&client, &args.message, form).await?;
    Ok(format!(
        "User response: action: {action}, content: {content}"
    ))
}

/// Asks the client's user with a form whose fields have defaults (SEP-1034).
#[tool(read_only, local)]
async fn test_elicitation_sep1034_defaults(_args: NoArgs, #[inject] client: McpPeer) -> Reply {
    let form = object_form(
        json!({
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "score": {"type": "number", "default": 95.5},
            "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
            "verified": {"type": "boolean", "default": true},
        }),
        &[],
    );
    elicitation_completed(&client, "Please review the defaults", form).await
}

/// Asks the client's user with every kind of enum field (SEP-1330).
#[tool(read_only, local)]
async fn test_elicitation_sep1330_enums(_args: NoArgs, #[inject] client: McpPeer) -> Reply {
    let form = object_form(
        json!({
            "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {"type": "string", "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ]},
            "legacyEnum": {
                "type": "string",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"],
            },
            "untitledMulti": {"type": "array", "items": {
                "type": "string", "enum": ["option1", "option2", "option3"],
            }},
            "titledMulti": {"type": "array", "items": {"anyOf": [
                {"const": "value1", "title": "First Choice"},
                {"const": "value2", "title": "Second Choice"},
                {"const": "value3", "title": "Third Choice"},
            ]}},
        }),
        &[],
    );
    elicitation_completed(&client, "Please choose", form).await
}

/// An elicitation form: an object with these `properties`, the `required`
/// ones listed (no `required` key when none is).
fn object_form(properties: Value, required: &[&str]) -> Value {
    let mut form = json!({"type": "object", "properties": properties});
    if !required.is_empty() {
        form["required"] = json!(required);
    }
    form
}

/// Asks the client's user `message` with `form`; the answer's action and
/// its content (`null` when the user sent none).
async fn elicit(
    client: &McpPeer,
    message: &str,
    form: Value,
) -> Result<(String, Value), ToolError> {
    let answer = client.elicit(message, form).await?;
    Ok((
        answer.action.as_str().to_owned(),
        answer.content.unwrap_or_default(),
    ))
}

/// The SEP elicitation tools' reply: the answer's action and content.
async fn elicitation_completed(client: &McpPeer, message: &str, form: Value) -> Reply {
    let (action, content) = elicit(client, message, form).await?;
    Ok(format!(
        "Elicitation completed: action={action}, content={content}"
    ))
}

/// Always fails, to test error reporting.
#[tool(read_only, idempotent, local)]
async fn test_error_handling(_args: NoArgs) -> Result<String, ToolError> {
    Err(ToolError::fatal(
        "This tool intentionally returns an error for testing",
    ))
}

/// Reports progress 0, 50 and 100 of 100, about 50 ms apart.
#[tool(read_only, idempotent, local)]
async fn test_tool_with_progress(_args: NoArgs, #[inject] progress: StreamWriter) -> String {
    for (i, value) in [0.0, 50.0, 100.0].into_iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        progress.progress(value, Some(100.0), None);
    }
    "Progress test completed".to_owned()
}

/// The answer to one elicitation field, as text.
fn field(answer: &tinyagents_tools_mcp::Elicitation, name: &str) -> String {
    answer
        .content
        .as_ref()
        .and_then(|c| c.get(name))
        .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
        .unwrap_or_default()
}

/// A form of one required field.
fn one_field(name: &str, kind: &str) -> Value {
    object_form(json!({ name: {"type": kind} }), &[name])
}

/// Asks the user's name (input rounds, SEP-2322) and greets them.
#[tool(read_only, local)]
async fn test_input_required_result_elicitation(_args: NoArgs, #[inject] client: McpPeer) -> Reply {
    let answer = ask_user_name(&client).await?;
    Ok(format!("Hello, {}!", field(&answer, "name")))
}

/// Asks the client's model a question (input rounds).
#[tool(read_only, local)]
async fn test_input_required_result_sampling(_args: NoArgs, #[inject] client: McpPeer) -> Reply {
    let answer = client
        .sample_as("capital_question", "What is the capital of France?", 100)
        .await?;
    Ok(format!("The model answered: {}", answer.text))
}

/// Lists the client's roots (input rounds).
#[tool(read_only, local)]
async fn test_input_required_result_list_roots(_args: NoArgs, #[inject] client: McpPeer) -> Reply {
    let roots = client.list_roots_as("client_roots").await?;
    let uris: Vec<&str> = roots.iter().filter_map(|r| r["uri"].as_str()).collect();
    Ok(format!("Client roots: {}", uris.join(", ")))
}

/// Asks for a confirmation; the answer only counts with the sealed state
/// the server issued for this call.
#[tool(read_only, local)]
async fn test_input_required_result_request_state(
    _args: NoArgs,
    #[inject] client: McpPeer,
) -> Reply {
    Ok(format!(
        "state-ok: confirmed {}",
        confirmation(&client).await?
    ))
}

/// Asks the user to confirm in an input round keyed `confirm`; the
/// answer's field `ok`, as text.
async fn confirmation(client: &McpPeer) -> Reply {
    let answer = client
        .elicit_as("confirm", "Please confirm", one_field("ok", "boolean"))
        .await?;
    Ok(field(&answer, "ok"))
}

/// Asks for a name, a greeting from the model and the roots at once.
#[tool(read_only, local)]
async fn test_input_required_result_multiple_inputs(
    _args: NoArgs,
    #[inject] client: McpPeer,
) -> Reply {
    let (name, greeting, roots) = tokio::join!(
        ask_user_name(&client),
        client.sample_as("greeting", "Generate a greeting", 50),
        client.list_roots_as("client_roots"),
    );
    let (name, greeting, roots) = (name?, greeting?, roots?);
    Ok(format!(
        "{} {}: {} roots",
        greeting.text,
        field(&name, "name"),
        roots.len()
    ))
}

/// Asks two questions, one round after the other.
#[tool(read_only, local)]
async fn test_input_required_result_multi_round(_args: NoArgs, #[inject] client: McpPeer) -> Reply {
    let name = client
        .elicit_as(
            "step1",
            "Step 1: What is your name?",
            one_field("name", "string"),
        )
        .await?;
    let color = client
        .elicit_as(
            "step2",
            "Step 2: What is your favorite color?",
            one_field("color", "string"),
        )
        .await?;
    Ok(format!(
        "{} likes {}",
        field(&name, "name"),
        field(&color, "color")
    ))
}

/// Asks for a confirmation: a tampered state is refused before it runs.
#[tool(read_only, local)]
async fn test_input_required_result_tampered_state(
    _args: NoArgs,
    #[inject] client: McpPeer,
) -> Reply {
    Ok(format!("confirmed {}", confirmation(&client).await?))
}

/// Asks only through the capabilities the client declared.
#[tool(read_only, local)]
async fn test_input_required_result_capabilities(
    _args: NoArgs,
    #[inject] client: McpPeer,
) -> Reply {
    let mut said = Vec::new();
    if client.can_sample() {
        let answer = client.sample_as("sampling_probe", "Say hello", 20).await?;
        said.push(format!("sampled: {}", answer.text));
    }
    if client.can_elicit() {
        let answer = client
            .elicit_as(
                "elicitation_probe",
                "Your name?",
                one_field("name", "string"),
            )
            .await?;
        said.push(format!("elicited: {}", field(&answer, "name")));
    }
    Ok(said.join("; "))
}

/// Needs sampling: a client that did not declare it gets `-32021`.
#[tool(read_only, local)]
async fn test_missing_capability(_args: NoArgs, #[inject] client: McpPeer) -> Reply {
    let answer = client.sample("Say hello", 20).await?;
    Ok(answer.text)
}

/// Asks the user, so the answer comes in input rounds, never as a request
/// on the response stream.
#[tool(read_only, local)]
async fn test_streaming_elicitation(_args: NoArgs, #[inject] client: McpPeer) -> Reply {
    let answer = client
        .elicit("What is your name?", one_field("name", "string"))
        .await?;
    Ok(format!("Hello, {}!", field(&answer, "name")))
}

/// Logs a message when the client asked for logs, and answers either way.
#[tool(read_only, idempotent, local)]
async fn test_logging_tool(_args: NoArgs, #[inject] client: McpPeer) -> String {
    let sent = client
        .log(LogLevel::Info, "test_logging_tool ran")
        .await
        .unwrap_or(false);
    format!("logged: {sent}")
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let addr = match (args.next().as_deref(), args.next()) {
        (Some("--http"), Some(addr)) => addr,
        _ => return Err("usage: mcp_conformance_server --http 127.0.0.1:PORT".into()),
    };
    let mut registry = ToolRegistry::new();
    registry
        .register(TestSimpleTextTool)?
        .register(TestImageContentTool)?
        .register(TestAudioContentTool)?
        .register(TestEmbeddedResourceTool)?
        .register(TestMultipleContentTypesTool)?
        .register(TestToolWithLoggingTool)?
        .register(TestSamplingTool)?
        .register(TestElicitationTool)?
        .register(TestElicitationSep1034DefaultsTool)?
        .register(TestElicitationSep1330EnumsTool)?
        .register(TestErrorHandlingTool)?
        .register(TestToolWithProgressTool)?
        .register(JsonSchema202012ToolTool)?
        .register(TestCustomHeadersTool)?
        .register(TestCustomHeadersNullTool)?
        .register(TestInputRequiredResultElicitationTool)?
        .register(TestInputRequiredResultSamplingTool)?
        .register(TestInputRequiredResultListRootsTool)?
        .register(TestInputRequiredResultRequestStateTool)?
        .register(TestInputRequiredResultMultipleInputsTool)?
        .register(TestInputRequiredResultMultiRoundTool)?
        .register(TestInputRequiredResultTamperedStateTool)?
        .register(TestInputRequiredResultCapabilitiesTool)?
        .register(TestMissingCapabilityTool)?
        .register(TestStreamingElicitationTool)?
        .register(TestLoggingToolTool)?;
    // The tasks extension's fixtures (SEP-2663): the server then declares
    // the extension.
    tinyagents_tools_examples::conformance_tasks::register(&mut registry)?;
    let server = McpServer::builder(ToolExecutor::builder(registry, ()))
        .name("tinyagents-conformance")
        .build(RunContext::empty)?;
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    eprintln!("mcp_conformance_server: http://{addr}/mcp");
    tinyagents_tools_examples::serve_http_until_ctrl_c(&server, listener).await?;
    Ok(())
}
