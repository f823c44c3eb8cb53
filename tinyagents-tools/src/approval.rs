//! Approvals: what an approver is asked ([`ApprovalRequest`]), what it
//! answers ([`ApprovalDecision`]), the decision kept for a call
//! ([`ApprovalRecord`]) and how far it reaches ([`GrantScope`]).
//!
//! These are plain data, serializable in one JSON form (times as
//! milliseconds since the Unix epoch), so that a request can wait in a
//! journal for days and a decision can come from another process. The
//! [`ConfirmationPolicy`](crate::policy::ConfirmationPolicy) asks, and the
//! [`journal`](crate::journal) keeps what it asked.

use std::sync::Arc;
use std::time::SystemTime;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::hash::canonical_hash;
use crate::ids::{RunId, ToolCallId};

/// Why a call needs approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalReason {
    /// The tool declares `requires_confirmation`.
    RequiresConfirmation,
    /// The tool spends money, and spending is not allowed without approval.
    Spend,
    /// The tool runs shell commands, and that is not allowed without approval.
    Shell,
}

/// What an approver is asked.
///
/// Its JSON form:
/// `{"run_id", "turn", "call_id", "tool", "arguments", "fingerprint",
/// "reasons": ["requires_confirmation", ...], "expires_at": ms | null}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalRequest {
    /// The run.
    pub run_id: RunId,
    /// The turn's index ([`Turn::index`](crate::Turn::index)).
    pub turn: u32,
    /// The call.
    pub call_id: ToolCallId,
    /// The tool's canonical name.
    pub tool: String,
    /// The validated arguments, as the approver may see them: masked by
    /// the tool's redaction policy and the run's secrets when the request
    /// is kept in a journal.
    pub arguments: Value,
    /// SHA-256 of the canonical tool name and arguments
    /// ([`approval_fingerprint`]): the decision holds for exactly these.
    pub fingerprint: String,
    /// Why approval is needed.
    pub reasons: Vec<ApprovalReason>,
    /// When an undecided request lapses (a call still waiting then is
    /// answered as not approved); `None`: it waits until decided.
    #[serde(default, with = "unix_ms_opt")]
    pub expires_at: Option<SystemTime>,
}

impl ApprovalRequest {
    /// The id a journal files this request under: the same for the same
    /// run, turn and call, on every instance.
    pub fn approval_id(&self) -> String {
        approval_id(&self.run_id, self.turn, &self.call_id)
    }
}

/// The id of the approval for call `call` of turn `turn` in run `run`.
pub fn approval_id(run: &RunId, turn: u32, call: &ToolCallId) -> String {
    let digest = canonical_hash(&json!([run.as_str(), turn, call.as_str()]));
    format!("apr_{}", &digest[..24])
}

/// An approver's answer.
///
/// Its JSON form: `{"decision": "approve"}`, `{"decision": "reject",
/// "reason": ...}`, `{"decision": "edit", "arguments": {...}}` or
/// `{"decision": "defer"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum ApprovalDecision {
    /// Run the call as it is.
    Approve,
    /// Do not run it; `reason` is shown to the model.
    Reject {
        /// Why, for the model.
        reason: String,
    },
    /// Run it with these arguments instead (validated again).
    Edit {
        /// The new arguments.
        arguments: Value,
    },
    /// Not now: a person decides later. With a
    /// [journal](crate::executor::ToolExecutorBuilder::journal) the call ends
    /// `pending_approval` and its request waits there; without one there is
    /// nowhere to wait, and the call is refused.
    Defer,
}

/// Decides on calls that need approval: a UI prompt, a rule engine, a queue
/// a person answers.
#[async_trait]
pub trait Approver: Send + Sync + 'static {
    /// Reviews one call.
    async fn review(&self, request: &ApprovalRequest) -> ApprovalDecision;
}

/// A shared approver: the application keeps a handle on it.
#[async_trait]
impl<T: Approver + ?Sized> Approver for Arc<T> {
    async fn review(&self, request: &ApprovalRequest) -> ApprovalDecision {
        (**self).review(request).await
    }
}

/// How far a recorded approval reaches.
///
/// A decision an approver gives holds for one call: its run, its turn, its
/// call id, its tool and the canonical fingerprint of its arguments
/// ([`GrantScope::Call`]). Anything wider is a standing grant the
/// application makes on purpose with
/// [`ConfirmationPolicy::grant_standing`](crate::policy::ConfirmationPolicy::grant_standing)
/// or [`Journal::grant_standing`](crate::journal::Journal::grant_standing).
///
/// Its JSON form: `{"scope": "call"}`, `{"scope": "run", "run_id": ...}` or
/// `{"scope": "all_runs"}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "scope", rename_all = "snake_case")]
#[non_exhaustive]
pub enum GrantScope {
    /// One call: the run, turn, call id, tool and argument fingerprint must
    /// all match.
    Call,
    /// Every call of the tool in one run (for the fingerprinted arguments
    /// only, when the grant names arguments).
    Run {
        /// The run.
        run_id: RunId,
    },
    /// Every call of the tool in every run served by this policy (for the
    /// fingerprinted arguments only, when the grant names arguments).
    AllRuns,
}

