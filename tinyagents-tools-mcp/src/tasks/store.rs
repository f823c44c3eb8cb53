//! [`TaskStore`]: where an MCP server keeps its tasks ([`TaskRecord`]), and
//! [`MemoryTaskStore`], the store of one process.
//!
//! A store keeps each task with a revision and replaces it only at the
//! revision its writer read, as the call journal does: every change of a
//! task (its body ending, an answer, a cancellation) is a compare-and-set,
//! so two instances sharing a store never lose each other's writes.

use std::collections::HashMap;
use std::sync::Mutex;

use async_trait::async_trait;
use rmcp::model::TaskStatus;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::sync::lock;
use tinyagents_tools::journal::JournalError;

/// One task as a store keeps it: the call, where it is, what it waits for
/// and how it ended. Times are milliseconds since the Unix epoch.
///
/// Its JSON form: `{"task_id", "tool", "arguments", "arguments_text"?,
/// "fingerprint",
/// "status", "status_message"?, "approval"?, "input_requests", "answers", "result"?,
/// "error"?, "client_capabilities"?, "attempt", "owner"?, "lease_until"?,
/// "created_at", "updated_at", "ttl_ms"?, "poll_interval_ms"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRecord {
    /// The task's id: 32 random hex digits.
    pub task_id: String,
    /// The tool called.
    pub tool: String,
    /// The call's arguments.
    pub arguments: Value,
    /// The arguments as the client sent them, when the transport kept
    /// their text: the body runs with it, so the executor's rules on the
    /// text (a repeated key is refused) hold on every run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments_text: Option<String>,
    /// SHA-256 of the tool name and the arguments
    /// ([`approval_fingerprint`](tinyagents_tools::approval::approval_fingerprint)).
    pub fingerprint: String,
    /// Where the task is.
    pub status: TaskStatus,
    /// A message about the status, for the client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// The approval (`apr_...`) the task's call waits for in the executor's
    /// journal (status `working`, no instance running it): once it is
    /// decided, the instance asked about the task runs the call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<String>,
    /// What the task asks its client and is not answered yet (status
    /// `input_required`): MCP `InputRequest`s by key.
    #[serde(default)]
    pub input_requests: Map<String, Value>,
    /// Every answer the client gave, by key: the body finds them when it
    /// runs again.
    #[serde(default)]
    pub answers: Map<String, Value>,
    /// The tool's result, an MCP `CallToolResult` (status `completed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The JSON-RPC error `{"code", "message", "data"?}` (status `failed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<Value>,
    /// The capabilities the client declared when it called, for the
    /// body's questions on every run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_capabilities: Option<Value>,
    /// How many times the body has started (it runs again after answers).
    pub attempt: u32,
    /// The instance running the body (status `working`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// Until when the owner counts as running the body: it renews the
    /// lease while it does; past it, the owner is gone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_until: Option<i64>,
    /// When the task was created.
    pub created_at: i64,
    /// When it last changed.
    pub updated_at: i64,
    /// How long after its creation the task is kept at least (`None`:
    /// without limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// How often the client is asked to poll.
    pub poll_interval_ms: u64,
}

impl TaskRecord {
    /// True when the task's time to live has passed at `now` (ms).
    pub fn expired(&self, now: i64) -> bool {
        self.ttl_ms
            .is_some_and(|ttl| self.created_at.saturating_add(ttl as i64) < now)
    }
}

/// A task as stored, with its revision (1 when created, one more at each
/// replacement).
#[derive(Debug, Clone, PartialEq)]
pub struct StoredTask {
    /// The task.
    pub task: TaskRecord,
    /// Its revision.
    pub revision: u64,
}

/// Where an MCP server keeps its tasks: this process's memory
/// ([`MemoryTaskStore`], the default), a call journal
/// ([`JournalTaskStore`](super::JournalTaskStore), shared by every instance
/// that opens it), or the application's own database.
///
/// A task is written before the client is told its id, and every change
/// is a compare-and-set on its revision.
#[async_trait]
pub trait TaskStore: Send + Sync + 'static {
    /// Keeps a new task at revision 1; refuses an id that is taken
    /// ([`TaskStoreError::Duplicate`]).
    async fn create(&self, task: &TaskRecord) -> Result<(), TaskStoreError>;

    /// The task `task_id`, if the store has it.
    async fn get(&self, task_id: &str) -> Result<Option<StoredTask>, TaskStoreError>;

    /// Replaces the task at `task.task_id` with `task` if it is still at
    /// `revision` (then it is at `revision + 1`, and this returns true);
    /// returns false, writing nothing, when another writer got there first
    /// or the task is gone.
    async fn replace(&self, task: &TaskRecord, revision: u64) -> Result<bool, TaskStoreError>;
}

/// What went wrong with a task store.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TaskStoreError {
    /// The journal under a [`JournalTaskStore`](super::JournalTaskStore)
    /// failed.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// Another task has this id.
    #[error("a task with id {task_id} is already stored")]
    Duplicate {
        /// The id.
        task_id: String,
    },
    /// A stored task could not be read back.
    #[error("the stored task {task_id} is corrupt: {reason}")]
    Corrupt {
        /// The id.
        task_id: String,
        /// Why.
        reason: String,
    },
    /// The application's own store failed.
    #[error("the task store failed: {0}")]
    Backend(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// The tasks of one process, in memory: shared by every session of the
/// server, gone with the process. A task past its time to live is
/// forgotten once it is not running.
#[derive(Debug, Default)]
pub struct MemoryTaskStore {
    tasks: Mutex<HashMap<String, StoredTask>>,
}

impl MemoryTaskStore {
    /// An empty store.
    pub fn new() -> Self {
        MemoryTaskStore::default()
    }
}

/// True when a store may forget `task` at `now`: past its time to live
/// and not running.
fn forgettable(task: &TaskRecord, now: i64) -> bool {
    task.expired(now) && task.status != TaskStatus::Working
}

#[async_trait]
impl TaskStore for MemoryTaskStore {
    async fn create(&self, task: &TaskRecord) -> Result<(), TaskStoreError> {
        let now = crate::clock::now_ms();
        let mut tasks = lock(&self.tasks);
        tasks.retain(|_, stored| !forgettable(&stored.task, now));
        if tasks.contains_key(&task.task_id) {
            return Err(TaskStoreError::Duplicate {
                task_id: task.task_id.clone(),
            });
        }
        let stored = StoredTask {
            task: task.clone(),
            revision: 1,
        };
        tasks.insert(task.task_id.clone(), stored);
        Ok(())
    }

    async fn get(&self, task_id: &str) -> Result<Option<StoredTask>, TaskStoreError> {
        let now = crate::clock::now_ms();
        Ok(lock(&self.tasks)
            .get(task_id)
            .filter(|stored| !forgettable(&stored.task, now))
            .cloned())
    }

    async fn replace(&self, task: &TaskRecord, revision: u64) -> Result<bool, TaskStoreError> {
        match lock(&self.tasks).get_mut(&task.task_id) {
            Some(kept) if kept.revision == revision => {
                kept.task = task.clone();
                kept.revision = revision + 1;
                Ok(true)
            }
            _ => Ok(false),
        }
    }
}
