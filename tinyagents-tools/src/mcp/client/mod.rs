//! Using the tools of another MCP server (feature `mcp-client`).
//!
//! An [`McpClient`] connects to a server (a child process over stdio with
//! [`McpClient::spawn`], streamable HTTP with `McpClient::connect_http`
//! under `mcp-client-http`, or any rmcp transport with
//! [`McpClient::connect`]) and [imports](McpClient::import_into) its tools
//! into a [`ToolRegistry`]. Each remote tool is a [`Tool`](crate::Tool) like
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
//! message carries the remote text, cut to [`MAX_ERROR_TEXT`] bytes (and
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
//! use tinyagents_tools::mcp::client::{ImportOptions, McpClient};
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
mod hooks;
mod remote;

use std::fmt;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::IntoTransport;
use serde_json::Value;

use crate::error::MAX_ERROR_TEXT;
use crate::registry::ToolRegistry;
use crate::retry::RetryPolicy;
use crate::tool::Shared;

use hooks::{HookState, Hooks};
use remote::RemoteTool;

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

/// How remote tools are imported.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ImportOptions {
    /// Prepended to each remote name to make the local name (the server is
    /// still called with its own name).
    pub prefix: Option<String>,
    /// Each imported tool's timeout (the executor's default otherwise).
    pub timeout: Option<Duration>,
    /// The retry policy of the tools the server declares idempotent; the
    /// others are never retried.
    pub retry: Option<RetryPolicy>,
    /// How long `tools/list` may take ([`DEFAULT_CONNECT_TIMEOUT`] when
    /// unset).
    pub list_timeout: Option<Duration>,
}

impl ImportOptions {
    /// No prefix, the executor's timeout, no retries.
    pub fn new() -> Self {
        ImportOptions::default()
    }

    /// Local names are `prefix` followed by the remote name.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = Some(prefix.into());
        self
    }

    /// Each imported tool's timeout.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// The retry policy for tools the server declares idempotent.
    pub fn retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = Some(retry);
        self
    }

    /// How long `tools/list` may take.
    pub fn list_timeout(mut self, timeout: Duration) -> Self {
        self.list_timeout = Some(timeout);
        self
    }
}

/// One remote tool that was imported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportedTool {
    /// Its name in the registry (with the prefix).
    pub local_name: String,
    /// Its name on the server.
    pub remote_name: String,
}

/// One remote tool that was left out, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefusedTool {
    /// Its name on the server (cut to 128 bytes).
    pub remote_name: String,
    /// A short stable identifier of the rule it broke (`invalid_name`,
    /// `invalid_schema`, `schema_root_not_object`, `invalid_output_schema`,
    /// `duplicate`, ...).
    pub rule: &'static str,
    /// What is wrong, in a sentence.
    pub reason: String,
}

impl fmt::Display for RefusedTool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` ({}): {}", self.remote_name, self.rule, self.reason)
    }
}

/// What an import did: the tools imported and the tools left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportReport {
    /// The imported tools, in the server's order.
    pub imported: Vec<ImportedTool>,
    /// The tools left out, in the server's order.
    pub refused: Vec<RefusedTool>,
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
        let state = Arc::new(HookState::default());
        let hooks = Hooks(Arc::clone(&state));
        let service = match tokio::time::timeout(timeout, hooks.serve(transport)).await {
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
    pub async fn spawn(mut command: tokio::process::Command) -> Result<Self, McpClientError> {
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
        let mut client = McpClient::connect((stdout, stdin), DEFAULT_CONNECT_TIMEOUT).await?;
        client.child = Some(Arc::new(tokio::sync::Mutex::new(child)));
        Ok(client)
    }

    /// Connects to an MCP server over streamable HTTP at `url`.
    #[cfg(feature = "mcp-client-http")]
    pub async fn connect_http(url: &str) -> Result<Self, McpClientError> {
        let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(url.to_owned());
        McpClient::connect(transport, DEFAULT_CONNECT_TIMEOUT).await
    }

    /// The server's name from its initialization, when it gave one.
    pub fn server_name(&self) -> Option<String> {
        self.service
            .peer()
            .peer_info()
            .and_then(|info| info.server_info.as_ref().map(|i| i.name.clone()))
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
    /// [`Tool`](crate::Tool). A tool that cannot be imported (invalid name
    /// or schema, a name already taken) is left out and named in the
    /// report; only a failed `tools/list` is an error.
    pub async fn import_into<S, C>(
        &self,
        registry: &mut ToolRegistry<S, C>,
        options: &ImportOptions,
    ) -> Result<ImportReport, McpClientError>
    where
        S: Shared,
        C: Shared,
    {
        let timeout = options.list_timeout.unwrap_or(DEFAULT_CONNECT_TIMEOUT);
        let listed = tokio::time::timeout(timeout, self.service.peer().list_all_tools())
            .await
            .map_err(|_| McpClientError::Timeout(timeout))?
            .map_err(|e| McpClientError::List(bounded(&e.to_string(), 500)))?;
        let mut report = ImportReport::default();
        for tool in listed {
            let remote_name = bounded(&tool.name, 128);
            let refuse = |rule: &'static str, reason: String| RefusedTool {
                remote_name: remote_name.clone(),
                rule,
                reason: bounded(&reason, MAX_ERROR_TEXT),
            };
            let spec = match convert::spec_from(&tool, options) {
                Ok(spec) => spec,
                Err(e) => {
                    let rule = match e {
                        crate::spec::SpecError::InvalidName { .. } => "invalid_name",
                        _ => "invalid_spec",
                    };
                    report.refused.push(refuse(rule, e.to_string()));
                    continue;
                }
            };
            let output_validator = match &tool.output_schema {
                None => None,
                Some(schema) => match jsonschema::validator_for(&Value::Object((**schema).clone()))
                {
                    Ok(v) => Some(v),
                    Err(e) => {
                        report
                            .refused
                            .push(refuse("invalid_output_schema", e.to_string()));
                        continue;
                    }
                },
            };
            let local_name = spec.name.as_str().to_owned();
            let remote = RemoteTool {
                spec,
                remote_name: tool.name.to_string(),
                output_validator,
                nullable: convert::local_input_schema(&tool.input_schema).1,
                peer: self.service.peer().clone(),
                hooks: Arc::clone(&self.hooks),
                _client: self.clone(),
            };
            match registry.register(remote) {
                Ok(_) => report.imported.push(ImportedTool {
                    local_name,
                    remote_name: tool.name.to_string(),
                }),
                Err(e) => report.refused.push(refuse(e.rule(), e.to_string())),
            }
        }
        Ok(report)
    }

    /// Ends the connection and, for a spawned server, kills the process.
    pub async fn close(self) {
        self.service.cancellation_token().cancel();
        if let Some(child) = &self.child {
            let _ = child.lock().await.kill().await;
        }
    }
}
