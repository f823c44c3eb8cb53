//! MCP (Model Context Protocol) for `tinyagents-tools`, through [`rmcp`]:
//! serve a registry as an MCP server over stdio and streamable HTTP, with
//! tasks and input rounds, and import the tools of other MCP servers into a
//! registry.
//!
//! Every call, served or imported, goes through the core's fail-closed
//! executor. This crate reaches the core through its public items only: a
//! call's arguments are handed to the executor as the text the client sent
//! ([`RawArguments::Text`](tinyagents_tools::call::RawArguments)), tasks
//! and spent request states are kept in the journal's
//! [`Records`](tinyagents_tools::journal::Records), and the instance
//! running a task is named and judged by the journal's owner API
//! ([`new_owner`](tinyagents_tools::journal::new_owner),
//! [`process_gone`](tinyagents_tools::journal::process_gone)).
//!
//! | Item | What it is |
//! |---|---|
//! | [`McpServer`], [`McpSession`] | a registry served over MCP; one client connection |
//! | [`McpApprover`], [`McpPeer`] | approvals asked of the client; a tool's handle on its client (logging, sampling, elicitation, escalating to a task) |
//! | [`tasks`] | MCP tasks: where they are kept ([`tasks::TaskStore`], in memory or in a journal) |
//! | `client` | the tools of other MCP servers in a registry (feature `client`) |
//! | [`guide`] | the guide's MCP pages |
//!
//! # Features
//!
//! With none, the server over stdio or any rmcp transport, tasks and input
//! rounds.
//!
#![cfg_attr(feature = "document-features", doc = document_features::document_features!())]
//!
//! This crate re-exports [`rmcp`] and follows its major versions; the core
//! does not depend on it.
//!
//! # The server
//!
//! An [`McpServer`] wraps a [`ToolExecutor`], so every `tools/call` goes
//! through the same fail-closed lifecycle as a call from a model: argument
//! validation (unknown keys and forged hidden keys refused), middleware,
//! limits, timeouts, retries, events and redaction.
//!
//! - `tools/list` answers with each tool's MCP declaration (input and output
//!   schema, title, and the `readOnlyHint`, `destructiveHint`,
//!   `idempotentHint` and `openWorldHint` annotations from its safety
//!   metadata), built once when the server is built.
//! - `tools/call` answers with `content`, `structuredContent` (and a text copy
//!   of it) and `isError`, and `resultType: "complete"` for a client on
//!   protocol 2026-07-28 or later (older versions have no such field). A tool
//!   failure and bad arguments are results with `isError: true` whose text
//!   is the repair message; an unknown tool is a JSON-RPC error (`-32602`,
//!   invalid params).
//! - What a client reads is bounded like the canonical tool message: the
//!   content is the executor's (at most `max_content_bytes`, or a preview and
//!   the artifact reference for a stored output), and `structuredContent` is
//!   sent only when its JSON is at most
//!   [`McpServerBuilder::max_structured_bytes`] (16 KiB by default).
//! - `tools/list` gives every tool on one page; a request naming a cursor is
//!   answered `-32602`.
//! - [`serve_stdio`](McpServer::serve_stdio) and the HTTP service check each
//!   message before rmcp reads it (see [`McpServer::serve_lines`]): a
//!   malformed message always gets a JSON-RPC answer, and a call's arguments
//!   meet the executor's rules as text (a repeated key is refused).
//! - `notifications/cancelled` for a running call fires that call's
//!   cancellation token (and only that call's): the tool sees its token fire,
//!   the executor records the call as cancelled, and no response is sent, as
//!   MCP requires.
//! - Progress a tool reports through its [`StreamWriter`](tinyagents_tools::StreamWriter)
//!   becomes `notifications/progress` for that call when the request carried
//!   a `progressToken`. MCP requires the progress value to increase; a report
//!   that does not (a message-only [`write`](tinyagents_tools::StreamWriter::write), for
//!   example) is sent just above the previous value.
//!
//! - A call that needs approval can be put to the client as an elicitation:
//!   see [`McpApprover`].
//! - A tool can send its client log messages and ask it for sampling or
//!   elicitation through an injected [`McpPeer`]; `logging/setLevel` sets
//!   the lowest level sent (the server declares `logging`).
//! - A long-running tool declared with task support runs as an MCP task
//!   for a client that declared the tasks extension: the client gets a task
//!   handle at once and polls it (see [`tasks`]).
//!
//! Each connection is an [`McpSession`] with its own [`RunContext`], made by
//! the function given to [`McpServerBuilder::build`] (return clones of one
//! run to share it between sessions). Each call runs in a
//! [`child scope`](RunContext::child_scope) of the session's run, as its own
//! [`Turn`](tinyagents_tools::Turn); per-run call limits count every call of the run.
//!
//! ```no_run
//! # async fn serve() -> Result<(), Box<dyn std::error::Error>> {
//! use tinyagents_tools_mcp::McpServer;
//! use tinyagents_tools::{RunContext, ToolExecutor, ToolRegistry};
//!
//! let registry = ToolRegistry::new(); // register tools here
//! let server = McpServer::builder(ToolExecutor::builder(registry, ()))
//!     .name("my-tools")
//!     .build(RunContext::empty)?;
//! server.serve_stdio().await?.waiting().await?;
//! # Ok(())
//! # }
//! ```
//!
//! With the `http` feature, the same server speaks MCP streamable HTTP:
//! `McpServer::serve_http` serves it on a TCP listener, and
//! `McpServer::streamable_http_service` gives the tower service to mount in
//! an existing HTTP application. Other transports take
//! [`McpServer::session`], one per connection.

