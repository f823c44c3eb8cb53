//! A task's life on this instance: creating it, running its body in the
//! background and following it to its end, and the `tasks/get`,
//! `tasks/update` and `tasks/cancel` methods, each a compare-and-set on
//! the stored task.

use std::sync::Arc;
use std::sync::atomic::AtomicU8;
use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::{
    ClientCapabilities, CreateTaskResult, ErrorCode, GetTaskResult, InputResponses,
    ProtocolVersion, ResultType, TaskStatus,
};
use rmcp::service::{Peer, RoleServer};
use serde_json::{Map, Value};
use tokio::task::JoinHandle;
use tokio::time::MissedTickBehavior;
use tokio_util::sync::CancellationToken;

use super::store::TaskRecord;
use super::{WATCH_INTERVAL, detailed, error_object, new_task_id, store_error, unknown, wire_task};
use crate::ServerCore;
use crate::call_result::rmcp_result;
use crate::clock::now_ms;
use crate::peer::Link;
use crate::peer::mask_for;
use crate::rounds::Rounds;
use tinyagents_tools::call::{RawArguments, ToolCall};
use tinyagents_tools::error::ErrorKind;
use tinyagents_tools::ids::ToolCallId;
use tinyagents_tools::journal::{CallKey, process_gone};
use tinyagents_tools::output::ToolResult;
use tinyagents_tools::runtime::RunContext;
use tinyagents_tools::runtime::Turn;
use tinyagents_tools::tool::Shared;

/// How many times the end of a body is written before it is given up
/// (the store failing each time); the task's lease then runs out and it
/// is answered `failed`.
const SETTLE_ATTEMPTS: u32 = 10;

/// The JSON-RPC code (in the range left to servers) of a task that failed
/// because a person refused its call, or the approval expired.
pub const APPROVAL_REFUSED: i32 = -32000;

/// A call about to become a task.
pub(crate) struct NewTask {
    pub(crate) tool: String,
    pub(crate) arguments: RawArguments,
    pub(crate) fingerprint: String,
    pub(crate) client_capabilities: Option<ClientCapabilities>,
    /// Answers the call gathered in input rounds before it escalated.
    pub(crate) answers: Map<String, Value>,
}

/// Writes the task of `new` to the store, `working` and owned by this
/// instance; the client may be told its id once this returns.
pub(crate) async fn create<S: Shared, C: Shared>(
    core: &Arc<ServerCore<S, C>>,
    new: NewTask,
) -> Result<TaskRecord, ErrorData> {
    let now = now_ms();
    let (arguments, arguments_text) = match new.arguments {
        RawArguments::Json(value) => (value, None),
        RawArguments::Text(text) => (
            serde_json::from_str(&text).unwrap_or_else(|_| Value::String(text.clone())),
            Some(text),
        ),
    };
    let tasks = &core.tasks;
    let record = TaskRecord {
        task_id: new_task_id(),
        tool: new.tool,
        arguments,
        arguments_text,
        fingerprint: new.fingerprint,
        status: TaskStatus::Working,
        status_message: None,
        approval: None,
        input_requests: Map::new(),
        answers: new.answers,
        result: None,
        error: None,
        client_capabilities: new
            .client_capabilities
            .and_then(|c| serde_json::to_value(c).ok()),
        attempt: 1,
        owner: Some(tasks.owner.clone()),
        lease_until: Some(now.saturating_add(millis(tasks.lease))),
        created_at: now,
        updated_at: now,
        ttl_ms: Some(tasks.ttl.as_millis() as u64),
        poll_interval_ms: (tasks.poll_interval.as_millis() as u64).max(1),
    };
    tasks.store.create(&record).await.map_err(store_error)?;
    Ok(record)
}

/// What `tools/call` answers for the task `record`.
pub(crate) fn handle(record: &TaskRecord) -> CreateTaskResult {
    CreateTaskResult::new(wire_task(record))
}

