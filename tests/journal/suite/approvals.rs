//! The suite's approval checks: a call that waits for a person, decided
//! (approved, denied, edited) from another instance, expiring, and
//! standing grants kept in the journal.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tinyagents_tools::approval::{ApprovalDecision, GrantScope, approval_fingerprint};
use tinyagents_tools::journal::{CallKey, CallState, Journal, JournalError};
use tinyagents_tools::{ErrorClass, Turn};

use super::{call, texts};
use crate::tools::{Ledger, executor, run};

pub(super) async fn an_undecided_approval_ends_pending_and_runs_once_after_approval(
    a: Journal,
    b: Journal,
    id: String,
) {
    let ledger = Arc::new(Ledger::default());
    let (exec, r) = (executor(&a), run(&id, &ledger));
    let results = exec
        .execute_batch(
            &r,
            &Turn::new(1),
            vec![
                call("c1", "delete_note", json!({"id": 7})),
                call("c2", "list_notes", json!({})),
            ],
        )
        .await;
    assert_eq!(results[0].outcome(), "pending_approval");
    assert!(results[0].error.is_none(), "pending is not an error");
    assert!(!results[0].is_error);
    assert_eq!(results[1].outcome(), "ok");
    let approval = results[0].approval_id().unwrap();
    let request = results[0].pending.as_ref().unwrap();
    assert_eq!(request.tool, "delete_note");
    assert_eq!(request.arguments, json!({"id": 7}));
    assert_eq!(
        request.fingerprint,
        approval_fingerprint("delete_note", &json!({"id": 7}))
    );
    assert_eq!(ledger.lines(), vec!["list".to_owned()]);
    // Delivered again while undecided: still pending, still not run.
    let again = exec
        .execute(
            &r,
            &Turn::new(1),
            call("c1", "delete_note", json!({"id": 7})),
        )
        .await;
    assert_eq!(again.approval_id().as_deref(), Some(approval.as_str()));
    // The request waits in the journal, readable from another instance.
    let pending = b
        .pending_approvals(Some(&r.run_id().clone()))
        .await
        .unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].id, approval);
    assert_eq!(
        b.runs_to_resume()
            .await
            .unwrap()
            .iter()
            .filter(|x| x.as_str() == id)
            .count(),
        0
    );
    // Decided from the other instance, resumed from a new executor.
    let decided = b.approve(&approval).await.unwrap();
    assert_eq!(decided.state, CallState::Approved);
    assert!(
        b.runs_to_resume()
            .await
            .unwrap()
            .iter()
            .any(|x| x.as_str() == id)
    );
    let exec_b = executor(&b);
    let resumed = exec_b.resume(&run(&id, &ledger)).await.unwrap();
    assert_eq!(
        texts(&resumed),
        vec![("c1".to_owned(), "note 7 deleted".to_owned())]
    );
    assert_eq!(
        ledger.lines(),
        vec!["list".to_owned(), "delete 7 c1".to_owned()]
    );
    // Resuming again runs nothing; delivering again answers from the journal.
    assert!(exec_b.resume(&run(&id, &ledger)).await.unwrap().is_empty());
    let replay = exec
        .execute(
            &r,
            &Turn::new(1),
            call("c1", "delete_note", json!({"id": 7})),
        )
        .await;
    assert_eq!(replay.text(), "note 7 deleted");
    assert_eq!(ledger.lines().len(), 2);
    // The decision is kept with the call.
    let record = a
        .call(&CallKey::new(id.as_str(), 1, "c1"))
        .await
        .unwrap()
        .unwrap();
    let entry = record.approval.unwrap();
    assert_eq!(entry.decision, Some(ApprovalDecision::Approve));
    assert!(entry.record.unwrap().approved);
}

pub(super) async fn a_rejected_approval_is_answered_with_its_reason_and_never_runs(
    a: Journal,
    b: Journal,
    id: String,
) {
    let ledger = Arc::new(Ledger::default());
    let r = run(&id, &ledger);
    let pending = executor(&a)
        .execute(
            &r,
            &Turn::new(1),
            call("c1", "delete_note", json!({"id": 3})),
        )
        .await;
    let approval = pending.approval_id().unwrap();
    b.deny(&approval, "note 3 is the user's only copy")
        .await
        .unwrap();
    let resumed = executor(&a).resume(&r).await.unwrap();
    assert_eq!(resumed.len(), 1);
    assert_eq!(resumed[0].outcome(), "denied");
    assert!(resumed[0].text().contains("note 3 is the user's only copy"));
    assert_eq!(
        resumed[0].error.as_ref().unwrap().class(),
        ErrorClass::Repair
    );
    assert!(ledger.lines().is_empty());
    // Answered once: delivered again, the same refusal.
    let again = executor(&b)
        .execute(
            &r,
            &Turn::new(1),
            call("c1", "delete_note", json!({"id": 3})),
        )
        .await;
    assert_eq!(again.outcome(), "denied");
    assert_eq!(again.text(), resumed[0].text());
    assert!(ledger.lines().is_empty());
}