#![deny(missing_docs)]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod approve;
mod call_result;
mod clock;
pub mod durable;
pub mod guide;
#[cfg(feature = "http")]
mod http;
mod lines;
mod peer;
mod progress;
mod rounds;
mod screen;
mod session;
mod sync;
pub mod tasks;

#[cfg(feature = "client")]
#[cfg_attr(docsrs, doc(cfg(feature = "client")))]
pub mod client;

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

use rmcp::ServiceExt;
use rmcp::model::{Implementation, ListToolsResult, ServerCapabilities, ServerConfig, Tool};
use rmcp::service::{RoleServer, RunningService, ServerInitializeError};
use rmcp::transport::IntoTransport;

use tinyagents_tools::executor::{ExecutorBuildError, ToolExecutor, ToolExecutorBuilder};
use tinyagents_tools::journal::Journal;
use tinyagents_tools::output::ToolMessage;
use tinyagents_tools::providers::mcp::wraps_result;
use tinyagents_tools::providers::{ExportError, ExportTarget, MAX_STRUCTURED_BYTES, export_tool};
use tinyagents_tools::runtime::RunContext;
use tinyagents_tools::tool::Shared;

pub use approve::{APPROVAL_META_KEY, McpApprover};
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub use http::{LOOPBACK_ORIGINS, McpHttpResponse, McpHttpService, stateless_config};
pub use peer::{
    DEFAULT_PEER_TIMEOUT, ElicitAction, Elicitation, LogLevel, McpPeer, McpPeerError, Sampled,
};
use progress::ProgressRelay;
pub use rounds::{DEFAULT_REQUEST_STATE_TTL, MAX_REQUEST_STATE_BYTES, SPENT_STATES_SPACE};
pub use session::McpSession;

/// The `rmcp` crate this crate is built on, for its transports and
/// [`RunningService`].
pub use rmcp;

type RunFactory<C> = Arc<dyn Fn() -> RunContext<C> + Send + Sync>;

