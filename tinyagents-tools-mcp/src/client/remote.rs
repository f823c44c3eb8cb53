//! One remote tool as a local [`Tool`]: the executor validates, limits,
//! times out, redacts and records it like any other; this part checks the
//! tool's definition is still the accepted one, sends the request, answers
//! the server's requests for input, follows a task, relays progress, and
//! classifies what comes back.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotification,
    CancelledNotificationParam, ClientRequest, ErrorCode, JsonObject, ProgressToken, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient, ServiceError};
use serde_json::Value;

use tinyagents_tools::error::{ArgumentProblem, ErrorClass, ErrorKind, MAX_ERROR_TEXT, ToolError};
use tinyagents_tools::runtime::{StreamWriter, ToolRuntime};
use tinyagents_tools::spec::ToolSpec;
use tinyagents_tools::tool::CallResult;
use tinyagents_tools::tool::Shared;
use tinyagents_tools::tool::Tool;

use super::bounded;
use super::convert::{output_from, result_text, strip_nulls};
use super::definitions::{Accepted, Standing};
use super::hooks::HookState;
use super::input::{McpInputContext, McpInputHandler, answer_all};
use super::task;

/// A tool of an MCP server, called through the client's connection.
pub(super) struct RemoteTool {
    pub(super) spec: ToolSpec,
    pub(super) remote_name: String,
    /// The fingerprint of the definition this tool was built from.
    pub(super) fingerprint: String,
    /// How long listing the tools again before a call may take.
    pub(super) list_timeout: Duration,
    pub(super) peer: Peer<RoleClient>,
    pub(super) hooks: Arc<HookState>,
    /// Keeps the connection (and a spawned server) alive while the tool is.
    pub(super) _client: super::McpClient,
}

/// Relays the progress of a call's request to the call while it lives.
struct Watch {
    hooks: Arc<HookState>,
    token: ProgressToken,
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.hooks.unwatch_progress(&self.token);
    }
}

/// Tells the server `message` when dropped armed: the caller stopped
/// waiting for what it asked (the executor's timeout, the run cancelled, or
/// a failure before the end). The message is sent in the background.
pub(super) struct TellOnDrop<F: Future<Output = ()> + Send + 'static> {
    message: Option<F>,
}

impl<F: Future<Output = ()> + Send + 'static> TellOnDrop<F> {
    /// A guard that sends `message` (a future not run before) unless
    /// disarmed.
    pub(super) fn armed(message: F) -> Self {
        TellOnDrop {
            message: Some(message),
        }
    }

    /// The wait ended as it should: nothing is sent.
    pub(super) fn disarm(&mut self) {
        self.message = None;
    }
}

impl<F: Future<Output = ()> + Send + 'static> Drop for TellOnDrop<F> {
    fn drop(&mut self) {
        if let Some(message) = self.message.take()
            && let Ok(handle) = tokio::runtime::Handle::try_current()
        {
            handle.spawn(message);
        }
    }
}

/// The rounds of input one call has answered, bounded.
pub(super) struct Rounds<'a> {
    handler: &'a dyn McpInputHandler,
    answered: usize,
    max: usize,
}

impl Rounds<'_> {
    pub(super) fn handler(&self) -> &dyn McpInputHandler {
        self.handler
    }

    /// Counts one more round, or fails the call when it is one too many.
    pub(super) fn count(&mut self) -> Result<(), ToolError> {
        self.answered += 1;
        if self.answered > self.max {
            return Err(ToolError::limit_exceeded(
                ErrorClass::Fatal,
                "mcp_input_rounds",
                format!(
                    "the MCP server kept asking for input: at most {} rounds are answered for one call",
                    self.max
                ),
            ));
        }
        Ok(())
    }
}

