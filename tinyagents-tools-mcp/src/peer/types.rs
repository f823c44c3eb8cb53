//! What [`McpPeer`](super::McpPeer) takes and gives: log levels, sampling
//! and elicitation answers, and its errors.

#![allow(deprecated)]

use std::time::Duration;

use rmcp::model::{ElicitResult, ElicitationAction, LoggingLevel};
use rmcp::service::ServiceError;
use serde_json::Value;

use tinyagents_tools::error::{ErrorClass, ErrorKind, ToolError};

/// The severity of a log message, from least to most severe (MCP's syslog
/// levels).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogLevel {
    /// Detailed debugging information.
    Debug,
    /// Normal operation.
    Info,
    /// Normal but significant.
    Notice,
    /// A warning.
    Warning,
    /// An error.
    Error,
    /// A critical condition.
    Critical,
    /// Action must be taken at once.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LogLevel {
    /// 0 for `Debug` up to 7 for `Emergency`.
    pub(crate) fn rank(self) -> u8 {
        self as u8
    }
}

/// The client model's answer to a sampling request.
#[derive(Debug, Clone, PartialEq)]
pub struct Sampled {
    /// The text of the answer (text blocks joined by newlines; empty when
    /// the model answered with no text).
    pub text: String,
    /// The model that answered, as the client names it.
    pub model: String,
    /// Why the model stopped (`endTurn`, `maxTokens`, ...), when given.
    pub stop_reason: Option<String>,
}

impl Sampled {
    /// Reads a `CreateMessageResult` as JSON.
    pub(crate) fn from_result(result: &Value) -> Self {
        let content = &result["content"];
        let blocks = match content {
            Value::Array(blocks) => blocks.iter().collect(),
            block => vec![block],
        };
        let text = blocks
            .into_iter()
            .filter(|b| b["type"] == "text")
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n");
        Sampled {
            text,
            model: result["model"].as_str().unwrap_or_default().to_owned(),
            stop_reason: result["stopReason"].as_str().map(str::to_owned),
        }
    }
}

/// What the client's user did with an elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElicitAction {
    /// Submitted the form: the content holds the answers.
    Accept,
    /// Refused to answer.
    Decline,
    /// Dismissed the question without choosing.
    Cancel,
}

impl ElicitAction {
    /// `accept`, `decline` or `cancel`, as MCP writes them.
    pub fn as_str(self) -> &'static str {
        match self {
            ElicitAction::Accept => "accept",
            ElicitAction::Decline => "decline",
            ElicitAction::Cancel => "cancel",
        }
    }
}

/// The client's answer to an elicitation.
#[derive(Debug, Clone, PartialEq)]
pub struct Elicitation {
    /// What the user did.
    pub action: ElicitAction,
    /// The answers (an object matching the requested schema) when the user
    /// accepted.
    pub content: Option<Value>,
}

impl Elicitation {
    pub(crate) fn from_result(result: &ElicitResult) -> Self {
        let action = match result.action {
            ElicitationAction::Accept => ElicitAction::Accept,
            ElicitationAction::Decline => ElicitAction::Decline,
            _ => ElicitAction::Cancel,
        };
        Elicitation {
            action,
            content: result.content.clone(),
        }
    }
}

