//! The durable-call checks every journal backend passes. Each check gets
//! two journal handles on one store (two instances, or a process and the
//! one that replaced it) and a run id of its own.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tinyagents_tools::approval::approval_fingerprint;
use tinyagents_tools::journal::{
    CallKey, CallQuery, CallRecord, CallState, Journal, JournalError, Stored,
};
use tinyagents_tools::{ErrorClass, ToolCall, ToolResult, Turn};

use crate::tools::{Ledger, executor, run};

mod approvals;

use approvals::*;

type Check = fn(Journal, Journal, String) -> Pin<Box<dyn Future<Output = ()> + Send>>;

macro_rules! checks {
    ($($name:ident),* $(,)?) => {
        /// Every check, by name.
        pub const CHECKS: &[(&str, Check)] = &[
            $((stringify!($name), |a, b, id| Box::pin($name(a, b, id)))),*
        ];
    };
}

checks![
    an_answered_call_is_answered_from_the_journal_and_never_run_again,
    a_restarted_process_answers_a_completed_call_from_the_journal,
    an_undecided_approval_ends_pending_and_runs_once_after_approval,
    a_rejected_approval_is_answered_with_its_reason_and_never_runs,
    an_edited_approval_runs_with_the_edited_arguments_checked_again,
    decisions_on_unknown_decided_or_expired_approvals_are_refused,
    a_call_id_delivered_again_with_other_arguments_is_refused,
    a_call_started_by_a_dead_process_is_answered_interrupted_and_can_be_settled,
    a_read_only_call_started_by_a_dead_process_simply_runs_again,
    two_instances_delivering_one_call_run_its_body_once,
    two_instances_resuming_one_run_run_each_call_once,
    standing_grants_kept_in_the_journal_reach_every_instance,
    tool_started_is_emitted_only_for_bodies_that_run_and_events_read_back,
    every_record_reads_back_in_its_documented_json_form,
    the_store_enforces_compare_and_set,
];

/// Runs every check, each on a fresh pair of handles from `open`.
pub async fn run_suite<F, Fut>(backend: &str, open: F)
where
    F: Fn() -> Fut,
    Fut: Future<Output = (Journal, Journal)>,
{
    for (name, check) in CHECKS {
        let (a, b) = open().await;
        eprintln!("journal suite on {backend}: {name}");
        check(a, b, format!("{backend}-{name}")).await;
    }
}

fn call(id: &str, tool: &str, args: Value) -> ToolCall {
    ToolCall::new(id, tool, args)
}

fn texts(results: &[ToolResult]) -> Vec<(String, String)> {
    results
        .iter()
        .map(|r| (r.tool_call_id.as_str().to_owned(), r.text()))
        .collect()
}

async fn an_answered_call_is_answered_from_the_journal_and_never_run_again(
    a: Journal,
    _: Journal,
    id: String,
) {
    let ledger = Arc::new(Ledger::default());
    let (exec, run) = (executor(&a), run(&id, &ledger));
    let calls = vec![
        call("c1", "bump", json!({"by": 2})),
        call("c2", "list_notes", json!({})),
    ];
    let first = exec.execute_batch(&run, &Turn::new(1), calls.clone()).await;
    assert!(first.iter().all(|r| !r.is_error), "{first:?}");
    let second = exec.execute_batch(&run, &Turn::new(1), calls).await;
    assert_eq!(texts(&first), texts(&second));
    // The two calls of a batch run at once: their lines come in any order.
    let mut lines = ledger.lines();
    lines.sort();
    assert_eq!(lines, vec![format!("bump 2 c1"), "list".to_owned()]);
    // Answered records keep no arguments, only their fingerprint.
    let records = a.calls(&CallQuery::run(id.as_str())).await.unwrap();
    assert_eq!(records.len(), 2);
    for r in &records {
        assert_eq!(r.state, CallState::Answered);
        assert_eq!(r.arguments, Value::Null);
        assert_eq!(r.answer.as_ref().unwrap().outcome, "ok");
    }
    // The same call id in another turn is another call.
    let other_turn = exec
        .execute(&run, &Turn::new(2), call("c1", "bump", json!({"by": 2})))
        .await;
    assert!(!other_turn.is_error);
    assert_eq!(ledger.lines().len(), 3);
}