/// Why an [`McpServer`] could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpServerError {
    /// The executor's configuration does not fit its registry.
    #[error(transparent)]
    Executor(#[from] ExecutorBuildError),
    /// A tool has no valid MCP declaration (for example its input schema's
    /// root is not an object).
    #[error("cannot serve over MCP: {0}")]
    Export(#[from] ExportError),
    /// The request-state key is too short.
    #[error("{0}")]
    RequestStateKey(String),
    /// A declaration could not be read as an MCP `Tool`.
    #[error("tool `{tool}`: its MCP declaration is not a valid MCP tool: {source}")]
    Declaration {
        /// The tool.
        tool: String,
        /// What did not fit.
        #[source]
        source: serde_json::Error,
    },
}

/// Serves the tools of a [`ToolExecutor`] over MCP.
///
/// Built once with [`McpServer::builder`]; cheap to clone (one `Arc`). Each
/// [`serve`](Self::serve) or [`serve_stdio`](Self::serve_stdio) starts one
/// session.
pub struct McpServer<S = (), C = ()> {
    shared: Arc<ServerCore<S, C>>,
}

impl<S, C> Clone for McpServer<S, C> {
    fn clone(&self) -> Self {
        McpServer {
            shared: Arc::clone(&self.shared),
        }
    }
}

/// What every session of a server shares.
pub(crate) struct ServerCore<S, C> {
    pub(crate) executor: Arc<ToolExecutor<S, C>>,
    pub(crate) tools: ListToolsResult,
    pub(crate) info: ServerConfig,
    pub(crate) relay: Arc<ProgressRelay>,
    pub(crate) max_structured_bytes: usize,
    /// The tools whose results wrap their structured value (their output
    /// is not an object: `providers::mcp::wraps_result`).
    pub(crate) wrapped: HashSet<String>,
    pub(crate) approver: Option<McpApprover>,
    pub(crate) sealer: rounds::Sealer,
    pub(crate) tasks: tasks::Tasks,
    pub(crate) runs: RunFactory<C>,
}

impl<S: Shared, C: Shared> McpServer<S, C> {
    /// Starts building a server around an executor that is not built yet
    /// (the server subscribes to its events to relay progress).
    ///
    /// Progress is relayed through the builder's own event bus; an executor
    /// given a shared bus with [`ToolExecutorBuilder::event_bus`] runs every
    /// call the same way but sends no progress notifications.
    pub fn builder(executor: ToolExecutorBuilder<S, C>) -> McpServerBuilder<S, C> {
        McpServerBuilder {
            executor,
            info: Implementation::new("tinyagents-tools", env!("CARGO_PKG_VERSION")),
            instructions: None,
            max_structured_bytes: MAX_STRUCTURED_BYTES,
            approver: None,
            request_state_key: None,
            request_state_ttl: DEFAULT_REQUEST_STATE_TTL,
            request_state_journal: None,
            task_store: None,
            task_ttl: tasks::DEFAULT_TASK_TTL,
            task_poll_interval: tasks::DEFAULT_TASK_POLL_INTERVAL,
            task_lease: tasks::DEFAULT_TASK_LEASE,
        }
    }

    /// The executor every call goes through.
    pub fn executor(&self) -> &Arc<ToolExecutor<S, C>> {
        &self.shared.executor
    }

    /// The tools as `tools/list` lists them, in registration order.
    pub fn tools(&self) -> &[Tool] {
        &self.shared.tools.tools
    }

    /// What the server says about itself in `initialize`.
    pub fn info(&self) -> &ServerConfig {
        &self.shared.info
    }

    /// A new session, with a run made by the server's run function. Hand it
    /// to any rmcp transport (`session.serve(transport)` with
    /// [`rmcp::ServiceExt`]).
    pub fn session(&self) -> McpSession<S, C> {
        let run = (self.shared.runs)();
        McpSession::new(Arc::clone(&self.shared), run)
    }

    /// Serves one session over `transport` (stdio, a `tokio::io::duplex`
    /// pair, a socket: anything rmcp takes) once the client has initialized
    /// it. Await [`RunningService::waiting`] to run until the client leaves.
    pub async fn serve<T, E, A>(
        &self,
        transport: T,
    ) -> Result<RunningService<RoleServer, McpSession<S, C>>, ServerInitializeError>
    where
        T: IntoTransport<RoleServer, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        self.session().serve(transport).await
    }

    /// Serves one session over the process's stdin and stdout (the way MCP
    /// clients launch local servers), as [`serve_lines`](Self::serve_lines)
    /// does. Nothing else may write to stdout.
    pub async fn serve_stdio(
        &self,
    ) -> Result<RunningService<RoleServer, McpSession<S, C>>, ServerInitializeError> {
        self.serve_lines(tokio::io::stdin(), tokio::io::stdout())
            .await
    }

    /// Serves one session over newline-delimited JSON-RPC: messages are read
    /// from `reader` and answers written to `writer`, one per line (the
    /// stdio transport, over any byte streams).
    ///
    /// Each line is checked before rmcp reads it: a line that is not JSON is
    /// answered `-32700`; a `tools/call` without a string `name`, or whose
    /// `arguments` is not an object, `-32602`; a message nested deeper than
    /// 100 levels outside a call's arguments, or longer than 4 MiB, `-32600`.
    /// A call's arguments reach the executor as the text the client sent, so
    /// a repeated key is refused and the nesting and size bounds of
    /// [`ExecutorConfig`](tinyagents_tools::executor::ExecutorConfig) apply before anything is
    /// parsed, as for every provider. ([`serve`](Self::serve) hands the
    /// transport to rmcp as it is, without these checks.)
    pub async fn serve_lines<R, W>(
        &self,
        reader: R,
        writer: W,
    ) -> Result<RunningService<RoleServer, McpSession<S, C>>, ServerInitializeError>
    where
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
        W: tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        self.serve(lines::spawn(reader, writer)).await
    }
}

