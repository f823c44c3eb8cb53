//! Serves the quickstart's tools (`search_docs`, `write_note`, `read_file`,
//! `calculate`) as an MCP server over stdio, or over streamable HTTP.
//!
//! Run it from the repository root:
//!
//! ```text
//! cargo run --example mcp_server                 # workspace root: the current dir
//! cargo run --example mcp_server -- path/to/dir  # workspace root: that dir
//! cargo run --example mcp_server -- --http 127.0.0.1:8080 [path/to/dir]
//!                                                # streamable HTTP at http://127.0.0.1:8080/mcp
//! cargo run --features journal-sqlite --example mcp_server -- --journal sqlite://notes.db [--http ADDR] [path/to/dir]
//!                                                # write_note waits for a person's approval
//! cargo run --example mcp_server -- --journal postgres://USER@HOST/DB [--http ADDR] [path/to/dir]
//! ```
//!
//! With `--journal URL` (`sqlite://PATH` or `postgres://...`, before the
//! other arguments), `write_note` no longer trusts the host: each call
//! waits in that journal for a person's approval
//! ([`ConfirmationPolicy::deferred`]) and is answered at once with an error
//! result whose text names the approval (`awaiting approval apr_...: the
//! call has not run`). A person decides it from another process:
//!
//! ```text
//! cargo run --features journal-sqlite --example durable_approval -- --journal sqlite://notes.db approve apr_...
//! cargo run --features journal-sqlite --example durable_approval -- --journal sqlite://notes.db deny apr_... too long
//! ```
//!
//! and the same call again (same arguments, same session, or the same
//! `_meta["dev.tinyagents/idempotency-key"]` after a restart or on another
//! instance sharing a PostgreSQL journal) runs it once and answers, or says
//! why it was refused (see [`tinyagents_tools_mcp::durable`]). A SQLite
//! journal needs the examples' `journal-sqlite` feature (it builds SQLite
//! from C), and so does the `durable_approval` example, whatever the
//! journal. The official Python SDK's client drives all of it in
//! `tests/mcp/python_sdk.rs`.
//!
//! Over HTTP every session gets its own notebook; only loopback `Host`
//! headers are accepted, a request from a browser page whose `Origin` is not
//! loopback gets 403, and Ctrl-C stops the server.
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

use tinyagents_tools::ToolExecutor;
use tinyagents_tools::approval::ApprovalRequest;
use tinyagents_tools::journal::Journal;
use tinyagents_tools::policy::{ConfirmationPolicy, WorkspacePolicy};
use tinyagents_tools_mcp::McpServer;

/// MCP hosts ask their user before every tool call (and show `write_note`'s
/// annotations: not read-only, not idempotent), so a call that reaches this
/// server was confirmed by the host. The approval is still recorded per call
/// id with the arguments' fingerprint, and logged on stderr here.
fn log_confirmed_by_host(request: &ApprovalRequest) {
    eprintln!(
        "mcp_server: `{}` ({}) confirmed by the host, fingerprint {}",
        request.tool, request.call_id, request.fingerprint
    );
}

use tinyagents_tools_examples::{ApproveAndReport, NoteBook, quickstart_registry, quickstart_run};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args_os().skip(1).peekable();
    let journal = if args.peek().is_some_and(|a| a == "--journal") {
        args.next();
        let url = args
            .next()
            .ok_or("--journal needs a URL, such as sqlite://notes.db")?;
        let url = url
            .into_string()
            .map_err(|_| "the journal URL is not UTF-8")?;
        Some(Journal::open(&url).await?)
    } else {
        None
    };
    let http = if args.peek().is_some_and(|a| a == "--http") {
        args.next();
        let addr = args
            .next()
            .ok_or("--http needs an address, such as 127.0.0.1:8080")?;
        Some(addr.into_string().map_err(|_| "the address is not UTF-8")?)
    } else {
        None
    };
    let workspace = match args.next() {
        Some(dir) => PathBuf::from(dir),
        None => std::env::current_dir()?,
    };
    let workspace = workspace.canonicalize()?;
    let shared_notebook = Arc::new(NoteBook::default());
    let per_session = http.is_some();

    let executor = ToolExecutor::builder(quickstart_registry()?, ()).middleware(WorkspacePolicy);
    let executor = match journal {
        // A person decides, in the journal, from any process.
        Some(journal) => executor
            .middleware(ConfirmationPolicy::deferred())
            .journal(journal),
        None => executor.middleware(ConfirmationPolicy::new(ApproveAndReport(
            log_confirmed_by_host,
        ))),
    };
    let server = McpServer::builder(executor)
        .name("tinyagents-quickstart")
        .instructions(
            "Tools from the tinyagents-tools quickstart: search the framework's docs, \
             read files under the workspace root, take notes, and calculate.",
        )
        .build(move || {
            let notebook = if per_session {
                Arc::new(NoteBook::default())
            } else {
                Arc::clone(&shared_notebook)
            };
            quickstart_run(&workspace, notebook)
        })?;

    let Some(addr) = http else {
        eprintln!(
            "mcp_server: serving {} tools over stdio",
            server.tools().len()
        );
        let service = server.serve_stdio().await?;
        service.waiting().await?;
        return Ok(());
    };
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    eprintln!(
        "mcp_server: serving {} tools over streamable HTTP at http://{}/mcp (Ctrl-C stops)",
        server.tools().len(),
        listener.local_addr()?
    );
    tinyagents_tools_examples::serve_http_until_ctrl_c(&server, listener).await?;
    Ok(())
}
