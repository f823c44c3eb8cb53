//! A lifecycle event of one call, made where the executor holds the call's
//! parts: a [`ToolEvent`] that borrows them, so that in-line subscribers
//! get it as it was made (its digests made from the call's values only
//! when read) and queued ones a copy kept ([`ToolEvent::into_owned`]).

use std::time::{Duration, SystemTime};

use serde_json::Value;

use super::{Digest, EventKind, ToolEvent};
use crate::ids::{CallName, RunId, ThreadId, ToolCallId};

impl<'a> ToolEvent<'a> {
    /// A lifecycle event of `kind` for the call of `ids` (its run, thread
    /// and call) and the `tool` name it spells, at its `attempt`, made at
    /// `timestamp` with the call's own and waiting time so far (`times`)
    /// and the digest of its arguments, every other part empty for the
    /// step to fill.
    #[inline(always)]
    pub(crate) fn of_call(
        kind: EventKind,
        ids: (&RunId, &ThreadId, &ToolCallId),
        tool: &CallName,
        attempt: u32,
        timestamp: SystemTime,
        (elapsed, waited): (Duration, Duration),
        args_hash: Option<Digest<'a>>,
    ) -> Self {
        let (run_id, thread_id, call_id) = ids;
        ToolEvent {
            kind,
            run_id: run_id.clone(),
            thread_id: thread_id.clone(),
            call_id: call_id.clone(),
            tool: tool.clone(),
            attempt,
            timestamp,
            elapsed: Some(elapsed),
            waited: Some(waited),
            error_class: None,
            error_kind: None,
            policy: None,
            artifact_keys: Vec::new(),
            args_hash,
            result_hash: None,
            progress: None,
            name: None,
            data: None,
            dropped: None,
            bounds: None,
        }
    }
}

/// What a `tool.failed` event carries of a tool's panic: its (masked)
/// message, as `{"panic": message}`.
pub(crate) fn panic_data(message: &str) -> Value {
    serde_json::json!({ "panic": message })
}
