//! The suite's approval checks: a call that waits for a person, decided
//! (approved, denied, edited) from another instance, expiring, and
//! standing grants kept in the journal.

use std::time::Duration;

use serde_json::json;
use tinyagents_tools::approval::{ApprovalDecision, GrantScope, approval_fingerprint};
use tinyagents_tools::journal::{CallState, JournalError};
use tinyagents_tools::{ErrorClass, RunId, Turn};

use super::{Setup, call, deliver, texts};
use crate::tools::executor;

/// The error of a refused decision, which must be of the repair class (the
/// caller can correct it).
fn repair_error<T: std::fmt::Debug>(decided: Result<T, JournalError>) -> JournalError {
    let error = decided.unwrap_err();
    assert_eq!(error.class(), ErrorClass::Repair, "{error}");
    error
}

pub(super) async fn an_undecided_approval_ends_pending_and_runs_once_after_approval(s: Setup) {
    let (exec, r) = (executor(&s.a), s.run());
    let delete_7 = || call("c1", "delete_note", json!({"id": 7}));
    let results = exec
        .execute_batch(
            &r,
            &Turn::new(1),
            vec![delete_7(), call("c2", "list_notes", json!({}))],
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
    assert_eq!(s.ledger.lines(), vec!["list".to_owned()]);
    // Delivered again while undecided: still pending, still not run.
    let again = deliver(&exec, &r, 1, delete_7()).await;
    assert_eq!(again.approval_id().as_deref(), Some(approval.as_str()));
    // The request waits in the journal, readable from another instance.
    let pending =
        s.b.pending_approvals(Some(&r.run_id().clone()))
            .await
            .unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].id, approval);
    let to_resume = |runs: Vec<RunId>| runs.iter().any(|x| x.as_str() == s.id);
    assert!(!to_resume(s.b.runs_to_resume().await.unwrap()));
    // Decided from the other instance, resumed from a new executor.
    let decided = s.b.approve(&approval).await.unwrap();
    assert_eq!(decided.state, CallState::Approved);
    assert!(to_resume(s.b.runs_to_resume().await.unwrap()));
    let exec_b = executor(&s.b);
    let resumed = exec_b.resume(&s.run()).await.unwrap();
    assert_eq!(
        texts(&resumed),
        vec![("c1".to_owned(), "note 7 deleted".to_owned())]
    );
    assert_eq!(
        s.ledger.lines(),
        vec!["list".to_owned(), "delete 7 c1".to_owned()]
    );
    // Resuming again runs nothing; delivering again answers from the journal.
    assert!(exec_b.resume(&s.run()).await.unwrap().is_empty());
    let replay = deliver(&exec, &r, 1, delete_7()).await;
    assert_eq!(replay.text(), "note 7 deleted");
    assert_eq!(s.ledger.lines().len(), 2);
    // The decision is kept with the call.
    let record = s.a.call(&s.key(1, "c1")).await.unwrap().unwrap();
    let entry = record.approval.unwrap();
    assert_eq!(entry.decision, Some(ApprovalDecision::Approve));
    assert!(entry.record.unwrap().approved);
}

pub(super) async fn a_rejected_approval_is_answered_with_its_reason_and_never_runs(s: Setup) {
    let r = s.run();
    let delete_3 = || call("c1", "delete_note", json!({"id": 3}));
    let pending = deliver(&executor(&s.a), &r, 1, delete_3()).await;
    let approval = pending.approval_id().unwrap();
    s.b.deny(&approval, "note 3 is the user's only copy")
        .await
        .unwrap();
    let resumed = executor(&s.a).resume(&r).await.unwrap();
    assert_eq!(resumed.len(), 1);
    assert_eq!(resumed[0].outcome(), "denied");
    assert!(resumed[0].text().contains("note 3 is the user's only copy"));
    assert_eq!(
        resumed[0].error.as_ref().unwrap().class(),
        ErrorClass::Repair
    );
    assert!(s.ledger.lines().is_empty());
    // Answered once: delivered again, the same refusal.
    let again = deliver(&executor(&s.b), &r, 1, delete_3()).await;
    assert_eq!(again.outcome(), "denied");
    assert_eq!(again.text(), resumed[0].text());
    assert!(s.ledger.lines().is_empty());
}

