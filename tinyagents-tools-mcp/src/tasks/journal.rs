//! [`JournalTaskStore`]: MCP tasks kept in a call journal, so that every
//! instance opening the journal answers for them and they outlive a
//! restart.

use async_trait::async_trait;

use super::store::{StoredTask, TaskRecord, TaskStore, TaskStoreError};
use tinyagents_tools::journal::{Journal, KeptRecord, Records};

/// The space of [`Journal::records`] in which a [`JournalTaskStore`] keeps
/// its tasks: one record per task, under the task id, the task
/// ([`TaskRecord`]) as its value.
pub const TASKS_SPACE: &str = "mcp-tasks";

/// Keeps MCP tasks in a call [`Journal`], as records of the space
/// [`TASKS_SPACE`]. Every change is the journal's compare-and-set on the
/// record's revision, so instances sharing a PostgreSQL journal share
/// their tasks, and a task outlives the process that made it. The journal
/// never takes a task for a call: it is never run, resumed or answered as
/// one.
#[derive(Debug, Clone)]
pub struct JournalTaskStore {
    journal: Journal,
    records: Records,
}

impl JournalTaskStore {
    /// Tasks kept in `journal`.
    pub fn new(journal: Journal) -> Self {
        JournalTaskStore {
            records: journal.records(TASKS_SPACE),
            journal,
        }
    }

    /// The journal.
    pub fn journal(&self) -> &Journal {
        &self.journal
    }
}

/// The value that keeps `task`.
fn value(task: &TaskRecord) -> Result<serde_json::Value, TaskStoreError> {
    serde_json::to_value(task).map_err(|e| TaskStoreError::Corrupt {
        task_id: task.task_id.clone(),
        reason: e.to_string(),
    })
}

/// The task a record keeps.
fn task(record: KeptRecord) -> Result<StoredTask, TaskStoreError> {
    let task = serde_json::from_value(record.value).map_err(|e| TaskStoreError::Corrupt {
        task_id: record.key.clone(),
        reason: e.to_string(),
    })?;
    Ok(StoredTask {
        task,
        revision: record.revision,
    })
}

#[async_trait]
impl TaskStore for JournalTaskStore {
    async fn create(&self, task: &TaskRecord) -> Result<(), TaskStoreError> {
        match self.records.insert(&task.task_id, &value(task)?).await? {
            None => Ok(()),
            Some(_) => Err(TaskStoreError::Duplicate {
                task_id: task.task_id.clone(),
            }),
        }
    }

    async fn get(&self, task_id: &str) -> Result<Option<StoredTask>, TaskStoreError> {
        self.records.get(task_id).await?.map(task).transpose()
    }

    async fn replace(&self, task: &TaskRecord, revision: u64) -> Result<bool, TaskStoreError> {
        Ok(self
            .records
            .replace(&task.task_id, &value(task)?, revision)
            .await?)
    }
}
