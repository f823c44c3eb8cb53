//! Approvals are bound to one call, in one turn, of one run: a Gemini call
//! approved in turn 1 is asked about again in turn 5 (same or other
//! arguments) and in another run; only an explicit standing grant reaches
//! further, and it says so in an event. Cancelling the run while the
//! approver decides answers the call `cancelled` at once, and the tool never
//! runs, whatever the approver says later.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tinyagents_tools::approval::*;
use tinyagents_tools::events::EventKind;
use tinyagents_tools::policy::*;
use tinyagents_tools::providers::gemini;
use tinyagents_tools::*;
use tinyagents_tools_tests::{Recorder, call, execute_in, kind};
use tokio::sync::{Notify, oneshot};

use crate::policies::{Scripted, tool_spec};

/// Approves everything and keeps what it was asked.
#[derive(Default)]
struct Counting {
    asked: Mutex<Vec<ApprovalRequest>>,
}

/// A shared [`Counting`].
struct Shared(Arc<Counting>);

#[async_trait]
impl Approver for Shared {
    async fn review(&self, request: &ApprovalRequest) -> ApprovalDecision {
        self.0.asked.lock().unwrap().push(request.clone());
        ApprovalDecision::Approve
    }
}

impl Counting {
    fn count(&self) -> usize {
        self.asked.lock().unwrap().len()
    }

    /// The turn of every request, in the order asked.
    fn turns(&self) -> Vec<u32> {
        self.asked.lock().unwrap().iter().map(|r| r.turn).collect()
    }
}

fn delete_file() -> Arc<Scripted> {
    Scripted::echoing(tool_spec(
        "delete_file",
        ToolSafety::default().requires_confirmation(true),
    ))
}

struct Setup {
    exec: ToolExecutor,
    policy: Arc<ConfirmationPolicy>,
    approver: Arc<Counting>,
    recorder: Arc<Recorder>,
    tool: Arc<Scripted>,
}

/// A run with the id `id`.
fn run_named(id: &str) -> RunContext {
    RunContext::builder(()).run_id(id).build()
}

/// Two runs, `run-a` and `run-b`.
fn two_runs() -> (RunContext, RunContext) {
    (run_named("run-a"), run_named("run-b"))
}

/// Call `id` of `delete_file` for the file `text`.
fn delete(id: &str, text: &str) -> ToolCall {
    call(id, "delete_file", json!({"text": text}))
}

impl Setup {
    /// The confirmation record of call `id` in `turn` of `run`.
    fn record_of(&self, run: &RunContext, turn: u32, id: &str) -> ApprovalRecord {
        self.policy
            .record_of(run.run_id(), turn, &ToolCallId::from(id))
            .expect("the call has a confirmation record")
    }
}

fn setup() -> Setup {
    let tool = delete_file();
    let approver = Arc::new(Counting::default());
    let policy = Arc::new(ConfirmationPolicy::new(Shared(approver.clone())));
    let mut registry = ToolRegistry::new();
    registry.register(tool.clone()).unwrap();
    let recorder = Recorder::new();
    let exec = ToolExecutor::builder(registry, ())
        .middleware(policy.clone())
        .subscribe(recorder.clone())
        .build()
        .unwrap();
    Setup {
        exec,
        policy,
        approver,
        recorder,
        tool,
    }
}

/// A Gemini reply calling `delete_file` once, without an id.
fn gemini_reply(text: &str) -> Value {
    json!({"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"name": "delete_file", "args": {"text": text}}}
    ]}}]})
}