async fn a_restarted_process_answers_a_completed_call_from_the_journal(
    a: Journal,
    b: Journal,
    id: String,
) {
    let ledger = Arc::new(Ledger::default());
    let first = executor(&a)
        .execute(
            &run(&id, &ledger),
            &Turn::new(1),
            call("c1", "bump", json!({"by": 1})),
        )
        .await;
    drop(a);
    // Another process: a new executor, a new handle, the same journal.
    let again = executor(&b)
        .execute(
            &run(&id, &ledger),
            &Turn::new(1),
            call("c1", "bump", json!({"by": 1})),
        )
        .await;
    assert_eq!(first.text(), again.text());
    assert_eq!(again.outcome(), "ok");
    assert_eq!(ledger.lines().len(), 1, "the body ran once");
}

async fn a_call_id_delivered_again_with_other_arguments_is_refused(
    a: Journal,
    _: Journal,
    id: String,
) {
    let ledger = Arc::new(Ledger::default());
    let (exec, r) = (executor(&a), run(&id, &ledger));
    exec.execute(&r, &Turn::new(1), call("c1", "bump", json!({"by": 1})))
        .await;
    let other = exec
        .execute(&r, &Turn::new(1), call("c1", "bump", json!({"by": 5})))
        .await;
    assert_eq!(other.outcome(), "conflict");
    assert_eq!(other.error.as_ref().unwrap().class(), ErrorClass::Fatal);
    assert_eq!(other.tool_call_id.as_str(), "c1");
    assert_eq!(ledger.lines().len(), 1);
    // An approval given for one set of arguments does not cover others.
    let pending = exec
        .execute(
            &r,
            &Turn::new(2),
            call("c2", "delete_note", json!({"id": 1})),
        )
        .await;
    a.approve(&pending.approval_id().unwrap()).await.unwrap();
    let swapped = exec
        .execute(
            &r,
            &Turn::new(2),
            call("c2", "delete_note", json!({"id": 2})),
        )
        .await;
    assert_eq!(swapped.outcome(), "conflict");
    assert_eq!(ledger.lines().len(), 1);
}

