//! One remote tool as a local [`Tool`]: the executor validates, limits,
//! times out, redacts and records it like any other; this part sends the
//! request, relays progress, and classifies what comes back.

use std::sync::Arc;

use async_trait::async_trait;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotification, CancelledNotificationParam,
    ClientRequest, ErrorCode, ProgressToken, RequestId, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient, ServiceError};
use serde_json::Value;

use crate::error::{ErrorClass, ErrorKind, MAX_ERROR_TEXT, ToolError};
use crate::runtime::ToolRuntime;
use crate::spec::ToolSpec;
use crate::tool::CallResult;
use crate::tool::Shared;
use crate::tool::Tool;

use super::bounded;
use super::convert::{output_from, result_text, strip_nulls};
use super::hooks::HookState;

/// A tool of an MCP server, called through the client's connection.
pub(super) struct RemoteTool {
    pub(super) spec: ToolSpec,
    pub(super) remote_name: String,
    pub(super) output_validator: Option<jsonschema::Validator>,
    /// Optional arguments made nullable locally; a `null` one is left out.
    pub(super) nullable: Vec<String>,
    pub(super) peer: Peer<RoleClient>,
    pub(super) hooks: Arc<HookState>,
    /// Keeps the connection (and a spawned server) alive while the tool is.
    pub(super) _client: super::McpClient,
}

/// A request in flight: relays its progress, and unless disarmed (the
/// answer arrived), tells the server `notifications/cancelled` when dropped,
/// which is what happens when the executor stops the call (timeout, run
/// cancelled).
struct InFlight {
    peer: Peer<RoleClient>,
    id: RequestId,
    token: ProgressToken,
    hooks: Arc<HookState>,
    armed: bool,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.hooks.unwatch_progress(&self.token);
        if !self.armed {
            return;
        }
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let peer = self.peer.clone();
        let notification = CancelledNotification::new(CancelledNotificationParam::new(
            Some(self.id.clone()),
            Some("the caller stopped waiting".to_owned()),
        ));
        handle.spawn(async move {
            let _ = peer.send_notification(notification.into()).await;
        });
    }
}

/// A transport or protocol failure as a classified error. The remote text
/// of a JSON-RPC error is bounded; the executor redacts it.
fn service_error(error: ServiceError) -> ToolError {
    match error {
        ServiceError::McpError(data) => {
            let text = bounded(&data.message, MAX_ERROR_TEXT);
            let message = format!("the MCP server refused the call: {text}");
            let class = if data.code == ErrorCode::INVALID_PARAMS {
                ErrorClass::Repair
            } else if data.code == ErrorCode::INTERNAL_ERROR {
                ErrorClass::Retry
            } else {
                ErrorClass::Fatal
            };
            ToolError::new(class, ErrorKind::Tool, message)
        }
        ServiceError::Timeout { timeout } => ToolError::timeout(timeout),
        ServiceError::Cancelled { .. } => ToolError::cancelled(),
        ServiceError::TransportClosed | ServiceError::TransportSend(_) => ToolError::new(
            ErrorClass::Fatal,
            ErrorKind::Crashed,
            "the MCP server is gone: its connection closed without an answer",
        ),
        other => {
            ToolError::fatal("the MCP server did not answer with a tool result").with_source(other)
        }
    }
}

impl RemoteTool {
    /// The answer to a `tools/call` as the tool's output or error.
    fn answer(&self, result: ServerResult) -> CallResult {
        let ServerResult::CallToolResult(result) = result else {
            return Err(ToolError::fatal(
                "the MCP server did not answer with a tool result",
            ));
        };
        if result.is_error == Some(true) {
            let text = bounded(&result_text(&result), MAX_ERROR_TEXT);
            return Err(ToolError::repair(format!("the remote tool failed: {text}")));
        }
        if let Some(validator) = &self.output_validator {
            let valid = result
                .structured_content
                .as_ref()
                .is_some_and(|v| validator.is_valid(v));
            if !valid {
                return Err(ToolError::fatal(
                    "the remote tool's structured result does not match the output schema it declared",
                ));
            }
        }
        Ok(output_from(&result))
    }
}

#[async_trait]
impl<S: Shared, C: Shared> Tool<S, C> for RemoteTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, _state: &S, runtime: &ToolRuntime<C>, arguments: Value) -> CallResult {
        let Value::Object(mut arguments) = arguments else {
            return Err(ToolError::repair("the arguments must be a JSON object"));
        };
        strip_nulls(&mut arguments, &self.nullable);
        let params = CallToolRequestParams::new(self.remote_name.clone()).with_arguments(arguments);
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let handle = self
            .peer
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
            .map_err(service_error)?;
        self.hooks
            .watch_progress(handle.progress_token.clone(), runtime.stream_writer());
        let mut in_flight = InFlight {
            peer: self.peer.clone(),
            id: handle.id.clone(),
            token: handle.progress_token.clone(),
            hooks: Arc::clone(&self.hooks),
            armed: true,
        };
        let cancelled = runtime.cancellation().clone();
        let answer = tokio::select! {
            answer = handle.await_response() => answer,
            _ = cancelled.cancelled() => return Err(ToolError::cancelled()),
        };
        in_flight.armed = false;
        drop(in_flight);
        self.answer(answer.map_err(service_error)?)
    }
}
