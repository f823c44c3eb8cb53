//! [`JournalTaskStore`]: MCP tasks kept in a call journal, so that every
//! instance opening the journal answers for them and they outlive a
//! restart.

use async_trait::async_trait;
use rmcp::model::TaskStatus;

use super::store::{StoredTask, TaskRecord, TaskStore, TaskStoreError};
use crate::journal::{CallKey, CallRecord, CallState, Journal, MCP_TASKS_RUN};

/// Keeps MCP tasks in a call [`Journal`]: each task is one call record of
/// the run [`MCP_TASKS_RUN`], at turn 0, under the task id, with the task
/// ([`TaskRecord`]) as its `arguments`. Every change is the journal's
/// compare-and-set on the record's revision, so instances sharing a
/// PostgreSQL journal share their tasks, and a task outlives the process
/// that made it.
///
/// The record's state follows the task's: `started` while it works (with
/// the owner and its lease), `received` while it waits for input,
/// `answered` once it ended.
#[derive(Debug, Clone)]
pub struct JournalTaskStore {
    journal: Journal,
}

impl JournalTaskStore {
    /// Tasks kept in `journal`.
    pub fn new(journal: Journal) -> Self {
        JournalTaskStore { journal }
    }

    /// The journal.
    pub fn journal(&self) -> &Journal {
        &self.journal
    }
}

fn key(task_id: &str) -> CallKey {
    CallKey::new(MCP_TASKS_RUN, 0, task_id)
}

/// The call record that keeps `task`.
fn record(task: &TaskRecord) -> Result<CallRecord, TaskStoreError> {
    let state = match task.status {
        TaskStatus::Working => CallState::Started,
        TaskStatus::InputRequired => CallState::Received,
        _ => CallState::Answered,
    };
    let arguments = serde_json::to_value(task).map_err(|e| TaskStoreError::Corrupt {
        task_id: task.task_id.clone(),
        reason: e.to_string(),
    })?;
    let record = CallRecord::new(
        key(&task.task_id),
        &task.tool,
        &task.fingerprint,
        arguments,
        state,
        task.updated_at,
    );
    Ok(CallRecord {
        owner: task.owner.clone(),
        lease_until: task.lease_until,
        received_at: task.created_at,
        ..record
    })
}

/// The task a call record keeps.
fn task(record: CallRecord) -> Result<TaskRecord, TaskStoreError> {
    serde_json::from_value(record.arguments).map_err(|e| TaskStoreError::Corrupt {
        task_id: record.key.call_id.as_str().to_owned(),
        reason: e.to_string(),
    })
}

#[async_trait]
impl TaskStore for JournalTaskStore {
    async fn create(&self, task: &TaskRecord) -> Result<(), TaskStoreError> {
        match self.journal.store().insert(&record(task)?).await? {
            None => Ok(()),
            Some(_) => Err(TaskStoreError::Duplicate {
                task_id: task.task_id.clone(),
            }),
        }
    }

    async fn get(&self, task_id: &str) -> Result<Option<StoredTask>, TaskStoreError> {
        let Some(stored) = self.journal.store().get(&key(task_id)).await? else {
            return Ok(None);
        };
        Ok(Some(StoredTask {
            task: task(stored.record)?,
            revision: stored.revision,
        }))
    }

    async fn replace(&self, task: &TaskRecord, revision: u64) -> Result<bool, TaskStoreError> {
        Ok(self
            .journal
            .store()
            .replace(&record(task)?, revision)
            .await?)
    }
}
