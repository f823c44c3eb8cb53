//! What the application answers when a server asks the client for input:
//! an elicitation (a question for the user), sampling (a completion from the
//! application's model) or its roots.
//!
//! A server on protocol 2026-07-28 asks inside the answer to a call (an
//! `input_required` result, or a task waiting for input); an older one
//! sends a request of its own. Both reach the same [`McpInputHandler`], and
//! the client declares to servers the kinds it [`answers`](McpInputHandler::answers).

#![allow(deprecated)] // sampling and roots, deprecated by rmcp but still in MCP

use async_trait::async_trait;
use rmcp::model::{
    ClientCapabilities, ElicitRequestParams, ElicitationAction, InputRequest, InputRequests,
    InputResponses,
};
use serde_json::{Value, json};

use crate::peer::{ElicitAction, Elicitation};
use tinyagents_tools::error::{ErrorClass, ErrorKind, ToolError};
use tinyagents_tools::ids::ToolCallId;

/// At most this many input requests are answered in one round; a server
/// asking for more fails the call.
pub const MAX_INPUT_REQUESTS_PER_ROUND: usize = 16;

/// A kind of input a server may ask the client for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum InputKind {
    /// `elicitation/create`: a question for the user (form mode).
    Elicitation,
    /// `sampling/createMessage`: a completion from the application's model.
    Sampling,
    /// `roots/list`: the directories the application lets servers see.
    Roots,
}

impl InputKind {
    /// `elicitation`, `sampling` or `roots`.
    pub fn as_str(self) -> &'static str {
        match self {
            InputKind::Elicitation => "elicitation",
            InputKind::Sampling => "sampling",
            InputKind::Roots => "roots",
        }
    }
}

impl std::fmt::Display for InputKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a request for input came from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct McpInputContext {
    /// The local name of the imported tool whose call asked, when a call
    /// did (a request an older server sends on its own names no call).
    pub tool: Option<String>,
    /// The id of that call.
    pub call_id: Option<ToolCallId>,
}

/// Why the application gave no answer to a request for input. The call
/// that asked fails (`fatal`), and its message names only the kind of
/// request, never this error's text.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpInputError {
    /// The application does not answer requests of this kind.
    #[error("this client does not answer {0} requests")]
    Unsupported(InputKind),
    /// The application could not answer.
    #[error("the application could not answer the request")]
    Failed(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// Answers the requests for input of the servers an
/// [`McpClient`](super::McpClient) is connected to.
///
/// Every method has a default: elicitations are declined, sampling and
/// roots refused. Implement the ones the application supports and list
/// them in [`answers`](Self::answers), which is what the client declares.
///
/// ```
/// use tinyagents_tools::async_trait;
/// use tinyagents_tools_mcp::client::{InputKind, McpInputContext, McpInputError, McpInputHandler};
/// use tinyagents_tools_mcp::rmcp::model::ElicitRequestParams;
/// use tinyagents_tools_mcp::{ElicitAction, Elicitation};
///
/// struct AlwaysYes;
///
/// #[async_trait]
/// impl McpInputHandler for AlwaysYes {
///     fn answers(&self) -> &[InputKind] {
///         &[InputKind::Elicitation]
///     }
///
///     async fn elicit(
///         &self,
///         _context: &McpInputContext,
///         _request: &ElicitRequestParams,
///     ) -> Result<Elicitation, McpInputError> {
///         Ok(Elicitation { action: ElicitAction::Accept, content: Some(serde_json::json!({})) })
///     }
/// }
/// ```
#[async_trait]
pub trait McpInputHandler: Send + Sync + 'static {
    /// The kinds of request this handler answers; the client declares them
    /// to servers. None by default.
    fn answers(&self) -> &[InputKind] {
        &[]
    }

    /// Answers an elicitation. Declines by default.
    async fn elicit(
        &self,
        context: &McpInputContext,
        request: &ElicitRequestParams,
    ) -> Result<Elicitation, McpInputError> {
        let _ = (context, request);
        Ok(Elicitation {
            action: ElicitAction::Decline,
            content: None,
        })
    }

    /// Answers `sampling/createMessage`: `params` as MCP defines them
    /// (`messages`, `maxTokens`, ...), the answer a `CreateMessageResult`
    /// (`role`, `content`, `model`, ...). Refused by default.
    async fn sample(
        &self,
        context: &McpInputContext,
        params: Value,
    ) -> Result<Value, McpInputError> {
        let _ = (context, params);
        Err(McpInputError::Unsupported(InputKind::Sampling))
    }

    /// Answers `roots/list` with the roots (each `{"uri", "name"}`).
    /// Refused by default.
    async fn roots(&self, context: &McpInputContext) -> Result<Vec<Value>, McpInputError> {
        let _ = context;
        Err(McpInputError::Unsupported(InputKind::Roots))
    }
}

