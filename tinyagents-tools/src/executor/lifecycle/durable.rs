//! Journaled calls: a call of an executor with a [`Journal`] is admitted
//! by the journal before its steps and answered into it after them (the
//! rules are on [`journal`](crate::journal)); on its way through the steps
//! it carries a [`DurableCx`] and makes one step of its own, the
//! write-ahead `started` record before a body that may not run twice.
//! [`ToolExecutor::resume`] runs what a run left to do, and
//! [`ToolExecutor::decide`] records a decision checked against the tool's
//! schema.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::CallCx;
use super::answer::Stop;
use crate::approval::{ApprovalDecision, ApprovalRecord, ApprovalRequest, approval_fingerprint};
use crate::call::{RawArguments, ToolCall};
use crate::error::{ErrorKind, ToolError};
use crate::executor::batch::Place;
use crate::executor::{ToolExecutor, args};
use crate::ids::{CallName, ToolCallId};
use crate::journal::{
    Admission, CallKey, CallQuery, CallRecord, CallState, Delivery, Journal, JournalAnswer,
    JournalError, RESUMABLE, Stored, now_ms,
};
use crate::output::ToolResult;
use crate::registry::RegisteredTool;
use crate::runtime::RunContext;
use crate::runtime::Turn;
use crate::spec::SafetyItem;
use crate::tool::Shared;

/// How often a call the journal hands back to run is run again at most,
/// when other instances keep changing its record.
const ROUNDS: usize = 4;

/// A journaled call's state in the journal and what its steps decided
/// about it.
pub(crate) struct DurableCx {
    pub(crate) journal: Journal,
    /// The record as last read or written.
    pub(crate) stored: Stored,
    /// The decision (or standing grant) the journal holds for the call,
    /// shown to the `before_tool` hooks (shared: the hooks' step holds a
    /// handle on it, not a copy).
    pub(crate) journaled: Option<Arc<ApprovalRecord>>,
    /// A decision a hook made in this process, for the journal.
    pub(crate) decided: Option<ApprovalRecord>,
    /// The call waits for a decision: the request (arguments masked) and
    /// the arguments to run with once decided.
    pub(crate) pending: Option<(Box<ApprovalRequest>, Value)>,
    /// Another instance changed the record first: the call is answered
    /// as the journal then says.
    pub(crate) journal_says: Option<Admission>,
    /// This call wrote `started` before its body.
    pub(crate) claimed: bool,
    /// The journal failed while the call went through its steps.
    pub(crate) failed: Option<JournalError>,
}

impl DurableCx {
    pub(crate) fn new(journal: Journal, stored: Stored, journaled: Option<ApprovalRecord>) -> Self {
        DurableCx {
            journal,
            stored,
            journaled: journaled.map(Arc::new),
            decided: None,
            pending: None,
            journal_says: None,
            claimed: false,
            failed: None,
        }
    }

    /// True when the call's answer is not the steps' own (it waits, or the
    /// journal answers it): its steps' last event is not emitted.
    pub(crate) fn answered_elsewhere(&self) -> bool {
        self.pending.is_some() || self.journal_says.is_some()
    }
}

