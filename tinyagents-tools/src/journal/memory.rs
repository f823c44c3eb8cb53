//! [`MemoryJournal`]: a journal store in this process's memory.

use std::collections::BTreeMap;
use std::sync::Mutex;

use async_trait::async_trait;

use super::record::{CallKey, CallRecord, JournalEvent, StandingGrant};
use super::store::{CallQuery, JournalError, JournalStore, Stored};
use crate::ids::RunId;
use crate::util::sync::lock;

/// A journal store in memory: every promise of the journal within one
/// process (a call answered once, a side effect run at most once, approvals
/// that wait for a decision), none across a restart. For tests, and for
/// applications that want pending approvals without a database.
#[derive(Debug, Default)]
pub struct MemoryJournal {
    calls: Mutex<BTreeMap<CallKey, Stored>>,
    grants: Mutex<Vec<StandingGrant>>,
    events: Mutex<Vec<JournalEvent>>,
}

impl MemoryJournal {
    /// An empty journal.
    pub fn new() -> Self {
        MemoryJournal::default()
    }
}

/// A value a store in memory keeps with its revision.
pub(crate) trait AtRevision {
    /// The value kept.
    type Value: Clone;

    /// The value and its revision.
    fn parts(&mut self) -> (&mut Self::Value, &mut u64);
}

impl AtRevision for Stored {
    type Value = CallRecord;

    fn parts(&mut self) -> (&mut CallRecord, &mut u64) {
        (&mut self.record, &mut self.revision)
    }
}

/// The compare-and-set of a store in memory: what is `kept` (if anything
/// is) takes `value` at the next revision if it is still at `revision`;
/// returns whether it did.
pub(crate) fn replace_at_revision<S: AtRevision>(
    kept: Option<&mut S>,
    value: &S::Value,
    revision: u64,
) -> bool {
    match kept.map(S::parts) {
        Some((kept, at)) if *at == revision => {
            *kept = value.clone();
            *at = revision + 1;
            true
        }
        _ => false,
    }
}

#[async_trait]
impl JournalStore for MemoryJournal {
    fn location(&self) -> String {
        "memory:".to_owned()
    }

    async fn get(&self, key: &CallKey) -> Result<Option<Stored>, JournalError> {
        Ok(lock(&self.calls).get(key).cloned())
    }

    async fn insert(&self, record: &CallRecord) -> Result<Option<Stored>, JournalError> {
        let mut calls = lock(&self.calls);
        if let Some(existing) = calls.get(&record.key) {
            return Ok(Some(existing.clone()));
        }
        let stored = Stored {
            record: record.clone(),
            revision: 1,
        };
        calls.insert(record.key.clone(), stored);
        Ok(None)
    }

    async fn replace(&self, record: &CallRecord, revision: u64) -> Result<bool, JournalError> {
        let mut calls = lock(&self.calls);
        let kept = calls.get_mut(&record.key);
        Ok(replace_at_revision(kept, record, revision))
    }

    async fn find(&self, query: &CallQuery) -> Result<Vec<Stored>, JournalError> {
        Ok(lock(&self.calls)
            .values()
            .filter(|s| query.matches(&s.record))
            .cloned()
            .collect())
    }

    async fn put_grant(&self, grant: &StandingGrant) -> Result<(), JournalError> {
        lock(&self.grants).push(grant.clone());
        Ok(())
    }

    async fn grants(&self, tool: &str) -> Result<Vec<StandingGrant>, JournalError> {
        Ok(lock(&self.grants)
            .iter()
            .filter(|g| g.tool == tool)
            .cloned()
            .collect())
    }

    async fn revoke_grants(&self, tool: Option<&str>) -> Result<u64, JournalError> {
        let mut grants = lock(&self.grants);
        let before = grants.len();
        grants.retain(|g| tool.is_some_and(|t| g.tool != t));
        Ok((before - grants.len()) as u64)
    }

    async fn append_events(&self, events: &[JournalEvent]) -> Result<(), JournalError> {
        let mut log = lock(&self.events);
        for event in events {
            let mut event = event.clone();
            event.seq = log.len() as i64 + 1;
            log.push(event);
        }
        Ok(())
    }

    async fn events(&self, run: Option<&RunId>) -> Result<Vec<JournalEvent>, JournalError> {
        Ok(lock(&self.events)
            .iter()
            .filter(|e| run.is_none_or(|r| e.run_id == *r))
            .cloned()
            .collect())
    }
}
