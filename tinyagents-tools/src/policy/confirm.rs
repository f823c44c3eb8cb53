//! Confirmation: calls that need a person's (or an approver's) yes.
//!
//! A call needs approval when its tool declares `requires_confirmation`, or
//! spends money or runs shell commands and the policy does not explicitly
//! allow that. The [`Approver`] may approve, reject with a reason (the model
//! sees the reason), or edit the arguments (edited arguments are validated
//! again by the executor). Every decision is recorded for one call (run,
//! turn, call id) with a fingerprint of the tool and its arguments, so an
//! approval given for one set of arguments, one turn or one run is never
//! used for another; only an explicit standing grant reaches further.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::approval::{
    ApprovalDecision, ApprovalReason, ApprovalRecord, ApprovalRequest, Approver, GrantScope,
    approval_fingerprint,
};
use crate::error::ToolError;
use crate::ids::{RunId, ToolCallId};
use crate::middleware::{BeforeOutcome, BeforeResult, BeforeToolCtx, Middleware};
use crate::spec::{SafetyItem, ToolSpec, setters};
use crate::tool::Shared;
use crate::util::sync::lock;

/// The approver of [`ConfirmationPolicy::deferred`]: a person decides
/// later, through the journal.
struct DeferAll;

#[async_trait]
impl Approver for DeferAll {
    async fn review(&self, _: &ApprovalRequest) -> ApprovalDecision {
        ApprovalDecision::Defer
    }
}

/// The policy name in refusals and events.
const POLICY: &str = "confirmation";

/// Where one call sits: a decision is looked up by these and then checked
/// against the tool and the argument fingerprint.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct CallKey {
    run: RunId,
    turn: u32,
    call: ToolCallId,
}

/// A standing grant made by the application.
#[derive(Debug, Clone)]
struct StandingGrant {
    tool: String,
    scope: GrantScope,
    /// `None`: any arguments.
    fingerprint: Option<String>,
}

/// Middleware that asks an [`Approver`] before calls that need approval.
///
/// A decision holds for exactly one call: the run, the turn (its
/// [`Turn::index`](crate::Turn::index)), the call id, the tool and the
/// canonical fingerprint of the arguments. Provider call ids repeat over a
/// conversation (Gemini sends none, and many clients number calls per
/// turn), so the same id in another turn or another run is asked again, and
/// the same call with other arguments is refused. Nothing wider holds unless
/// the application makes a standing grant
/// ([`grant_standing`](ConfirmationPolicy::grant_standing)); a call it lets
/// through emits a `tool.custom` event `approval.standing_grant` whose data
/// names the grant's scope.
///
/// Cancelling the run while the approver is deciding ends the wait at once:
/// the call is answered `cancelled` and never runs. The approver's answer,
/// if it comes later, is ignored and logged (a `tracing` warning), and a
/// call approved after its run was cancelled never runs either.
///
/// ```
/// use std::sync::Arc;
/// use tinyagents_tools::approval::{Approver, ApprovalDecision, ApprovalRequest};
/// use tinyagents_tools::policy::ConfirmationPolicy;
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
    ttl: Option<Duration>,
    records: Mutex<HashMap<CallKey, ApprovalRecord>>,
    standing: Mutex<Vec<StandingGrant>>,
}

impl ConfirmationPolicy {
    /// A policy that asks `approver`; spending and shell tools need approval
    /// too, and an approver that does not answer within five minutes counts
    /// as a rejection (with a [journal](crate::journal), as a deferral: the
    /// request waits there for a person).
    pub fn new(approver: impl Approver) -> Self {
        ConfirmationPolicy {
            approver: Arc::new(approver),
            allow_spend: false,
            allow_shell: false,
            timeout: Duration::from_secs(300),
            ttl: None,
            records: Mutex::new(HashMap::new()),
            standing: Mutex::new(Vec::new()),
        }
    }