/// Why an [`McpPeer`](super::McpPeer) request or notification failed.
///
/// Converts into a classified [`ToolError`] (so a tool can use `?`):
/// [`Timeout`](Self::Timeout) is a `retry`-class timeout,
/// [`Cancelled`](Self::Cancelled) a cancellation, and the rest `fatal`
/// errors whose model-facing text never includes the client's own words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum McpPeerError {
    /// The call did not come from an MCP client.
    #[error("the call did not come from an MCP client")]
    NotConnected,
    /// The call came from an MCP client the server cannot send messages to.
    #[error("the MCP client cannot be reached: {0}")]
    Unreachable(&'static str),
    /// The client did not declare the capability (`sampling`,
    /// `elicitation`).
    #[error("the MCP client did not declare {0}")]
    Unsupported(&'static str),
    /// The request is not one MCP allows (for example an elicitation schema
    /// with nested objects); nothing was sent.
    #[error("not a valid MCP request: {0}")]
    InvalidRequest(String),
    /// The client did not answer in time; it was told the request is
    /// cancelled.
    #[error("the MCP client did not answer within {} ms", .0.as_millis())]
    Timeout(Duration),
    /// The call was cancelled while waiting; the client was told.
    #[error("the call was cancelled while waiting for the MCP client")]
    Cancelled,
    /// The client answered with an error.
    #[error("the MCP client refused the request: {0}")]
    Refused(String),
    /// The client answered with something else than the request asks for.
    #[error("the MCP client's answer does not fit the request")]
    UnexpectedAnswer,
    /// The connection to the client closed.
    #[error("the connection to the MCP client is closed")]
    Closed,
    /// The client is asked in input rounds (protocol 2026-07-28) and has
    /// not answered yet: the call ends with an `input_required` result
    /// asking it, and the tool runs again with the answer when the client
    /// calls again. A tool passes this error on (`?`).
    #[error("waiting for the MCP client's input")]
    InputRequired,
    /// The client's answer does not fit what was asked (an elicitation
    /// answer outside its form, a roots result without roots).
    #[error("the MCP client's answer is refused: {0}")]
    InvalidAnswer(String),
    /// [`escalate`](super::McpPeer::escalate) could not make the call a
    /// task: the task store failed, or the request ended first. The call
    /// is cancelled.
    #[error("the call could not become an MCP task")]
    TaskNotCreated,
}

impl From<McpPeerError> for ToolError {
    fn from(error: McpPeerError) -> Self {
        let message = match &error {
            McpPeerError::Timeout(after) => {
                return ToolError::new(
                    ErrorClass::Retry,
                    ErrorKind::Timeout { after: *after },
                    error.to_string(),
                )
                .with_source(error);
            }
            McpPeerError::Cancelled => return ToolError::cancelled().with_source(error),
            McpPeerError::InputRequired => {
                return ToolError::retry(error.to_string()).with_source(error);
            }
            McpPeerError::Refused(_) => "the MCP client refused the request".to_owned(),
            McpPeerError::InvalidRequest(_) => {
                "the tool made a request MCP does not allow".to_owned()
            }
            other => other.to_string(),
        };
        ToolError::fatal(message).with_source(error)
    }
}

/// The parameters of a one-message sampling request.
pub(super) fn sampling(prompt: &str, max_tokens: u32) -> Value {
    serde_json::json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
        "maxTokens": max_tokens,
    })
}

/// An accepted elicitation's content checked against the form it answers:
/// content that does not fit is refused, the tool told why.
pub(super) fn checked(answer: Elicitation, schema: &Value) -> Result<Elicitation, McpPeerError> {
    if answer.action != ElicitAction::Accept {
        return Ok(answer);
    }
    let content = answer
        .content
        .clone()
        .unwrap_or(Value::Object(Default::default()));
    let validator = jsonschema::validator_for(schema)
        .map_err(|e| McpPeerError::InvalidRequest(e.to_string()))?;
    let problems: Vec<String> = validator
        .iter_errors(&content)
        .take(5)
        .map(|e| {
            let at = e.instance_path().to_string();
            if at.is_empty() {
                e.to_string()
            } else {
                format!("`{at}`: {e}")
            }
        })
        .collect();
    if problems.is_empty() {
        Ok(answer)
    } else {
        Err(McpPeerError::InvalidAnswer(format!(
            "the answer does not fit the form: {}",
            problems.join("; ")
        )))
    }
}

impl From<LogLevel> for LoggingLevel {
    fn from(level: LogLevel) -> Self {
        match level {
            LogLevel::Debug => LoggingLevel::Debug,
            LogLevel::Info => LoggingLevel::Info,
            LogLevel::Notice => LoggingLevel::Notice,
            LogLevel::Warning => LoggingLevel::Warning,
            LogLevel::Error => LoggingLevel::Error,
            LogLevel::Critical => LoggingLevel::Critical,
            LogLevel::Alert => LoggingLevel::Alert,
            LogLevel::Emergency => LoggingLevel::Emergency,
        }
    }
}

/// The threshold value a session keeps for the level a client set.
pub(crate) fn threshold_of(level: LoggingLevel) -> u8 {
    let level = match level {
        LoggingLevel::Debug => LogLevel::Debug,
        LoggingLevel::Info => LogLevel::Info,
        LoggingLevel::Notice => LogLevel::Notice,
        LoggingLevel::Warning => LogLevel::Warning,
        LoggingLevel::Error => LogLevel::Error,
        LoggingLevel::Critical => LogLevel::Critical,
        LoggingLevel::Alert => LogLevel::Alert,
        LoggingLevel::Emergency => LogLevel::Emergency,
    };
    level.rank() + 1
}

impl McpPeerError {
    pub(super) fn from_service(error: ServiceError, timeout: Duration) -> Self {
        match error {
            ServiceError::McpError(e) => McpPeerError::Refused(e.message.into_owned()),
            ServiceError::Timeout { .. } => McpPeerError::Timeout(timeout),
            ServiceError::Cancelled { .. } => McpPeerError::Cancelled,
            ServiceError::UnexpectedResponse => McpPeerError::UnexpectedAnswer,
            _ => McpPeerError::Closed,
        }
    }
}
