//! MCP tasks (the `io.modelcontextprotocol/tasks` extension, SEP-2663): a
//! call of a long-running tool answered at once with a task handle, its
//! body run in the background, the client polling `tasks/get`.
//!
//! A tool says it may run so with
//! [`TaskSupport`](tinyagents_tools::spec::TaskSupport) (`#[tool(task = "optional")]`
//! or `"required"`); the server then declares the extension. When the
//! client of a `tools/call` declared it too (in the request's `_meta` or
//! at `initialize`):
//!
//! - the task is written to the server's [`TaskStore`] first, and only
//!   then is the client answered `CreateTaskResult` (`resultType: "task"`,
//!   the task's id, status, times, `ttlMs` and `pollIntervalMs`); the body
//!   runs through the executor in the background, like any call;
//! - `tasks/get` answers the task: `working`; `input_required` with the
//!   `inputRequests` the body asked through its
//!   [`McpPeer`](super::McpPeer) (the body stops there); `completed` with
//!   the tool's result inlined (a tool error is `completed` with
//!   `isError: true`); `failed` with the JSON-RPC `error` of a panic, a
//!   crash or a missing client capability; `cancelled`;
//! - a call that waits in the executor's journal for a person's approval
//!   ([`ConfirmationPolicy::deferred`](tinyagents_tools::policy::ConfirmationPolicy::deferred)
//!   with a journal) leaves its task `working`, with no instance running
//!   it and a `statusMessage` that names the approval (`awaiting approval
//!   apr_...: the call has not run; ...`): SEP-2663 keeps `input_required`
//!   for requests the client answers, and a person decides this one
//!   elsewhere. Once the decision is in the journal, the instance asked
//!   `tasks/get` claims the task (a compare-and-set on it) and makes the
//!   call again under its journal key: the journal's claim runs an
//!   approved call once, and the task is `completed` with its result; a
//!   refusal or the approval's expiry makes it `failed`, with
//!   [`APPROVAL_REFUSED`] and the reason;
//! - `tasks/update` takes answers to the pending requests (answers to
//!   other keys are ignored); once every one is answered, the body runs
//!   again from its start with all the answers, as input rounds do;
//! - `tasks/cancel` marks the task `cancelled` and fires the running
//!   body's cancellation token; cancelling an ended task changes nothing;
//! - an unknown task id is `-32602`; `tasks/result` and `tasks/list` do not
//!   exist (`-32601`); a client that did not declare the extension gets
//!   `-32021` for the `tasks/*` methods, a plain result from an optional
//!   tool, and `-32021` from a required one.
//!
//! A task is kept at least its `ttlMs` ([`McpServerBuilder::task_ttl`](super::McpServerBuilder::task_ttl)).
//! With a [`JournalTaskStore`] ([`McpServerBuilder::journal_tasks`](super::McpServerBuilder::journal_tasks)),
//! tasks live in a call journal: every instance sharing it answers
//! `tasks/get`, `tasks/update` and `tasks/cancel` for every task, and a
//! task outlives a restart. The store is the only state instances share:
//! the instance running a body reads its task every
//! [`WATCH_INTERVAL`] (a cancellation made elsewhere fires the body's
//! token) and renews its lease; a task whose owner is gone (its lease ran
//! out, or its process of this machine exited) is answered `failed`, never
//! run again.
//!
//! A tool declared `escalates` ([`TaskStart::OnEscalate`](tinyagents_tools::spec::TaskStart::OnEscalate))
//! runs in its request, asking its client in input rounds, until its body
//! calls [`McpPeer::escalate`](super::McpPeer::escalate): that request is
//! answered with the task, and the body goes on as the task.

mod journal;
mod run;
mod store;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::{
    DetailedTask, ErrorCode, GetTaskResult, InputRequests, JsonObject, Task, TaskPayload,
    TaskStatus,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::sync::lock;

pub use journal::{JournalTaskStore, TASKS_SPACE};
pub use run::APPROVAL_REFUSED;
pub(crate) use run::{
    NewTask, cancel, create, get, handle, spawn_body, spawn_followed, start, update,
};
pub use store::{MemoryTaskStore, StoredTask, TaskRecord, TaskStore, TaskStoreError};

/// How long a task is kept at least, by default (one hour).
pub const DEFAULT_TASK_TTL: Duration = Duration::from_secs(3600);

/// How often a client is asked to poll a task, by default (500 ms).
pub const DEFAULT_TASK_POLL_INTERVAL: Duration = Duration::from_millis(500);

/// How often the instance running a task's body reads the task back (a
/// cancellation made by another instance reaches the body within it).
pub const WATCH_INTERVAL: Duration = Duration::from_millis(150);

/// How long an instance's lease on a task it runs lasts by default (30 s):
/// it renews the lease while the body runs; a task whose lease ran out
/// belongs to an instance that is gone.
pub const DEFAULT_TASK_LEASE: Duration = Duration::from_secs(30);

/// What every session of a server shares about tasks.
pub(crate) struct Tasks {
    pub(crate) store: Arc<dyn TaskStore>,
    pub(crate) ttl: Duration,
    pub(crate) poll_interval: Duration,
    /// How long this instance's lease on a task it runs lasts.
    pub(crate) lease: Duration,
    /// This instance's name, written on the tasks it runs.
    pub(crate) owner: String,
    /// The cancellation of each body running here, by task id.
    running: Mutex<HashMap<String, CancellationToken>>,
}

impl Tasks {
    pub(crate) fn new(
        store: Arc<dyn TaskStore>,
        ttl: Duration,
        poll_interval: Duration,
        lease: Duration,
    ) -> Self {
        Tasks {
            store,
            ttl,
            poll_interval,
            lease,
            owner: tinyagents_tools::journal::new_owner(),
            running: Mutex::new(HashMap::new()),
        }
    }

