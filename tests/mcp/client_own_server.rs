//! The MCP client against the project's own server, over an in-process pipe
//! and over streamable HTTP: tools round-trip with every local guarantee.

use serde_json::json;
use tinyagents_tools::spec::SafetyItem;
use tinyagents_tools::{ErrorClass, RunContext, ToolExecutor};
use tinyagents_tools_mcp::McpServer;
use tinyagents_tools_mcp::client::{ImportOptions, McpClient};

use crate::client::{execute_call, imported};
use crate::common::mcp_client_of;

/// The project's own server over the quickstart tools; it leaves
/// confirmation to its MCP host, explicitly.
fn quickstart_server() -> McpServer {
    McpServer::builder(
        ToolExecutor::builder(
            tinyagents_tools_examples::quickstart_registry().unwrap(),
            (),
        )
        .unenforced(SafetyItem::Confirmation),
    )
    .build(RunContext::empty)
    .unwrap()
}

/// Asks the imported `calculate` for 6 times 7, in call `c1`.
async fn multiply_6_by_7(executor: &ToolExecutor) -> tinyagents_tools::ToolResult {
    let args = json!({"a": 6, "op": "multiply", "b": 7});
    execute_call(executor, "c1", "calculate", args).await
}

#[tokio::test]
async fn tools_of_the_projects_own_server_round_trip_through_the_client() {
    let server = quickstart_server();
    let client = mcp_client_of(server).await;
    let (registry, report) = imported(&client, &ImportOptions::new()).await;
    assert!(report.refused.is_empty(), "{:?}", report.refused);
    let local = tinyagents_tools_examples::quickstart_registry().unwrap();
    let mut remote_names: Vec<&str> = registry.names().collect();
    let mut local_names: Vec<&str> = local.names().collect();
    remote_names.sort_unstable();
    local_names.sort_unstable();
    assert_eq!(remote_names, local_names);
    for spec in local.specs() {
        let remote = registry.get(spec.name.as_str()).unwrap().spec();
        assert_eq!(remote.safety.effect, spec.safety.effect, "{}", spec.name);
        assert_eq!(
            remote.safety.idempotency, spec.safety.idempotency,
            "{}",
            spec.name
        );
        assert_eq!(remote.safety.reach, spec.safety.reach, "{}", spec.name);
    }
    let executor = ToolExecutor::builder(registry, ()).build().unwrap();
    let result = multiply_6_by_7(&executor).await;
    assert!(!result.is_error, "{}", result.text());
    assert!(result.text().contains("42"), "{}", result.text());
    let result = execute_call(
        &executor,
        "c2",
        "calculate",
        json!({"a": 1, "op": "divide", "b": 0}),
    )
    .await;
    assert_eq!(
        result.error.as_ref().map(|e| e.class()),
        Some(ErrorClass::Repair)
    );
}

#[tokio::test]
async fn tools_of_the_projects_own_server_are_imported_over_streamable_http() {
    use tinyagents_tools_mcp::rmcp::transport::StreamableHttpServerConfig;
    let server = quickstart_server();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let stop = tokio_util::sync::CancellationToken::new();
    let serving = stop.clone();
    tokio::spawn(async move {
        server
            .serve_http(listener, StreamableHttpServerConfig::default(), serving)
            .await
    });
    // The tests' reqwest has no default TLS provider (plain HTTP needs none,
    // but building a client asks for one).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = McpClient::connect_http(&format!("http://{addr}/mcp"))
        .await
        .unwrap();
    let (registry, report) = imported(&client, &ImportOptions::new()).await;
    assert_eq!(report.imported.len(), 4);
    let executor = ToolExecutor::builder(registry, ()).build().unwrap();
    let result = multiply_6_by_7(&executor).await;
    assert!(result.text().contains("42"), "{}", result.text());
    stop.cancel();
}