/// A `started` record left by a process that no longer exists.
async fn leave_started(journal: &Journal, key: &CallKey, tool: &str, args: Value) {
    let now = now_ms();
    let record = CallRecord {
        key: key.clone(),
        tool: tool.to_owned(),
        fingerprint: approval_fingerprint(tool, &args),
        arguments: args,
        state: CallState::Started,
        approval: None,
        owner: Some("gone-boot/1/dead".to_owned()),
        // Its lease ran out a second ago.
        lease_until: Some(now - 1000),
        answer: None,
        received_at: now - 2000,
        updated_at: now - 1500,
    };
    assert_eq!(journal.store().insert(&record).await.unwrap(), None);
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

async fn a_call_started_by_a_dead_process_is_answered_interrupted_and_can_be_settled(
    a: Journal,
    b: Journal,
    id: String,
) {
    let key = CallKey::new(id.as_str(), 1, "c1");
    leave_started(&a, &key, "bump", json!({"by": 4})).await;
    let ledger = Arc::new(Ledger::default());
    let r = run(&id, &ledger);
    let exec = executor(&b);
    let resumed = exec.resume(&r).await.unwrap();
    assert_eq!(resumed.len(), 1);
    let interrupted = &resumed[0];
    assert_eq!(interrupted.outcome(), "interrupted");
    assert_eq!(
        interrupted.error.as_ref().unwrap().class(),
        ErrorClass::Fatal
    );
    assert!(
        interrupted.text().contains("may have run"),
        "{}",
        interrupted.text()
    );
    assert!(ledger.lines().is_empty(), "never run again by itself");
    // Delivered again: the same answer, still not run.
    let again = exec
        .execute(&r, &Turn::new(1), call("c1", "bump", json!({"by": 4})))
        .await;
    assert_eq!(again.outcome(), "interrupted");
    assert!(ledger.lines().is_empty());
    // The application found out what happened, and settles it.
    let settled = a
        .settle(&key, "the counter was bumped by 4", false)
        .await
        .unwrap();
    assert!(settled.answer.as_ref().unwrap().settled);
    let after = exec
        .execute(&r, &Turn::new(1), call("c1", "bump", json!({"by": 4})))
        .await;
    assert_eq!(after.outcome(), "ok");
    assert_eq!(after.text(), "the counter was bumped by 4");
    // A call answered normally cannot be settled.
    exec.execute(&r, &Turn::new(1), call("c2", "bump", json!({"by": 1})))
        .await;
    let refused = a
        .settle(&CallKey::new(id.as_str(), 1, "c2"), "no", true)
        .await
        .unwrap_err();
    assert!(
        matches!(refused, JournalError::WrongState { .. }),
        "{refused}"
    );
}

async fn a_read_only_call_started_by_a_dead_process_simply_runs_again(
    a: Journal,
    b: Journal,
    id: String,
) {
    let key = CallKey::new(id.as_str(), 1, "c1");
    leave_started(&a, &key, "list_notes", json!({})).await;
    let ledger = Arc::new(Ledger::default());
    let result = executor(&b)
        .execute(
            &run(&id, &ledger),
            &Turn::new(1),
            call("c1", "list_notes", json!({})),
        )
        .await;
    assert_eq!(result.outcome(), "ok");
    assert_eq!(ledger.lines(), vec!["list".to_owned()]);
}

async fn two_instances_delivering_one_call_run_its_body_once(a: Journal, b: Journal, id: String) {
    let ledger = Arc::new(Ledger::default());
    let (ea, eb) = (executor(&a), executor(&b));
    let (ra, rb) = (run(&id, &ledger), run(&id, &ledger));
    let slow = || call("c1", "bump", json!({"by": 1, "ms": 150}));
    let turn = Turn::new(1);
    let (x, y) = tokio::join!(
        ea.execute(&ra, &turn, slow()),
        eb.execute(&rb, &turn, slow())
    );
    assert_eq!(ledger.lines().len(), 1, "{:?}", ledger.lines());
    assert_eq!(x.text(), "bumped by 1");
    assert_eq!(y.text(), "bumped by 1");
}

async fn two_instances_resuming_one_run_run_each_call_once(a: Journal, b: Journal, id: String) {
    let ledger = Arc::new(Ledger::default());
    let r = run(&id, &ledger);
    let calls: Vec<ToolCall> = (0..6)
        .map(|i| call(&format!("c{i}"), "delete_note", json!({"id": i})))
        .collect();
    let pending = executor(&a).execute_batch(&r, &Turn::new(1), calls).await;
    for p in &pending {
        a.approve(&p.approval_id().unwrap()).await.unwrap();
    }
    let (ea, eb) = (executor(&a), executor(&b));
    let (ra, rb) = (run(&id, &ledger), run(&id, &ledger));
    let (x, y) = tokio::join!(ea.resume(&ra), eb.resume(&rb));
    let (x, y) = (x.unwrap(), y.unwrap());
    let mut lines = ledger.lines();
    lines.sort();
    lines.dedup();
    assert_eq!(lines.len(), 6, "{:?}", ledger.lines());
    assert_eq!(ledger.lines().len(), 6, "no body ran twice");
    // Whatever each instance answered, it is the journal's one answer.
    for result in x.iter().chain(&y) {
        assert!(result.text().ends_with("deleted"), "{result:?}");
    }
}

async fn tool_started_is_emitted_only_for_bodies_that_run_and_events_read_back(
    a: Journal,
    b: Journal,
    id: String,
) {
    let ledger = Arc::new(Ledger::default());
    let exec = tinyagents_tools::ToolExecutor::builder(crate::tools::registry(), ())
        .middleware(tinyagents_tools::policy::ConfirmationPolicy::deferred())
        .journal(a.clone())
        .subscribe(a.recorder())
        .build()
        .unwrap();
    let r = run(&id, &ledger);
    let pending = exec
        .execute(
            &r,
            &Turn::new(1),
            call("d1", "delete_note", json!({"id": 1})),
        )
        .await;
    b.deny(&pending.approval_id().unwrap(), "no").await.unwrap();
    exec.resume(&r).await.unwrap();
    exec.execute(&r, &Turn::new(1), call("b1", "bump", json!({"by": 1})))
        .await;
    // Queued: give the recorder a moment to store them.
    let mut events = Vec::new();
    for _ in 0..500 {
        events = b.events(Some(&r.run_id().clone())).await.unwrap();
        if events.iter().filter(|e| e.call_id.as_str() == "b1").count() >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let of = |call: &str| -> Vec<String> {
        events
            .iter()
            .filter(|e| e.call_id.as_str() == call)
            .map(|e| e.kind.clone())
            .collect()
    };
    assert!(
        !of("d1").contains(&"tool.started".to_owned()),
        "{:?}",
        of("d1")
    );
    assert!(
        of("d1").contains(&"tool.rejected".to_owned()),
        "{:?}",
        of("d1")
    );
    assert_eq!(of("b1"), vec!["tool.started", "tool.completed"]);
    let seqs: Vec<i64> = events.iter().map(|e| e.seq).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
    // One documented JSON form, read back as it was written.
    let text = serde_json::to_string(&events).unwrap();
    let back: Vec<tinyagents_tools::journal::JournalEvent> = serde_json::from_str(&text).unwrap();
    assert_eq!(back, events);
    assert!(text.contains("\"kind\":\"tool.completed\""));
}

async fn every_record_reads_back_in_its_documented_json_form(a: Journal, _: Journal, id: String) {
    let ledger = Arc::new(Ledger::default());
    let exec = executor(&a);
    let r = run(&id, &ledger);
    exec.execute(
        &r,
        &Turn::new(1),
        call("c1", "delete_note", json!({"id": 5})),
    )
    .await;
    exec.execute(&r, &Turn::new(1), call("c2", "bump", json!({"by": 1})))
        .await;
    let records = a.calls(&CallQuery::run(id.as_str())).await.unwrap();
    assert_eq!(records.len(), 2);
    for record in &records {
        let value = serde_json::to_value(record).unwrap();
        for field in [
            "run_id",
            "turn",
            "call_id",
            "tool",
            "fingerprint",
            "state",
            "received_at",
        ] {
            assert!(value.get(field).is_some(), "{field} in {value}");
        }
        let back: CallRecord = serde_json::from_value(value).unwrap();
        assert_eq!(&back, record);
    }
    let pending = &records[0];
    assert_eq!(pending.state, CallState::AwaitingApproval);
    let value = serde_json::to_value(pending).unwrap();
    assert_eq!(value["state"], "awaiting_approval");
    assert_eq!(
        value["approval"]["request"]["reasons"],
        json!(["requires_confirmation"])
    );
    assert_eq!(value["arguments"], json!({"id": 5}));
    let answered = serde_json::to_value(&records[1]).unwrap();
    assert_eq!(answered["answer"]["outcome"], "ok");
    assert_eq!(answered["answer"]["message"]["tool_call_id"], "c2");
}

async fn the_store_enforces_compare_and_set(a: Journal, b: Journal, id: String) {
    let ledger = Arc::new(Ledger::default());
    executor(&a)
        .execute(
            &run(&id, &ledger),
            &Turn::new(1),
            call("c1", "bump", json!({"by": 1})),
        )
        .await;
    let key = CallKey::new(id.as_str(), 1, "c1");
    let Stored { record, revision } = a.store().get(&key).await.unwrap().unwrap();
    let mut changed = record.clone();
    changed.updated_at += 1;
    assert!(b.store().replace(&changed, revision).await.unwrap());
    // The first writer's revision is stale now.
    assert!(!a.store().replace(&record, revision).await.unwrap());
    let now = a.store().get(&key).await.unwrap().unwrap();
    assert_eq!(now.revision, revision + 1);
    assert_eq!(now.record, changed);
    // Inserting an existing key writes nothing and returns what is there.
    let existing = a.store().insert(&record).await.unwrap().unwrap();
    assert_eq!(existing.record, changed);
}
