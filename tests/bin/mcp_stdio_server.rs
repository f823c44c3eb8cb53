//! The quickstart tools served over MCP stdio, as `examples/mcp_server.rs`
//! serves them: the child process the MCP client tests start.

use tinyagents_tools::spec::SafetyItem;
use tinyagents_tools::{RunContext, ToolExecutor};
use tinyagents_tools_mcp::McpServer;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let registry = tinyagents_tools_examples::quickstart_registry()?;
    let executor = ToolExecutor::builder(registry, ()).unenforced(SafetyItem::Confirmation);
    let server = McpServer::builder(executor)
        .name("stdio-test")
        .build(RunContext::empty)?;
    server.serve_stdio().await?.waiting().await?;
    Ok(())
}