pub(super) async fn an_edited_approval_runs_with_the_edited_arguments_checked_again(
    a: Journal,
    b: Journal,
    id: String,
) {
    let ledger = Arc::new(Ledger::default());
    let r = run(&id, &ledger);
    let exec = executor(&a);
    let pending = exec
        .execute(
            &r,
            &Turn::new(1),
            call("c1", "delete_note", json!({"id": 9})),
        )
        .await;
    let approval = pending.approval_id().unwrap();
    // Arguments the tool's schema refuses are refused at decision time.
    let refused = exec
        .decide(
            &approval,
            ApprovalDecision::Edit {
                arguments: json!({"id": "nine"}),
            },
        )
        .await
        .unwrap_err();
    assert!(
        matches!(refused, JournalError::InvalidEdit { .. }),
        "{refused}"
    );
    assert_eq!(refused.class(), ErrorClass::Repair);
    assert!(refused.to_string().contains("id"), "{refused}");
    exec.decide(
        &approval,
        ApprovalDecision::Edit {
            arguments: json!({"id": 10}),
        },
    )
    .await
    .unwrap();
    let resumed = executor(&b).resume(&r).await.unwrap();
    assert_eq!(resumed[0].text(), "note 10 deleted");
    assert_eq!(ledger.lines(), vec!["delete 10 c1".to_owned()]);
    // The model's own delivery (the original arguments) gets that answer.
    let again = exec
        .execute(
            &r,
            &Turn::new(1),
            call("c1", "delete_note", json!({"id": 9})),
        )
        .await;
    assert_eq!(again.text(), "note 10 deleted");
    assert_eq!(ledger.lines().len(), 1);
}

pub(super) async fn decisions_on_unknown_decided_or_expired_approvals_are_refused(
    a: Journal,
    b: Journal,
    id: String,
) {
    let unknown = a.approve("apr_000000000000000000000000").await.unwrap_err();
    assert!(
        matches!(unknown, JournalError::UnknownApproval { .. }),
        "{unknown}"
    );
    assert_eq!(unknown.class(), ErrorClass::Repair);

    let ledger = Arc::new(Ledger::default());
    let r = run(&id, &ledger);
    let approval = executor(&a)
        .execute(
            &r,
            &Turn::new(1),
            call("c1", "delete_note", json!({"id": 1})),
        )
        .await
        .approval_id()
        .unwrap();
    a.approve(&approval).await.unwrap();
    let twice = b.deny(&approval, "too late").await.unwrap_err();
    assert!(
        matches!(twice, JournalError::AlreadyDecided { ref decision, .. } if decision == "approve"),
        "{twice}"
    );
    let defer = b
        .decide(&approval, ApprovalDecision::Defer)
        .await
        .unwrap_err();
    assert_eq!(defer.class(), ErrorClass::Repair);

    // A request with an expiry lapses: deciding after it is refused, and
    // the call is answered as not approved.
    let short = tinyagents_tools::ToolExecutor::builder(crate::tools::registry(), ())
        .middleware(
            tinyagents_tools::policy::ConfirmationPolicy::deferred()
                .approval_ttl(Duration::from_millis(50)),
        )
        .journal(a.clone())
        .build()
        .unwrap();
    let lapsing = short
        .execute(
            &r,
            &Turn::new(2),
            call("c1", "delete_note", json!({"id": 2})),
        )
        .await;
    let lapsing_id = lapsing.approval_id().unwrap();
    assert!(lapsing.pending.as_ref().unwrap().expires_at.is_some());
    tokio::time::sleep(Duration::from_millis(120)).await;
    let late = b.approve(&lapsing_id).await.unwrap_err();
    assert!(matches!(late, JournalError::Expired { .. }), "{late}");
    let answered = short
        .execute(
            &r,
            &Turn::new(2),
            call("c1", "delete_note", json!({"id": 2})),
        )
        .await;
    assert_eq!(answered.outcome(), "denied");
    assert!(answered.text().contains("expired"), "{}", answered.text());
    assert!(ledger.lines().is_empty());
}

pub(super) async fn standing_grants_kept_in_the_journal_reach_every_instance(
    a: Journal,
    b: Journal,
    id: String,
) {
    let ledger = Arc::new(Ledger::default());
    let r = run(&id, &ledger);
    a.grant_standing("delete_note", GrantScope::run(id.as_str()), None)
        .await
        .unwrap();
    let ran = executor(&b)
        .execute(
            &r,
            &Turn::new(1),
            call("c1", "delete_note", json!({"id": 1})),
        )
        .await;
    assert_eq!(ran.outcome(), "ok");
    let record = b
        .call(&CallKey::new(id.as_str(), 1, "c1"))
        .await
        .unwrap()
        .unwrap();
    let kept = record.approval.unwrap().record.unwrap();
    assert_eq!(kept.scope, GrantScope::run(id.as_str()));
    // Another run is not covered; a call grant is refused.
    let other = run(&format!("{id}-other"), &ledger);
    let waits = executor(&b)
        .execute(
            &other,
            &Turn::new(1),
            call("c1", "delete_note", json!({"id": 1})),
        )
        .await;
    assert!(waits.is_pending());
    assert!(
        a.grant_standing("delete_note", GrantScope::Call, None)
            .await
            .is_err()
    );
    assert_eq!(a.revoke_standing(Some("delete_note")).await.unwrap(), 1);
    let after = executor(&b)
        .execute(
            &r,
            &Turn::new(2),
            call("c1", "delete_note", json!({"id": 1})),
        )
        .await;
    assert!(after.is_pending());
    assert_eq!(ledger.lines().len(), 1);
}
