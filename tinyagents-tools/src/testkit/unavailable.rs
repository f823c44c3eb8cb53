//! [`UnavailableJournal`]: a journal store whose database is down.

use async_trait::async_trait;

use crate::ids::RunId;
use crate::journal::{
    CallKey, CallQuery, CallRecord, JournalError, JournalEvent, JournalStore, StandingGrant, Stored,
};

/// A journal store whose every statement fails with
/// [`JournalError::Unavailable`] (a lost connection): for testing that
/// nothing runs unjournaled and that callers get a retryable error.
#[derive(Debug, Clone, Default)]
pub struct UnavailableJournal;

impl UnavailableJournal {
    fn lost() -> JournalError {
        JournalError::Unavailable {
            location: "postgres://app:***@db/tools".to_owned(),
            reason: "connection reset by peer".to_owned(),
        }
    }
}

#[async_trait]
impl JournalStore for UnavailableJournal {
    fn location(&self) -> String {
        "postgres://app:***@db/tools".to_owned()
    }
    async fn get(&self, _: &CallKey) -> Result<Option<Stored>, JournalError> {
        Err(Self::lost())
    }
    async fn insert(&self, _: &CallRecord) -> Result<Option<Stored>, JournalError> {
        Err(Self::lost())
    }
    async fn replace(&self, _: &CallRecord, _: u64) -> Result<bool, JournalError> {
        Err(Self::lost())
    }
    async fn find(&self, _: &CallQuery) -> Result<Vec<Stored>, JournalError> {
        Err(Self::lost())
    }
    async fn put_grant(&self, _: &StandingGrant) -> Result<(), JournalError> {
        Err(Self::lost())
    }
    async fn grants(&self, _: &str) -> Result<Vec<StandingGrant>, JournalError> {
        Err(Self::lost())
    }
    async fn revoke_grants(&self, _: Option<&str>) -> Result<u64, JournalError> {
        Err(Self::lost())
    }
    async fn append_events(&self, _: &[JournalEvent]) -> Result<(), JournalError> {
        Err(Self::lost())
    }
    async fn events(&self, _: Option<&RunId>) -> Result<Vec<JournalEvent>, JournalError> {
        Err(Self::lost())
    }
}
