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
//! A client that declared the tasks extension (protocol 2026-07-28) gets
//! a task instead: its `tasks/get` status stays `working`, its
//! `statusMessage` naming the approval, until the person decides; then
//! the instance asked (after a restart, or another one on the same
//! PostgreSQL journal, where the tasks live too) runs the call once and
//! completes the task with the note, or fails it with the reason.
//!
//! Without tasks, the same call again (same arguments, same session, or the same
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

use serde_json::Value;
use tinyagents_tools::approval::ApprovalRequest;
use tinyagents_tools::journal::Journal;
use tinyagents_tools::policy::{ConfirmationPolicy, WorkspacePolicy};
use tinyagents_tools::runtime::ToolRuntime;
use tinyagents_tools::spec::{TaskSupport, ToolSpec};
use tinyagents_tools::tool::{CallResult, Tool};
use tinyagents_tools::{ToolExecutor, ToolRegistry};
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

use tinyagents_tools_examples::{
    ApproveAndReport, CalculateTool, NoteBook, ReadFileTool, SearchDocsTool, WriteNoteTool,
    quickstart_registry, quickstart_run,
};

/// A tool that may also run as an MCP task (with a journal, `write_note`:
/// its wait for a person is then the task's).
struct MayRunAsTask<T> {
    tool: T,
    spec: ToolSpec,
}

impl<T: Tool> MayRunAsTask<T> {
    fn new(tool: T) -> Self {
        let mut spec = tool.spec().clone();
        spec.task_support = TaskSupport::Optional;
        MayRunAsTask { tool, spec }
    }
}

#[tinyagents_tools::async_trait]
impl<T: Tool> Tool for MayRunAsTask<T> {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, state: &(), runtime: &ToolRuntime, arguments: Value) -> CallResult {
        self.tool.call(state, runtime, arguments).await
    }
}

/// The quickstart's tools, `write_note` of them able to run as a task.
fn registry_with_tasks() -> Result<ToolRegistry, Box<dyn std::error::Error>> {
    let mut registry = ToolRegistry::new();
    registry
        .register(SearchDocsTool)?
        .register(MayRunAsTask::new(WriteNoteTool))?
        .register(ReadFileTool)?
        .register(CalculateTool)?;
    Ok(registry)
}

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

    let registry = match journal {
        Some(_) => registry_with_tasks()?,
        None => quickstart_registry()?,
    };
    let executor = ToolExecutor::builder(registry, ()).middleware(WorkspacePolicy);
    let (executor, tasks) = match journal {
        // A person decides, in the journal, from any process; the tasks
        // live there too.
        Some(journal) => (
            executor
                .middleware(ConfirmationPolicy::deferred())
                .journal(journal.clone()),
            Some(journal),
        ),
        None => (
            executor.middleware(ConfirmationPolicy::new(ApproveAndReport(
                log_confirmed_by_host,
            ))),
            None,
        ),
    };
    let mut server = McpServer::builder(executor);
    if let Some(journal) = tasks {
        server = server.journal_tasks(journal);
    }
    let server = server
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
