//! How the executor's calls move through a [`Journal`]: admitted by their
//! record, started (write-ahead), filed as waiting for an approval,
//! answered once, and answered `interrupted` when their owner is gone.
//! Every transition is a compare-and-set on the record's revision.

use std::time::{Duration, SystemTime};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::handle::{INTERRUPTED, Journal, now_ms};
use super::owner;
use super::record::{ApprovalEntry, CallKey, CallRecord, CallState, JournalAnswer};
use super::store::{JournalError, Stored};
use crate::approval::{ApprovalDecision, ApprovalRecord, ApprovalRequest, GrantScope};
use crate::error::ErrorClass;
use crate::ids::RunId;
use crate::output::{ContentBlock, ToolMessage};
use crate::runtime::CallDraw;

/// A call as delivered: what a new record of it holds (state `received`),
/// and what a known record is checked against.
pub(crate) struct Delivery<'a> {
    pub(crate) key: &'a CallKey,
    /// The tool's canonical name (the name as called when no tool has it).
    pub(crate) tool: &'a str,
    pub(crate) fingerprint: &'a str,
    pub(crate) arguments: &'a Value,
    /// What the call is given, for a tool that takes it.
    pub(crate) draw: Option<CallDraw>,
}

/// What a delivered call is, by its record.
pub(crate) enum Admission {
    /// Run it: the record is at this revision (new, received, decided,
    /// or `started` by an owner that is gone for a tool that may run
    /// again).
    Run(Box<Stored>),
    /// It was answered: answer it so.
    Answered(Box<JournalAnswer>),
    /// It waits for a decision.
    Pending(Box<ApprovalEntry>),
    /// Its key was used with other arguments (or another tool).
    Conflict,
}

impl Journal {
    /// The approval record a standing grant gives a call of `tool` in run
    /// `run` with this fingerprint, if one covers it.
    pub(crate) async fn standing_grant(
        &self,
        tool: &str,
        run: &RunId,
        fingerprint: &str,
    ) -> Result<Option<ApprovalRecord>, JournalError> {
        let grants = self.store.grants(tool).await?;
        Ok(grants
            .into_iter()
            .find(|g| {
                g.scope.covers_run(run) && g.fingerprint.as_deref().is_none_or(|f| f == fingerprint)
            })
            .map(|g| ApprovalRecord {
                tool: tool.to_owned(),
                fingerprint: fingerprint.to_owned(),
                approved: true,
                reason: None,
                scope: g.scope,
                at: super::from_ms(g.at),
            }))
    }

    /// Step 1 of a journaled call: what the journal knows of it. A new call
    /// is recorded `received` (with its arguments, so a resume can run it,
    /// and its draw, so every later run is given the same).
    /// A call `started` by an owner still running is waited for (its answer
    /// is this call's); by an owner that is gone, it is answered
    /// `interrupted` unless `may_rerun` (a read-only or idempotent tool).
    pub(crate) async fn admit(
        &self,
        delivery: &Delivery<'_>,
        may_rerun: bool,
        cancel: &CancellationToken,
    ) -> Result<Admission, JournalError> {
        let Delivery {
            key,
            tool,
            fingerprint,
            arguments,
            draw,
        } = *delivery;
        let mut wait = Duration::from_millis(10);
        // The first look is the insert itself (a new call is recorded in
        // one statement; a known one comes back from it); later looks,
        // after waiting for another instance, read.
        let mut first = true;
        loop {
            let known = if std::mem::take(&mut first) {
                let mut record = CallRecord::new(
                    key.clone(),
                    tool,
                    fingerprint,
                    arguments.clone(),
                    CallState::Received,
                    now_ms(),
                );
                record.draw = draw;
                match self.store.insert(&record).await? {
                    None => {
                        return Ok(Admission::Run(Box::new(Stored {
                            record,
                            revision: 1,
                        })));
                    }
                    Some(existing) => Some(existing),
                }
            } else {
                self.store.get(key).await?
            };
            let Some(stored) = known else {
                // Gone since (a store that forgets): record it anew.
                first = true;
                continue;
            };
            // The arguments as delivered, or as an approver edited them.
            let edited = stored
                .record
                .approval
                .as_ref()
                .and_then(|a| a.record.as_ref())
                .is_some_and(|r| r.fingerprint == fingerprint);
            if (stored.record.fingerprint != fingerprint && !edited) || stored.record.tool != tool {
                return Ok(Admission::Conflict);
            }
            match stored.record.state {
                CallState::Answered => {
                    let answer = self.held(&stored.record.answer, || {
                        format!("call {key} is answered with no answer")
                    })?;
                    return Ok(Admission::Answered(Box::new(answer)));
                }
                CallState::AwaitingApproval => {
                    let entry = self.held(&stored.record.approval, || {
                        format!("call {key} awaits an approval it does not hold")
                    })?;
                    if entry
                        .request
                        .expires_at
                        .is_some_and(|at| at <= SystemTime::now())
                    {
                        self.expire(stored).await?;
                        continue;
                    }
                    return Ok(Admission::Pending(Box::new(entry)));
                }
                CallState::Received | CallState::Approved | CallState::Denied => {
                    return Ok(Admission::Run(Box::new(stored)));
                }
                CallState::Started if self.owner_gone(&stored.record) => {
                    if may_rerun {
                        return Ok(Admission::Run(Box::new(stored)));
                    }
                    let name = stored.record.tool.clone();
                    if let Some(answer) = self.interrupt(stored, &name).await? {
                        return Ok(Admission::Answered(Box::new(answer)));
                    }
                }
                CallState::Started => {
                    // Another instance runs it: its answer is this call's.
                    if cancel.is_cancelled() {
                        return Ok(Admission::Run(Box::new(stored)));
                    }
                    tokio::select! {
                        _ = cancel.cancelled() => {}
                        _ = tokio::time::sleep(wait) => {}
                    }
                    wait = (wait * 2).min(Duration::from_millis(250));
                }
            }
        }
    }

