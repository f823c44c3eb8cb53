//! Serves the quickstart's tools (`search_docs`, `write_note`, `read_file`,
//! `calculate`) as an MCP server over stdio.
//!
//! Run it from the repository root:
//!
//! ```text
//! cargo run --example mcp_server                 # workspace root: the current dir
//! cargo run --example mcp_server -- path/to/dir  # workspace root: that dir
//! ```
//!
//! It speaks JSON-RPC on stdin and stdout, so it is meant to be launched by an
//! MCP client. Point the client at the command; for example, in a client that
//! reads an `mcpServers` map (Claude Desktop, Cursor, ...):
//!
//! ```json
//! {
//!   "mcpServers": {
//!     "tinyagents-quickstart": {
//!       "command": "cargo",
//!       "args": ["run", "--quiet", "--example", "mcp_server", "--", "/path/to/workspace"],
//!       "cwd": "/path/to/tinyagents-tools"
//!     }
//!   }
//! }
//! ```
//!
//! or try it by hand with the MCP Inspector:
//! `npx @modelcontextprotocol/inspector cargo run --quiet --example mcp_server`.
//!
//! `read_file` is confined to the workspace root; notes written with
//! `write_note` live in memory for as long as the server runs. Every call goes
//! through the executor: arguments are validated against the schemas listed
//! by `tools/list`, and a bad call comes back as a result with `isError` and
//! a message that says what to fix. Logs go to stderr, never stdout.

use std::path::PathBuf;
use std::sync::Arc;

use tinyagents_tools::mcp::McpServer;
use tinyagents_tools::policy::{
    ApprovalDecision, ApprovalRequest, Approver, ConfirmationPolicy, WorkspacePolicy,
};
use tinyagents_tools::{ToolExecutor, async_trait};

/// MCP hosts ask their user before every tool call (and show `write_note`'s
/// annotations: not read-only, not idempotent), so a call that reaches this
/// server was confirmed by the host. The approval is still recorded per call
/// id with the arguments' fingerprint, and logged on stderr.
struct ConfirmedByHost;

#[async_trait]
impl Approver for ConfirmedByHost {
    async fn review(&self, request: &ApprovalRequest) -> ApprovalDecision {
        eprintln!(
            "mcp_server: `{}` ({}) confirmed by the host, fingerprint {}",
            request.tool, request.call_id, request.fingerprint
        );
        ApprovalDecision::Approve
    }
}
use tinyagents_tools_examples::{NoteBook, quickstart_registry, quickstart_run};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let workspace = match std::env::args_os().nth(1) {
        Some(dir) => PathBuf::from(dir),
        None => std::env::current_dir()?,
    };
    let workspace = workspace.canonicalize()?;
    let notebook = Arc::new(NoteBook::default());

    let executor = ToolExecutor::builder(quickstart_registry()?, ())
        .middleware(WorkspacePolicy)
        .middleware(ConfirmationPolicy::new(ConfirmedByHost));
    let server = McpServer::builder(executor)
        .name("tinyagents-quickstart")
        .instructions(
            "Tools from the tinyagents-tools quickstart: search the framework's docs, \
             read files under the workspace root, take notes, and calculate.",
        )
        .build(move || quickstart_run(&workspace, Arc::clone(&notebook)))?;

    eprintln!(
        "mcp_server: serving {} tools over stdio",
        server.tools().len()
    );
    let service = server.serve_stdio().await?;
    service.waiting().await?;
    Ok(())
}
