//! [`JournalStore`]: the one trait a journal backend implements, and its
//! errors ([`JournalError`]).
//!
//! A backend keeps call records by key with a revision, and replaces a
//! record only at the revision its writer read: the database, not process
//! memory, decides which of two instances claims a call. Everything else
//! (the states, approvals, leases, what a delivery is answered with) is the
//! [`Journal`](super::Journal)'s, the same for every backend.

use std::sync::Arc;

use async_trait::async_trait;
use thiserror::Error;

use super::record::{CallKey, CallRecord, CallState, JournalEvent, StandingGrant};
use crate::error::ErrorClass;
use crate::ids::RunId;

/// A record as stored, with its revision (1 when inserted, one more at
/// each replacement).
#[derive(Debug, Clone, PartialEq)]
pub struct Stored {
    /// The record.
    pub record: CallRecord,
    /// Its revision.
    pub revision: u64,
}

/// Which records [`JournalStore::find`] returns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallQuery {
    /// Only this run's.
    pub run_id: Option<RunId>,
    /// Only records in one of these states (every state when empty).
    pub states: Vec<CallState>,
    /// Only the record with this approval id.
    pub approval_id: Option<String>,
}

impl CallQuery {
    /// Every record.
    pub fn all() -> Self {
        CallQuery::default()
    }

    /// The records of run `run`.
    pub fn run(run: impl Into<RunId>) -> Self {
        CallQuery {
            run_id: Some(run.into()),
            ..CallQuery::default()
        }
    }

    /// Only records in `states`.
    pub fn in_states(mut self, states: impl IntoIterator<Item = CallState>) -> Self {
        self.states = states.into_iter().collect();
        self
    }

    /// True when `record` is one of the records asked for.
    pub fn matches(&self, record: &CallRecord) -> bool {
        self.run_id.as_ref().is_none_or(|r| *r == record.key.run_id)
            && (self.states.is_empty() || self.states.contains(&record.state))
            && self
                .approval_id
                .as_deref()
                .is_none_or(|id| record.approval_id() == Some(id))
    }
}

/// Where a journal keeps its records: SQLite, PostgreSQL, memory, or the
/// application's own database.
///
/// Every backend passes the same test suite (`tests/journal` in the
/// project). Records are written whole, in their JSON form
/// ([`CallRecord`]); a backend may also keep columns for the fields it
/// looks records up by (key, state, approval id).
#[async_trait]
pub trait JournalStore: Send + Sync + 'static {
    /// Where the records are, for errors and logs (a path, or a URL with
    /// no password).
    fn location(&self) -> String;

    /// The record at `key`.
    async fn get(&self, key: &CallKey) -> Result<Option<Stored>, JournalError>;

    /// Inserts `record` at revision 1, unless a record with its key is
    /// there: then nothing is written and that record is returned.
    async fn insert(&self, record: &CallRecord) -> Result<Option<Stored>, JournalError>;

    /// Replaces the record at `record.key` with `record` if it is still at
    /// `revision` (then it is at `revision + 1`, and this returns true);
    /// returns false, writing nothing, when another writer got there first
    /// or no record is there.
    async fn replace(&self, record: &CallRecord, revision: u64) -> Result<bool, JournalError>;

    /// The records `query` asks for, ordered by run, turn and call id.
    async fn find(&self, query: &CallQuery) -> Result<Vec<Stored>, JournalError>;

    /// Keeps a standing grant.
    async fn put_grant(&self, grant: &StandingGrant) -> Result<(), JournalError>;

    /// The standing grants for `tool`.
    async fn grants(&self, tool: &str) -> Result<Vec<StandingGrant>, JournalError>;

    /// Withdraws the standing grants for `tool` (every tool's when
    /// `None`); returns how many were withdrawn.
    async fn revoke_grants(&self, tool: Option<&str>) -> Result<u64, JournalError>;

    /// Appends events to the event log, in order.
    async fn append_events(&self, events: &[JournalEvent]) -> Result<(), JournalError>;

    /// The logged events (of run `run`, when given), in the order appended,
    /// each with its `seq`.
    async fn events(&self, run: Option<&RunId>) -> Result<Vec<JournalEvent>, JournalError>;
}

/// A shared store: journals over one store share its records (two
/// instances of a test, a store the application also reads).
#[async_trait]
impl<T: JournalStore + ?Sized> JournalStore for Arc<T> {
    fn location(&self) -> String {
        (**self).location()
    }

    async fn get(&self, key: &CallKey) -> Result<Option<Stored>, JournalError> {
        (**self).get(key).await
    }

    async fn insert(&self, record: &CallRecord) -> Result<Option<Stored>, JournalError> {
        (**self).insert(record).await
    }

    async fn replace(&self, record: &CallRecord, revision: u64) -> Result<bool, JournalError> {
        (**self).replace(record, revision).await
    }

    async fn find(&self, query: &CallQuery) -> Result<Vec<Stored>, JournalError> {
        (**self).find(query).await
    }

    async fn put_grant(&self, grant: &StandingGrant) -> Result<(), JournalError> {
        (**self).put_grant(grant).await
    }

