//! The confirmation policy through the executor: approve, reject with a
//! reason, edit (validated again), no replay of an approval for other
//! arguments, spend and shell tools, and an approver that does not answer.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tinyagents_tools::approval::*;
use tinyagents_tools::policy::*;
use tinyagents_tools::*;
use tinyagents_tools_tests::{call, execute_in, kind};

use crate::policies::{Scripted, assert_refused_by, run_one, setup, tool_spec};

/// An approver that answers from a script and keeps what it was asked.
struct ScriptedApprover {
    decision: ApprovalDecision,
    asked: Arc<Mutex<Vec<ApprovalRequest>>>,
    delay: Duration,
}

#[async_trait]
impl Approver for ScriptedApprover {
    async fn review(&self, request: &ApprovalRequest) -> ApprovalDecision {
        self.asked.lock().unwrap().push(request.clone());
        tokio::time::sleep(self.delay).await;
        self.decision.clone()
    }
}

fn approver(decision: ApprovalDecision) -> (ScriptedApprover, Arc<Mutex<Vec<ApprovalRequest>>>) {
    let asked = Arc::new(Mutex::new(Vec::new()));
    (
        ScriptedApprover {
            decision,
            asked: asked.clone(),
            delay: Duration::ZERO,
        },
        asked,
    )
}

fn confirm_tool() -> Arc<Scripted> {
    Scripted::echoing(tool_spec(
        "send_note",
        ToolSafety::default().requires_confirmation(true),
    ))
}

#[tokio::test]
async fn an_approved_call_runs_and_the_approver_saw_its_fingerprint() {
    let tool = confirm_tool();
    let (a, asked) = approver(ApprovalDecision::Approve);
    let policy = Arc::new(ConfirmationPolicy::new(a));
    let s = setup(vec![tool.clone()], vec![policy.clone()]);
    let run = RunContext::empty();
    let r = run_one(&s, &run, "send_note", json!({"text": "hi"})).await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(tool.runs(), 1);
    let asked = asked.lock().unwrap();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].reasons, [ApprovalReason::RequiresConfirmation]);
    assert_eq!(
        asked[0].fingerprint,
        approval_fingerprint("send_note", &json!({"text": "hi"}))
    );
    let record = policy
        .record_of(&run.run_id().clone(), 1, &ToolCallId::from("call-1"))
        .unwrap();
    assert_eq!(record.scope, GrantScope::Call);
    assert!(record.approved);
}

#[tokio::test]
async fn one_approver_shared_by_two_policies_reviews_the_calls_of_both() {
    let (a, asked) = approver(ApprovalDecision::Approve);
    let shared = Arc::new(a);
    for policy in [
        ConfirmationPolicy::new(Arc::clone(&shared)),
        ConfirmationPolicy::new(Arc::clone(&shared)),
    ] {
        let tool = confirm_tool();
        let s = setup(vec![tool.clone()], vec![Arc::new(policy)]);
        let r = run_one(&s, &RunContext::empty(), "send_note", json!({"text": "hi"})).await;
        assert!(!r.is_error, "{r:?}");
        assert_eq!(tool.runs(), 1);
    }
    assert_eq!(asked.lock().unwrap().len(), 2);
    assert_eq!(
        shared.asked.lock().unwrap().len(),
        2,
        "read through the handle"
    );
    assert_eq!(Arc::strong_count(&shared), 1, "the executors are gone");
}

#[tokio::test]
async fn a_rejected_call_is_refused_with_the_approvers_reason_and_never_runs() {
    let tool = confirm_tool();
    let (a, _) = approver(ApprovalDecision::Reject {
        reason: "the user does not want notes sent today".into(),
    });
    let s = setup(
        vec![tool.clone()],
        vec![Arc::new(ConfirmationPolicy::new(a))],
    );
    let r = run_one(&s, &RunContext::empty(), "send_note", json!({"text": "hi"})).await;
    assert_refused_by(&s, &r, "confirmation");
    assert_eq!(
        r.text(),
        "the call was not approved: the user does not want notes sent today"
    );
    assert_eq!(tool.runs(), 0);
}