pub(super) async fn an_edited_approval_runs_with_the_edited_arguments_checked_again(s: Setup) {
    let (exec, r) = (executor(&s.a), s.run());
    let delete_9 = || call("c1", "delete_note", json!({"id": 9}));
    let pending = deliver(&exec, &r, 1, delete_9()).await;
    let approval = pending.approval_id().unwrap();
    let edit = |arguments| ApprovalDecision::Edit { arguments };
    // Arguments the tool's schema refuses are refused at decision time.
    let refused = repair_error(exec.decide(&approval, edit(json!({"id": "nine"}))).await);
    assert!(
        matches!(refused, JournalError::InvalidEdit { .. }),
        "{refused}"
    );
    assert!(refused.to_string().contains("id"), "{refused}");
    exec.decide(&approval, edit(json!({"id": 10})))
        .await
        .unwrap();
    let resumed = executor(&s.b).resume(&r).await.unwrap();
    assert_eq!(resumed[0].text(), "note 10 deleted");
    assert_eq!(s.ledger.lines(), vec!["delete 10 c1".to_owned()]);
    // The model's own delivery (the original arguments) gets that answer.
    let again = deliver(&exec, &r, 1, delete_9()).await;
    assert_eq!(again.text(), "note 10 deleted");
    assert_eq!(s.ledger.lines().len(), 1);
}

pub(super) async fn decisions_on_unknown_decided_or_expired_approvals_are_refused(s: Setup) {
    let unknown = repair_error(s.a.approve("apr_000000000000000000000000").await);
    assert!(
        matches!(unknown, JournalError::UnknownApproval { .. }),
        "{unknown}"
    );

    let r = s.run();
    let delete_1 = call("c1", "delete_note", json!({"id": 1}));
    let approval = deliver(&executor(&s.a), &r, 1, delete_1)
        .await
        .approval_id()
        .unwrap();
    s.a.approve(&approval).await.unwrap();
    let twice = s.b.deny(&approval, "too late").await.unwrap_err();
    assert!(
        matches!(twice, JournalError::AlreadyDecided { ref decision, .. } if decision == "approve"),
        "{twice}"
    );
    repair_error(s.b.decide(&approval, ApprovalDecision::Defer).await);

    // A request with an expiry lapses: deciding after it is refused, and
    // the call is answered as not approved.
    let short = tinyagents_tools::ToolExecutor::builder(crate::tools::registry(), ())
        .middleware(
            tinyagents_tools::policy::ConfirmationPolicy::deferred()
                .approval_ttl(Duration::from_millis(50)),
        )
        .journal(s.a.clone())
        .build()
        .unwrap();
    let delete_2 = || call("c1", "delete_note", json!({"id": 2}));
    let lapsing = deliver(&short, &r, 2, delete_2()).await;
    let lapsing_id = lapsing.approval_id().unwrap();
    assert!(lapsing.pending.as_ref().unwrap().expires_at.is_some());
    tokio::time::sleep(Duration::from_millis(120)).await;
    let late = s.b.approve(&lapsing_id).await.unwrap_err();
    assert!(matches!(late, JournalError::Expired { .. }), "{late}");
    let answered = deliver(&short, &r, 2, delete_2()).await;
    assert_eq!(answered.outcome(), "denied");
    assert!(answered.text().contains("expired"), "{}", answered.text());
    assert!(s.ledger.lines().is_empty());
}

pub(super) async fn standing_grants_kept_in_the_journal_reach_every_instance(s: Setup) {
    let r = s.run();
    let delete_1 = || call("c1", "delete_note", json!({"id": 1}));
    s.a.grant_standing("delete_note", GrantScope::run(s.id.as_str()), None)
        .await
        .unwrap();
    let ran = deliver(&executor(&s.b), &r, 1, delete_1()).await;
    assert_eq!(ran.outcome(), "ok");
    let record = s.b.call(&s.key(1, "c1")).await.unwrap().unwrap();
    let kept = record.approval.unwrap().record.unwrap();
    assert_eq!(kept.scope, GrantScope::run(s.id.as_str()));
    // Another run is not covered; a call grant is refused.
    let other = crate::tools::run(&format!("{}-other", s.id), &s.ledger);
    let waits = deliver(&executor(&s.b), &other, 1, delete_1()).await;
    assert!(waits.is_pending());
    assert!(
        s.a.grant_standing("delete_note", GrantScope::Call, None)
            .await
            .is_err()
    );
    assert_eq!(s.a.revoke_standing(Some("delete_note")).await.unwrap(), 1);
    let after = deliver(&executor(&s.b), &r, 2, delete_1()).await;
    assert!(after.is_pending());
    assert_eq!(s.ledger.lines().len(), 1);
}