impl<S: Shared, C: Shared> ToolExecutor<S, C> {
    /// [`execute_in`](Self::execute_in) with a journal: the journal admits
    /// the call (answered, pending, conflicting, or to run), the steps run
    /// it, and its answer is committed once.
    pub(crate) async fn execute_journaled(
        &self,
        run: &RunContext<C>,
        turn: &Turn,
        call: ToolCall,
        batch: Option<Place<'_>>,
    ) -> ToolResult {
        let Some(journal) = self.journal.as_ref() else {
            unreachable!("only called with a journal")
        };
        let key = CallKey::new(run.run_id().clone(), turn.index(), call.id.clone());
        let registered = self.registry.resolve(&call.name);
        let tool = registered.map_or(call.name.as_str(), |t| t.spec().name.as_str());
        let may_rerun = registered.is_some_and(|t| {
            let safety = &t.spec().safety;
            safety.is_read_only() || safety.idempotency.is_idempotent()
        });
        let needs_approval =
            registered.is_some_and(|t| SafetyItem::Confirmation.declared_by(&t.spec().safety));
        let delivered = delivered_value(&call.arguments);
        let fingerprint = approval_fingerprint(tool, &delivered);
        // What a tool that takes its call's time and randomness is given,
        // kept with a new record (a known record keeps its own).
        let draw = registered
            .filter(|t| t.takes_draw())
            .map(|_| run.draw(turn.index(), &call.id));
        let delivery = Delivery {
            key: &key,
            tool,
            fingerprint: &fingerprint,
            arguments: &delivered,
            draw,
        };
        let cancel = run.cancellation();
        for _ in 0..ROUNDS {
            let admission = journal.admit(&delivery, may_rerun, cancel).await;
            let stored = match admission {
                Err(e) => return unavailable(&call, &e),
                Ok(Admission::Run(stored)) => *stored,
                Ok(other) => return answer_from(&call, other),
            };
            // An approved edit runs with the edited arguments.
            let edited = stored.record.state == CallState::Approved
                && matches!(
                    stored
                        .record
                        .approval
                        .as_ref()
                        .and_then(|a| a.decision.as_ref()),
                    Some(ApprovalDecision::Edit { .. })
                );
            let raw = if edited {
                RawArguments::Json(stored.record.arguments.clone())
            } else {
                call.arguments.clone()
            };
            let journaled = match decided_approval(&stored.record) {
                Some(record) => Some(record),
                None if needs_approval => {
                    match journal
                        .standing_grant(tool, &key.run_id, &fingerprint)
                        .await
                    {
                        Ok(grant) => grant,
                        Err(e) => return unavailable(&call, &e),
                    }
                }
                None => None,
            };
            let mut durable = DurableCx::new(journal.clone(), stored, journaled);
            let parts = (call.id.clone(), call.name.clone(), args::Pending::new(raw));
            let result = self
                .execute_parts(run, turn, parts, batch, Some(&mut durable))
                .await;
            match self.settle_answer(journal, &call, result, durable).await {
                Some(result) => return result,
                None => continue,
            }
        }
        let e = JournalError::Unavailable {
            location: journal.store().location(),
            reason: format!("call {key} kept changing under this instance"),
        };
        unavailable(&call, &e)
    }

    /// After the steps: the pending request filed, or the answer committed
    /// (a call whose body never started and that was cancelled stays
    /// resumable); `None` when another instance changed the record first
    /// and the call must be admitted again.
    async fn settle_answer(
        &self,
        journal: &Journal,
        call: &ToolCall,
        result: ToolResult,
        durable: DurableCx,
    ) -> Option<ToolResult> {
        let DurableCx {
            stored,
            decided,
            pending,
            journal_says,
            claimed,
            failed,
            ..
        } = durable;
        if let Some(e) = failed {
            return Some(unavailable(call, &e));
        }
        if let Some(admission) = journal_says {
            return match admission {
                Admission::Run(_) => None,
                other => Some(answer_from(call, other)),
            };
        }
        if let Some((request, arguments)) = pending {
            let request = *request;
            return match journal
                .await_approval(&stored, &arguments, request.clone())
                .await
            {
                Ok(true) => Some(ToolResult::pending_approval(
                    call.id.clone(),
                    call.name.clone(),
                    request,
                )),
                Ok(false) => None,
                Err(e) => Some(unavailable(call, &e)),
            };
        }
        let kind = result.error.as_ref().map(|e| e.kind());
        let resumable = !claimed && matches!(kind, Some(ErrorKind::Cancelled));
        if resumable || matches!(kind, Some(ErrorKind::JournalUnavailable)) {
            return Some(result);
        }
        let answer = JournalAnswer {
            message: result.message.clone(),
            outcome: result.outcome().to_owned(),
            detail: result.error.as_ref().and_then(|e| e.kind().detail()),
            class: result.error.as_ref().map(|e| e.class()),
            settled: false,
            at: now_ms(),
        };
        match journal.answer(stored, answer.clone(), decided).await {
            Ok(kept) if kept == answer => Some(result),
            Ok(theirs) => Some(result_from(call, theirs)),
            Err(e) => {
                // The body may have run: the model is told what it did,
                // and the journal, once back, answers the call
                // `interrupted`.
                tracing::error!(
                    call_id = %call.id,
                    error = %e,
                    "a call's answer could not be journaled"
                );
                Some(result)
            }
        }
    }

