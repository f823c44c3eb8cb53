//! Confirmation: calls that need a person's (or an approver's) yes.
//!
//! A call needs approval when its tool declares `requires_confirmation`, or
//! spends money or runs shell commands and the policy does not explicitly
//! allow that. The [`Approver`] may approve, reject with a reason (the model
//! sees the reason), or edit the arguments (edited arguments are validated
//! again by the executor). Every decision is recorded per call id with a
//! fingerprint of the tool and its arguments, so an approval given for one
//! set of arguments is never used for another.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use serde_json::{Value, json};

use crate::error::ToolError;
use crate::executor::canonical_hash;
use crate::ids::{RunId, ToolCallId};
use crate::middleware::{BeforeOutcome, BeforeToolCtx, Middleware};
use crate::spec::ToolSpec;

/// The policy name in refusals and events.
const POLICY: &str = "confirmation";

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
    /// When the decision was recorded.
    pub at: SystemTime,
}

/// The fingerprint of `tool` called with `arguments`.
pub fn approval_fingerprint(tool: &str, arguments: &Value) -> String {
    canonical_hash(&json!({"tool": tool, "arguments": arguments}))
}

/// Middleware that asks an [`Approver`] before calls that need approval.
///
/// ```
/// use std::sync::Arc;
/// use tinyagents_tools::policy::{Approver, ApprovalDecision, ApprovalRequest, ConfirmationPolicy};
///
/// struct DenyAll;
/// #[tinyagents_tools::async_trait]
/// impl Approver for DenyAll {
///     async fn review(&self, _: &ApprovalRequest) -> ApprovalDecision {
///         ApprovalDecision::Reject { reason: "the user declined".into() }
///     }
/// }
/// let policy = ConfirmationPolicy::new(DenyAll).allow_spend(false);
/// # let _ = policy;
/// ```
pub struct ConfirmationPolicy {
    approver: Arc<dyn Approver>,
    allow_spend: bool,
    allow_shell: bool,
    timeout: Duration,
    records: Mutex<HashMap<ToolCallId, ApprovalRecord>>,
}

impl ConfirmationPolicy {
    /// A policy that asks `approver`; spending and shell tools need approval
    /// too, and an approver that does not answer within five minutes counts
    /// as a rejection.
    pub fn new(approver: impl Approver) -> Self {
        ConfirmationPolicy {
            approver: Arc::new(approver),
            allow_spend: false,
            allow_shell: false,
            timeout: Duration::from_secs(300),
            records: Mutex::new(HashMap::new()),
        }
    }

    /// Lets spending tools run without approval (unless they also require
    /// confirmation).
    pub fn allow_spend(mut self, allow: bool) -> Self {
        self.allow_spend = allow;
        self
    }

    /// Lets shell tools run without approval (unless they also require
    /// confirmation).
    pub fn allow_shell(mut self, allow: bool) -> Self {
        self.allow_shell = allow;
        self
    }

    /// How long to wait for the approver.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Why `spec` needs approval under this policy (empty: it does not).
    pub fn reasons(&self, spec: &ToolSpec) -> Vec<ApprovalReason> {
        let mut reasons = Vec::new();
        if spec.safety.requires_confirmation {
            reasons.push(ApprovalReason::RequiresConfirmation);
        }
        if spec.safety.spend && !self.allow_spend {
            reasons.push(ApprovalReason::Spend);
        }
        if spec.safety.shell && !self.allow_shell {
            reasons.push(ApprovalReason::Shell);
        }
        reasons
    }

    /// Records an approval given out of band (a person clicked "approve" on
    /// this call in a UI) for exactly these arguments.
    pub fn pre_approve(&self, call_id: impl Into<ToolCallId>, tool: &str, arguments: &Value) {
        self.record(
            call_id.into(),
            ApprovalRecord {
                tool: tool.to_owned(),
                fingerprint: approval_fingerprint(tool, arguments),
                approved: true,
                reason: None,
                at: SystemTime::now(),
            },
        );
    }

    /// The recorded decision for a call.
    pub fn record_of(&self, call_id: &ToolCallId) -> Option<ApprovalRecord> {
        self.records
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(call_id)
            .cloned()
    }

    fn record(&self, call_id: ToolCallId, record: ApprovalRecord) {
        self.records
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(call_id, record);
    }
}

impl fmt::Debug for ConfirmationPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConfirmationPolicy")
            .field("allow_spend", &self.allow_spend)
            .field("allow_shell", &self.allow_shell)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl<S, C> Middleware<S, C> for ConfirmationPolicy
where
    S: Send + Sync + 'static,
    C: Send + Sync + 'static,
{
    fn name(&self) -> &str {
        POLICY
    }

    async fn before_tool(
        &self,
        ctx: &mut BeforeToolCtx<'_, S, C>,
    ) -> Result<BeforeOutcome, ToolError> {
        let reasons = self.reasons(ctx.spec());
        if reasons.is_empty() {
            return Ok(BeforeOutcome::Continue);
        }
        let tool = ctx.spec().name.as_str().to_owned();
        let fingerprint = approval_fingerprint(&tool, ctx.arguments());
        if let Some(record) = self.record_of(ctx.call_id()) {
            if record.fingerprint != fingerprint {
                return Ok(BeforeOutcome::deny(
                    POLICY,
                    "the approval for this call was given for different arguments; it does not cover these",
                ));
            }
            return Ok(if record.approved {
                BeforeOutcome::Continue
            } else {
                BeforeOutcome::deny(POLICY, rejected_text(record.reason.as_deref()))
            });
        }
        let request = ApprovalRequest {
            run_id: ctx.run().run_id().clone(),
            call_id: ctx.call_id().clone(),
            tool: tool.clone(),
            arguments: ctx.arguments().clone(),
            fingerprint: fingerprint.clone(),
            reasons,
        };
        let decision = tokio::time::timeout(self.timeout, self.approver.review(&request))
            .await
            .unwrap_or(ApprovalDecision::Reject {
                reason: "no approval arrived in time".into(),
            });
        let call_id = ctx.call_id().clone();
        let record = |fingerprint, approved, reason| ApprovalRecord {
            tool: tool.clone(),
            fingerprint,
            approved,
            reason,
            at: SystemTime::now(),
        };
        match decision {
            ApprovalDecision::Approve => {
                self.record(call_id, record(fingerprint, true, None));
                Ok(BeforeOutcome::Continue)
            }
            ApprovalDecision::Reject { reason } => {
                let text = rejected_text(Some(&reason));
                self.record(call_id, record(fingerprint, false, Some(reason)));
                Ok(BeforeOutcome::deny(POLICY, text))
            }
            ApprovalDecision::Edit { arguments } => {
                let edited = approval_fingerprint(&tool, &arguments);
                self.record(call_id, record(edited, true, None));
                *ctx.arguments_mut() = arguments;
                Ok(BeforeOutcome::Continue)
            }
        }
    }
}

fn rejected_text(reason: Option<&str>) -> String {
    match reason {
        Some(reason) if !reason.trim().is_empty() => {
            format!("the call was not approved: {reason}")
        }
        _ => "the call was not approved".to_owned(),
    }
}
