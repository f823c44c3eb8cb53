//! Using the tools of another MCP server (feature `client`).
//!
//! An [`McpClient`] connects to a server (a child process over stdio with
//! [`McpClient::spawn`], streamable HTTP with `McpClient::connect_http`
//! under `client-http`, or any rmcp transport with
//! [`McpClient::connect`]) and [imports](McpClient::import_into) its tools
//! into a [`ToolRegistry`]. Each remote tool is a [`Tool`](tinyagents_tools::Tool) like
//! any other, so the executor gives it every local guarantee:
//!
//! - its remote `inputSchema` is compiled at import and checked locally: bad
//!   arguments are answered `invalid_arguments` and never sent;
//! - calls are limited, timed out ([`ImportOptions::timeout`], or the
//!   executor's default) and retried only when the server declares the tool
//!   idempotent ([`ImportOptions::retry`]); middleware, policies, events,
//!   redaction and artifacts apply as for local tools.
//!
//! Safety comes from the remote annotations, conservatively where one is
//! absent: without `readOnlyHint: true` a tool is mutating (destructive
//! unless `destructiveHint: false`, as MCP defaults), without
//! `openWorldHint: false` networked, without `idempotentHint: true` not
//! idempotent.
//!
//! While a call runs, `notifications/progress` for it become the call's
//! `tool.progress` events; when the executor stops waiting (timeout, the
//! run cancelled) the server is sent `notifications/cancelled` for the
//! request. A result with `isError: true` becomes a `repair` error whose
//! message carries the remote text, cut to
//! [`MAX_ERROR_TEXT`](tinyagents_tools::error::MAX_ERROR_TEXT) bytes (and
//! redacted by the executor like any error). When the tool declared an
//! `outputSchema`, its `structuredContent` must match it, or the call fails
//! (`fatal`). A server that closes the connection answers every call
//! `crashed`; one that never answers meets the timeout.
//!
//! An optional top-level argument whose remote schema does not accept `null`
//! accepts it locally, and a `null` one is left out of the request: a model
//! in a provider's strict mode (where every argument is required and the
//! optional ones nullable) sends `null` for an argument it leaves out, and
//! the server sees it absent.
//!
//! Import never fails for one bad tool: a tool with an invalid name or
//! schema is left out and named, with the reason, in the [`ImportReport`].
//!
//! # A server asking for input
//!
//! A server on protocol 2026-07-28 may answer a call with an
//! `input_required` result: the client answers each request in it
//! (elicitation, sampling, roots) through the application's
//! [`McpInputHandler`] ([`McpClientOptions::input_handler`]; without one,
//! elicitations are declined and the rest refused) and sends the call again
//! with the answers and the server's `requestState`, echoed verbatim, for at
//! most [`McpClientOptions::max_input_rounds`] rounds. A server may also
//! answer with a task (the tasks extension, which the client declares): the
//! client polls `tasks/get` at the server's `pollIntervalMs` until the task
//! ends, answers its requests for input with `tasks/update`, and sends
//! `tasks/cancel` when the call stops waiting first (its timeout, the run
//! cancelled). An older server's own `elicitation/create`,
//! `sampling/createMessage` and `roots/list` requests reach the same
//! handler.
//!
//! # Definitions that change after import
//!
//! Import records a SHA-256 fingerprint of each tool's definition (name,
//! title, description, input and output schema, annotations;
//! [`McpClient::fingerprints`]). When the tools are listed again (on
//! `notifications/tools/list_changed`, before the next call of a tool after
//! one, and on [`McpClient::refresh`]), a tool whose definition differs is
//! refused before anything is sent (`fatal`, kind `denied`, policy
//! `mcp_definition_changed`, naming the parts that changed), and one the
//! server no longer lists is refused as unknown, until the application
//! reads [`McpClient::changed_tools`] and accepts with
//! [`McpClient::accept_change`]. A tool that appears is listed there as
//! added and imported only by an explicit [`McpClient::import_into`], which
//! also leaves out a changed tool (rule `definition_changed`) until its
//! change is accepted.
//!
//! # The tool list changing
//!
//! A server may send `notifications/tools/list_changed`. The registry an
//! executor holds never changes under it, so a turn always sees one set of
//! tools. Between turns the application asks
//! [`McpClient::take_tools_changed`] (or awaits
//! [`McpClient::tools_changed_notified`]), and when it is set imports again
//! into a new registry and builds the next turn's executor from it:
//!
//! ```no_run
//! # async fn agent() -> Result<(), Box<dyn std::error::Error>> {
//! use tinyagents_tools_mcp::client::{ImportOptions, McpClient};
//! use tinyagents_tools::{ToolExecutor, ToolRegistry};
//!
//! let client = McpClient::spawn(tokio::process::Command::new("my-mcp-server")).await?;
//! let options = ImportOptions::new().prefix("files_");
//! let mut registry: ToolRegistry = ToolRegistry::new();
//! let report = client.import_into(&mut registry, &options).await?;
//! for refused in &report.refused {
//!     eprintln!("left out: {refused}");
//! }
//! let mut executor = ToolExecutor::builder(registry, ()).build()?;
//! loop {
//!     // ... run one turn with `executor` ...
//!     if client.take_tools_changed() {
//!         let mut registry: ToolRegistry = ToolRegistry::new();
//!         client.import_into(&mut registry, &options).await?;
//!         executor = ToolExecutor::builder(registry, ()).build()?;
//!     }
//! #   break;
//! }
//! # Ok(())
//! # }
//! ```