#[tokio::test]
async fn gemini_call_zero_approved_in_turn_one_is_asked_again_in_turn_five_with_other_or_the_same_arguments()
 {
    let s = setup();
    let run = RunContext::empty();

    let turn1 = gemini::parse_function_calls(&gemini_reply("a.txt"), 1).unwrap();
    let r = s.exec.execute(&run, &Turn::new(1), turn1[0].clone()).await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(s.approver.count(), 1);

    // Turn 5, other arguments: a new id, a new question.
    let turn5 = gemini::parse_function_calls(&gemini_reply("b.txt"), 5).unwrap();
    assert_ne!(
        turn5[0].id, turn1[0].id,
        "synthetic ids never repeat across turns"
    );
    let r = s.exec.execute(&run, &Turn::new(5), turn5[0].clone()).await;
    assert!(!r.is_error, "{r:?}");
    assert_eq!(s.approver.count(), 2);

    // Turn 6, the same arguments as turn 1: asked again too.
    let turn6 = gemini::parse_function_calls(&gemini_reply("a.txt"), 6).unwrap();
    s.exec.execute(&run, &Turn::new(6), turn6[0].clone()).await;
    assert_eq!(s.approver.count(), 3);

    // A client that reuses one id in every turn (the old synthetic ids) gets
    // no carry-over either: same id, turn 7, other or the same arguments.
    for (turn, text) in [(7, "c.txt"), (8, "a.txt")] {
        let reused = call(
            "gemini-call-0-delete_file",
            "delete_file",
            json!({"text": text}),
        );
        s.exec.execute(&run, &Turn::new(turn), reused.clone()).await;
        s.exec.execute(&run, &Turn::new(turn + 10), reused).await;
    }
    assert_eq!(s.approver.count(), 7);
    assert_eq!(s.approver.turns(), [1, 5, 6, 7, 17, 8, 18]);
    assert_eq!(s.tool.runs(), 7);
}

#[tokio::test]
async fn an_approval_never_carries_to_another_run_and_within_its_call_never_to_other_arguments() {
    let s = setup();
    let (first, second) = two_runs();
    let c = delete("call-0", "a.txt");
    s.exec.execute(&first, &Turn::new(1), c.clone()).await;
    s.exec.execute(&second, &Turn::new(1), c.clone()).await;
    assert_eq!(s.approver.count(), 2);
    let record = s.record_of(&second, 1, "call-0");
    assert!(record.approved);
    assert_eq!(record.scope, GrantScope::Call);

    // The same call id in the same turn and run with other arguments is
    // refused (the decision was for other arguments), not asked again.
    let other = delete("call-0", "z.txt");
    let r = s.exec.execute(&second, &Turn::new(1), other).await;
    assert_eq!(kind(&r), "denied");
    assert!(r.text().contains("different arguments"), "{}", r.text());
    assert_eq!(s.approver.count(), 2);
    assert_eq!(s.tool.runs(), 2);
}

#[tokio::test]
async fn a_standing_grant_is_explicit_scoped_and_reported_in_an_event() {
    let s = setup();
    let (run, elsewhere) = two_runs();
    s.policy.grant_standing(
        "delete_file",
        GrantScope::run(run.run_id().clone()),
        Some(&json!({"text": "cache.tmp"})),
    );
    for turn in 1..=3 {
        let c = delete("call-0", "cache.tmp");
        let r = s.exec.execute(&run, &Turn::new(turn), c).await;
        assert!(!r.is_error, "{r:?}");
    }
    assert_eq!(s.approver.count(), 0, "the grant answered");
    let custom = s.recorder.custom_events();
    assert_eq!(custom.len(), 3);
    assert_eq!(custom[0].0, "approval.standing_grant");
    assert_eq!(custom[0].1, json!({"scope": "run", "tool": "delete_file"}));
    let record = s.record_of(&run, 2, "call-0");
    assert_eq!(record.scope, GrantScope::run(run.run_id().clone()));

    // Other arguments, or another run: the approver is asked.
    let c = delete("call-1", "important.db");
    s.exec.execute(&run, &Turn::new(4), c).await;
    let c = delete("call-0", "cache.tmp");
    s.exec.execute(&elsewhere, &Turn::new(1), c).await;
    assert_eq!(s.approver.count(), 2);

    // A grant for every run, then revoked.
    s.policy
        .grant_standing("delete_file", GrantScope::AllRuns, None);
    let c = delete("call-9", "anything");
    s.exec.execute(&elsewhere, &Turn::new(2), c).await;
    assert_eq!(s.approver.count(), 2);
    assert_eq!(
        s.recorder.custom_events().last().unwrap().1["scope"],
        "all_runs"
    );
    s.policy.revoke_standing();
    let c = delete("call-10", "anything");
    s.exec.execute(&elsewhere, &Turn::new(3), c).await;
    assert_eq!(s.approver.count(), 3);
}