    async fn grants(&self, tool: &str) -> Result<Vec<StandingGrant>, JournalError> {
        (**self).grants(tool).await
    }

    async fn revoke_grants(&self, tool: Option<&str>) -> Result<u64, JournalError> {
        (**self).revoke_grants(tool).await
    }

    async fn append_events(&self, events: &[JournalEvent]) -> Result<(), JournalError> {
        (**self).append_events(events).await
    }

    async fn events(&self, run: Option<&RunId>) -> Result<Vec<JournalEvent>, JournalError> {
        (**self).events(run).await
    }
}

/// What went wrong with a journal.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum JournalError {
    /// The journal could not be opened: a missing directory, a file that
    /// is not a database, a server that refused.
    #[error("cannot open the journal at {location}: {reason}")]
    Open {
        /// The path or URL (no password).
        location: String,
        /// Why.
        reason: String,
    },
    /// The database holds something else: tables of its own and no
    /// journal schema.
    #[error("{location} is not a tinyagents journal: {reason}")]
    Foreign {
        /// The path or URL (no password).
        location: String,
        /// What was found.
        reason: String,
    },
    /// The journal was written by a newer version of this library.
    #[error(
        "the journal at {location} has schema version {found}; this build reads versions up to {supported}: upgrade tinyagents-tools"
    )]
    NewerSchema {
        /// The path or URL (no password).
        location: String,
        /// The version found.
        found: i64,
        /// The newest version this build knows.
        supported: i64,
    },
    /// The URL names a backend this build was compiled without.
    #[error("journal URL {url}: {reason}")]
    Unsupported {
        /// The URL (no password).
        url: String,
        /// What to do about it.
        reason: String,
    },
    /// The database could not be reached or failed a statement (a lost
    /// connection, a busy file): the call was not run; trying again may
    /// succeed.
    #[error("the journal at {location} is unavailable: {reason}")]
    Unavailable {
        /// The path or URL (no password).
        location: String,
        /// Why.
        reason: String,
    },
    /// A stored record could not be read back.
    #[error("a record of the journal at {location} is corrupt: {reason}")]
    Corrupt {
        /// The path or URL (no password).
        location: String,
        /// Why.
        reason: String,
    },
    /// No approval has this id.
    #[error("no approval {id} is in the journal")]
    UnknownApproval {
        /// The id asked for.
        id: String,
    },
    /// The approval was decided already.
    #[error("approval {id} was already decided ({decision})")]
    AlreadyDecided {
        /// The id.
        id: String,
        /// What was decided (`approve`, `reject`, `edit`).
        decision: String,
    },
    /// The approval lapsed before it was decided.
    #[error("approval {id} expired before it was decided")]
    Expired {
        /// The id.
        id: String,
    },
    /// The edited arguments do not validate against the tool's input
    /// schema.
    #[error("the edited arguments for approval {id} are refused: {reason}")]
    InvalidEdit {
        /// The id.
        id: String,
        /// Every problem found.
        reason: String,
    },
    /// No call has this key.
    #[error("no call {key} is in the journal")]
    UnknownCall {
        /// The key.
        key: String,
    },
    /// The call is not in a state that allows what was asked (settling a
    /// call that was answered normally, say).
    #[error("call {key} is {state}: {reason}")]
    WrongState {
        /// The key.
        key: String,
        /// Its state.
        state: CallState,
        /// What is allowed instead.
        reason: String,
    },
}

impl JournalError {
    /// What the caller should do: [`ErrorClass::Retry`] for an unavailable
    /// database, [`ErrorClass::Repair`] for a decision or settlement the
    /// caller can correct, [`ErrorClass::Fatal`] otherwise.
    pub fn class(&self) -> ErrorClass {
        match self {
            JournalError::Unavailable { .. } => ErrorClass::Retry,
            JournalError::UnknownApproval { .. }
            | JournalError::AlreadyDecided { .. }
            | JournalError::Expired { .. }
            | JournalError::InvalidEdit { .. }
            | JournalError::UnknownCall { .. }
            | JournalError::WrongState { .. } => ErrorClass::Repair,
            _ => ErrorClass::Fatal,
        }
    }

    /// A short stable name (`unavailable`, `unknown_approval`, ...).
    pub fn kind(&self) -> &'static str {
        match self {
            JournalError::Open { .. } => "open",
            JournalError::Foreign { .. } => "foreign",
            JournalError::NewerSchema { .. } => "newer_schema",
            JournalError::Unsupported { .. } => "unsupported",
            JournalError::Unavailable { .. } => "unavailable",
            JournalError::Corrupt { .. } => "corrupt",
            JournalError::UnknownApproval { .. } => "unknown_approval",
            JournalError::AlreadyDecided { .. } => "already_decided",
            JournalError::Expired { .. } => "expired",
            JournalError::InvalidEdit { .. } => "invalid_edit",
            JournalError::UnknownCall { .. } => "unknown_call",
            JournalError::WrongState { .. } => "wrong_state",
        }
    }
}

/// The schema version every backend of this build writes; a journal with a
/// newer one is refused ([`JournalError::NewerSchema`]).
pub const SCHEMA_VERSION: i64 = 1;
