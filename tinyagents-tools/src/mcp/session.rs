//! [`McpSession`]: one client connection, answering `tools/list` and
//! `tools/call` through the server's executor.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU32, AtomicU64, Ordering};

use rmcp::ErrorData;
use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ErrorCode, InputRequiredResult,
    ListToolsResult, PaginatedRequestParams, ResultType, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Map, Value};

use super::ServerCore;
use super::peer::{Link, threshold_of};
use super::progress::Route;
use super::screen::{ARGUMENTS_KEY, REFUSAL_KEY};
use crate::call::{RawArguments, ToolCall};
use crate::error::ErrorKind;
use crate::ids::ToolCallId;
use crate::output::ToolResult;
use crate::providers::mcp::call_tool_result_bounded;
use crate::runtime::RunContext;
use crate::tool::Shared;
use crate::turn::Turn;

/// Numbers sessions, so call ids stay unique across sessions of one process.
static SESSIONS: AtomicU64 = AtomicU64::new(1);

/// One MCP connection: the server's executor and tool list, and the
/// session's [`RunContext`].
///
/// Implements rmcp's [`ServerHandler`]. A call's id (what the tool, events
/// and middleware see) is `mcp-<session>-<request id>`.
pub struct McpSession<S = (), C = ()> {
    shared: Arc<ServerCore<S, C>>,
    run: RunContext<C>,
    number: u64,
    turns: AtomicU32,
    /// The logging level the client set (see [`Link::threshold`]).
    threshold: Arc<AtomicU8>,
    /// Serves one request of a stateless HTTP server: the client cannot be
    /// sent requests or notifications outside that request's answer.
    stateless: bool,
}

impl<S: Shared, C: Shared> McpSession<S, C> {
    pub(crate) fn new(shared: Arc<ServerCore<S, C>>, run: RunContext<C>) -> Self {
        McpSession {
            shared,
            run,
            number: SESSIONS.fetch_add(1, Ordering::Relaxed),
            turns: AtomicU32::new(0),
            threshold: Arc::new(AtomicU8::new(0)),
            stateless: false,
        }
    }

    /// The session of one request of a stateless HTTP server.
    #[cfg_attr(not(feature = "mcp-http"), allow(dead_code))]
    pub(crate) fn stateless(mut self) -> Self {
        self.stateless = true;
        self
    }

    /// The session's run: cancelling it cancels every call of the session.
    pub fn run(&self) -> &RunContext<C> {
        &self.run
    }

    /// Runs one call through the executor, relaying its progress to `route`
    /// and cancelling it when the request is cancelled; its tools' `McpPeer`s
    /// reach the client of `context`.
    async fn execute(
        &self,
        call: ToolCall,
        context: &RequestContext<RoleServer>,
        mut route: Option<Route>,
    ) -> ToolResult {
        let run = self.run.child_scope();
        let turn = Turn::new(self.turns.fetch_add(1, Ordering::Relaxed) + 1);
        let link = Link {
            peer: context.peer.clone(),
            capabilities: context.client_capabilities(),
            protocol: context.protocol_version(),
            threshold: Arc::clone(&self.threshold),
            stateless: self.stateless,
        };
        let executing = link.scope(self.shared.executor.execute(&run, &turn, call));
        tokio::pin!(executing);
        let mut cancelled = false;
        let result = loop {
            tokio::select! {
                biased;
                result = &mut executing => break result,
                _ = context.ct.cancelled(), if !cancelled => {
                    cancelled = true;
                    run.cancel();
                }
                Some(progress) = next_progress(&mut route) => {
                    if let Some(route) = &mut route {
                        let note = route.notification(progress);
                        // A closed transport only loses the notification.
                        let _ = context.peer.notify_progress(note).await;
                    }
                }
            }
        };
        if let Some(route) = &mut route {
            while let Some(progress) = route.try_next() {
                let note = route.notification(progress);
                let _ = context.peer.notify_progress(note).await;
            }
        }
        result
    }
}

async fn next_progress(route: &mut Option<Route>) -> Option<crate::events::Progress> {
    match route {
        Some(route) => route.next().await,
        None => std::future::pending().await,
    }
}

impl<S: Shared, C: Shared> ServerHandler for McpSession<S, C> {
    fn get_info(&self) -> ServerConfig {
        self.shared.info.clone()
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        // The whole list is one page, so no cursor names a page of it.
        if request.is_some_and(|r| r.cursor.is_some()) {
            return Err(ErrorData::invalid_params(
                "unknown cursor: `tools/list` gives every tool on one page, without a cursor",
                None,
            ));
        }
        Ok(self.shared.tools.clone())
    }

    #[allow(deprecated)] // MCP logging, still in 2025-11-25
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.threshold
            .store(threshold_of(request.level), Ordering::Relaxed);
        Ok(())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if let Some(refusal) = context.meta.get(REFUSAL_KEY) {
            return Err(refusal_error(refusal));
        }
        let id = ToolCallId::new(format!("mcp-{}-{}", self.number, context.id));
        // The screened transports pass the arguments as the text the client
        // sent; others hand them over parsed. MCP makes `arguments` optional:
        // absent reads as `{}`, which the input schema then judges like any
        // other arguments.
        let arguments = match context.meta.get(ARGUMENTS_KEY) {
            Some(Value::String(text)) => RawArguments::Text(text.clone()),
            _ => RawArguments::Json(
                request
                    .arguments
                    .map_or_else(|| Value::Object(Map::new()), Value::Object),
            ),
        };
        let call = ToolCall::new(id.clone(), request.name.into_owned(), arguments);
        if let Some(approver) = &self.shared.approver {
            approver.start(&id, &context, request.input_responses, self.stateless);
        }
        let route = context
            .meta
            .get_progress_token()
            .map(|token| self.shared.relay.route(id.clone(), token));
        let result = self.execute(call, &context, route).await;
        let asked = self
            .shared
            .approver
            .as_ref()
            .and_then(|approver| approver.finish(&id));
        if let Some(asked) = asked {
            // The call did not run: it waits for the client's approval,
            // which the client sends with its retry.
            return Ok(InputRequiredResult::from_input_requests(asked).into());
        }
        if result
            .error
            .as_ref()
            .is_some_and(|e| matches!(e.kind(), ErrorKind::UnknownTool))
        {
            return Err(ErrorData::invalid_params(result.text(), None));
        }
        let mut answer: CallToolResult = serde_json::from_value(call_tool_result_bounded(
            &result.message,
            self.shared.max_structured_bytes,
        ))
        .map_err(|e| {
            ErrorData::internal_error(format!("the tool result is not valid MCP: {e}"), None)
        })?;
        // Required from protocol 2026-07-28 on; rmcp removes it for a client
        // that negotiated an older version.
        answer.result_type = Some(ResultType::COMPLETE);
        Ok(answer.into())
    }
}

/// The JSON-RPC error the screen asked for (`{"code", "message"}`).
fn refusal_error(refusal: &Value) -> ErrorData {
    let code = refusal
        .get("code")
        .and_then(Value::as_i64)
        .and_then(|c| i32::try_from(c).ok())
        .map_or(ErrorCode::INVALID_PARAMS, ErrorCode);
    let message = refusal
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("invalid params")
        .to_owned();
    ErrorData::new(code, message, None)
}

impl<S, C> fmt::Debug for McpSession<S, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpSession")
            .field("number", &self.number)
            .field("run", &self.run)
            .finish_non_exhaustive()
    }
}