    /// A policy with no approver in the process: every call that needs
    /// approval waits for a person's decision in the executor's
    /// [journal](crate::journal) (it ends
    /// [`pending_approval`](crate::ToolResult::pending)), decided later with
    /// [`Journal::decide`](crate::journal::Journal::decide) from any
    /// process. Without a journal such calls are refused.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use tinyagents_tools::journal::Journal;
    /// use tinyagents_tools::policy::ConfirmationPolicy;
    /// use tinyagents_tools::{ToolExecutor, ToolRegistry};
    ///
    /// let journal = Journal::open("memory:").await?;
    /// let executor = ToolExecutor::builder(ToolRegistry::new(), ())
    ///     .middleware(ConfirmationPolicy::deferred())
    ///     .journal(journal.clone())
    ///     .build()?;
    /// # let _ = executor;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub fn deferred() -> Self {
        ConfirmationPolicy::new(DeferAll)
    }

    setters! {
        /// How long a request waits for a decision in the journal before it
        /// lapses (the call is then answered as not approved); by default it
        /// waits until decided.
        approval_ttl(ttl: Duration) => ttl = Some(ttl);
        /// Lets spending tools run without approval (unless they also require
        /// confirmation).
        allow_spend(allow: bool) => allow_spend = allow;
        /// Lets shell tools run without approval (unless they also require
        /// confirmation).
        allow_shell(allow: bool) => allow_shell = allow;
        /// How long to wait for the approver.
        timeout(timeout: Duration) => timeout = timeout;
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
    /// this call in a UI) for exactly this call: run `run_id`, turn `turn`,
    /// call `call_id`, tool `tool` and these arguments.
    pub fn pre_approve(
        &self,
        run_id: &RunId,
        turn: u32,
        call_id: impl Into<ToolCallId>,
        tool: &str,
        arguments: &Value,
    ) {
        self.record(
            CallKey {
                run: run_id.clone(),
                turn,
                call: call_id.into(),
            },
            ApprovalRecord {
                tool: tool.to_owned(),
                fingerprint: approval_fingerprint(tool, arguments),
                approved: true,
                reason: None,
                scope: GrantScope::Call,
                at: SystemTime::now(),
            },
        );
    }

    /// Grants `tool` beyond one call: in one run ([`GrantScope::Run`]) or in
    /// every run ([`GrantScope::AllRuns`]), for exactly `arguments` when
    /// given, or for any arguments when `None`. Calls it lets through are not
    /// shown to the approver and emit `approval.standing_grant` with the
    /// scope. [`GrantScope::Call`] grants nothing (use
    /// [`pre_approve`](Self::pre_approve) for one call).
    pub fn grant_standing(&self, tool: &str, scope: GrantScope, arguments: Option<&Value>) {
        if scope == GrantScope::Call {
            return;
        }
        lock(&self.standing).push(StandingGrant {
            tool: tool.to_owned(),
            scope,
            fingerprint: arguments.map(|a| approval_fingerprint(tool, a)),
        });
    }

    /// Withdraws every standing grant.
    pub fn revoke_standing(&self) {
        lock(&self.standing).clear();
    }

    /// The recorded decision for call `call_id` of turn `turn` in run
    /// `run_id`.
    pub fn record_of(
        &self,
        run_id: &RunId,
        turn: u32,
        call_id: &ToolCallId,
    ) -> Option<ApprovalRecord> {
        let key = CallKey {
            run: run_id.clone(),
            turn,
            call: call_id.clone(),
        };
        lock(&self.records).get(&key).cloned()
    }

    fn record(&self, key: CallKey, record: ApprovalRecord) {
        lock(&self.records).insert(key, record);
    }

    /// The scope of a standing grant covering this call, if any.
    fn standing_scope(&self, run: &RunId, tool: &str, fingerprint: &str) -> Option<GrantScope> {
        let grants = lock(&self.standing);
        grants
            .iter()
            .find(|g| {
                g.tool == tool
                    && g.fingerprint.as_deref().is_none_or(|f| f == fingerprint)
                    && match &g.scope {
                        GrantScope::Run { run_id } => run_id == run,
                        GrantScope::AllRuns => true,
                        GrantScope::Call => false,
                    }
            })
            .map(|g| g.scope.clone())
    }

    /// Asks the approver, unless the run is cancelled first. On
    /// cancellation the approver's answer is awaited in the background (up
    /// to the timeout) only to be logged and ignored.
    async fn ask(
        &self,
        request: ApprovalRequest,
        cancel: &CancellationToken,
        durable: bool,
    ) -> Option<ApprovalDecision> {
        let approver = Arc::clone(&self.approver);
        let timeout = self.timeout;
        let review = async move {
            let decision = tokio::time::timeout(timeout, approver.review(&request)).await;
            (request, decision)
        };
        let mut review = Box::pin(review);
        tokio::select! {
            biased;
            _ = cancel.cancelled() => {}
            (_, decision) = &mut review => {
                return Some(decision.unwrap_or_else(|_| if durable {
                    // A journal can keep the request: it waits there.
                    ApprovalDecision::Defer
                } else {
                    ApprovalDecision::Reject {
                        reason: "no approval arrived in time".into(),
                    }
                }));
            }
        }
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                handle.spawn(async move {
                    let (request, decision) = review.await;
                    if let Ok(decision) = decision {
                        tracing::warn!(
                            run_id = %request.run_id,
                            call_id = %request.call_id,
                            tool = %request.tool,
                            decision = decision.name(),
                            "an approval decision arrived after its run was cancelled; ignored"
                        );
                    }
                });
            }
            Err(_) => tracing::warn!(
                "a run was cancelled while its approver was deciding; the decision is ignored"
            ),
        }
        None
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
impl<S: Shared, C: Shared> Middleware<S, C> for ConfirmationPolicy {
    fn name(&self) -> &str {
        POLICY
    }