/// The handler of a client given none: declines and refuses everything.
pub(super) struct NoInput;

impl McpInputHandler for NoInput {}

/// `capabilities` with the kinds `handler` answers declared.
pub(super) fn declare(handler: &dyn McpInputHandler, capabilities: &mut ClientCapabilities) {
    for kind in handler.answers() {
        match kind {
            InputKind::Elicitation => {
                capabilities.elicitation = serde_json::from_value(json!({"form": {}})).ok();
            }
            InputKind::Sampling => capabilities.sampling = Some(Default::default()),
            InputKind::Roots => capabilities.roots = Some(Default::default()),
        }
    }
}

/// The kind of `request`, when this client knows it.
fn kind_of(request: &InputRequest) -> Option<InputKind> {
    match request {
        InputRequest::Elicitation(_) => Some(InputKind::Elicitation),
        InputRequest::CreateMessage(_) => Some(InputKind::Sampling),
        InputRequest::ListRoots(_) => Some(InputKind::Roots),
        _ => None,
    }
}

/// `request` answered by `handler`, as its JSON result.
pub(super) async fn ask(
    handler: &dyn McpInputHandler,
    context: &McpInputContext,
    request: &InputRequest,
) -> Result<Value, McpInputError> {
    match request {
        InputRequest::Elicitation(request) => {
            let answer = handler.elicit(context, &request.params).await?;
            Ok(elicit_result(answer))
        }
        InputRequest::CreateMessage(request) => {
            let params = serde_json::to_value(&request.params).unwrap_or(Value::Null);
            handler.sample(context, params).await
        }
        InputRequest::ListRoots(_) => {
            let roots = handler.roots(context).await?;
            Ok(json!({ "roots": roots }))
        }
        _ => Err(McpInputError::Failed(
            "a request for input of an unknown kind".into(),
        )),
    }
}

/// One request of an input round answered by `handler`, or the call's
/// error.
async fn answer_one(
    handler: &dyn McpInputHandler,
    context: &McpInputContext,
    request: &InputRequest,
) -> Result<Value, ToolError> {
    let Some(kind) = kind_of(request) else {
        return Err(ToolError::fatal(
            "the MCP server asked for input of a kind this client does not know",
        ));
    };
    ask(handler, context, request)
        .await
        .map_err(|error| not_answered(kind, error))
}

/// Answers every request of one round, in key order.
pub(super) async fn answer_all(
    handler: &dyn McpInputHandler,
    context: &McpInputContext,
    requests: &InputRequests,
) -> Result<InputResponses, ToolError> {
    if requests.len() > MAX_INPUT_REQUESTS_PER_ROUND {
        return Err(ToolError::fatal(format!(
            "the MCP server asked for {} inputs at once; at most {MAX_INPUT_REQUESTS_PER_ROUND} are answered",
            requests.len()
        )));
    }
    let mut responses = InputResponses::new();
    for (key, request) in requests {
        responses.insert(key.clone(), answer_one(handler, context, request).await?);
    }
    Ok(responses)
}

fn elicit_result(answer: Elicitation) -> Value {
    let action = match answer.action {
        ElicitAction::Accept => ElicitationAction::Accept,
        ElicitAction::Decline => ElicitationAction::Decline,
        ElicitAction::Cancel => ElicitationAction::Cancel,
    };
    let mut result = json!({ "action": action });
    if let (ElicitAction::Accept, Some(content)) = (answer.action, answer.content) {
        result["content"] = content;
    }
    result
}

/// The call's error when the application gave no answer: fatal, naming the
/// kind of request only.
fn not_answered(kind: InputKind, error: McpInputError) -> ToolError {
    let message = match &error {
        McpInputError::Unsupported(_) => {
            format!("the MCP server asked for {kind}, which this client does not provide")
        }
        _ => format!("the MCP server asked for {kind}, and the application could not answer"),
    };
    ToolError::new(ErrorClass::Fatal, ErrorKind::Tool, message).with_source(error)
}
