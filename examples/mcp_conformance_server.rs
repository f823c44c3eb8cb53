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

use tinyagents_tools::mcp::McpServer;
use tinyagents_tools::mcp::rmcp::transport::StreamableHttpServerConfig;
use tinyagents_tools::prelude::*;

/// A 1x1 red PNG, base64-encoded.
const RED_PIXEL_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVQI12P4z8AAAAMBAQAY3Y2wAAAAAElFTkSuQmCC";

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

/// A postal address (`address` in the schema's `$defs`, as the suite expects).
#[derive(Deserialize, JsonSchema)]
#[schemars(rename = "address")]
struct Address {
    /// The street.
    street: Option<String>,
    /// The city.
    city: Option<String>,
}

/// Arguments using JSON Schema 2020-12 features (`$defs`, `$ref`).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SchemaArgs {
    /// A name.
    name: Option<String>,
    /// An address.
    address: Option<Address>,
}

/// Tool with JSON Schema 2020-12 features.
#[tool(read_only, idempotent, local)]
async fn json_schema_2020_12_tool(args: SchemaArgs) -> String {
    let (street, city) = args
        .address
        .map(|a| (a.street.unwrap_or_default(), a.city.unwrap_or_default()))
        .unwrap_or_default();
    let name = args.name.unwrap_or_default();
    format!("name: {name}, street: {street}, city: {city}")
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
        .register(TestErrorHandlingTool)?
        .register(TestToolWithProgressTool)?
        .register(JsonSchema202012ToolTool)?;
    let server = McpServer::builder(ToolExecutor::builder(registry, ()))
        .name("tinyagents-conformance")
        .build(RunContext::empty)?;
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    eprintln!("mcp_conformance_server: http://{addr}/mcp");
    let shutdown = CancellationToken::new();
    let stop = shutdown.clone();
    tokio::spawn(async move {
        let _ = tokio::signal::ctrl_c().await;
        stop.cancel();
    });
    server
        .serve_http(listener, StreamableHttpServerConfig::default(), shutdown)
        .await?;
    Ok(())
}
