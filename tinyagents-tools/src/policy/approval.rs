//! What an approver is asked, what it answers, and how far a recorded
//! decision reaches.

use std::time::SystemTime;

use async_trait::async_trait;
use serde_json::{Value, json};

use crate::hash::canonical_hash;
use crate::ids::{RunId, ToolCallId};

/// Why a call needs approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ApprovalReason {
    /// The tool declares `requires_confirmation`.
    RequiresConfirmation,
    /// The tool spends money, and spending is not allowed without approval.
    Spend,
    /// The tool runs shell commands, and that is not allowed without approval.
    Shell,
}

/// What an approver is asked.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalRequest {
    /// The run.
    pub run_id: RunId,
    /// The turn's index ([`Turn::index`](crate::Turn::index)).
    pub turn: u32,
    /// The call.
    pub call_id: ToolCallId,
    /// The tool's canonical name.
    pub tool: String,
    /// The validated arguments.
    pub arguments: Value,
    /// SHA-256 of the canonical tool name and arguments.
    pub fingerprint: String,
    /// Why approval is needed.
    pub reasons: Vec<ApprovalReason>,
}

/// An approver's answer.
#[derive(Debug, Clone, PartialEq)]
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
}

/// Decides on calls that need approval: a UI prompt, a rule engine, a queue
/// a person answers.
#[async_trait]
pub trait Approver: Send + Sync + 'static {
    /// Reviews one call.
    async fn review(&self, request: &ApprovalRequest) -> ApprovalDecision;
}

/// How far a recorded approval reaches.
///
/// A decision an approver gives holds for one call: its run, its turn, its
/// call id, its tool and the canonical fingerprint of its arguments
/// ([`GrantScope::Call`]). Anything wider is a standing grant the
/// application makes on purpose with [`ConfirmationPolicy::grant_standing`](super::ConfirmationPolicy::grant_standing).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum GrantScope {
    /// One call: the run, turn, call id, tool and argument fingerprint must
    /// all match.
    Call,
    /// Every call of the tool in one run (for the fingerprinted arguments
    /// only, when the grant names arguments).
    Run(RunId),
    /// Every call of the tool in every run served by this policy (for the
    /// fingerprinted arguments only, when the grant names arguments).
    AllRuns,
}

impl GrantScope {
    /// A short name for events and logs: `call`, `run` or `all_runs`.
    pub fn as_str(&self) -> &'static str {
        match self {
            GrantScope::Call => "call",
            GrantScope::Run(_) => "run",
            GrantScope::AllRuns => "all_runs",
        }
    }
}

/// A recorded decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalRecord {
    /// The tool.
    pub tool: String,
    /// The fingerprint of the arguments the decision holds for (after an
    /// edit, the edited arguments).
    pub fingerprint: String,
    /// True when the call may run.
    pub approved: bool,
    /// The rejection reason, when rejected.
    pub reason: Option<String>,
    /// How far the decision reaches: [`GrantScope::Call`] for an approver's
    /// answer or a [`pre_approve`](super::ConfirmationPolicy::pre_approve), the
    /// grant's scope when a standing grant let the call run.
    pub scope: GrantScope,
    /// When the decision was recorded.
    pub at: SystemTime,
}

impl ApprovalDecision {
    /// `approve`, `reject` or `edit`.
    pub fn name(&self) -> &'static str {
        match self {
            ApprovalDecision::Approve => "approve",
            ApprovalDecision::Reject { .. } => "reject",
            ApprovalDecision::Edit { .. } => "edit",
        }
    }
}

/// The fingerprint of `tool` called with `arguments`.
pub fn approval_fingerprint(tool: &str, arguments: &Value) -> String {
    canonical_hash(&json!({"tool": tool, "arguments": arguments}))
}