/// Runs the body of `record` (claimed by this instance) in the background
/// with every answer it has, and follows it to its end. `peer` is the
/// client of the request that started this run. `at` is the journal key
/// of a call that waited for approval: it is made again under that key,
/// so the journal runs it once, as decided.
pub(crate) fn start<S: Shared, C: Shared>(
    core: &Arc<ServerCore<S, C>>,
    record: &TaskRecord,
    peer: Peer<RoleServer>,
    at: Option<&CallKey>,
) {
    let run = match at {
        Some(key) => (core.runs)().with_run_id(key.run_id.clone()).child_scope(),
        None => (core.runs)().child_scope(),
    };
    let rounds = Arc::new(Rounds::answered(record.answers.clone()));
    let capabilities: Option<ClientCapabilities> = record
        .client_capabilities
        .clone()
        .and_then(|c| serde_json::from_value(c).ok());
    let (call_id, turn) = match at {
        Some(key) => (key.call_id.clone(), Turn::new(key.turn)),
        None => (
            ToolCallId::new(format!("mcp-task-{}-{}", record.task_id, record.attempt)),
            Turn::new(record.attempt),
        ),
    };
    if let Some(approver) = &core.approver {
        let elicits = capabilities
            .as_ref()
            .is_some_and(|c| c.elicitation.is_some());
        approver.start_in_rounds(&call_id, elicits);
    }
    let link = Link {
        peer,
        capabilities,
        protocol: Some(ProtocolVersion::V_2026_07_28),
        threshold: Arc::new(AtomicU8::new(0)),
        stateless: true,
        rounds: Some(Arc::clone(&rounds)),
        mask: Some(mask_for(core, &run)),
        escalation: None,
    };
    let arguments = match &record.arguments_text {
        Some(text) => RawArguments::Text(text.clone()),
        None => RawArguments::Json(record.arguments.clone()),
    };
    let call = ToolCall::new(call_id, record.tool.clone(), arguments);
    let mut body = spawn_body(core, run, turn, call, link);
    body.decided = at.is_some();
    spawn_followed(core, record.task_id.clone(), body);
}

/// A body running in the background, with what following it needs.
pub(crate) struct Body<C> {
    handle: JoinHandle<ToolResult>,
    run: RunContext<C>,
    rounds: Option<Arc<Rounds>>,
    call_id: ToolCallId,
    /// The call waited for an approval now decided: a refusal fails the
    /// task.
    decided: bool,
}

impl<C> Body<C> {
    /// Waits for the body to end; an error when its task stopped without
    /// an answer (the runtime shutting down).
    pub(crate) async fn join(&mut self) -> Result<ToolResult, tokio::task::JoinError> {
        (&mut self.handle).await
    }

    /// Cancels the body's run.
    pub(crate) fn cancel(&self) {
        self.run.cancel();
    }
}

/// Starts `call` through the executor in the background, its tools'
/// `McpPeer`s reaching `link`.
pub(crate) fn spawn_body<S: Shared, C: Shared>(
    core: &Arc<ServerCore<S, C>>,
    run: RunContext<C>,
    turn: Turn,
    call: ToolCall,
    link: Link,
) -> Body<C> {
    let call_id = call.id.clone();
    let executor = Arc::clone(&core.executor);
    let rounds = link.rounds.clone();
    let body_run = run.clone();
    let handle =
        tokio::spawn(async move { link.scope(executor.execute(&body_run, &turn, call)).await });
    Body {
        handle,
        run,
        rounds,
        call_id,
        decided: false,
    }
}

/// Follows `body`, the body of task `task_id`, in the background: its
/// cancellation fires when the task is cancelled (here or elsewhere), and
/// its end is written to the task.
pub(crate) fn spawn_followed<S: Shared, C: Shared>(
    core: &Arc<ServerCore<S, C>>,
    task_id: String,
    body: Body<C>,
) {
    let core = Arc::clone(core);
    let local = core.tasks.enter(&task_id);
    tokio::spawn(follow(core, task_id, body, local));
}

