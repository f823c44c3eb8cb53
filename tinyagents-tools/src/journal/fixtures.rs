//! Records the backends' tests store (a call, one awaiting approval, an
//! event, and the keys of what a query found), and the checks every
//! backend passes the same way.

use std::sync::Arc;

use serde_json::json;

use super::record::{ApprovalEntry, CallKey, CallRecord, CallState, JournalEvent, StandingGrant};
use super::store::{JournalStore, Stored};
use crate::approval::{ApprovalRequest, GrantScope};

pub(super) fn record(run: &str, turn: u32, call: &str, state: CallState) -> CallRecord {
    CallRecord::new(
        CallKey::new(run, turn, call),
        "echo",
        format!("fp-{call}"),
        json!({ "text": call }),
        state,
        1_000,
    )
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

/// A record inserted reads back at revision 1 and, replaced at that
/// revision, at revision 2; a replacement at a stale or impossible revision,
/// or of a call not stored, writes nothing. Returns the record as it was
/// last written (key `run-1/0/call-1`).
pub(super) async fn check_round_trip(journal: &dyn JournalStore) -> CallRecord {
    let received = record("run-1", 0, "call-1", CallState::Received);
    assert_eq!(journal.insert(&received).await.unwrap(), None);
    assert_eq!(
        journal.get(&received.key).await.unwrap(),
        Some(Stored {
            record: received.clone(),
            revision: 1
        })
    );

    let mut started = received.clone();
    started.state = CallState::Started;
    started.owner = Some("instance-a".to_owned());
    started.lease_until = Some(1_700_000_060_000);
    started.updated_at = 2_000;
    assert!(journal.replace(&started, 1).await.unwrap());
    let mut stale = received.clone();
    stale.owner = Some("instance-b".to_owned());
    assert!(!journal.replace(&stale, 1).await.unwrap());
    assert!(!journal.replace(&started, u64::MAX).await.unwrap());
    assert_eq!(
        journal.get(&received.key).await.unwrap(),
        Some(Stored {
            record: started.clone(),
            revision: 2
        })
    );

    let absent = record("run-1", 0, "call-2", CallState::Received);
    assert!(!journal.replace(&absent, 1).await.unwrap());
    assert_eq!(journal.get(&absent.key).await.unwrap(), None);
    started
}

/// Standing grants are kept per tool in the order granted, and revoked for
/// one tool or for all.
pub(super) async fn check_grants(journal: &dyn JournalStore) {
    let for_run = StandingGrant {
        tool: "send_email".to_owned(),
        scope: GrantScope::Run {
            run_id: "run-1".into(),
        },
        fingerprint: None,
        at: 1_700_000_000_000,
    };
    let everywhere = StandingGrant {
        tool: "send_email".to_owned(),
        scope: GrantScope::AllRuns,
        fingerprint: Some("ab".repeat(32)),
        at: 1_700_000_000_001,
    };
    let other = StandingGrant {
        tool: "delete_file".to_owned(),
        scope: GrantScope::AllRuns,
        fingerprint: None,
        at: 1_700_000_000_002,
    };
    for grant in [&for_run, &everywhere, &other] {
        journal.put_grant(grant).await.unwrap();
    }
    assert_eq!(
        journal.grants("send_email").await.unwrap(),
        [for_run, everywhere]
    );
    assert!(journal.grants("read_file").await.unwrap().is_empty());

    assert_eq!(journal.revoke_grants(Some("send_email")).await.unwrap(), 2);
    assert!(journal.grants("send_email").await.unwrap().is_empty());
    assert_eq!(journal.grants("delete_file").await.unwrap(), [other]);
    assert_eq!(journal.revoke_grants(None).await.unwrap(), 1);
    assert!(journal.grants("delete_file").await.unwrap().is_empty());
}

/// Events are logged in the order appended, numbered from 1, and read back
/// for every run or for one.
pub(super) async fn check_events(journal: &dyn JournalStore) {
    let first = [
        event("run-x", "tool.started", 1),
        event("run-y", "tool.started", 2),
    ];
    let second = [event("run-x", "tool.succeeded", 3)];
    journal.append_events(&first).await.unwrap();
    journal.append_events(&[]).await.unwrap();
    journal.append_events(&second).await.unwrap();

    let logged = journal.events(None).await.unwrap();
    let seqs: Vec<i64> = logged.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, [1, 2, 3]);
    let unnumbered: Vec<JournalEvent> = logged
        .into_iter()
        .map(|e| JournalEvent { seq: 0, ..e })
        .collect();
    assert_eq!(unnumbered, [&first[..], &second[..]].concat());

    let of_x = journal.events(Some(&"run-x".into())).await.unwrap();
    let summary: Vec<(i64, &str)> = of_x.iter().map(|e| (e.seq, e.kind.as_str())).collect();
    assert_eq!(summary, [(1, "tool.started"), (3, "tool.succeeded")]);
}

/// Of twenty replacements of one call at revision 1, started together
/// through `journals` in turn (two handles on one database), exactly one
/// wins: the record is then the winner's, at revision 2.
pub(super) async fn check_one_of_twenty_replaces_wins(journals: [Arc<dyn JournalStore>; 2]) {
    let received = record("run-1", 0, "call-1", CallState::Received);
    assert_eq!(journals[0].insert(&received).await.unwrap(), None);

    let start = Arc::new(tokio::sync::Barrier::new(20));
    let attempts = (0..20).map(|i| {
        let journal = Arc::clone(&journals[i % 2]);
        let start = Arc::clone(&start);
        let mut claim = received.clone();
        claim.state = CallState::Started;
        claim.owner = Some(format!("instance-{i}"));
        tokio::spawn(async move {
            start.wait().await;
            let won = journal.replace(&claim, 1).await.unwrap();
            (won, claim)
        })
    });
    let mut winners = Vec::new();
    for attempt in attempts.collect::<Vec<_>>() {
        let (won, claim) = attempt.await.unwrap();
        if won {
            winners.push(claim);
        }
    }
    assert_eq!(winners.len(), 1, "{winners:?}");
    assert_eq!(
        journals[1].get(&received.key).await.unwrap(),
        Some(Stored {
            record: winners.remove(0),
            revision: 2
        })
    );
}