    /// Runs what run `run` left to do in the journal, and answers it: calls
    /// whose approval was decided (approved calls run, bound to their
    /// fingerprints; rejected ones are answered with the reason), calls
    /// received but never started, and calls started by an instance that
    /// is gone (answered `interrupted`, or run again for a read-only or
    /// idempotent tool). Calls still waiting for a decision stay pending
    /// and are not in the results; answered calls are never run again.
    ///
    /// The calls of each turn run as one batch of that turn (every
    /// registered tool advertised: the model was offered them when it
    /// called). Results come in turn and call-id order.
    pub async fn resume(&self, run: &RunContext<C>) -> Result<Vec<ToolResult>, JournalError> {
        let journal = self.journal.as_ref().ok_or_else(no_journal)?;
        let mut states = RESUMABLE.to_vec();
        states.push(CallState::AwaitingApproval);
        let query = CallQuery::run(run.run_id().clone()).in_states(states);
        let now = std::time::SystemTime::now();
        let records: Vec<CallRecord> = journal
            .calls(&query)
            .await?
            .into_iter()
            .filter(|r| {
                r.state != CallState::AwaitingApproval
                    || r.approval
                        .as_ref()
                        .and_then(|a| a.request.expires_at)
                        .is_some_and(|at| at <= now)
            })
            .collect();
        let mut results = Vec::with_capacity(records.len());
        let mut turns = records.chunk_by(|a, b| a.key.turn == b.key.turn);
        for turn_records in turns.by_ref() {
            let turn = Turn::new(turn_records[0].key.turn);
            let calls = turn_records.iter().map(call_of).collect();
            results.extend(self.execute_batch(run, &turn, calls).await);
        }
        Ok(results)
    }

    /// Records a decision on approval `id` ([`Journal::decide`]), checking
    /// edited arguments against the tool's input schema first: arguments
    /// the call would refuse are refused now
    /// ([`JournalError::InvalidEdit`], every problem named).
    pub async fn decide(
        &self,
        id: &str,
        decision: ApprovalDecision,
    ) -> Result<CallRecord, JournalError> {
        let journal = self.journal.as_ref().ok_or_else(no_journal)?;
        if let ApprovalDecision::Edit { arguments } = &decision {
            let entry = journal.approval(id).await?;
            if let Some(registered) = self.registry.resolve(&entry.request.tool) {
                let (spec, input) = (registered.spec(), registered.input());
                if let Err(e) = args::validate(arguments, spec, input, None) {
                    return Err(JournalError::InvalidEdit {
                        id: id.to_owned(),
                        reason: e.message().to_owned(),
                    });
                }
            }
        }
        journal.decide(id, decision).await
    }

    /// The executor's journal, when it keeps one.
    pub fn journal(&self) -> Option<&Journal> {
        self.journal.as_ref()
    }
}

/// The arguments as delivered, as a value: text that is not JSON is kept
/// as a string (its fingerprint is then its text's).
fn delivered_value(raw: &RawArguments) -> Value {
    match raw {
        RawArguments::Json(value) => value.clone(),
        RawArguments::Text(text) => {
            serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone()))
        }
    }
}

/// The call a record stands for (with the arguments it runs with): text
/// that was not JSON goes back as the same text.
fn call_of(record: &CallRecord) -> ToolCall {
    let arguments = match &record.arguments {
        Value::String(text) => RawArguments::Text(text.clone()),
        other => RawArguments::Json(other.clone()),
    };
    ToolCall::new(record.key.call_id.clone(), record.tool.as_str(), arguments)
}

/// The decision the journal holds for a call, if it was decided.
fn decided_approval(record: &CallRecord) -> Option<ApprovalRecord> {
    record.approval.as_ref().and_then(|a| a.record.clone())
}

