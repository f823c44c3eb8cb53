//! The executor's answer to one call: [`ToolResult`] for the application,
//! carrying the canonical [`ToolMessage`] every provider formats from.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ArtifactRef, ContentBlock};
use crate::approval::ApprovalRequest;
use crate::error::ToolError;
use crate::ids::{CallName, ToolCallId};

/// The answer to one tool call, as the executor hands it to the application:
/// the canonical [`ToolMessage`] for the model, and what only the
/// application sees (the error's class, artifacts, timings).
///
/// A `ToolResult` dereferences to its [`message`](Self::message), so
/// `result.is_error`, `result.content` and `result.text()` read the
/// message, and every result formatter of [`providers`](crate::providers)
/// takes `&result` as well as `&result.message`.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    /// What the model is sent: the call's id, the name as called, the
    /// bounded and redacted content, the structured value and whether the
    /// call failed.
    pub message: ToolMessage,
    /// References to stored artifacts.
    pub artifacts: Vec<ArtifactRef>,
    /// The classified error, when the call failed or was refused.
    pub error: Option<ToolError>,
    /// Provider-specific data to send back with the result (for example a
    /// Gemini thought signature), passed through untouched.
    pub provider_metadata: Option<Value>,
    /// The call's own time: wall time from receipt of the call to its
    /// answer, less [`waited`](Self::waited). A slow approver or a full
    /// batch never shows here.
    pub elapsed: Duration,
    /// Time the call spent waiting rather than running: in its batch's
    /// queue for a place among the calls in flight, for a concurrency
    /// permit (`sequential`, a tool's `max_concurrency`) and in `before_tool`
    /// middleware (an approver deciding). Measured on tokio's clock, so a
    /// paused test clock (`tokio::time::pause`) shows it.
    pub waited: Duration,
    /// Set when the call waits for a person's decision: the request kept in
    /// the executor's [journal](crate::journal) (arguments masked). The
    /// call has not run and has no answer yet: keep the turn open and
    /// [resume](crate::ToolExecutor::resume) the run once it is decided;
    /// its message is only a placeholder, not for the model.
    pub pending: Option<Box<ApprovalRequest>>,
}

impl ToolResult {
    /// The result that answers with `message`, with no error, artifact or
    /// timing of its own.
    pub fn new(message: ToolMessage) -> Self {
        ToolResult {
            message,
            artifacts: Vec::new(),
            error: None,
            provider_metadata: None,
            elapsed: Duration::ZERO,
            waited: Duration::ZERO,
            pending: None,
        }
    }

    /// The result of a call that waits for approval `request`: not run,
    /// not refused.
    pub fn pending_approval(
        tool_call_id: ToolCallId,
        name: impl Into<CallName>,
        request: ApprovalRequest,
    ) -> Self {
        let text = format!(
            "awaiting approval {}: the call has not run",
            request.approval_id()
        );
        let message = ToolMessage {
            tool_call_id,
            name: name.into(),
            content: vec![ContentBlock::text(text)],
            structured: None,
            is_error: false,
        };
        ToolResult {
            pending: Some(Box::new(request)),
            ..ToolResult::new(message)
        }
    }

    /// True when the call waits for a decision ([`pending`](Self::pending)).
    pub fn is_pending(&self) -> bool {
        self.pending.is_some()
    }

    /// The id of the approval the call waits for, when it waits.
    pub fn approval_id(&self) -> Option<String> {
        self.pending.as_ref().map(|r| r.approval_id())
    }

    /// A failed result for `tool_call_id` carrying `error` (its message is the
    /// content).
    pub fn from_error(
        tool_call_id: ToolCallId,
        name: impl Into<CallName>,
        error: ToolError,
        elapsed: Duration,
    ) -> Self {
        let message = ToolMessage {
            tool_call_id,
            name: name.into(),
            content: vec![ContentBlock::text(error.message())],
            structured: None,
            is_error: true,
        };
        ToolResult {
            error: Some(error),
            elapsed,
            ..ToolResult::new(message)
        }
    }

    /// `"pending_approval"` for a call waiting for a decision, `"ok"` for a
    /// success, otherwise the error's kind
    /// (`"invalid_arguments"`, `"timeout"`, `"denied"`, ...): one word for
    /// logs, metrics and tests.
    pub fn outcome(&self) -> &'static str {
        if self.pending.is_some() {
            return "pending_approval";
        }
        self.error.as_ref().map_or("ok", |e| e.kind().as_str())
    }

    /// A copy of the canonical message to send back to the model.
    pub fn to_message(&self) -> ToolMessage {
        self.message.clone()
    }

    /// The canonical message to send back to the model.
    pub fn into_message(self) -> ToolMessage {
        self.message
    }
}

impl std::ops::Deref for ToolResult {
    type Target = ToolMessage;

    fn deref(&self) -> &ToolMessage {
        &self.message
    }
}

impl std::ops::DerefMut for ToolResult {
    fn deref_mut(&mut self) -> &mut ToolMessage {
        &mut self.message
    }
}

impl AsRef<ToolMessage> for ToolResult {
    fn as_ref(&self) -> &ToolMessage {
        &self.message
    }
}

/// The provider-neutral message that answers a tool call in the
/// conversation: what every result formatter of
/// [`providers`](crate::providers) and the MCP server send, and nothing the
/// model must not see.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolMessage {
    /// The call this answers.
    pub tool_call_id: ToolCallId,
    /// The tool name as called.
    pub name: CallName,
    /// Model-facing content, bounded and redacted by the executor.
    pub content: Vec<ContentBlock>,
    /// The whole structured value, when the tool returned data (redacted,
    /// not bounded): providers that take data (Gemini's `response`, MCP's
    /// `structuredContent`) send it when it is small, and the content
    /// otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured: Option<Value>,
    /// True when the call failed or was refused.
    pub is_error: bool,
}

impl ToolMessage {
    /// The content as one text (blocks joined by newlines).
    pub fn text(&self) -> String {
        self.content
            .iter()
            .map(ContentBlock::to_text)
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl AsRef<ToolMessage> for ToolMessage {
    fn as_ref(&self) -> &ToolMessage {
        self
    }
}