mod convert;
mod definitions;
mod hooks;
mod import;
mod input;
mod options;
mod remote;
mod task;

use std::collections::BTreeMap;
use std::fmt;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::ProtocolVersion;
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, Peer, RoleClient, RunningService};
use rmcp::transport::IntoTransport;

use tinyagents_tools::registry::ToolRegistry;
use tinyagents_tools::tool::Shared;

pub use definitions::{AcceptError, ChangeKind, DefinitionChange, DefinitionPart, ToolFingerprint};
pub use import::{ImportOptions, ImportReport, ImportedTool, RefusedTool};
pub use input::{
    InputKind, MAX_INPUT_REQUESTS_PER_ROUND, McpInputContext, McpInputError, McpInputHandler,
};
pub use options::{DEFAULT_MAX_INPUT_ROUNDS, McpClientOptions};

use definitions::Definitions;
use hooks::{HookState, Hooks, InputSettings};

/// How long connecting (the MCP initialization) and listing tools may take
/// unless set otherwise.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// `text` cut to at most `max` bytes at a character boundary, ending with
/// `…` when cut.
pub(crate) fn bounded(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max.saturating_sub('…'.len_utf8());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// Why connecting to, or listing the tools of, an MCP server failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpClientError {
    /// The server process could not be started.
    #[error("could not start the MCP server: {0}")]
    Spawn(#[source] std::io::Error),
    /// The MCP initialization failed (the server closed the connection or
    /// answered something that is not an MCP initialization).
    #[error("the MCP server did not complete initialization: {0}")]
    Initialize(String),
    /// `tools/list` failed.
    #[error("the MCP server did not list its tools: {0}")]
    List(String),
    /// The server did not answer within the timeout.
    #[error("the MCP server did not answer within {} ms", .0.as_millis())]
    Timeout(Duration),
}

/// Lists every tool of the server behind `peer`, within `timeout`.
async fn list(
    peer: &Peer<RoleClient>,
    timeout: Duration,
) -> Result<Vec<rmcp::model::Tool>, McpClientError> {
    tokio::time::timeout(timeout, peer.list_all_tools())
        .await
        .map_err(|_| McpClientError::Timeout(timeout))?
        .map_err(|e| McpClientError::List(bounded(&e.to_string(), 500)))
}

/// Lists the tools and compares them with the imported definitions.
async fn relist(
    peer: &Peer<RoleClient>,
    definitions: &Definitions,
    timeout: Duration,
) -> Result<Vec<rmcp::model::Tool>, McpClientError> {
    let _listing = definitions.listing.lock().await;
    let started = definitions.notices();
    let listed = list(peer, timeout).await?;
    definitions.relist(&listed, started);
    Ok(listed)
}

/// [`relist`] when the server said its tools changed since the last
/// listing started; a listing already under way is waited for.
async fn relist_if_owed(
    peer: &Peer<RoleClient>,
    definitions: &Definitions,
    timeout: Duration,
) -> Result<(), McpClientError> {
    let _listing = definitions.listing.lock().await;
    definitions.unschedule();
    if !definitions.owes_check() {
        return Ok(());
    }
    let started = definitions.notices();
    let listed = list(peer, timeout).await?;
    definitions.relist(&listed, started);
    Ok(())
}

/// A connection to an MCP server whose tools can be imported.
///
/// Cheap to clone; the connection (and a spawned server process) ends when
/// the last clone and the last imported tool are dropped, or at
/// [`close`](Self::close).
#[derive(Clone)]
pub struct McpClient {
    service: Arc<RunningService<RoleClient, Hooks>>,
    hooks: Arc<HookState>,
    child: Option<Arc<tokio::sync::Mutex<tokio::process::Child>>>,
}

impl fmt::Debug for McpClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpClient")
            .field("server", &self.server_name())
            .finish_non_exhaustive()
    }
}