async fn follow<S: Shared, C: Shared>(
    core: Arc<ServerCore<S, C>>,
    task_id: String,
    mut body: Body<C>,
    local: CancellationToken,
) {
    let mut tick = tokio::time::interval(WATCH_INTERVAL);
    tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
    tick.tick().await;
    let result = loop {
        tokio::select! {
            result = body.join() => break result,
            () = local.cancelled(), if !body.run.cancellation().is_cancelled() => body.cancel(),
            _ = tick.tick() => watch(&core, &task_id, &body.run).await,
        }
    };
    core.tasks.leave(&task_id);
    if let Some(approver) = &core.approver {
        approver.finish(&body.call_id);
    }
    let outcome = match result {
        Ok(result) => {
            let wrap = core.wraps(&result.message);
            Outcome::of(
                result,
                body.rounds.as_deref(),
                core.max_structured_bytes,
                wrap,
                body.decided,
            )
        }
        Err(_) => Outcome::Failed(error_object(
            ErrorCode::INTERNAL_ERROR,
            "the task's body stopped without an answer",
            None,
        )),
    };
    settle(&core, &task_id, outcome).await;
}

/// Reads the task back: a task no longer working (cancelled, or answered
/// elsewhere) cancels the body; otherwise the lease is renewed when due.
async fn watch<S: Shared, C: Shared>(
    core: &Arc<ServerCore<S, C>>,
    task_id: &str,
    run: &RunContext<C>,
) {
    let stored = match core.tasks.store.get(task_id).await {
        Ok(Some(stored)) => stored,
        Ok(None) => return run.cancel(),
        Err(e) => {
            tracing::debug!(task = task_id, error = %e, "cannot read the running task");
            return;
        }
    };
    if stored.task.status != TaskStatus::Working {
        return run.cancel();
    }
    let now = now_ms();
    let due = stored
        .task
        .lease_until
        .is_none_or(|until| until - now < millis(core.tasks.lease) * 2 / 3);
    if due {
        let mut task = stored.task;
        task.lease_until = Some(now.saturating_add(millis(core.tasks.lease)));
        // Lost to another writer: renewed at the next tick.
        let _ = core.tasks.store.replace(&task, stored.revision).await;
    }
}

/// How a body's run ended, as its task shows it.
#[derive(Clone)]
enum Outcome {
    Completed(Value),
    Failed(Value),
    Cancelled,
    InputRequired {
        asked: Map<String, Value>,
        answers: Map<String, Value>,
    },
    /// The call waits in the journal for approval `approval`; `text` says
    /// so.
    AwaitingApproval {
        approval: String,
        text: String,
    },
}

