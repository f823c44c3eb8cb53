//! [`Journal`]: the call journal's states and rules over a
//! [`JournalStore`], the same for every backend.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::owner;
use super::record::{
    ApprovalEntry, CallKey, CallRecord, CallState, JournalAnswer, JournalEvent, StandingGrant,
};
use super::store::{CallQuery, JournalError, JournalStore, Stored};
use crate::approval::{
    ApprovalDecision, ApprovalRecord, ApprovalRequest, GrantScope, approval_fingerprint, to_unix_ms,
};
use crate::error::ErrorClass;
use crate::ids::RunId;
use crate::output::{ContentBlock, ToolMessage};

/// The outcome word of a call answered `interrupted`.
pub const INTERRUPTED: &str = "interrupted";

/// A call journal: where calls, approvals and answers outlive the process.
///
/// Open one from a URL ([`Journal::open`]) or over any [`JournalStore`]
/// ([`Journal::new`]), give it to the executor
/// ([`ToolExecutorBuilder::journal`](crate::executor::ToolExecutorBuilder::journal)),
/// and keep a clone (clones share the store) to decide approvals, read
/// records back and settle interrupted calls, from this process or
/// another.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use tinyagents_tools::journal::{CallQuery, Journal};
/// let journal = Journal::open("memory:").await?;
/// assert!(journal.calls(&CallQuery::all()).await?.is_empty());
/// # Ok::<(), tinyagents_tools::journal::JournalError>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct Journal {
    store: Arc<dyn JournalStore>,
    owner: Arc<str>,
    lease_margin: Duration,
}