    fn enforces(&self) -> &[SafetyItem] {
        &[SafetyItem::Confirmation]
    }

    async fn before_tool(&self, ctx: &mut BeforeToolCtx<'_, S, C>) -> BeforeResult {
        let reasons = self.reasons(ctx.spec());
        if reasons.is_empty() {
            return Ok(BeforeOutcome::Continue);
        }
        let tool = ctx.spec().name.as_str().to_owned();
        let fingerprint = approval_fingerprint(&tool, ctx.arguments());
        let run_id = ctx.run().run_id().clone();
        let key = CallKey {
            run: run_id.clone(),
            turn: ctx.turn().index(),
            call: ctx.call_id().clone(),
        };
        // A decision the executor's journal holds (made for this call on
        // any instance, or a standing grant kept there) comes first.
        if let Some(record) = ctx.journaled_approval().cloned() {
            return Ok(self.apply_known(ctx, key, record, &tool, &fingerprint, true));
        }
        let known = lock(&self.records).get(&key).cloned();
        if let Some(record) = known {
            return Ok(self.apply_known(ctx, key, record, &tool, &fingerprint, false));
        }
        if let Some(scope) = self.standing_scope(&run_id, &tool, &fingerprint) {
            ctx.emit(
                "approval.standing_grant",
                json!({"scope": scope.as_str(), "tool": tool}),
            );
            let record = ApprovalRecord {
                tool,
                fingerprint,
                approved: true,
                reason: None,
                scope,
                at: SystemTime::now(),
            };
            ctx.record_approval(record.clone());
            self.record(key, record);
            return Ok(BeforeOutcome::Continue);
        }
        let request = ApprovalRequest {
            run_id,
            turn: key.turn,
            call_id: ctx.call_id().clone(),
            tool: tool.clone(),
            arguments: ctx.arguments().clone(),
            fingerprint: fingerprint.clone(),
            reasons,
            expires_at: self.ttl.map(|ttl| SystemTime::now() + ttl),
        };
        let cancel = ctx.run().cancellation().clone();
        let durable = ctx.can_wait_for_approval();
        let Some(decision) = self.ask(request.clone(), &cancel, durable).await else {
            return Err(ToolError::cancelled());
        };
        if cancel.is_cancelled() {
            tracing::warn!(
                call_id = %key.call,
                tool = %tool,
                decision = decision.name(),
                "an approval decision arrived as its run was cancelled; ignored"
            );
            return Err(ToolError::cancelled());
        }
        let record = |fingerprint, approved, reason| ApprovalRecord {
            tool: tool.clone(),
            fingerprint,
            approved,
            reason,
            scope: GrantScope::Call,
            at: SystemTime::now(),
        };
        let (decided, outcome) = match decision {
            ApprovalDecision::Approve => (record(fingerprint, true, None), BeforeOutcome::Continue),
            ApprovalDecision::Reject { reason } => {
                let text = rejected_text(Some(&reason));
                let decided = record(fingerprint, false, Some(reason));
                (decided, BeforeOutcome::deny(POLICY, text))
            }
            ApprovalDecision::Edit { arguments } => {
                let edited = approval_fingerprint(&tool, &arguments);
                *ctx.arguments_mut() = arguments;
                (record(edited, true, None), BeforeOutcome::Continue)
            }
            ApprovalDecision::Defer if durable => {
                return Ok(BeforeOutcome::AwaitApproval(Box::new(request)));
            }
            ApprovalDecision::Defer => {
                return Ok(BeforeOutcome::deny(
                    POLICY,
                    "the call needs an approval that was deferred, and this executor keeps no journal for it to wait in; it was not run",
                ));
            }
        };
        ctx.record_approval(decided.clone());
        self.record(key, decided);
        Ok(outcome)
    }
}

impl ConfirmationPolicy {
    /// A call whose decision is known (recorded by this policy, or kept in
    /// the journal): it holds only for the tool and arguments it was made
    /// for.
    fn apply_known<S, C>(
        &self,
        ctx: &mut BeforeToolCtx<'_, S, C>,
        key: CallKey,
        record: ApprovalRecord,
        tool: &str,
        fingerprint: &str,
        journaled: bool,
    ) -> BeforeOutcome {
        if record.tool != tool || record.fingerprint != fingerprint {
            return BeforeOutcome::deny(
                POLICY,
                "the approval for this call was given for different arguments; it does not cover these",
            );
        }
        if !record.approved {
            return BeforeOutcome::deny(POLICY, rejected_text(record.reason.as_deref()));
        }
        if journaled && record.scope != GrantScope::Call {
            ctx.emit(
                "approval.standing_grant",
                json!({"scope": record.scope.as_str(), "tool": tool}),
            );
            ctx.record_approval(record.clone());
        }
        if journaled {
            self.record(key, record);
        }
        BeforeOutcome::Continue
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
