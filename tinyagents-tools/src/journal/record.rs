//! What a journal keeps of a call ([`CallRecord`]), of its approval
//! ([`ApprovalEntry`]) and of its answer ([`JournalAnswer`]), of standing
//! grants ([`StandingGrant`]) and of events ([`JournalEvent`]): plain data in
//! one JSON form, the same in every backend.
//!
//! Times are milliseconds since the Unix epoch.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::approval::{ApprovalDecision, ApprovalRecord, ApprovalRequest, GrantScope};
use crate::error::ErrorClass;
use crate::events::ToolEvent;
use crate::ids::{RunId, ThreadId, ToolCallId};
use crate::output::ToolMessage;
use crate::runtime::CallDraw;

/// Where a call sits: its run, its turn ([`Turn::index`](crate::Turn::index))
/// and its call id. Provider call ids repeat over a conversation, so the id
/// alone is not a key.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct CallKey {
    /// The run.
    pub run_id: RunId,
    /// The turn's index.
    pub turn: u32,
    /// The provider's call id.
    pub call_id: ToolCallId,
}

impl CallKey {
    /// The key of call `call_id` of turn `turn` in run `run_id`.
    pub fn new(run_id: impl Into<RunId>, turn: u32, call_id: impl Into<ToolCallId>) -> Self {
        CallKey {
            run_id: run_id.into(),
            turn,
            call_id: call_id.into(),
        }
    }
}

impl fmt::Display for CallKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/{}", self.run_id, self.turn, self.call_id)
    }
}

/// Where a call is in its life. A record only moves forward:
/// `received` → (`awaiting_approval` → `approved` | `denied`) → `started` →
/// `answered`; a call refused or answered before its body runs goes
/// straight to `answered`, and a read-only or idempotent tool is never
/// recorded `started` (it may simply run again).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallState {
    /// Delivered and recorded; nothing has run.
    Received,
    /// Waiting for a person's decision ([`CallRecord::approval`]).
    AwaitingApproval,
    /// Approved (as delivered, or with edited arguments): it runs on resume.
    Approved,
    /// Not approved: it is answered with the reason on resume.
    Denied,
    /// Its body was about to run (write-ahead): a call found here with its
    /// owner gone may have run, and is never run again by itself.
    Started,
    /// Answered: every later delivery gets this answer.
    Answered,
}

impl CallState {
    /// The state's name (`received`, `awaiting_approval`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            CallState::Received => "received",
            CallState::AwaitingApproval => "awaiting_approval",
            CallState::Approved => "approved",
            CallState::Denied => "denied",
            CallState::Started => "started",
            CallState::Answered => "answered",
        }
    }

    /// The state named `name`, if any.
    pub fn parse(name: &str) -> Option<Self> {
        [
            CallState::Received,
            CallState::AwaitingApproval,
            CallState::Approved,
            CallState::Denied,
            CallState::Started,
            CallState::Answered,
        ]
        .into_iter()
        .find(|s| s.as_str() == name)
    }
}

impl fmt::Display for CallState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One call as the journal keeps it.
///
/// Its JSON form (the `record` column of every backend):
/// `{"run_id", "turn", "call_id", "tool", "fingerprint", "arguments",
/// "state", "approval"?, "owner"?, "lease_until"?, "answer"?, "draw"?,
/// "received_at", "updated_at"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallRecord {
    /// The call's key.
    #[serde(flatten)]
    pub key: CallKey,
    /// The tool's canonical name (the name as called when no tool has it).
    pub tool: String,
    /// SHA-256 of the canonical tool name and the arguments as delivered
    /// ([`approval_fingerprint`](crate::approval::approval_fingerprint)): a
    /// later delivery of the key with other arguments is refused.
    pub fingerprint: String,
    /// The arguments the call runs with, kept only while it may still run
    /// (received, awaiting approval, approved, started); after an edit,
    /// the edited ones. `null` once answered.
    pub arguments: Value,
    /// Where the call is.
    pub state: CallState,
    /// Its approval, when it needed one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<ApprovalEntry>,
    /// The instance running the body (state `started`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// Until when the owner may still be running the body (ms): the tool's
    /// timeout for every attempt, and a margin. Past it, the owner is gone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease_until: Option<i64>,
    /// The answer, once answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<JournalAnswer>,
    /// What the call was given when it was first admitted (its time and
    /// random seed), for a tool that takes them (`Clock`, `Random`, `Ids`):
    /// every later run of the call is given the same
    /// (`{"time": ms, "seed": "16 hex digits"}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draw: Option<CallDraw>,
    /// When the call was first recorded (ms).
    pub received_at: i64,
    /// When the record last changed (ms).
    pub updated_at: i64,
}