impl<S: Shared, C: Shared> fmt::Debug for McpServer<S, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServer")
            .field("name", &self.shared.info.server_info.name)
            .field("tools", &self.shared.tools.tools.len())
            .field("executor", &self.shared.executor)
            .finish()
    }
}

impl<S, C> ServerCore<S, C> {
    /// True when `message`'s tool sends its structured value wrapped.
    pub(crate) fn wraps(&self, message: &ToolMessage) -> bool {
        !self.wrapped.is_empty() && self.wrapped.contains(message.name.as_str())
    }
}

/// Builds an [`McpServer`].
pub struct McpServerBuilder<S = (), C = ()> {
    executor: ToolExecutorBuilder<S, C>,
    info: Implementation,
    instructions: Option<String>,
    max_structured_bytes: usize,
    approver: Option<McpApprover>,
    request_state_key: Option<Vec<u8>>,
    request_state_ttl: std::time::Duration,
    request_state_journal: Option<Journal>,
    task_store: Option<Arc<dyn tasks::TaskStore>>,
    task_ttl: std::time::Duration,
    task_poll_interval: std::time::Duration,
    task_lease: std::time::Duration,
}

impl<S: Shared, C: Shared> McpServerBuilder<S, C> {
    /// The key that seals the `requestState` of input rounds (protocol
    /// 2026-07-28: a tool asking its client for input, an approval): at
    /// least 32 bytes, kept secret. Give every instance behind a load
    /// balancer the same key, so that any of them opens a state another
    /// sealed. Without one, the server seals with a random key of its own
    /// process. A state is also bound to its call (the tool and the
    /// arguments' fingerprint), expires (see
    /// [`request_state_ttl`](Self::request_state_ttl)) and is accepted once
    /// per process.
    pub fn request_state_key(mut self, key: impl Into<Vec<u8>>) -> Self {
        self.request_state_key = Some(key.into());
        self
    }

    /// Records each accepted `requestState` in `journal` (its records of
    /// the space [`SPENT_STATES_SPACE`]), so instances sharing it accept a
    /// state once between them, not once per process.
    pub fn request_state_journal(mut self, journal: Journal) -> Self {
        self.request_state_journal = Some(journal);
        self
    }

    /// How long a sealed `requestState` is accepted (10 minutes by
    /// default).
    pub fn request_state_ttl(mut self, ttl: std::time::Duration) -> Self {
        self.request_state_ttl = ttl;
        self
    }

    /// Where the server keeps its MCP tasks (see [`tasks`]): by default this
    /// process's memory ([`MemoryTaskStore`](tasks::MemoryTaskStore)).
    pub fn task_store(mut self, store: impl tasks::TaskStore) -> Self {
        self.task_store = Some(Arc::new(store));
        self
    }

    /// Keeps the server's MCP tasks in `journal`
    /// ([`JournalTaskStore`](tasks::JournalTaskStore)): every instance
    /// opening the same journal (PostgreSQL) answers for every task, and a
    /// task outlives a restart.
    pub fn journal_tasks(self, journal: Journal) -> Self {
        self.task_store(tasks::JournalTaskStore::new(journal))
    }

    /// How long a task is kept at least after its creation, its `ttlMs`
    /// ([`DEFAULT_TASK_TTL`](tasks::DEFAULT_TASK_TTL), one hour, by
    /// default).
    pub fn task_ttl(mut self, ttl: std::time::Duration) -> Self {
        self.task_ttl = ttl;
        self
    }

    /// How often a client is asked to poll a task, its `pollIntervalMs`
    /// ([`DEFAULT_TASK_POLL_INTERVAL`](tasks::DEFAULT_TASK_POLL_INTERVAL),
    /// 500 ms, by default).
    pub fn task_poll_interval(mut self, interval: std::time::Duration) -> Self {
        self.task_poll_interval = interval;
        self
    }

    /// How long this instance's claim on a task it runs lasts without
    /// renewal ([`DEFAULT_TASK_LEASE`](tasks::DEFAULT_TASK_LEASE), 30 s, by
    /// default). The instance renews it while the body runs; a task whose
    /// lease ran out (its instance died) is answered `failed`. Keep it well
    /// above [`WATCH_INTERVAL`](tasks::WATCH_INTERVAL), how often it is
    /// renewed.
    pub fn task_lease(mut self, lease: std::time::Duration) -> Self {
        self.task_lease = lease;
        self
    }