impl McpClient {
    /// Connects over `transport` (any rmcp client transport: a pair of byte
    /// streams, a child process, streamable HTTP), giving the MCP
    /// initialization at most `timeout`.
    pub async fn connect<T, E, A>(transport: T, timeout: Duration) -> Result<Self, McpClientError>
    where
        T: IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        McpClient::connect_with(transport, McpClientOptions::new().timeout(timeout)).await
    }

    /// Connects over `transport` as `options` say.
    pub async fn connect_with<T, E, A>(
        transport: T,
        options: McpClientOptions,
    ) -> Result<Self, McpClientError>
    where
        T: IntoTransport<RoleClient, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let timeout = options.timeout;
        let state = Arc::new(HookState::new(InputSettings {
            handler: options
                .input_handler
                .unwrap_or_else(|| Arc::new(input::NoInput)),
            max_rounds: options.max_input_rounds,
        }));
        let hooks = Hooks(Arc::clone(&state));
        let started = async {
            if options.discover {
                let lifecycle = ClientLifecycleMode::Auto {
                    preferred_versions: vec![
                        ProtocolVersion::LATEST,
                        ProtocolVersion::LATEST_WITH_INITIALIZE,
                    ],
                    legacy_version: None,
                };
                hooks.serve_with_lifecycle(transport, lifecycle).await
            } else {
                hooks.serve(transport).await
            }
        };
        let service = match tokio::time::timeout(timeout, started).await {
            Err(_) => return Err(McpClientError::Timeout(timeout)),
            Ok(Err(e)) => return Err(McpClientError::Initialize(bounded(&e.to_string(), 500))),
            Ok(Ok(service)) => service,
        };
        Ok(McpClient {
            service: Arc::new(service),
            hooks: state,
            child: None,
        })
    }

    /// Starts `command` as an MCP server speaking over its stdin and stdout
    /// (its stderr is inherited) and connects to it. The process is killed
    /// when the client is dropped.
    pub async fn spawn(command: tokio::process::Command) -> Result<Self, McpClientError> {
        McpClient::spawn_with(command, McpClientOptions::new()).await
    }

    /// [`spawn`](Self::spawn), connecting as `options` say.
    pub async fn spawn_with(
        mut command: tokio::process::Command,
        options: McpClientOptions,
    ) -> Result<Self, McpClientError> {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn().map_err(McpClientError::Spawn)?;
        let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
            return Err(McpClientError::Spawn(std::io::Error::other(
                "the server's stdio could not be piped",
            )));
        };
        let mut client = McpClient::connect_with((stdout, stdin), options).await?;
        client.child = Some(Arc::new(tokio::sync::Mutex::new(child)));
        Ok(client)
    }

    /// Connects to an MCP server over streamable HTTP at `url`.
    #[cfg(feature = "client-http")]
    #[cfg_attr(docsrs, doc(cfg(feature = "client-http")))]
    pub async fn connect_http(url: &str) -> Result<Self, McpClientError> {
        McpClient::connect_http_with(url, McpClientOptions::new()).await
    }

    /// [`connect_http`](Self::connect_http), connecting as `options` say.
    #[cfg(feature = "client-http")]
    #[cfg_attr(docsrs, doc(cfg(feature = "client-http")))]
    pub async fn connect_http_with(
        url: &str,
        options: McpClientOptions,
    ) -> Result<Self, McpClientError> {
        let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(url.to_owned());
        McpClient::connect_with(transport, options).await
    }

    /// The server's name from its initialization, when it gave one.
    pub fn server_name(&self) -> Option<String> {
        self.service
            .peer()
            .peer_info()
            .and_then(|info| info.server_info.as_ref().map(|i| i.name.clone()))
    }

    /// The protocol version the server chose (`2026-07-28`, `2025-11-25`,
    /// ...).
    pub fn protocol_version(&self) -> Option<String> {
        self.service
            .peer()
            .peer_info()
            .map(|info| info.protocol_version.to_string())
    }

    /// Whether the server said its tool list changed since the last call
    /// of this method; clears the flag. Call it between turns.
    pub fn take_tools_changed(&self) -> bool {
        self.hooks.take_changed()
    }

    /// Waits until the server says its tool list changed (returns at once
    /// when it already did and [`take_tools_changed`](Self::take_tools_changed)
    /// was not called since). Does not clear the flag.
    pub async fn tools_changed_notified(&self) {
        loop {
            let notified = self.hooks.notified();
            if self.hooks.is_changed() {
                return;
            }
            notified.await;
        }
    }

    /// Lists the server's tools and registers each into `registry` as a
    /// [`Tool`](tinyagents_tools::Tool), recording each one's definition. A tool that
    /// cannot be imported (invalid name or schema, a name already taken, a
    /// definition that changed since an earlier import and was not
    /// accepted) is left out and named in the report; only a failed
    /// `tools/list` is an error.
    pub async fn import_into<S, C>(
        &self,
        registry: &mut ToolRegistry<S, C>,
        options: &ImportOptions,
    ) -> Result<ImportReport, McpClientError>
    where
        S: Shared,
        C: Shared,
    {
        import::import(self, registry, options).await
    }

    /// Lists the server's tools again and compares them with the imported
    /// definitions; returns the changes waiting for a decision, as
    /// [`changed_tools`](Self::changed_tools) does. Nothing is imported.
    pub async fn refresh(&self) -> Result<Vec<DefinitionChange>, McpClientError> {
        let definitions = &self.hooks.definitions;
        relist(self.service.peer(), definitions, DEFAULT_CONNECT_TIMEOUT).await?;
        Ok(definitions.changes())
    }

    /// The differences the last listing found between the server's tools
    /// and the imported ones: changed and removed tools (refused until
    /// accepted) by name, then added ones (never imported but by
    /// [`import_into`](Self::import_into)).
    pub fn changed_tools(&self) -> Vec<DefinitionChange> {
        self.hooks.definitions.changes()
    }

    /// Accepts `change`, as read from [`changed_tools`](Self::changed_tools):
    /// a changed tool's calls go through again, checked against the new
    /// definition `change` describes (its input and output schemas); a
    /// removed tool is forgotten; an added one is no longer listed. Import
    /// again to give the model the new description and schema.
    ///
    /// A change the server replaced with another since it was read is not
    /// accepted ([`AcceptError::Superseded`]).
    pub fn accept_change(&self, change: &DefinitionChange) -> Result<(), AcceptError> {
        self.hooks.definitions.accept(change)
    }

    /// The fingerprints of the imported tools' accepted definitions, by
    /// remote name.
    pub fn fingerprints(&self) -> BTreeMap<String, ToolFingerprint> {
        self.hooks.definitions.fingerprints()
    }

    /// Ends the connection and, for a spawned server, kills the process.
    pub async fn close(self) {
        self.service.cancellation_token().cancel();
        if let Some(child) = &self.child {
            let _ = child.lock().await.kill().await;
        }
    }
}