impl GrantScope {
    /// A grant for every call of the tool in run `run`.
    pub fn run(run: impl Into<RunId>) -> Self {
        GrantScope::Run { run_id: run.into() }
    }

    /// A short name for events and logs: `call`, `run` or `all_runs`.
    pub fn as_str(&self) -> &'static str {
        match self {
            GrantScope::Call => "call",
            GrantScope::Run { .. } => "run",
            GrantScope::AllRuns => "all_runs",
        }
    }

    /// True when the grant covers a call of run `run`.
    pub fn covers_run(&self, run: &RunId) -> bool {
        match self {
            GrantScope::Run { run_id } => run_id == run,
            GrantScope::AllRuns => true,
            GrantScope::Call => false,
        }
    }
}

/// A recorded decision.
///
/// Its JSON form: `{"tool", "fingerprint", "approved", "reason"?,
/// "scope": {...}, "at": ms}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovalRecord {
    /// The tool.
    pub tool: String,
    /// The fingerprint of the arguments the decision holds for (after an
    /// edit, the edited arguments).
    pub fingerprint: String,
    /// True when the call may run.
    pub approved: bool,
    /// The rejection reason, when rejected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// How far the decision reaches: [`GrantScope::Call`] for an approver's
    /// answer or a [`pre_approve`](crate::policy::ConfirmationPolicy::pre_approve), the
    /// grant's scope when a standing grant let the call run.
    pub scope: GrantScope,
    /// When the decision was recorded.
    #[serde(with = "unix_ms")]
    pub at: SystemTime,
}

impl ApprovalDecision {
    /// `approve`, `reject`, `edit` or `defer`.
    pub fn name(&self) -> &'static str {
        match self {
            ApprovalDecision::Approve => "approve",
            ApprovalDecision::Reject { .. } => "reject",
            ApprovalDecision::Edit { .. } => "edit",
            ApprovalDecision::Defer => "defer",
        }
    }
}

/// The fingerprint of `tool` called with `arguments`.
pub fn approval_fingerprint(tool: &str, arguments: &Value) -> String {
    canonical_hash(&json!({"tool": tool, "arguments": arguments}))
}

/// Milliseconds since the Unix epoch (0 for earlier times).
pub(crate) fn to_unix_ms(at: SystemTime) -> i64 {
    at.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// The time `ms` milliseconds after the Unix epoch.
pub(crate) fn from_unix_ms(ms: i64) -> SystemTime {
    SystemTime::UNIX_EPOCH + std::time::Duration::from_millis(u64::try_from(ms).unwrap_or(0))
}

/// A [`SystemTime`] as milliseconds since the Unix epoch.
pub(crate) mod unix_ms {
    use std::time::SystemTime;

    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(at: &SystemTime, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_i64(super::to_unix_ms(*at))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<SystemTime, D::Error> {
        i64::deserialize(d).map(super::from_unix_ms)
    }
}

/// An optional [`SystemTime`] as milliseconds since the Unix epoch or `null`.
pub(crate) mod unix_ms_opt {
    use std::time::SystemTime;

    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(
        at: &Option<SystemTime>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match at {
            Some(at) => s.serialize_some(&super::to_unix_ms(*at)),
            None => s.serialize_none(),
        }
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<SystemTime>, D::Error> {
        Option::<i64>::deserialize(d).map(|ms| ms.map(super::from_unix_ms))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_round_trips_through_its_documented_json_form() {
        let request = ApprovalRequest {
            run_id: RunId::new("run-1"),
            turn: 2,
            call_id: ToolCallId::new("c1"),
            tool: "delete_note".into(),
            arguments: json!({"id": 7}),
            fingerprint: approval_fingerprint("delete_note", &json!({"id": 7})),
            reasons: vec![ApprovalReason::RequiresConfirmation],
            expires_at: Some(from_unix_ms(1_700_000_000_000)),
        };
        let text = serde_json::to_value(&request).unwrap();
        assert_eq!(text["reasons"], json!(["requires_confirmation"]));
        assert_eq!(text["expires_at"], json!(1_700_000_000_000_i64));
        assert_eq!(text["run_id"], json!("run-1"));
        let back: ApprovalRequest = serde_json::from_value(text).unwrap();
        assert_eq!(back, request);
        assert!(request.approval_id().starts_with("apr_"));
        assert_eq!(request.approval_id().len(), 28);
    }

    #[test]
    fn decisions_and_scopes_have_a_tagged_json_form() {
        let edit = ApprovalDecision::Edit {
            arguments: json!({"id": 8}),
        };
        assert_eq!(
            serde_json::to_value(&edit).unwrap(),
            json!({"decision": "edit", "arguments": {"id": 8}})
        );
        let scope = GrantScope::run("r1");
        assert_eq!(
            serde_json::to_value(&scope).unwrap(),
            json!({"scope": "run", "run_id": "r1"})
        );
        let back: GrantScope = serde_json::from_value(json!({"scope": "all_runs"})).unwrap();
        assert_eq!(back, GrantScope::AllRuns);
    }
}