/// A call's result from what the journal says of it.
fn answer_from(call: &ToolCall, admission: Admission) -> ToolResult {
    match admission {
        Admission::Answered(answer) => result_from(call, *answer),
        Admission::Pending(entry) => {
            ToolResult::pending_approval(call.id.clone(), call.name.clone(), entry.request)
        }
        Admission::Conflict => ToolResult::from_error(
            call.id.clone(),
            call.name.clone(),
            ToolError::conflict(call.id.as_str()),
            Default::default(),
        ),
        Admission::Run(_) => unavailable(
            call,
            &JournalError::Unavailable {
                location: String::new(),
                reason: "the call was handed back to run".to_owned(),
            },
        ),
    }
}

/// A result answered from the journal: the message the model saw then.
fn result_from(call: &ToolCall, answer: JournalAnswer) -> ToolResult {
    let mut message = answer.message;
    // The same call, so the same id; the name as this delivery called it.
    message.tool_call_id = call.id.clone();
    let error = answer.class.map(|class| {
        let kind = ErrorKind::from_outcome(&answer.outcome, answer.detail.as_deref());
        ToolError::new(class, kind, message.text())
    });
    ToolResult {
        error,
        ..ToolResult::new(message)
    }
}

/// The retryable answer of a call the journal could not take: not run,
/// nothing journaled.
fn unavailable(call: &ToolCall, e: &JournalError) -> ToolResult {
    tracing::warn!(call_id = %call.id, error = %e, "the journal is unavailable; the call was not run");
    let id: ToolCallId = call.id.clone();
    let name: CallName = call.name.clone();
    let error = ToolError::journal_unavailable().with_source(JournalFailure(e.to_string()));
    ToolResult::from_error(id, name, error, Default::default())
}

/// The journal's error, kept as the source of a `journal_unavailable`
/// error for the application (never shown to the model).
#[derive(Debug)]
struct JournalFailure(String);

impl std::fmt::Display for JournalFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for JournalFailure {}

fn no_journal() -> JournalError {
    JournalError::Unsupported {
        url: String::new(),
        reason: "this executor keeps no journal: add one with ToolExecutorBuilder::journal"
            .to_owned(),
    }
}

impl<S: Shared, C: Shared> ToolExecutor<S, C> {
    /// Between steps 4 and 5, for a journaled call to a tool that is
    /// neither read-only nor idempotent: its `started` record is committed
    /// before its body runs. When another instance changed the record
    /// first, the call is answered as the journal says and this body never
    /// runs; when the journal cannot be written, the call is not run.
    pub(super) async fn write_ahead(
        &self,
        cx: &mut CallCx<'_, C>,
        registered: &RegisteredTool<S, C>,
        arguments: &Value,
    ) -> Result<(), Stop> {
        let Some(durable) = cx.durable.as_deref_mut() else {
            return Ok(());
        };
        let safety = &registered.spec().safety;
        if safety.is_read_only() || safety.idempotency.is_idempotent() {
            return Ok(());
        }
        let timeout = registered
            .spec()
            .timeout
            .unwrap_or(self.config.default_timeout);
        let bound = timeout + self.config.cancel_grace + Duration::from_secs(1);
        let approval = durable.decided.clone();
        let journal = durable.journal.clone();
        match journal
            .claim(&mut durable.stored, arguments, approval, cx.draw, bound)
            .await
        {
            Ok(true) => {
                durable.claimed = true;
                Ok(())
            }
            Ok(false) => {
                let record = &durable.stored.record;
                let delivery = Delivery {
                    key: &record.key,
                    tool: &record.tool,
                    fingerprint: &record.fingerprint,
                    arguments: &record.arguments,
                    draw: record.draw,
                };
                let readmitted = journal.admit(&delivery, false, cx.run.cancellation()).await;
                match readmitted {
                    Ok(admission) => {
                        durable.journal_says = Some(admission);
                        Err(Stop::rejected(ToolError::journal_unavailable()))
                    }
                    Err(e) => {
                        durable.failed = Some(e);
                        Err(Stop::rejected(ToolError::journal_unavailable()))
                    }
                }
            }
            Err(e) => {
                durable.failed = Some(e);
                Err(Stop::rejected(ToolError::journal_unavailable()))
            }
        }
    }
}