/// Waits for a decision the test sends, after telling the test it was
/// asked.
struct Held {
    asked: Arc<Notify>,
    answer: Mutex<Option<oneshot::Receiver<ApprovalDecision>>>,
    answered: Arc<Mutex<bool>>,
}

#[async_trait]
impl Approver for Held {
    async fn review(&self, _: &ApprovalRequest) -> ApprovalDecision {
        self.asked.notify_one();
        let rx = self.answer.lock().unwrap().take().expect("asked once");
        let decision = rx.await.unwrap_or(ApprovalDecision::Reject {
            reason: "dropped".into(),
        });
        *self.answered.lock().unwrap() = true;
        decision
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_the_run_while_the_approver_decides_answers_cancelled_at_once_and_the_tool_never_runs()
 {
    let tool = delete_file();
    let asked = Arc::new(Notify::new());
    let answered = Arc::new(Mutex::new(false));
    let (tx, rx) = oneshot::channel();
    let policy = Arc::new(ConfirmationPolicy::new(Held {
        asked: asked.clone(),
        answer: Mutex::new(Some(rx)),
        answered: answered.clone(),
    }));
    let mut registry = ToolRegistry::new();
    registry.register(tool.clone()).unwrap();
    let recorder = Recorder::new();
    let exec = Arc::new(
        ToolExecutor::builder(registry, ())
            .middleware(policy.clone())
            .subscribe(recorder.clone())
            .build()
            .unwrap(),
    );
    let run = run_named("run-c");
    let task = {
        let (exec, run) = (exec.clone(), run.clone());
        tokio::spawn(async move {
            let c = delete("call-7", "a.txt");
            exec.execute(&run, &Turn::new(2), c).await
        })
    };
    asked.notified().await;
    let cancelled_at = Instant::now();
    run.cancel();
    let r = tokio::time::timeout(Duration::from_secs(2), task)
        .await
        .expect("the wait ends at once")
        .unwrap();
    assert!(cancelled_at.elapsed() < Duration::from_millis(500));
    assert_eq!(r.tool_call_id.as_str(), "call-7");
    assert_eq!(kind(&r), "cancelled");
    assert!(!*answered.lock().unwrap());

    // The approver's later "yes" is ignored: nothing runs, nothing is
    // recorded.
    tx.send(ApprovalDecision::Approve).unwrap();
    for _ in 0..50 {
        if *answered.lock().unwrap() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(*answered.lock().unwrap(), "the approver did answer");
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(tool.runs(), 0);
    assert!(
        policy
            .record_of(run.run_id(), 2, &ToolCallId::from("call-7"))
            .is_none()
    );
    let kinds = recorder.kinds_for("call-7");
    assert_eq!(kinds.last(), Some(&EventKind::Rejected), "{kinds:?}");
    assert!(!kinds.contains(&EventKind::Completed));
}

/// Cancels the run it is given, then approves.
struct Crossing(RunContext);

#[async_trait]
impl Approver for Crossing {
    async fn review(&self, _: &ApprovalRequest) -> ApprovalDecision {
        self.0.cancel();
        ApprovalDecision::Approve
    }
}

#[tokio::test]
async fn a_call_approved_after_its_run_was_cancelled_never_runs() {
    let tool = delete_file();
    let run = run_named("run-d");
    let mut registry = ToolRegistry::new();
    registry.register(tool.clone()).unwrap();
    let exec = ToolExecutor::builder(registry, ())
        .middleware(ConfirmationPolicy::new(Crossing(run.clone())))
        .build()
        .unwrap();
    let r = execute_in(&exec, &run, delete("call-1", "a")).await;
    assert_eq!(r.tool_call_id.as_str(), "call-1");
    assert_eq!(kind(&r), "cancelled");
    assert_eq!(tool.runs(), 0);
}