    /// The server name sent in `initialize` (default `tinyagents-tools`).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.info.name = name.into();
        self
    }

    /// The server version sent in `initialize` (default this crate's).
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.info.version = version.into();
        self
    }

    /// A human-readable title for the server.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.info.title = Some(title.into());
        self
    }

    /// Instructions for the client's model, sent in `initialize`.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// The largest structured value, in bytes of compact JSON, sent as a
    /// result's `structuredContent` (default
    /// [`MAX_STRUCTURED_BYTES`], 16 KiB). A larger value is left out and the
    /// client reads the content: the executor's bounded preview and, with
    /// an artifact store, the artifact reference.
    pub fn max_structured_bytes(mut self, bytes: usize) -> Self {
        self.max_structured_bytes = bytes;
        self
    }

    /// Lets `approver` ask the client of each call for approval (see
    /// [`McpApprover`]); give a clone of it to the executor's
    /// [`ConfirmationPolicy`](tinyagents_tools::policy::ConfirmationPolicy). Without
    /// it, an `McpApprover` in the policy refuses every call that needs
    /// approval.
    pub fn approver(mut self, approver: McpApprover) -> Self {
        self.approver = Some(approver);
        self
    }

    /// Builds the executor and the tool list. `runs` makes the run of each
    /// session (return clones of one run to share it).
    ///
    /// Fails when the executor cannot be built or a tool has no valid MCP
    /// declaration; no tool is left out silently.
    pub fn build(
        self,
        runs: impl Fn() -> RunContext<C> + Send + Sync + 'static,
    ) -> Result<McpServer<S, C>, McpServerError> {
        let sealer = rounds::Sealer::new(self.request_state_key, self.request_state_ttl)
            .map(|sealer| sealer.shared(self.request_state_journal))
            .map_err(McpServerError::RequestStateKey)?;
        let relay = Arc::new(ProgressRelay::default());
        let executor = self.executor.subscribe(relay.clone()).build()?;
        let tools = list_tools(&executor)?;
        let wrapped = executor
            .registry()
            .specs()
            .filter(|spec| wraps_result(spec))
            .map(|spec| spec.name.as_str().to_owned())
            .collect();
        #[allow(deprecated)] // MCP logging, still in 2025-11-25
        // `prompts/list` and `resources/list` are answered (with no item):
        // discovery says so.
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_logging()
            .enable_prompts()
            .enable_resources();
        // The tasks extension, when some tool may run as a task.
        let capabilities = if executor
            .registry()
            .specs()
            .any(|spec| !spec.task_support.is_forbidden())
        {
            capabilities.enable_tasks().build()
        } else {
            capabilities.build()
        };
        let mut info = ServerConfig::new(capabilities).with_server_info(self.info);
        info.instructions = self.instructions;
        Ok(McpServer {
            shared: Arc::new(ServerCore {
                executor: Arc::new(executor),
                tools: ListToolsResult::with_all_items(tools),
                info,
                relay,
                max_structured_bytes: self.max_structured_bytes,
                wrapped,
                approver: self.approver,
                sealer,
                tasks: tasks::Tasks::new(
                    self.task_store
                        .unwrap_or_else(|| Arc::new(tasks::MemoryTaskStore::new())),
                    self.task_ttl,
                    self.task_poll_interval,
                    self.task_lease,
                ),
                runs: Arc::new(runs),
            }),
        })
    }
}

impl<S: Shared, C: Shared> fmt::Debug for McpServerBuilder<S, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServerBuilder")
            .field("info", &self.info)
            .field("executor", &self.executor)
            .finish_non_exhaustive()
    }
}

/// Every registered tool's MCP declaration, as rmcp's `Tool`.
fn list_tools<S, C>(executor: &ToolExecutor<S, C>) -> Result<Vec<Tool>, McpServerError>
where
    S: Shared,
    C: Shared,
{
    executor
        .registry()
        .specs()
        .map(|spec| {
            let declaration = export_tool(spec, ExportTarget::Mcp)?;
            serde_json::from_value(declaration.into_json()).map_err(|source| {
                McpServerError::Declaration {
                    tool: spec.name.as_str().to_owned(),
                    source,
                }
            })
        })
        .collect()
}

/// The README's snippets, compiled as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
