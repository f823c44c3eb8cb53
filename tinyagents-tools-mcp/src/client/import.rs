//! Importing a server's tools into a registry: each listed tool becomes a
//! [`Tool`](tinyagents_tools::Tool), or is left out and named with the rule it breaks.
//! Each imported definition's fingerprint is recorded; a tool whose listed
//! definition differs from the recorded one is left out until the
//! application accepts the change.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use tinyagents_tools::error::MAX_ERROR_TEXT;
use tinyagents_tools::registry::ToolRegistry;
use tinyagents_tools::spec::RetryPolicy;
use tinyagents_tools::tool::Shared;

use super::definitions::Accepted;
use super::remote::RemoteTool;
use super::{DEFAULT_CONNECT_TIMEOUT, McpClient, McpClientError, bounded, convert};

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
    /// unset), here and when a call lists the tools again.
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
    /// The fingerprint of the definition imported
    /// ([`ToolFingerprint::definition`](super::ToolFingerprint::definition)).
    pub fingerprint: String,
}

/// One remote tool that was left out, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefusedTool {
    /// Its name on the server (cut to 128 bytes).
    pub remote_name: String,
    /// A short stable identifier of the rule it broke (`invalid_name`,
    /// `invalid_schema`, `schema_root_not_object`, `invalid_output_schema`,
    /// `duplicate`, `definition_changed`, ...).
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

/// Lists `client`'s tools and registers each into `registry`.
pub(super) async fn import<S: Shared, C: Shared>(
    client: &McpClient,
    registry: &mut ToolRegistry<S, C>,
    options: &ImportOptions,
) -> Result<ImportReport, McpClientError> {
    let list_timeout = options.list_timeout.unwrap_or(DEFAULT_CONNECT_TIMEOUT);
    let definitions = &client.hooks.definitions;
    let listed = super::relist(client.service.peer(), definitions, list_timeout).await?;
    let mut report = ImportReport::default();
    for tool in listed {
        let remote_name = bounded(&tool.name, 128);
        let refuse = |rule: &'static str, reason: String| RefusedTool {
            remote_name: remote_name.clone(),
            rule,
            reason: bounded(&reason, MAX_ERROR_TEXT),
        };
        if let Some(parts) = definitions.recorded_parts(&tool)
            && !parts.is_empty()
        {
            let parts: Vec<&str> = parts.iter().map(|p| p.as_str()).collect();
            let reason = format!(
                "its {} changed since it was imported; the application must accept the change",
                parts.join(", ")
            );
            report.refused.push(refuse("definition_changed", reason));
            continue;
        }
        let spec = match convert::spec_from(&tool, options) {
            Ok(spec) => spec,
            Err(e) => {
                let rule = match e {
                    tinyagents_tools::spec::SpecError::InvalidName { .. } => "invalid_name",
                    _ => "invalid_spec",
                };
                definitions.saw(&tool.name);
                report.refused.push(refuse(rule, e.to_string()));
                continue;
            }
        };
        let accepted = match Accepted::compile(&tool) {
            Ok(accepted) => accepted,
            Err((rule, reason)) => {
                definitions.saw(&tool.name);
                report.refused.push(refuse(rule, reason));
                continue;
            }
        };
        let local_name = spec.name.as_str().to_owned();
        let fingerprint = accepted.fingerprint.definition.clone();
        let remote = RemoteTool {
            spec,
            remote_name: tool.name.to_string(),
            fingerprint: fingerprint.clone(),
            list_timeout,
            peer: client.service.peer().clone(),
            hooks: Arc::clone(&client.hooks),
            _client: client.clone(),
        };
        match registry.register(remote) {
            Ok(_) => {
                definitions.record(&tool, accepted);
                report.imported.push(ImportedTool {
                    local_name,
                    remote_name: tool.name.to_string(),
                    fingerprint,
                });
            }
            Err(e) => {
                definitions.saw(&tool.name);
                report.refused.push(refuse(e.rule(), e.to_string()));
            }
        }
    }
    Ok(report)
}
