//! Records the backends' tests store: a call, one awaiting approval, an
//! event, and the keys of what a query found.

use serde_json::json;

use super::record::{ApprovalEntry, CallKey, CallRecord, CallState, JournalEvent};
use super::store::Stored;
use crate::approval::ApprovalRequest;

pub(super) fn record(run: &str, turn: u32, call: &str, state: CallState) -> CallRecord {
    CallRecord {
        key: CallKey::new(run, turn, call),
        tool: "echo".to_owned(),
        fingerprint: format!("fp-{call}"),
        arguments: json!({ "text": call }),
        state,
        approval: None,
        owner: None,
        lease_until: None,
        answer: None,
        received_at: 1_000,
        updated_at: 1_000,
    }
}

pub(super) fn awaiting(run: &str, turn: u32, call: &str, approval_id: &str) -> CallRecord {
    let mut record = record(run, turn, call, CallState::AwaitingApproval);
    record.approval = Some(ApprovalEntry {
        id: approval_id.to_owned(),
        request: ApprovalRequest {
            run_id: run.into(),
            turn,
            call_id: call.into(),
            tool: "echo".to_owned(),
            arguments: json!({ "text": call }),
            fingerprint: format!("fp-{call}"),
            reasons: Vec::new(),
            expires_at: None,
        },
        decision: None,
        record: None,
    });
    record
}

pub(super) fn event(run: &str, kind: &str, at: i64) -> JournalEvent {
    JournalEvent {
        seq: 0,
        kind: kind.to_owned(),
        run_id: run.into(),
        thread_id: "thread".into(),
        call_id: "call_1".into(),
        tool: "echo".to_owned(),
        attempt: 1,
        at,
        error_class: None,
        error_kind: None,
        policy: None,
        args_hash: None,
        result_hash: None,
        name: None,
        data: None,
    }
}

pub(super) fn keys(found: &[Stored]) -> Vec<String> {
    found.iter().map(|s| s.record.key.to_string()).collect()
}
