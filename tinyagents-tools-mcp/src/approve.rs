//! Approvals over MCP: an [`Approver`] that asks the MCP client of the call
//! through elicitation.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use rmcp::model::{
    ClientResult, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationSchema, InputRequest, RequestMetaObject, ServerRequest,
};
use rmcp::service::{Peer, RequestContext, RoleServer};
use serde_json::{Map, json};

use tinyagents_tools::approval::{ApprovalDecision, ApprovalRequest, Approver};
use tinyagents_tools::ids::ToolCallId;

/// The `_meta` key of an approval elicitation: `{"tool", "fingerprint"}`.
pub const APPROVAL_META_KEY: &str = "dev.tinyagents/approval";

/// Asks the MCP client of a call to approve it, through elicitation.
///
/// Give one clone to a [`ConfirmationPolicy`](tinyagents_tools::policy::ConfirmationPolicy)
/// of the executor and another to
/// [`McpServerBuilder::approver`](crate::McpServerBuilder::approver). When a
/// call needs approval, the client is sent a form elicitation whose message
/// shows what the person approves: the tool and its arguments (masked by
/// the tool's redaction policy and the run's secrets, and cut to 2,000
/// characters), with `{"tool", "fingerprint", "arguments"}` under the
/// request's `_meta` key [`APPROVAL_META_KEY`]. The call runs only when the
/// client answers `accept`; `decline`, `cancel`, an error or no answer
/// within the policy's timeout refuse it, with the reason in the result.
///
/// - A client on a protocol before `2026-07-28` that declared elicitation
///   is sent an `elicitation/create` request while the call waits.
/// - A client on `2026-07-28` or later gets an `input_required` result
///   carrying that elicitation under the key `approve-<fingerprint>` and a
///   sealed `requestState` (see [`McpServerBuilder::request_state_key`](crate::McpServerBuilder::request_state_key)):
///   the call runs when the client calls again with an `accept` under that
///   key and the state. The state is bound to the tool and the arguments'
///   fingerprint, expires, and is accepted once, so an accept holds for
///   exactly one call: an accept sent without the state (a client that was
///   never asked), replayed, or under another call's state is ignored or
///   refused. Nothing is kept between the two requests but the used
///   states' nonces, so this works in stateless mode too.
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
    /// In the call's input rounds (an `input_required` result).
    Rounds,
    /// Not at all.
    Cannot(&'static str),
}

/// The longest arguments text an approval question shows.
const SHOWN_ARGUMENTS: usize = 2000;

impl McpApprover {
    /// An approver with no call in flight.
    pub fn new() -> Self {
        McpApprover::default()
    }

    /// Records how the client of `call` can be asked, for the time of the
    /// call; [`finish`](Self::finish) forgets it.
    pub(crate) fn start(
        &self,
        call: &ToolCallId,
        context: &RequestContext<RoleServer>,
        rounds: bool,
        stateless: bool,
    ) {
        let elicits = context
            .client_capabilities()
            .is_some_and(|c| c.elicitation.is_some());
        let asker = if stateless && !rounds {
            // The server could not send it a request.
            Asker::Cannot(
                "the MCP client cannot be sent an elicitation in stateless mode (the request was \
                 served without a session)",
            )
        } else if !elicits {
            Asker::Cannot("the MCP client did not declare elicitation")
        } else if rounds {
            Asker::Rounds
        } else {
            Asker::Request(context.peer.clone())
        };
        self.lock().insert(call.clone(), asker);
    }

    /// Records that `call` (the body of an MCP task) asks its client in
    /// the task's input requests, or cannot ask it when it did not declare
    /// elicitation.
    pub(crate) fn start_in_rounds(&self, call: &ToolCallId, elicits: bool) {
        let asker = if elicits {
            Asker::Rounds
        } else {
            Asker::Cannot("the MCP client did not declare elicitation")
        };
        self.lock().insert(call.clone(), asker);
    }

    /// Ends `call`.
    pub(crate) fn finish(&self, call: &ToolCallId) {
        self.lock().remove(call);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<ToolCallId, Asker>> {
        self.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The question put to the client about `request`: the tool, and its
/// arguments as the approver may see them.
fn question(request: &ApprovalRequest) -> ElicitRequestParams {
    let mut arguments = request.arguments.clone();
    if let Some(mask) = crate::peer::current().and_then(|link| link.mask) {
        mask(&request.tool, &mut arguments);
    }
    let mut shown = arguments.to_string();
    if shown.len() > SHOWN_ARGUMENTS {
        let mut end = SHOWN_ARGUMENTS;
        while !shown.is_char_boundary(end) {
            end -= 1;
        }
        shown.truncate(end);
        shown.push('…');
    }
    let mut meta = Map::new();
    meta.insert(
        APPROVAL_META_KEY.to_owned(),
        json!({"tool": request.tool, "fingerprint": request.fingerprint, "arguments": shown}),
    );
    ElicitRequestParams::FormElicitationParams {
        meta: Some(RequestMetaObject::from(meta)),
        message: format!(
            "Approve one call of the tool `{}` with these arguments? {shown}\nAccept to run it once. (arguments fingerprint: {})",
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
            let calls = self.lock();
            match calls.get(&request.call_id) {
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
                Some(Asker::Rounds) => None,
                Some(Asker::Request(peer)) => Some(peer.clone()),
            }
        };
        let Some(peer) = peer else {
            return self.in_rounds(request, key);
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

impl McpApprover {
    /// The decision from the call's input rounds: the client's answer to
    /// this very question (under a state this server sealed for this call),
    /// or the question asked now.
    fn in_rounds(&self, request: &ApprovalRequest, key: String) -> ApprovalDecision {
        let Some(rounds) = crate::peer::current().and_then(|link| link.rounds) else {
            return ApprovalDecision::Reject {
                reason: "this call needs approval, and its MCP client cannot be asked".into(),
            };
        };
        if let Some(answer) = rounds.asked_answer(&key) {
            return match serde_json::from_value::<ElicitResult>(answer.clone()) {
                Ok(result) => decide(result.action, &request.tool),
                Err(_) => ApprovalDecision::Reject {
                    reason: "the MCP client's approval answer is not an elicitation result".into(),
                },
            };
        }
        let ask = InputRequest::Elicitation(ElicitRequest::new(question(request)));
        rounds.ask(key, ask);
        ApprovalDecision::Reject {
            reason: "waiting for the MCP client's approval".into(),
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