    /// A part of a record its state says it holds; a record without it is
    /// corrupt (`missing` says how).
    fn held<T: Clone>(
        &self,
        part: &Option<T>,
        missing: impl FnOnce() -> String,
    ) -> Result<T, JournalError> {
        part.clone().ok_or_else(|| JournalError::Corrupt {
            location: self.store.location(),
            reason: missing(),
        })
    }

    /// Marks an approval past its expiry as not approved.
    async fn expire(&self, stored: Stored) -> Result<(), JournalError> {
        let Stored {
            mut record,
            revision,
        } = stored;
        if let Some(entry) = record.approval.as_mut() {
            let reason = "the approval expired before anyone decided".to_owned();
            entry.record = Some(ApprovalRecord {
                tool: record.tool.clone(),
                fingerprint: record.fingerprint.clone(),
                approved: false,
                reason: Some(reason.clone()),
                scope: GrantScope::Call,
                at: SystemTime::now(),
            });
            entry.decision = Some(ApprovalDecision::Reject { reason });
        }
        record.state = CallState::Denied;
        record.updated_at = now_ms();
        self.store.replace(&record, revision).await?;
        Ok(())
    }

    /// Answers a call whose owner is gone `interrupted`; `None` when
    /// another instance changed it first.
    async fn interrupt(
        &self,
        stored: Stored,
        name: &str,
    ) -> Result<Option<JournalAnswer>, JournalError> {
        let Stored {
            mut record,
            revision,
        } = stored;
        let text = format!(
            "the call was interrupted: the process running `{name}` stopped before it answered, and the tool may have run; it is not run again"
        );
        let answer = JournalAnswer {
            message: ToolMessage {
                tool_call_id: record.key.call_id.clone(),
                name: name.into(),
                content: vec![ContentBlock::text(text)],
                structured: None,
                is_error: true,
            },
            outcome: INTERRUPTED.to_owned(),
            detail: None,
            class: Some(ErrorClass::Fatal),
            settled: false,
            at: now_ms(),
        };
        answer_record(&mut record, answer.clone());
        Ok(self
            .store
            .replace(&record, revision)
            .await?
            .then_some(answer))
    }

    /// True when the owner of a `started` record is gone: its lease ran
    /// out, or it is a process of this boot that no longer exists.
    pub(crate) fn owner_gone(&self, record: &CallRecord) -> bool {
        let expired = record.lease_until.is_none_or(|until| until <= now_ms());
        let dead = record
            .owner
            .as_deref()
            .is_some_and(|o| o != &*self.owner && owner::process_gone(o));
        expired || dead
    }