impl Outcome {
    /// `wrap`: the tool's output is wrapped in `structuredContent`
    /// (`providers::mcp::wraps_result`). `decided`: the call waited for an
    /// approval now decided (a refusal, or the approval's expiry, fails the
    /// task with the reason).
    fn of(
        result: ToolResult,
        rounds: Option<&Rounds>,
        max_structured_bytes: usize,
        wrap: bool,
        decided: bool,
    ) -> Self {
        if let Some(approval) = result.approval_id() {
            return Outcome::AwaitingApproval {
                approval,
                text: result.text(),
            };
        }
        if let Some(rounds) = rounds {
            if let Some(capability) = rounds.missing() {
                let data = serde_json::json!({"requiredCapabilities": {capability: {}}});
                return Outcome::Failed(error_object(
                    ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
                    &format!(
                        "the task needs the client capability `{capability}`, which the client did not declare"
                    ),
                    Some(data),
                ));
            }
            let asked = rounds.take_asked();
            if !asked.is_empty() {
                let asked = asked
                    .into_iter()
                    .filter_map(|(key, request)| Some((key, serde_json::to_value(request).ok()?)))
                    .collect();
                return Outcome::InputRequired {
                    asked,
                    answers: rounds.answers().clone(),
                };
            }
        }
        let kind = result.error.as_ref().map(|e| e.kind());
        match kind {
            Some(ErrorKind::Cancelled) => return Outcome::Cancelled,
            Some(ErrorKind::Denied { .. }) if decided => {
                return Outcome::Failed(error_object(
                    ErrorCode(APPROVAL_REFUSED),
                    &result.text(),
                    None,
                ));
            }
            Some(ErrorKind::UnknownTool) => {
                return Outcome::Failed(error_object(
                    ErrorCode::INVALID_PARAMS,
                    &result.text(),
                    None,
                ));
            }
            Some(
                ErrorKind::Panicked
                | ErrorKind::Crashed
                | ErrorKind::Interrupted
                | ErrorKind::JournalUnavailable
                | ErrorKind::Conflict,
            ) => {
                return Outcome::Failed(error_object(
                    ErrorCode::INTERNAL_ERROR,
                    &result.text(),
                    None,
                ));
            }
            _ => {}
        }
        match rmcp_result(result.message, max_structured_bytes, wrap) {
            Ok(mut answer) => {
                answer.result_type = Some(ResultType::COMPLETE);
                match serde_json::to_value(answer) {
                    Ok(value) => Outcome::Completed(value),
                    Err(e) => Outcome::Failed(not_mcp(&e)),
                }
            }
            Err(e) => Outcome::Failed(not_mcp(&e)),
        }
    }

    /// `task` as this outcome leaves it, at `now`.
    fn apply(self, mut task: TaskRecord, now: i64) -> TaskRecord {
        task.owner = None;
        task.lease_until = None;
        task.updated_at = now;
        match self {
            Outcome::Completed(result) => {
                task.status = TaskStatus::Completed;
                task.result = Some(result);
            }
            Outcome::Failed(error) => {
                task.status = TaskStatus::Failed;
                task.error = Some(error);
            }
            Outcome::Cancelled => task.status = TaskStatus::Cancelled,
            Outcome::AwaitingApproval { approval, text } => {
                // Still `working` (SEP-2663: `input_required` is for
                // requests the client answers; a person decides this one
                // elsewhere), with no instance running it.
                task.status = TaskStatus::Working;
                task.status_message = Some(format!(
                    "{text}; it runs once a person approves it in the server's journal"
                ));
                task.approval = Some(approval);
            }
            Outcome::InputRequired { asked, answers } => {
                task.status = TaskStatus::InputRequired;
                task.input_requests = asked;
                task.answers = answers;
            }
        }
        task
    }
}

fn not_mcp(e: &serde_json::Error) -> Value {
    error_object(
        ErrorCode::INTERNAL_ERROR,
        &format!("the tool result is not valid MCP: {e}"),
        None,
    )
}

/// Writes how the body ended to its task, unless the task ended first (a
/// cancellation wins over the body's own end).
async fn settle<S: Shared, C: Shared>(
    core: &Arc<ServerCore<S, C>>,
    task_id: &str,
    outcome: Outcome,
) {
    for attempt in 1..=SETTLE_ATTEMPTS {
        let stored = match core.tasks.store.get(task_id).await {
            Ok(Some(stored)) => stored,
            Ok(None) => return,
            Err(e) => {
                tracing::warn!(task = task_id, error = %e, "cannot read the task to record its end");
                tokio::time::sleep(Duration::from_millis(100) * attempt).await;
                continue;
            }
        };
        if stored.task.status != TaskStatus::Working {
            return;
        }
        let task = outcome.clone().apply(stored.task, now_ms());
        match core.tasks.store.replace(&task, stored.revision).await {
            Ok(true) => return,
            Ok(false) => {}
            Err(e) => {
                tracing::warn!(task = task_id, error = %e, "cannot record the task's end");
                tokio::time::sleep(Duration::from_millis(100) * attempt).await;
            }
        }
    }
}

fn millis(duration: Duration) -> i64 {
    duration.as_millis() as i64
}

mod requests;

pub(crate) use requests::{cancel, get, update};