impl CallRecord {
    /// A call record just made: no approval, owner, lease or answer yet,
    /// received and updated at `at` (ms).
    pub(crate) fn new(
        key: CallKey,
        tool: impl Into<String>,
        fingerprint: impl Into<String>,
        arguments: Value,
        state: CallState,
        at: i64,
    ) -> Self {
        CallRecord {
            key,
            tool: tool.into(),
            fingerprint: fingerprint.into(),
            arguments,
            state,
            approval: None,
            owner: None,
            lease_until: None,
            answer: None,
            draw: None,
            received_at: at,
            updated_at: at,
        }
    }

    /// The approval id, when the call needed approval.
    pub fn approval_id(&self) -> Option<&str> {
        self.approval.as_ref().map(|a| a.id.as_str())
    }
}

/// A call's approval: what was asked and, once decided, the decision.
///
/// Its JSON form: `{"id", "request": {...}, "decision"?: {...}, "record"?:
/// {...}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ApprovalEntry {
    /// The approval id ([`ApprovalRequest::approval_id`]).
    pub id: String,
    /// What the approver is asked; its arguments are masked by the tool's
    /// redaction policy and the run's secrets.
    pub request: ApprovalRequest,
    /// The decision, once made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<ApprovalDecision>,
    /// The decision as recorded (what it holds for, when), once made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record: Option<ApprovalRecord>,
}

/// A call's answer: the message the model saw, redacted and bounded as it
/// was sent, with its outcome.
///
/// Its JSON form: `{"message": {...}, "outcome", "detail"?, "class"?,
/// "settled", "at"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JournalAnswer {
    /// The canonical message, as the model was sent it.
    pub message: ToolMessage,
    /// `ok`, or the error's kind (`denied`, `timeout`, `interrupted`, ...).
    pub outcome: String,
    /// The error kind's detail: the refusing policy, the limit, the
    /// resource, or the timeout in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The error's class, for a failed or refused call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<ErrorClass>,
    /// True when the application settled the call itself
    /// ([`Journal::settle`](super::Journal::settle)).
    #[serde(default)]
    pub settled: bool,
    /// When it was answered (ms).
    pub at: i64,
}

/// A standing grant kept in the journal: calls of `tool` it covers need no
/// approver, on every instance.
///
/// Its JSON form: `{"tool", "scope": {...}, "fingerprint"?, "at"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StandingGrant {
    /// The tool.
    pub tool: String,
    /// How far it reaches ([`GrantScope::Run`] or [`GrantScope::AllRuns`]).
    pub scope: GrantScope,
    /// Only calls with these arguments (their fingerprint); `None`: any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
    /// When it was granted (ms).
    pub at: i64,
}

/// A lifecycle event as the journal keeps it, to be read back.
///
/// Its JSON form: `{"seq", "kind": "tool.started", "run_id", "thread_id",
/// "call_id", "tool", "attempt", "at", "error_class"?, "error_kind"?,
/// "policy"?, "args_hash"?, "result_hash"?, "name"?, "data"?}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JournalEvent {
    /// Its place in the journal's event log (0 until stored).
    #[serde(default)]
    pub seq: i64,
    /// The event's wire name (`tool.started`, ...).
    pub kind: String,
    /// The run.
    pub run_id: RunId,
    /// The thread.
    pub thread_id: ThreadId,
    /// The call.
    pub call_id: ToolCallId,
    /// The tool name as called.
    pub tool: String,
    /// The attempt.
    pub attempt: u32,
    /// When the event was made (ms).
    pub at: i64,
    /// The error class, for failures and refusals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_class: Option<ErrorClass>,
    /// The error kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<String>,
    /// The refusing policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
    /// SHA-256 of the canonical arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args_hash: Option<String>,
    /// SHA-256 of the canonical result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_hash: Option<String>,
    /// A custom event's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A custom event's payload (redacted before delivery).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl From<&ToolEvent<'_>> for JournalEvent {
    fn from(event: &ToolEvent) -> Self {
        JournalEvent {
            seq: 0,
            kind: event.kind.as_str().to_owned(),
            run_id: event.run_id.clone(),
            thread_id: event.thread_id.clone(),
            call_id: event.call_id.clone(),
            tool: event.tool.as_str().to_owned(),
            attempt: event.attempt,
            at: crate::approval::to_unix_ms(event.timestamp),
            error_class: event.error_class,
            error_kind: event.error_kind.map(str::to_owned),
            policy: event.policy.as_deref().map(str::to_owned),
            args_hash: event.args_hash.as_ref().map(|d| d.as_str().to_owned()),
            result_hash: event.result_hash.as_ref().map(|d| d.as_str().to_owned()),
            name: event.name.clone(),
            data: event.data.clone(),
        }
    }
}