impl std::fmt::Debug for Journal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Journal")
            .field("location", &self.store.location())
            .field("owner", &self.owner)
            .finish()
    }
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
    /// A journal over `store`.
    pub fn new(store: impl JournalStore) -> Self {
        Journal::from_arc(Arc::new(store))
    }

    /// A journal over a shared store.
    pub fn from_arc(store: Arc<dyn JournalStore>) -> Self {
        Journal {
            store,
            owner: owner::new_owner().into(),
            lease_margin: Duration::from_secs(5),
        }
    }

    /// Opens the journal at `url`:
    /// - `sqlite://PATH` (feature `journal-sqlite`): the file at PATH,
    ///   created when missing (`sqlite:///abs/path` or
    ///   `sqlite://relative/path`);
    /// - `postgres://...` or `postgresql://...` (feature
    ///   `journal-postgres`): a PostgreSQL database, shared by every
    ///   instance that opens it;
    /// - `memory:`: this process's memory ([`MemoryJournal`](super::MemoryJournal)).
    ///
    /// The schema is created or migrated on open; a journal written by a
    /// newer version of this library is refused
    /// ([`JournalError::NewerSchema`]).
    pub async fn open(url: &str) -> Result<Self, JournalError> {
        if url == "memory:" || url == "memory://" {
            return Ok(Journal::new(super::MemoryJournal::new()));
        }
        if let Some(path) = url.strip_prefix("sqlite://") {
            return open_sqlite(url, path);
        }
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            return open_postgres(url).await;
        }
        Err(JournalError::Unsupported {
            url: super::redact_url(url),
            reason: "expected sqlite://PATH, postgres://... or memory:".to_owned(),
        })
    }

    /// How long past a call's own time bound (its timeout and grace) its
    /// owner still counts as running it (5 s by default).
    pub fn lease_margin(mut self, margin: Duration) -> Self {
        self.lease_margin = margin;
        self
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn JournalStore> {
        &self.store
    }

    /// This journal handle's owner name, written on the calls it starts.
    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// The record of one call.
    pub async fn call(&self, key: &CallKey) -> Result<Option<CallRecord>, JournalError> {
        Ok(self.store.get(key).await?.map(|s| s.record))
    }

    /// The records `query` asks for, ordered by run, turn and call id.
    pub async fn calls(&self, query: &CallQuery) -> Result<Vec<CallRecord>, JournalError> {
        Ok(self
            .store
            .find(query)
            .await?
            .into_iter()
            .map(|s| s.record)
            .collect())
    }

    /// The approvals still waiting for a decision (of run `run`, when
    /// given).
    pub async fn pending_approvals(
        &self,
        run: Option<&RunId>,
    ) -> Result<Vec<ApprovalEntry>, JournalError> {
        let query = CallQuery {
            run_id: run.cloned(),
            states: vec![CallState::AwaitingApproval],
            approval_id: None,
        };
        Ok(self
            .store
            .find(&query)
            .await?
            .into_iter()
            .filter_map(|s| s.record.approval)
            .collect())
    }

    /// The approval `id`, decided or not.
    pub async fn approval(&self, id: &str) -> Result<ApprovalEntry, JournalError> {
        let stored = self.find_approval(id).await?;
        stored
            .record
            .approval
            .ok_or_else(|| JournalError::UnknownApproval { id: id.to_owned() })
    }

    /// The runs with calls a [`resume`](crate::ToolExecutor::resume) would
    /// answer: decided approvals, calls received or started and not
    /// answered (never [`MCP_TASKS_RUN`](super::MCP_TASKS_RUN), whose
    /// records are MCP tasks).
    pub async fn runs_to_resume(&self) -> Result<Vec<RunId>, JournalError> {
        let query = CallQuery::all().in_states(RESUMABLE);
        let mut runs: Vec<RunId> = Vec::new();
        for stored in self.store.find(&query).await? {
            if stored.record.key.run_id.as_str() == super::MCP_TASKS_RUN {
                continue;
            }
            if !runs.contains(&stored.record.key.run_id) {
                runs.push(stored.record.key.run_id);
            }
        }
        Ok(runs)
    }

    /// Records a decision on approval `id`, from any instance. The call
    /// runs (or is answered with the rejection) when its run is resumed.
    ///
    /// Refused: an unknown id ([`JournalError::UnknownApproval`]), one
    /// already decided ([`JournalError::AlreadyDecided`]), one past its
    /// expiry ([`JournalError::Expired`]), and
    /// [`ApprovalDecision::Defer`] (nothing to record). Edited arguments
    /// are validated when the call runs;
    /// [`ToolExecutor::decide`](crate::ToolExecutor::decide) validates
    /// them now.
    pub async fn decide(
        &self,
        id: &str,
        decision: ApprovalDecision,
    ) -> Result<CallRecord, JournalError> {
        if decision == ApprovalDecision::Defer {
            return Err(JournalError::WrongState {
                key: id.to_owned(),
                state: CallState::AwaitingApproval,
                reason: "a deferral is not a decision: approve, reject or edit".to_owned(),
            });
        }
        loop {
            let Stored {
                mut record,
                revision,
            } = self.find_approval(id).await?;
            let Some(entry) = record.approval.as_mut() else {
                return Err(JournalError::UnknownApproval { id: id.to_owned() });
            };
            if let Some(done) = &entry.decision {
                return Err(JournalError::AlreadyDecided {
                    id: id.to_owned(),
                    decision: done.name().to_owned(),
                });
            }
            if record.state != CallState::AwaitingApproval {
                return Err(JournalError::WrongState {
                    key: record.key.to_string(),
                    state: record.state,
                    reason: "only a call awaiting approval can be decided".to_owned(),
                });
            }
            let now = SystemTime::now();
            if entry.request.expires_at.is_some_and(|at| at <= now) {
                return Err(JournalError::Expired { id: id.to_owned() });
            }
            let (approved, reason, fingerprint) = match &decision {
                ApprovalDecision::Approve => (true, None, record.fingerprint.clone()),
                ApprovalDecision::Reject { reason } => {
                    (false, Some(reason.clone()), record.fingerprint.clone())
                }
                ApprovalDecision::Edit { arguments } => {
                    record.arguments = arguments.clone();
                    (true, None, approval_fingerprint(&record.tool, arguments))
                }
                ApprovalDecision::Defer => unreachable!("refused above"),
            };
            entry.record = Some(ApprovalRecord {
                tool: record.tool.clone(),
                fingerprint,
                approved,
                reason,
                scope: GrantScope::Call,
                at: now,
            });
            entry.decision = Some(decision.clone());
            record.state = if approved {
                CallState::Approved
            } else {
                CallState::Denied
            };
            record.updated_at = to_unix_ms(now);
            if self.store.replace(&record, revision).await? {
                return Ok(record);
            }
        }
    }

    /// Approves `id` ([`decide`](Self::decide)).
    pub async fn approve(&self, id: &str) -> Result<CallRecord, JournalError> {
        self.decide(id, ApprovalDecision::Approve).await
    }

    /// Rejects `id` with a reason the model will see
    /// ([`decide`](Self::decide)).
    pub async fn deny(
        &self,
        id: &str,
        reason: impl Into<String>,
    ) -> Result<CallRecord, JournalError> {
        let reason = reason.into();
        self.decide(id, ApprovalDecision::Reject { reason }).await
    }

    /// Approves `id` with other arguments ([`decide`](Self::decide)).
    pub async fn edit(&self, id: &str, arguments: Value) -> Result<CallRecord, JournalError> {
        self.decide(id, ApprovalDecision::Edit { arguments }).await
    }

    /// Settles a call that may have run (state `started` with its owner
    /// gone, or answered `interrupted`) with what the application found
    /// out: `text` becomes its answer, an error when `is_error`. Every
    /// later delivery of the call gets this answer.
    pub async fn settle(
        &self,
        key: &CallKey,
        text: impl Into<String>,
        is_error: bool,
    ) -> Result<CallRecord, JournalError> {
        let text = text.into();
        loop {
            let Some(Stored {
                mut record,
                revision,
            }) = self.store.get(key).await?
            else {
                return Err(JournalError::UnknownCall {
                    key: key.to_string(),
                });
            };
            let interrupted = record
                .answer
                .as_ref()
                .is_some_and(|a| a.outcome == INTERRUPTED || a.settled);
            let stuck = record.state == CallState::Started && self.owner_gone(&record);
            if !(interrupted || stuck) {
                return Err(JournalError::WrongState {
                    key: key.to_string(),
                    state: record.state,
                    reason: "only a call answered `interrupted`, or started by an instance that is gone, can be settled".to_owned(),
                });
            }
            let message = ToolMessage {
                tool_call_id: key.call_id.clone(),
                name: record
                    .answer
                    .as_ref()
                    .map_or_else(|| record.tool.as_str().into(), |a| a.message.name.clone()),
                content: vec![ContentBlock::text(text.clone())],
                structured: None,
                is_error,
            };
            let answer = JournalAnswer {
                message,
                outcome: if is_error { "tool" } else { "ok" }.to_owned(),
                detail: None,
                class: is_error.then_some(ErrorClass::Fatal),
                settled: true,
                at: now_ms(),
            };
            answer_record(&mut record, answer);
            if self.store.replace(&record, revision).await? {
                return Ok(record);
            }
        }
    }

    /// Grants `tool` beyond one call, on every instance: in one run
    /// ([`GrantScope::Run`]) or in every run ([`GrantScope::AllRuns`]), for
    /// exactly `arguments` when given. A [`GrantScope::Call`] grant is
    /// refused: decide that call instead.
    pub async fn grant_standing(
        &self,
        tool: &str,
        scope: GrantScope,
        arguments: Option<&Value>,
    ) -> Result<(), JournalError> {
        if scope == GrantScope::Call {
            return Err(JournalError::WrongState {
                key: tool.to_owned(),
                state: CallState::AwaitingApproval,
                reason:
                    "a standing grant reaches a run or every run; decide one call with `decide`"
                        .to_owned(),
            });
        }
        let grant = StandingGrant {
            tool: tool.to_owned(),
            scope,
            fingerprint: arguments.map(|a| approval_fingerprint(tool, a)),
            at: now_ms(),
        };
        self.store.put_grant(&grant).await
    }

    /// Withdraws the standing grants for `tool` (every tool's when
    /// `None`); returns how many.
    pub async fn revoke_standing(&self, tool: Option<&str>) -> Result<u64, JournalError> {
        self.store.revoke_grants(tool).await
    }

    /// The logged events (of run `run`, when given), in order. Events are
    /// logged by the subscriber [`recorder`](Self::recorder).
    pub async fn events(&self, run: Option<&RunId>) -> Result<Vec<JournalEvent>, JournalError> {
        self.store.events(run).await
    }

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
    /// is recorded `received` (with its arguments, so a resume can run it).
    /// A call `started` by an owner still running is waited for (its answer
    /// is this call's); by an owner that is gone, it is answered
    /// `interrupted` unless `may_rerun` (a read-only or idempotent tool).
    pub(crate) async fn admit(
        &self,
        key: &CallKey,
        tool: &str,
        fingerprint: &str,
        arguments: &Value,
        may_rerun: bool,
        cancel: &CancellationToken,
    ) -> Result<Admission, JournalError> {
        let mut wait = Duration::from_millis(10);
        loop {
            let stored = match self.store.get(key).await? {
                Some(stored) => stored,
                None => {
                    let now = now_ms();
                    let record = CallRecord {
                        key: key.clone(),
                        tool: tool.to_owned(),
                        fingerprint: fingerprint.to_owned(),
                        arguments: arguments.clone(),
                        state: CallState::Received,
                        approval: None,
                        owner: None,
                        lease_until: None,
                        answer: None,
                        received_at: now,
                        updated_at: now,
                    };
                    match self.store.insert(&record).await? {
                        None => {
                            return Ok(Admission::Run(Box::new(Stored {
                                record,
                                revision: 1,
                            })));
                        }
                        Some(existing) => existing,
                    }
                }
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
                    let answer =
                        stored
                            .record
                            .answer
                            .clone()
                            .ok_or_else(|| JournalError::Corrupt {
                                location: self.store.location(),
                                reason: format!("call {key} is answered with no answer"),
                            })?;
                    return Ok(Admission::Answered(Box::new(answer)));
                }
                CallState::AwaitingApproval => {
                    let entry =
                        stored
                            .record
                            .approval
                            .clone()
                            .ok_or_else(|| JournalError::Corrupt {
                                location: self.store.location(),
                                reason: format!("call {key} awaits an approval it does not hold"),
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
    /// margin). `Err(Ok(admission))` when another instance changed the
    /// record first: the call is answered as the journal then says.
    pub(crate) async fn claim(
        &self,
        stored: &mut Stored,
        arguments: &Value,
        approval: Option<ApprovalRecord>,
        bound: Duration,
    ) -> Result<bool, JournalError> {
        let mut record = stored.record.clone();
        record.state = CallState::Started;
        record.arguments = arguments.clone();
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

    async fn find_approval(&self, id: &str) -> Result<Stored, JournalError> {
        let query = CallQuery {
            approval_id: Some(id.to_owned()),
            ..CallQuery::default()
        };
        self.store
            .find(&query)
            .await?
            .into_iter()
            .next()
            .ok_or_else(|| JournalError::UnknownApproval { id: id.to_owned() })
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
fn answer_record(record: &mut CallRecord, answer: JournalAnswer) {
    record.state = CallState::Answered;
    record.arguments = Value::Null;
    record.lease_until = None;
    record.updated_at = answer.at;
    record.answer = Some(answer);
}

/// Now, in milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> i64 {
    to_unix_ms(SystemTime::now())
}

#[cfg(feature = "journal-sqlite")]
fn open_sqlite(_url: &str, path: &str) -> Result<Journal, JournalError> {
    Ok(Journal::new(super::SqliteJournal::open(path)?))
}

#[cfg(not(feature = "journal-sqlite"))]
fn open_sqlite(url: &str, _path: &str) -> Result<Journal, JournalError> {
    Err(JournalError::Unsupported {
        url: url.to_owned(),
        reason: "this build has no SQLite journal: enable the cargo feature `journal-sqlite` of tinyagents-tools".to_owned(),
    })
}

#[cfg(feature = "journal-postgres")]
async fn open_postgres(url: &str) -> Result<Journal, JournalError> {
    Ok(Journal::new(super::PostgresJournal::connect(url).await?))
}

#[cfg(not(feature = "journal-postgres"))]
async fn open_postgres(url: &str) -> Result<Journal, JournalError> {
    Err(JournalError::Unsupported {
        url: super::redact_url(url),
        reason: "this build has no PostgreSQL journal: enable the cargo feature `journal-postgres` of tinyagents-tools".to_owned(),
    })
}