    /// Write-ahead, before a body that may not run twice: the record is
    /// `started` by this journal's owner until `bound` from now (and the
    /// margin), with the call's draw when its record had none yet. False
    /// when another instance changed the record first.
    pub(crate) async fn claim(
        &self,
        stored: &mut Stored,
        arguments: &Value,
        approval: Option<ApprovalRecord>,
        draw: Option<CallDraw>,
        bound: Duration,
    ) -> Result<bool, JournalError> {
        let mut record = stored.record.clone();
        record.state = CallState::Started;
        record.arguments = arguments.clone();
        record.draw = record.draw.or(draw);
        record.owner = Some(self.owner.to_string());
        let lease = bound + self.lease_margin;
        record.lease_until = Some(now_ms().saturating_add(lease.as_millis() as i64));
        record.updated_at = now_ms();
        if let Some(approval) = approval {
            keep_decision(&mut record, approval);
        }
        if self.store.replace(&record, stored.revision).await? {
            stored.record = record;
            stored.revision += 1;
            return Ok(true);
        }
        Ok(false)
    }

    /// Files the call's approval request: it waits, `awaiting_approval`.
    /// False when another instance changed the record first.
    pub(crate) async fn await_approval(
        &self,
        stored: &Stored,
        arguments: &Value,
        request: ApprovalRequest,
    ) -> Result<bool, JournalError> {
        let mut record = stored.record.clone();
        record.state = CallState::AwaitingApproval;
        record.arguments = arguments.clone();
        record.approval = Some(ApprovalEntry {
            id: request.approval_id(),
            request,
            decision: None,
            record: None,
        });
        record.updated_at = now_ms();
        self.store.replace(&record, stored.revision).await
    }

    /// The call's answer, committed once. Returns the answer the journal
    /// holds: this one, or the one another instance committed first.
    pub(crate) async fn answer(
        &self,
        mut stored: Stored,
        answer: JournalAnswer,
        approval: Option<ApprovalRecord>,
    ) -> Result<JournalAnswer, JournalError> {
        for _ in 0..16 {
            let mut record = stored.record.clone();
            if record.state == CallState::Answered
                && let Some(theirs) = record.answer
            {
                return Ok(theirs);
            }
            if record.state == CallState::Started
                && record.owner.as_deref() != Some(&*self.owner)
                && !self.owner_gone(&record)
            {
                // Another instance runs it now; its answer will stand.
                return Ok(answer);
            }
            if let Some(approval) = approval.clone() {
                keep_decision(&mut record, approval);
            }
            answer_record(&mut record, answer.clone());
            if self.store.replace(&record, stored.revision).await? {
                return Ok(answer);
            }
            match self.store.get(&stored.record.key).await? {
                Some(now) => stored = now,
                None => return Ok(answer),
            }
        }
        Err(JournalError::Unavailable {
            location: self.store.location(),
            reason: format!("call {} kept changing under its answer", stored.record.key),
        })
    }
}

/// The states a resume answers from.
pub(crate) const RESUMABLE: [CallState; 4] = [
    CallState::Received,
    CallState::Approved,
    CallState::Denied,
    CallState::Started,
];

/// Keeps an approval decided in this process in the record (a standing
/// grant's too: the audit shows what let the call run).
fn keep_decision(record: &mut CallRecord, approval: ApprovalRecord) {
    match record.approval.as_mut() {
        Some(entry) => {
            if entry.record.is_none() {
                entry.record = Some(approval);
            }
        }
        None => {
            let request = ApprovalRequest {
                run_id: record.key.run_id.clone(),
                turn: record.key.turn,
                call_id: record.key.call_id.clone(),
                tool: record.tool.clone(),
                arguments: Value::Null,
                fingerprint: approval.fingerprint.clone(),
                reasons: Vec::new(),
                expires_at: None,
            };
            record.approval = Some(ApprovalEntry {
                id: request.approval_id(),
                request,
                decision: Some(if approval.approved {
                    ApprovalDecision::Approve
                } else {
                    ApprovalDecision::Reject {
                        reason: approval.reason.clone().unwrap_or_default(),
                    }
                }),
                record: Some(approval),
            });
        }
    }
}

/// Moves a record to `answered`: the arguments are no longer kept.
pub(super) fn answer_record(record: &mut CallRecord, answer: JournalAnswer) {
    record.state = CallState::Answered;
    record.arguments = Value::Null;
    record.lease_until = None;
    record.updated_at = answer.at;
    record.answer = Some(answer);
}