    /// Registers the body of `task_id` as running here.
    fn enter(&self, task_id: &str) -> CancellationToken {
        let token = CancellationToken::new();
        lock(&self.running).insert(task_id.to_owned(), token.clone());
        token
    }

    /// The body of `task_id` ended here.
    fn leave(&self, task_id: &str) {
        lock(&self.running).remove(task_id);
    }

    /// Fires the body of `task_id` if it runs here.
    fn cancel_here(&self, task_id: &str) {
        if let Some(token) = lock(&self.running).get(task_id) {
            token.cancel();
        }
    }
}

/// The task as MCP writes it (`Task`).
fn wire_task(record: &TaskRecord) -> Task {
    let mut task = Task::new(
        record.task_id.clone(),
        record.status,
        iso_8601(record.created_at),
        iso_8601(record.updated_at),
    )
    .with_poll_interval_ms(record.poll_interval_ms);
    task.ttl_ms = record.ttl_ms;
    task.status_message = record.status_message.clone();
    task
}

/// The `tasks/get` answer for `record`.
fn detailed(record: &TaskRecord) -> Result<GetTaskResult, ErrorData> {
    let corrupt = |what: &str| {
        ErrorData::internal_error(format!("the stored task's {what} is not valid MCP"), None)
    };
    let payload = match record.status {
        TaskStatus::InputRequired => {
            let input_requests: InputRequests =
                serde_json::from_value(Value::Object(record.input_requests.clone()))
                    .map_err(|_| corrupt("inputRequests"))?;
            TaskPayload::InputRequired { input_requests }
        }
        TaskStatus::Completed => TaskPayload::Completed {
            result: object(record.result.as_ref()).ok_or_else(|| corrupt("result"))?,
        },
        TaskStatus::Failed => TaskPayload::Failed {
            error: object(record.error.as_ref()).ok_or_else(|| corrupt("error"))?,
        },
        TaskStatus::Cancelled => TaskPayload::Cancelled,
        _ => TaskPayload::Working,
    };
    Ok(GetTaskResult::new(DetailedTask::new(
        wire_task(record),
        payload,
    )))
}

fn object(value: Option<&Value>) -> Option<JsonObject> {
    match value {
        Some(Value::Object(map)) => Some(map.clone()),
        _ => None,
    }
}

/// A JSON-RPC error object, as a failed task carries it.
fn error_object(code: ErrorCode, message: &str, data: Option<Value>) -> Value {
    let mut error = json!({"code": code.0, "message": message});
    if let Some(data) = data {
        error["data"] = data;
    }
    error
}

/// The `-32602` answer for a task id no task has.
fn unknown(task_id: &str) -> ErrorData {
    ErrorData::invalid_params(format!("unknown task id `{task_id}`"), None)
}

/// A failed store read or write, as a JSON-RPC error.
fn store_error(error: TaskStoreError) -> ErrorData {
    ErrorData::internal_error(format!("the task store failed: {error}"), None)
}

/// 128 random bits as 32 hex digits.
fn new_task_id() -> String {
    let mut bytes = [0u8; 16];
    crate::rounds::fill_random(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `ms` after the Unix epoch as an ISO 8601 UTC time with milliseconds
/// (`2026-07-28T09:30:00.000Z`).
fn iso_8601(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let in_day = ms.rem_euclid(86_400_000);
    // Howard Hinnant's days-to-civil.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        in_day / 3_600_000,
        in_day / 60_000 % 60,
        in_day / 1000 % 60,
        in_day % 1000
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_written_as_iso_8601_utc() {
        assert_eq!(iso_8601(0), "1970-01-01T00:00:00.000Z");
        // 2025-11-25T10:30:00Z, a Tuesday: `date -u -d @1764066600`.
        assert_eq!(iso_8601(1_764_066_600_123), "2025-11-25T10:30:00.123Z");
        // A leap day, and the last millisecond of a year.
        assert_eq!(iso_8601(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(iso_8601(1_704_067_199_999), "2023-12-31T23:59:59.999Z");
    }

    #[test]
    fn task_ids_are_128_random_bits_in_hex() {
        let (a, b) = (new_task_id(), new_task_id());
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }
}
