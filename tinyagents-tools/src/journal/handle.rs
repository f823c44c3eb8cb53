//! [`Journal`]: the call journal's states and rules over a
//! [`JournalStore`], the same for every backend.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde_json::Value;

use super::lifecycle::{RESUMABLE, answer_record};
use super::owner;
use super::record::{
    ApprovalEntry, CallKey, CallRecord, CallState, JournalAnswer, JournalEvent, StandingGrant,
};
use super::store::{CallQuery, JournalError, JournalStore, Stored};
use crate::approval::{
    ApprovalDecision, ApprovalRecord, GrantScope, approval_fingerprint, to_unix_ms,
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
    pub(super) store: Arc<dyn JournalStore>,
    pub(super) owner: Arc<str>,
    pub(super) lease_margin: Duration,
}

impl std::fmt::Debug for Journal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Journal")
            .field("location", &self.store.location())
            .field("owner", &self.owner)
            .finish()
    }
}

impl Journal {
    /// A journal over `store` (an `Arc<T>` of one, for journals that share
    /// it).
    pub fn new(store: impl JournalStore) -> Self {
        Journal {
            store: Arc::new(store),
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
    /// answered (never a space of [`records`](Self::records), which holds
    /// no calls).
    pub async fn runs_to_resume(&self) -> Result<Vec<RunId>, JournalError> {
        let query = CallQuery::all().in_states(RESUMABLE);
        let mut runs: Vec<RunId> = Vec::new();
        for stored in self.store.find(&query).await? {
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
