//! [`Records`]: what an adapter keeps in a journal beside the calls (an MCP
//! server's tasks, the input states it accepted), kept the way calls are:
//! a JSON value by key, with a revision, every change a compare-and-set on
//! that revision, in every backend.
//!
//! A space of records is a run of the journal that holds no calls: each
//! record is a [`CallRecord`] of the run named after the space, at turn 0,
//! its key as the call id, its value as the `arguments`, the time of its
//! last write as both its times, and state `answered`, so that the executor never runs, resumes or answers it and
//! [`Journal::runs_to_resume`] never lists its space.

use std::sync::Arc;

use serde_json::Value;

use super::handle::{Journal, now_ms};
use super::record::{CallKey, CallRecord, CallState};
use super::store::{CallQuery, JournalError, JournalStore, Stored};
use crate::ids::RunId;

/// The records of one space in a journal ([`Journal::records`]): cheap to
/// clone, and every clone, in this process or another opening the same
/// journal, sees the same records.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use serde_json::json;
/// use tinyagents_tools::journal::Journal;
///
/// let journal = Journal::open("memory:").await?;
/// let jobs = journal.records("my-adapter-jobs");
/// assert!(jobs.insert("job-1", &json!({"status": "working"})).await?.is_none());
/// let kept = jobs.get("job-1").await?.expect("kept");
/// assert_eq!(kept.revision, 1);
/// // A writer that read revision 1 wins once; a second one finds it moved.
/// assert!(jobs.replace("job-1", &json!({"status": "done"}), 1).await?);
/// assert!(!jobs.replace("job-1", &json!({"status": "lost"}), 1).await?);
/// assert_eq!(jobs.get("job-1").await?.unwrap().value["status"], "done");
/// // A space holds no calls: nothing in it is a run to resume.
/// assert!(journal.runs_to_resume().await?.is_empty());
/// # Ok::<(), tinyagents_tools::journal::JournalError>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct Records {
    store: Arc<dyn JournalStore>,
    space: RunId,
}

/// One record as read, with its revision.
#[derive(Debug, Clone, PartialEq)]
pub struct KeptRecord {
    /// Its key in the space.
    pub key: String,
    /// Its value.
    pub value: Value,
    /// Its revision: 1 when inserted, one more at each replacement.
    pub revision: u64,
    /// When it was last written (ms since the Unix epoch).
    pub updated_at: i64,
}

impl Journal {
    /// The records kept in space `space` (see [`Records`]). A space is a
    /// run of the journal of its own: name it so that no run of calls is
    /// named the same (an adapter's prefix, `mcp-tasks`).
    pub fn records(&self, space: impl Into<RunId>) -> Records {
        Records {
            store: Arc::clone(self.store()),
            space: space.into(),
        }
    }
}

impl Records {
    /// The space's name.
    pub fn space(&self) -> &RunId {
        &self.space
    }

    /// Keeps `value` under `key` at revision 1, unless `key` is taken:
    /// then nothing is written and the record there is returned.
    pub async fn insert(
        &self,
        key: &str,
        value: &Value,
    ) -> Result<Option<KeptRecord>, JournalError> {
        let record = self.record(key, value.clone());
        Ok(self.store.insert(&record).await?.map(kept))
    }

    /// The record under `key`, if one is kept.
    pub async fn get(&self, key: &str) -> Result<Option<KeptRecord>, JournalError> {
        let at = CallKey::new(self.space.clone(), 0, key);
        Ok(self.store.get(&at).await?.map(kept))
    }

    /// Replaces the value under `key` with `value` if the record is still
    /// at `revision` (then it is at `revision + 1`, and this returns true);
    /// returns false, writing nothing, when another writer got there first
    /// or no record is kept under `key`.
    pub async fn replace(
        &self,
        key: &str,
        value: &Value,
        revision: u64,
    ) -> Result<bool, JournalError> {
        let record = self.record(key, value.clone());
        self.store.replace(&record, revision).await
    }

    /// Every record of the space, ordered by key.
    pub async fn all(&self) -> Result<Vec<KeptRecord>, JournalError> {
        let query = CallQuery::run(self.space.clone());
        Ok(self
            .store
            .find(&query)
            .await?
            .into_iter()
            .map(kept)
            .collect())
    }

    /// The call record that keeps `value` under `key`, written now.
    fn record(&self, key: &str, value: Value) -> CallRecord {
        let at = CallKey::new(self.space.clone(), 0, key);
        CallRecord::new(at, "", "", value, CallState::Answered, now_ms())
    }
}

/// The record a stored call record keeps.
fn kept(stored: Stored) -> KeptRecord {
    let Stored { record, revision } = stored;
    KeptRecord {
        key: record.key.call_id.as_str().to_owned(),
        value: record.arguments,
        revision,
        updated_at: record.updated_at,
    }
}

impl std::fmt::Debug for Records {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Records")
            .field("location", &self.store.location())
            .field("space", &self.space)
            .finish()
    }
}
