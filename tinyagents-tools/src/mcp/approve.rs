//! Approvals over MCP: an [`Approver`] that asks the MCP client of the call
//! through elicitation.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use rmcp::model::{
    ClientResult, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationSchema, InputRequest, InputRequests, InputResponses, ProtocolVersion,
    RequestMetaObject, ServerRequest,
};
use rmcp::service::{Peer, RequestContext, RoleServer};
use serde_json::{Map, json};

use crate::ids::ToolCallId;
use crate::policy::{ApprovalDecision, ApprovalRequest, Approver};

/// The `_meta` key of an approval elicitation: `{"tool", "fingerprint"}`.
pub const APPROVAL_META_KEY: &str = "dev.tinyagents/approval";

/// Asks the MCP client of a call to approve it, through elicitation.
///
/// Give one clone to a [`ConfirmationPolicy`](crate::policy::ConfirmationPolicy)
/// of the executor and another to
/// [`McpServerBuilder::approver`](super::McpServerBuilder::approver). When a
/// call needs approval, the client is sent a form elicitation whose message
/// names the tool and the argument fingerprint
/// ([`approval_fingerprint`](crate::policy::approval_fingerprint)), also
/// given as `{"tool", "fingerprint"}` under the request's `_meta` key
/// [`APPROVAL_META_KEY`]. The call runs only when the client answers
/// `accept`; `decline`, `cancel`, an error or no answer within the policy's
/// timeout refuse it, with the reason in the result.
///
/// - A client on a protocol before `2026-07-28` that declared elicitation
///   is sent an `elicitation/create` request while the call waits.
/// - A client on `2026-07-28` or later gets an `input_required` result
///   carrying that elicitation under the key `approve-<fingerprint>`, and the
///   call runs when the client retries it with an `accept` under that key
///   (rmcp's client does this by itself). Nothing is kept between the two
///   requests, so this works in stateless mode too.
/// - A client that did not declare elicitation, or one served in stateless
///   mode on an older protocol (the server cannot send it requests), is
///   refused: the call does not run.
#[derive(Clone, Default)]
pub struct McpApprover {
    calls: Arc<Mutex<HashMap<ToolCallId, Asker>>>,
}

/// How the client of one call is asked.
pub(crate) enum Asker {
    /// With an `elicitation/create` request to this peer.
    Request(Peer<RoleServer>),
    /// With an `input_required` result; holds the answers the client sent
    /// with this attempt, and the question to ask, once asked.
    Rounds {
        answers: InputResponses,
        asked: Option<InputRequests>,
    },
    /// Not at all.
    Cannot(&'static str),
}

impl McpApprover {
    /// An approver with no call in flight.
    pub fn new() -> Self {
        McpApprover::default()
    }

    /// Records how the client of `call` can be asked, for the time of the
    /// call; [`finish`](Self::finish) takes it back.
    pub(crate) fn start(
        &self,
        call: &ToolCallId,
        context: &RequestContext<RoleServer>,
        answers: Option<InputResponses>,
        stateless: bool,
    ) {
        let elicits = context
            .client_capabilities()
            .is_some_and(|c| c.elicitation.is_some());
        let rounds = context
            .protocol_version()
            .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
        let asker = if stateless && !rounds {
            // The server could not send it a request.
            Asker::Cannot(
                "the MCP client cannot be sent an elicitation in stateless mode (the request was \
                 served without a session)",
            )
        } else if !elicits {
            Asker::Cannot("the MCP client did not declare elicitation")
        } else if rounds {
            Asker::Rounds {
                answers: answers.unwrap_or_default(),
                asked: None,
            }
        } else {
            Asker::Request(context.peer.clone())
        };
        self.lock().insert(call.clone(), asker);
    }

    /// Ends `call`; returns the questions for the client when the call
    /// waits for its input.
    pub(crate) fn finish(&self, call: &ToolCallId) -> Option<InputRequests> {
        match self.lock().remove(call) {
            Some(Asker::Rounds { asked, .. }) => asked,
            _ => None,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<ToolCallId, Asker>> {
        self.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The question put to the client about `request`.
fn question(request: &ApprovalRequest) -> ElicitRequestParams {
    let mut meta = Map::new();
    meta.insert(
        APPROVAL_META_KEY.to_owned(),
        json!({"tool": request.tool, "fingerprint": request.fingerprint}),
    );
    ElicitRequestParams::FormElicitationParams {
        meta: Some(RequestMetaObject::from(meta)),
        message: format!(
            "Approve a call of the tool `{}`? Accept to run it. (arguments fingerprint: {})",
            request.tool, request.fingerprint
        ),
        requested_schema: ElicitationSchema::builder()
            .title("Approve this call")
            .build()
            .unwrap_or_else(|_| ElicitationSchema::new(Default::default())),
    }
}

fn decide(action: ElicitationAction, tool: &str) -> ApprovalDecision {
    match action {
        ElicitationAction::Accept => ApprovalDecision::Approve,
        ElicitationAction::Decline => ApprovalDecision::Reject {
            reason: format!("the MCP client declined the call of `{tool}`"),
        },
        _ => ApprovalDecision::Reject {
            reason: format!("the MCP client did not accept the call of `{tool}`"),
        },
    }
}

#[async_trait]
impl Approver for McpApprover {
    async fn review(&self, request: &ApprovalRequest) -> ApprovalDecision {
        let key = format!("approve-{}", request.fingerprint);
        let peer = {
            let mut calls = self.lock();
            match calls.get_mut(&request.call_id) {
                None => {
                    return ApprovalDecision::Reject {
                        reason: "this call needs approval, and it did not come from an MCP \
                                 client that can be asked"
                            .into(),
                    };
                }
                Some(Asker::Cannot(why)) => {
                    return ApprovalDecision::Reject {
                        reason: format!("this call needs approval, and {why}"),
                    };
                }
                Some(Asker::Rounds { answers, asked }) => {
                    if let Some(answer) = answers.get(&key) {
                        return match serde_json::from_value::<ElicitResult>(answer.clone()) {
                            Ok(result) => decide(result.action, &request.tool),
                            Err(_) => ApprovalDecision::Reject {
                                reason: "the MCP client's approval answer is not an \
                                         elicitation result"
                                    .into(),
                            },
                        };
                    }
                    let ask = InputRequest::Elicitation(ElicitRequest::new(question(request)));
                    asked.get_or_insert_with(Default::default).insert(key, ask);
                    return ApprovalDecision::Reject {
                        reason: "waiting for the MCP client's approval".into(),
                    };
                }
                Some(Asker::Request(peer)) => peer.clone(),
            }
        };
        let ask = ServerRequest::ElicitRequest(ElicitRequest::new(question(request)));
        match peer.send_request(ask).await {
            Ok(ClientResult::ElicitResult(result)) => decide(result.action, &request.tool),
            Ok(_) => ApprovalDecision::Reject {
                reason: "the MCP client answered the approval with something else".into(),
            },
            Err(e) => ApprovalDecision::Reject {
                reason: format!("the MCP client could not be asked for approval: {e}"),
            },
        }
    }
}

impl fmt::Debug for McpApprover {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpApprover")
            .field("calls", &self.lock().len())
            .finish()
    }
}