#[tokio::test]
async fn edited_arguments_are_validated_again_and_used() {
    let tool = confirm_tool();
    let (a, _) = approver(ApprovalDecision::Edit {
        arguments: json!({"text": "edited by the user"}),
    });
    let s = setup(
        vec![tool.clone()],
        vec![Arc::new(ConfirmationPolicy::new(a))],
    );
    let r = run_one(&s, &RunContext::empty(), "send_note", json!({"text": "hi"})).await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(
        tool.seen.lock().unwrap()[0],
        json!({"text": "edited by the user"})
    );

    let (bad, _) = approver(ApprovalDecision::Edit {
        arguments: json!({"text": 7, "extra": true}),
    });
    let tool = confirm_tool();
    let s = setup(
        vec![tool.clone()],
        vec![Arc::new(ConfirmationPolicy::new(bad))],
    );
    let r = run_one(&s, &RunContext::empty(), "send_note", json!({"text": "hi"})).await;
    assert_refused_by(&s, &r, "confirmation");
    assert_eq!(kind(&r), "invalid_arguments");
    assert_eq!(tool.runs(), 0);
}

#[tokio::test]
async fn an_approval_cannot_be_replayed_for_other_arguments() {
    let tool = confirm_tool();
    let (a, asked) = approver(ApprovalDecision::Approve);
    let policy = Arc::new(ConfirmationPolicy::new(a));
    let run = RunContext::empty();
    policy.pre_approve(
        run.run_id(),
        1,
        "call-1",
        "send_note",
        &json!({"text": "the approved text"}),
    );
    let s = setup(vec![tool.clone()], vec![policy.clone()]);
    let r = run_one(&s, &run, "send_note", json!({"text": "something else"})).await;
    assert_refused_by(&s, &r, "confirmation");
    assert!(r.text().contains("different arguments"), "{}", r.text());
    assert_eq!(tool.runs(), 0);
    // The same call id with the approved arguments runs, without asking again.
    let r = run_one(&s, &run, "send_note", json!({"text": "the approved text"})).await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(tool.runs(), 1);
    assert!(asked.lock().unwrap().is_empty());
}

#[tokio::test]
async fn spend_and_shell_tools_need_approval_unless_explicitly_allowed() {
    let spend = Scripted::echoing(tool_spec("buy_credits", ToolSafety::default().spend(true)));
    let shell = Scripted::echoing(tool_spec("run_cmd", ToolSafety::default().shell(true)));
    let plain = Scripted::echoing(tool_spec("plain", ToolSafety::default()));
    let (a, asked) = approver(ApprovalDecision::Reject {
        reason: "no".into(),
    });
    let s = setup(
        vec![spend.clone(), shell.clone(), plain.clone()],
        vec![Arc::new(ConfirmationPolicy::new(a))],
    );
    let run = RunContext::empty();
    for name in ["buy_credits", "run_cmd"] {
        // Distinct call ids: a decision is recorded per call id.
        let r = execute_in(&s.executor, &run, call(name, name, json!({"text": "x"}))).await;
        assert_refused_by(&s, &r, "confirmation");
    }
    let r = run_one(&s, &run, "plain", json!({"text": "x"})).await;
    assert!(!r.is_error);
    let reasons: Vec<_> = asked
        .lock()
        .unwrap()
        .iter()
        .map(|r| r.reasons.clone())
        .collect();
    assert_eq!(
        reasons,
        [vec![ApprovalReason::Spend], vec![ApprovalReason::Shell]]
    );

    let (a, asked) = approver(ApprovalDecision::Reject {
        reason: "no".into(),
    });
    let s = setup(
        vec![spend.clone(), shell.clone()],
        vec![Arc::new(
            ConfirmationPolicy::new(a)
                .allow_spend(true)
                .allow_shell(true),
        )],
    );
    for name in ["buy_credits", "run_cmd"] {
        assert!(!run_one(&s, &run, name, json!({"text": "x"})).await.is_error);
    }
    assert!(asked.lock().unwrap().is_empty());
}

#[tokio::test]
async fn an_approver_that_does_not_answer_in_time_counts_as_a_rejection() {
    let tool = confirm_tool();
    let (mut a, _) = approver(ApprovalDecision::Approve);
    a.delay = Duration::from_secs(30);
    let policy = ConfirmationPolicy::new(a).timeout(Duration::from_millis(50));
    let s = setup(vec![tool.clone()], vec![Arc::new(policy)]);
    let r = run_one(&s, &RunContext::empty(), "send_note", json!({"text": "hi"})).await;
    assert_refused_by(&s, &r, "confirmation");
    assert!(r.text().contains("no approval arrived in time"));
    assert_eq!(tool.runs(), 0);
}
