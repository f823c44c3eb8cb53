//! Calls that wait in a journal for a person's approval, in MCP's terms: an
//! executor with [`ConfirmationPolicy::deferred`](tinyagents_tools::policy::ConfirmationPolicy::deferred)
//! and a journal files the approval (`apr_...`) and ends the call
//! `pending_approval`, without running it.
//!
//! - Such a call is never answered as a success: outside a task, its
//!   result is `isError: true`, its text names the approval and says the
//!   call has not run, and its `_meta` carries
//!   `{`[`PENDING_APPROVAL_META_KEY`]`: {"approvalId", "status": "pending"}}`.
//! - The same call again (the same tool and arguments) in the same MCP
//!   session, or with the same client-supplied idempotency key
//!   (`_meta[`[`IDEMPOTENCY_META_KEY`]`]`, a string, on the `tools/call`
//!   request, which also holds across sessions, instances sharing the
//!   journal and restarts), finds that approval instead of filing a new
//!   one: undecided, it is answered the same way; approved, it runs (once:
//!   the journal's claim decides) and is answered with the tool's result;
//!   rejected or expired, it is answered with the reason. Once a call was
//!   so answered, the same call again is a new call, with a new approval.
//! - Which call each (scope, tool, arguments) waits on is kept in the
//!   journal's records space [`PENDING_APPROVALS_SPACE`], each change a
//!   compare-and-set.
//!
//! As a task (the client declared the tasks extension), the wait is the
//! task's: see [`tasks`](crate::tasks).

use rmcp::model::{CallToolResult, MetaObject};
use serde_json::{Value, json};
use tinyagents_tools::approval::approval_fingerprint;
use tinyagents_tools::call::ToolCall;
use tinyagents_tools::error::{ErrorKind, ToolError};
use tinyagents_tools::journal::{CallKey, CallQuery, Journal, JournalError, Records};
use tinyagents_tools::output::ToolResult;

/// The `_meta` key of a `tools/call` request under which a client names
/// the call it means (a string): the same key with the same tool and
/// arguments finds the approval the first call is waiting for.
pub const IDEMPOTENCY_META_KEY: &str = "dev.tinyagents/idempotency-key";

/// The `_meta` key of a result whose call waits for approval:
/// `{"approvalId": "apr_...", "status": "pending"}`.
pub const PENDING_APPROVAL_META_KEY: &str = "dev.tinyagents/pending-approval";

/// The journal's records space that keeps, for each scope (an MCP session
/// or an idempotency key), tool and arguments, the approval its call waits
/// for.
pub const PENDING_APPROVALS_SPACE: &str = "mcp-pending-approvals";

/// Where a call's wait is looked up: its scope's record in the journal.
pub(crate) struct Waits {
    records: Records,
    key: String,
}

/// What the journal says of a call's scope, tool and arguments.
pub(crate) enum Found {
    /// A call waits: make it again under its key.
    Waiting { call: CallKey, revision: u64 },
    /// No call waits (a record at `revision` is answered or stale).
    Nothing { revision: Option<u64> },
}

impl Waits {
    /// The wait of the call to `tool` with `fingerprint` in `scope`.
    pub(crate) fn new(journal: &Journal, scope: &str, tool: &str, fingerprint: &str) -> Self {
        // A SHA-256 of the three: a key of fixed length, whatever the
        // client's idempotency key holds.
        let key = approval_fingerprint(tool, &json!({"scope": scope, "call": fingerprint}));
        Waits {
            records: journal.records(PENDING_APPROVALS_SPACE),
            key,
        }
    }

    /// The call that waits here, if one does (its approval still on file).
    pub(crate) async fn find(&self, journal: &Journal) -> Result<Found, JournalError> {
        let Some(kept) = self.records.get(&self.key).await? else {
            return Ok(Found::Nothing { revision: None });
        };
        let revision = Some(kept.revision);
        let Some(approval) = kept.value.get("approvalId").and_then(Value::as_str) else {
            return Ok(Found::Nothing { revision });
        };
        let query = CallQuery {
            approval_id: Some(approval.to_owned()),
            ..CallQuery::default()
        };
        match journal.calls(&query).await?.into_iter().next() {
            Some(record) => Ok(Found::Waiting {
                call: record.key,
                revision: kept.revision,
            }),
            None => Ok(Found::Nothing { revision }),
        }
    }

    /// Notes that the call now waits for `approval`, over what was read at
    /// `revision`. A lost race leaves the other writer's record.
    pub(crate) async fn remember(
        &self,
        approval: &str,
        revision: Option<u64>,
    ) -> Result<(), JournalError> {
        let value = json!({"approvalId": approval});
        match revision {
            None => self.records.insert(&self.key, &value).await.map(|_| ()),
            Some(revision) => self
                .records
                .replace(&self.key, &value, revision)
                .await
                .map(|_| ()),
        }
    }

    /// Notes that the call that waited was answered: the same call again
    /// is a new one.
    pub(crate) async fn forget(&self, revision: u64) -> Result<(), JournalError> {
        self.records
            .replace(&self.key, &json!({"answered": true}), revision)
            .await
            .map(|_| ())
    }
}

/// Marks `answer`, the result of a call waiting for `approval`, as what it
/// is: an error (the call has not run), with the approval in its `_meta`.
pub(crate) fn mark_pending(answer: &mut CallToolResult, approval: &str) {
    answer.is_error = Some(true);
    let meta = answer
        .meta
        .get_or_insert_with(|| MetaObject(Default::default()));
    meta.0.insert(
        PENDING_APPROVAL_META_KEY.to_owned(),
        json!({"approvalId": approval, "status": "pending"}),
    );
}

/// True when `result` answers the call for good: not waiting, and neither
/// cancelled before it ran nor refused by a journal that was unavailable
/// (those leave the call to be made again).
pub(crate) fn answered(result: &ToolResult) -> bool {
    !result.is_pending()
        && !result.error.as_ref().is_some_and(|e| {
            matches!(
                e.kind(),
                ErrorKind::Cancelled | ErrorKind::JournalUnavailable
            )
        })
}

/// The answer to `call` when the journal cannot say whether it waits: not
/// run, retryable.
pub(crate) fn unavailable(call: &ToolCall, error: &JournalError) -> ToolResult {
    tracing::warn!(call_id = %call.id, error = %error, "the journal is unavailable; the call was not run");
    ToolResult::from_error(
        call.id.clone(),
        call.name.clone(),
        ToolError::journal_unavailable(),
        Default::default(),
    )
}