/// A transport or protocol failure as a classified error. The remote text
/// of a JSON-RPC error is bounded; the executor redacts it.
pub(super) fn service_error(error: ServiceError) -> ToolError {
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

/// A tool result as the tool's output or error, checked against the
/// accepted output schema (a wrapped value is checked wrapped, as the
/// server declared it, and answered unwrapped).
fn answer(result: CallToolResult, accepted: &Accepted) -> CallResult {
    if result.is_error == Some(true) {
        let text = bounded(&result_text(&result), MAX_ERROR_TEXT);
        return Err(ToolError::repair(format!("the remote tool failed: {text}")));
    }
    if let Some(validator) = &accepted.output {
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
    Ok(output_from(&result, accepted.wrapped))
}

/// Arguments the registry checked against an older definition, checked
/// against the accepted one.
fn check_arguments(accepted: &Accepted, arguments: &JsonObject) -> Result<(), ToolError> {
    let value = Value::Object(arguments.clone());
    let problems: Vec<ArgumentProblem> = accepted
        .input
        .iter_errors(&value)
        .take(8)
        .map(|error| {
            ArgumentProblem::new(
                error.instance_path().as_str(),
                "does not match the tool's accepted new input schema",
            )
        })
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(ToolError::invalid_arguments(problems))
    }
}

impl RemoteTool {
    /// The definition to check this call against, after listing the tools
    /// again when the server said they changed since the last listing; a
    /// tool whose definition changed, or that is gone, is refused here,
    /// before anything is sent.
    async fn accepted(&self) -> Result<Arc<Accepted>, ToolError> {
        let definitions = &self.hooks.definitions;
        if definitions.owes_check() {
            super::relist_if_owed(&self.peer, definitions, self.list_timeout)
                .await
                .map_err(|e| {
                    ToolError::retry(format!(
                        "the MCP server said its tools changed and could not list them again: {}",
                        bounded(&e.to_string(), 300)
                    ))
                })?;
        }
        let name = bounded(&self.remote_name, 128);
        match definitions.standing(&self.remote_name) {
            Standing::Current(accepted) => Ok(accepted),
            Standing::Changed(parts) => {
                let parts: Vec<&str> = parts.iter().map(|p| p.as_str()).collect();
                Err(ToolError::denied(
                    "mcp_definition_changed",
                    format!(
                        "the MCP server changed the {} of the tool `{name}` since it was imported; \
                         it cannot be called until the application accepts the change",
                        parts.join(", ")
                    ),
                )
                .with_class(ErrorClass::Fatal))
            }
            Standing::Removed => Err(ToolError::new(
                ErrorClass::Fatal,
                ErrorKind::UnknownTool,
                format!("the MCP server no longer lists the tool `{name}`"),
            )),
        }
    }

    /// Sends one `tools/call`, relaying its progress for as long as the
    /// returned watch lives.
    async fn send(
        &self,
        params: CallToolRequestParams,
        progress: StreamWriter,
    ) -> Result<(ServerResult, Watch), ToolError> {
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let handle = self
            .peer
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
            .map_err(service_error)?;
        self.hooks
            .watch_progress(handle.progress_token.clone(), progress);
        let watch = Watch {
            hooks: Arc::clone(&self.hooks),
            token: handle.progress_token.clone(),
        };
        // Unless the answer arrives, the server is told the request is
        // cancelled.
        let peer = self.peer.clone();
        let cancelled = CancelledNotification::new(CancelledNotificationParam::new(
            Some(handle.id.clone()),
            Some("the caller stopped waiting".to_owned()),
        ));
        let mut in_flight = TellOnDrop::armed(async move {
            let _ = peer.send_notification(cancelled.into()).await;
        });
        let answer = handle.await_response().await;
        in_flight.disarm();
        Ok((answer.map_err(service_error)?, watch))
    }

    /// The call from the first request to its result: input rounds
    /// answered and retried, a task followed to its end.
    async fn exchange<C: Shared>(&self, runtime: &ToolRuntime<C>, arguments: Value) -> CallResult {
        let accepted = self.accepted().await?;
        let Value::Object(mut arguments) = arguments else {
            return Err(ToolError::repair("the arguments must be a JSON object"));
        };
        if accepted.fingerprint.definition != self.fingerprint {
            check_arguments(&accepted, &arguments)?;
        }
        strip_nulls(&mut arguments, &accepted.nullable);
        let context = McpInputContext {
            tool: Some(self.spec.name.as_str().to_owned()),
            call_id: Some(runtime.call_id().clone()),
        };
        let input = &self.hooks.input;
        let mut rounds = Rounds {
            handler: input.handler.as_ref(),
            answered: 0,
            max: input.max_rounds,
        };
        let mut params =
            CallToolRequestParams::new(self.remote_name.clone()).with_arguments(arguments);
        let mut state_only = 0u32;
        loop {
            let (answer_, _watch) = self.send(params.clone(), runtime.stream_writer()).await?;
            match answer_ {
                ServerResult::CallToolResult(result) => return answer(result, &accepted),
                ServerResult::InputRequiredResult(asked) => {
                    rounds.count()?;
                    let requests = asked.input_requests.unwrap_or_default();
                    if requests.is_empty() {
                        // Only state to echo: the server is busy; wait a little.
                        let wait = 50u64 << state_only.min(2);
                        tokio::time::sleep(Duration::from_millis(wait)).await;
                        state_only += 1;
                    }
                    let responses = answer_all(rounds.handler(), &context, &requests).await?;
                    params.input_responses = (!responses.is_empty()).then_some(responses);
                    params.request_state = asked.request_state;
                }
                ServerResult::CreateTaskResult(created) => {
                    let result =
                        task::follow(&self.peer, created.task, &mut rounds, &context).await?;
                    return answer(result, &accepted);
                }
                _ => {
                    return Err(ToolError::fatal(
                        "the MCP server did not answer with a tool result",
                    ));
                }
            }
        }
    }
}

#[async_trait]
impl<S: Shared, C: Shared> Tool<S, C> for RemoteTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, _state: &S, runtime: &ToolRuntime<C>, arguments: Value) -> CallResult {
        let cancelled = runtime.cancellation().clone();
        tokio::select! {
            result = self.exchange(runtime, arguments) => result,
            _ = cancelled.cancelled() => Err(ToolError::cancelled()),
        }
    }
}
