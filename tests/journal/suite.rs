//! The durable-call checks every journal backend passes. Each check gets
//! two journal handles on one store (two instances, or a process and the
//! one that replaced it), a run id of its own and a ledger ([`Setup`]).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tinyagents_tools::approval::approval_fingerprint;
use tinyagents_tools::journal::{
    CallKey, CallQuery, CallRecord, CallState, Journal, JournalError, Stored,
};
use tinyagents_tools::testkit::ManualClock;
use tinyagents_tools::{
    ErrorClass, Ids, Random, RunContext, ToolCall, ToolExecutor, ToolResult, Turn,
};

use crate::tools::{Hold, Ledger, executor, run};

mod approvals;

use approvals::*;

type Check = fn(Setup) -> Pin<Box<dyn Future<Output = ()> + Send>>;

macro_rules! checks {
    ($($name:ident),* $(,)?) => {
        /// Every check, by name.
        pub const CHECKS: &[(&str, Check)] = &[
            $((stringify!($name), |s| Box::pin($name(s)))),*
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
    a_call_resumed_by_another_process_is_given_the_time_and_randomness_of_its_first_delivery,
    a_call_delivered_again_after_its_process_stopped_is_given_what_it_was_given_first,
    kept_records_are_shared_changed_by_compare_and_set_and_never_calls,
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
        let ledger = Arc::new(Ledger::default());
        check(Setup {
            a,
            b,
            id: format!("{backend}-{name}"),
            ledger,
        })
        .await;
    }
}

/// What a check gets: two journal handles on one store (two instances, or
/// a process and the one that replaced it), a run id of its own, and the
/// ledger its tools write to.
pub struct Setup {
    a: Journal,
    b: Journal,
    id: String,
    ledger: Arc<Ledger>,
}

impl Setup {
    /// A new context of the check's run, writing to its ledger: what each
    /// process (or instance) makes for itself.
    fn run(&self) -> RunContext {
        run(&self.id, &self.ledger)
    }

    /// A new context of the check's run whose calls read the time from
    /// `clock` and derive their random values from `seed` (and whose `roll`
    /// calls hold their answer when `hold`).
    fn run_given(&self, seed: u64, clock: &ManualClock, hold: bool) -> RunContext {
        RunContext::builder(())
            .run_id(self.id.as_str())
            .store_arc(self.ledger.clone())
            .store(Hold(hold))
            .seed(seed)
            .time_source(clock.clone())
            .build()
    }

    /// The key of call `call_id` of turn `turn` in the check's run.
    fn key(&self, turn: u32, call_id: &str) -> CallKey {
        CallKey::new(self.id.as_str(), turn, call_id)
    }
}

fn call(id: &str, tool: &str, args: Value) -> ToolCall {
    ToolCall::new(id, tool, args)
}

/// Delivers `call` in turn `turn` of `run` through `exec`, as the model
/// would.
async fn deliver(exec: &ToolExecutor, run: &RunContext, turn: u32, call: ToolCall) -> ToolResult {
    exec.execute(run, &Turn::new(turn), call).await
}

fn texts(results: &[ToolResult]) -> Vec<(String, String)> {
    results
        .iter()
        .map(|r| (r.tool_call_id.as_str().to_owned(), r.text()))
        .collect()
}

async fn an_answered_call_is_answered_from_the_journal_and_never_run_again(s: Setup) {
    let (exec, run) = (executor(&s.a), s.run());
    let calls = vec![
        call("c1", "bump", json!({"by": 2})),
        call("c2", "list_notes", json!({})),
    ];
    let first = exec.execute_batch(&run, &Turn::new(1), calls.clone()).await;
    assert!(first.iter().all(|r| !r.is_error), "{first:?}");
    let second = exec.execute_batch(&run, &Turn::new(1), calls).await;
    assert_eq!(texts(&first), texts(&second));
    // The two calls of a batch run at once: their lines come in any order.
    let mut lines = s.ledger.lines();
    lines.sort();
    assert_eq!(lines, vec![format!("bump 2 c1"), "list".to_owned()]);
    // Answered records keep no arguments, only their fingerprint.
    let records = s.a.calls(&CallQuery::run(s.id.as_str())).await.unwrap();
    assert_eq!(records.len(), 2);
    for r in &records {
        assert_eq!(r.state, CallState::Answered);
        assert_eq!(r.arguments, Value::Null);
        assert_eq!(r.answer.as_ref().unwrap().outcome, "ok");
    }
    // The same call id in another turn is another call.
    let other_turn = deliver(&exec, &run, 2, call("c1", "bump", json!({"by": 2}))).await;
    assert!(!other_turn.is_error);
    assert_eq!(s.ledger.lines().len(), 3);
}

async fn a_restarted_process_answers_a_completed_call_from_the_journal(s: Setup) {
    let bump = || call("c1", "bump", json!({"by": 1}));
    let (first_run, second_run) = (s.run(), s.run());
    let first = deliver(&executor(&s.a), &first_run, 1, bump()).await;
    drop(s.a);
    // Another process: a new executor, a new handle, the same journal.
    let again = deliver(&executor(&s.b), &second_run, 1, bump()).await;
    assert_eq!(first.text(), again.text());
    assert_eq!(again.outcome(), "ok");
    assert_eq!(s.ledger.lines().len(), 1, "the body ran once");
}

async fn a_call_id_delivered_again_with_other_arguments_is_refused(s: Setup) {
    let (exec, r) = (executor(&s.a), s.run());
    deliver(&exec, &r, 1, call("c1", "bump", json!({"by": 1}))).await;
    let other = deliver(&exec, &r, 1, call("c1", "bump", json!({"by": 5}))).await;
    assert_eq!(other.outcome(), "conflict");
    assert_eq!(other.error.as_ref().unwrap().class(), ErrorClass::Fatal);
    assert_eq!(other.tool_call_id.as_str(), "c1");
    assert_eq!(s.ledger.lines().len(), 1);
    // An approval given for one set of arguments does not cover others.
    let pending = deliver(&exec, &r, 2, call("c2", "delete_note", json!({"id": 1}))).await;
    s.a.approve(&pending.approval_id().unwrap()).await.unwrap();
    let swapped = deliver(&exec, &r, 2, call("c2", "delete_note", json!({"id": 2}))).await;
    assert_eq!(swapped.outcome(), "conflict");
    assert_eq!(s.ledger.lines().len(), 1);
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
        draw: None,
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

async fn a_call_started_by_a_dead_process_is_answered_interrupted_and_can_be_settled(s: Setup) {
    let key = s.key(1, "c1");
    leave_started(&s.a, &key, "bump", json!({"by": 4})).await;
    let (exec, r) = (executor(&s.b), s.run());
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
    assert!(s.ledger.lines().is_empty(), "never run again by itself");
    // Delivered again: the same answer, still not run.
    let bump = || call("c1", "bump", json!({"by": 4}));
    let again = deliver(&exec, &r, 1, bump()).await;
    assert_eq!(again.outcome(), "interrupted");
    assert!(s.ledger.lines().is_empty());
    // The application found out what happened, and settles it.
    let settled =
        s.a.settle(&key, "the counter was bumped by 4", false)
            .await
            .unwrap();
    assert!(settled.answer.as_ref().unwrap().settled);
    let after = deliver(&exec, &r, 1, bump()).await;
    assert_eq!(after.outcome(), "ok");
    assert_eq!(after.text(), "the counter was bumped by 4");
    // A call answered normally cannot be settled.
    deliver(&exec, &r, 1, call("c2", "bump", json!({"by": 1}))).await;
    let refused = s.a.settle(&s.key(1, "c2"), "no", true).await.unwrap_err();
    assert!(
        matches!(refused, JournalError::WrongState { .. }),
        "{refused}"
    );
}

async fn a_read_only_call_started_by_a_dead_process_simply_runs_again(s: Setup) {
    let list = || call("c1", "list_notes", json!({}));
    leave_started(&s.a, &s.key(1, "c1"), "list_notes", json!({})).await;
    let result = deliver(&executor(&s.b), &s.run(), 1, list()).await;
    assert_eq!(result.outcome(), "ok");
    assert_eq!(s.ledger.lines(), vec!["list".to_owned()]);
}

async fn two_instances_delivering_one_call_run_its_body_once(s: Setup) {
    let (ea, eb) = (executor(&s.a), executor(&s.b));
    let (ra, rb) = (s.run(), s.run());
    let slow = || call("c1", "bump", json!({"by": 1, "ms": 150}));
    let (x, y) = tokio::join!(deliver(&ea, &ra, 1, slow()), deliver(&eb, &rb, 1, slow()));
    assert_eq!(s.ledger.lines().len(), 1, "{:?}", s.ledger.lines());
    assert_eq!(x.text(), "bumped by 1");
    assert_eq!(y.text(), "bumped by 1");
}

async fn two_instances_resuming_one_run_run_each_call_once(s: Setup) {
    let calls: Vec<ToolCall> = (0..6)
        .map(|i| call(&format!("c{i}"), "delete_note", json!({"id": i})))
        .collect();
    let pending = executor(&s.a)
        .execute_batch(&s.run(), &Turn::new(1), calls)
        .await;
    for p in &pending {
        s.a.approve(&p.approval_id().unwrap()).await.unwrap();
    }
    let (ea, eb) = (executor(&s.a), executor(&s.b));
    let (ra, rb) = (s.run(), s.run());
    let (x, y) = tokio::join!(ea.resume(&ra), eb.resume(&rb));
    let (x, y) = (x.unwrap(), y.unwrap());
    let mut lines = s.ledger.lines();
    lines.sort();
    lines.dedup();
    assert_eq!(lines.len(), 6, "{:?}", s.ledger.lines());
    assert_eq!(s.ledger.lines().len(), 6, "no body ran twice");
    // Whatever each instance answered, it is the journal's one answer.
    for result in x.iter().chain(&y) {
        assert!(result.text().ends_with("deleted"), "{result:?}");
    }
}

async fn tool_started_is_emitted_only_for_bodies_that_run_and_events_read_back(s: Setup) {
    let exec = tinyagents_tools::ToolExecutor::builder(crate::tools::registry(), ())
        .middleware(tinyagents_tools::policy::ConfirmationPolicy::deferred())
        .journal(s.a.clone())
        .subscribe(s.a.recorder())
        .build()
        .unwrap();
    let r = s.run();
    let pending = deliver(&exec, &r, 1, call("d1", "delete_note", json!({"id": 1}))).await;
    s.b.deny(&pending.approval_id().unwrap(), "no")
        .await
        .unwrap();
    exec.resume(&r).await.unwrap();
    deliver(&exec, &r, 1, call("b1", "bump", json!({"by": 1}))).await;
    // Queued: give the recorder a moment to store them.
    let mut events = Vec::new();
    for _ in 0..500 {
        events = s.b.events(Some(&r.run_id().clone())).await.unwrap();
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

async fn every_record_reads_back_in_its_documented_json_form(s: Setup) {
    let (exec, r) = (executor(&s.a), s.run());
    deliver(&exec, &r, 1, call("c1", "delete_note", json!({"id": 5}))).await;
    deliver(&exec, &r, 1, call("c2", "bump", json!({"by": 1}))).await;
    let records = s.a.calls(&CallQuery::run(s.id.as_str())).await.unwrap();
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

async fn the_store_enforces_compare_and_set(s: Setup) {
    let bump = call("c1", "bump", json!({"by": 1}));
    deliver(&executor(&s.a), &s.run(), 1, bump).await;
    let key = s.key(1, "c1");
    let Stored { record, revision } = s.a.store().get(&key).await.unwrap().unwrap();
    let mut changed = record.clone();
    changed.updated_at += 1;
    assert!(s.b.store().replace(&changed, revision).await.unwrap());
    // The first writer's revision is stale now.
    assert!(!s.a.store().replace(&record, revision).await.unwrap());
    let now = s.a.store().get(&key).await.unwrap().unwrap();
    assert_eq!(now.revision, revision + 1);
    assert_eq!(now.record, changed);
    // Inserting an existing key writes nothing and returns what is there.
    let existing = s.a.store().insert(&record).await.unwrap().unwrap();
    assert_eq!(existing.record, changed);
}

/// The first time of the checks' clocks, and a later one.
const FIRST_MS: u64 = 1_700_000_000_000;
const LATER_MS: u64 = 1_800_000_000_000;

async fn a_call_resumed_by_another_process_is_given_the_time_and_randomness_of_its_first_delivery(
    s: Setup,
) {
    let first_run = s.run_given(1, &ManualClock::at_unix_ms(FIRST_MS), false);
    let ticket = || call("c1", "draw_ticket", json!({}));
    let pending = deliver(&executor(&s.a), &first_run, 1, ticket()).await;
    assert_eq!(pending.outcome(), "pending_approval");
    // What the call was given is kept with it from its first delivery.
    let record = s.a.call(&s.key(1, "c1")).await.unwrap().unwrap();
    let kept = record.draw.expect("the record keeps the call's draw");
    assert_eq!(kept, first_run.draw(1, &"c1".into()));
    assert_eq!(kept.time_ms, FIRST_MS as i64);
    // Another process: its run has another seed and another time.
    let second_run = s.run_given(2, &ManualClock::at_unix_ms(LATER_MS), false);
    drop(s.a);
    assert_ne!(second_run.draw(1, &"c1".into()).seed, kept.seed);
    s.b.approve(&pending.approval_id().unwrap()).await.unwrap();
    let resumed = executor(&s.b).resume(&second_run).await.unwrap();
    let expected = format!(
        "{} at {FIRST_MS} with {}",
        Ids::drawn(kept.seed).next("ticket"),
        Random::new(kept.seed).below(1_000_000)
    );
    assert_eq!(texts(&resumed), vec![("c1".to_owned(), expected.clone())]);
    assert_eq!(s.ledger.lines(), vec![format!("ticket {expected} c1")]);
    // Delivered again: answered from the journal, the body not run again.
    let again = deliver(&executor(&s.b), &second_run, 1, ticket()).await;
    assert_eq!(again.text(), expected);
    assert_eq!(s.ledger.lines().len(), 1);
}

async fn a_call_delivered_again_after_its_process_stopped_is_given_what_it_was_given_first(
    s: Setup,
) {
    let roll = || call("c1", "roll", json!({}));
    // The first process stops while the body runs: its run is cancelled
    // once the body has recorded its roll, and the call is not answered.
    let first_run = s.run_given(1, &ManualClock::at_unix_ms(FIRST_MS), true);
    let exec = executor(&s.a);
    let stop = async {
        while s.ledger.lines().is_empty() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        first_run.cancel();
    };
    let (stopped, ()) = tokio::join!(deliver(&exec, &first_run, 1, roll()), stop);
    assert_eq!(stopped.outcome(), "cancelled");
    let record = s.a.call(&s.key(1, "c1")).await.unwrap().unwrap();
    assert_eq!(record.state, CallState::Received);
    // Another process delivers the call again, with a run of another seed
    // and another time: the body is given what it was given the first time.
    let second_run = s.run_given(2, &ManualClock::at_unix_ms(LATER_MS), false);
    drop(s.a);
    let answered = deliver(&executor(&s.b), &second_run, 1, roll()).await;
    assert_eq!(answered.outcome(), "ok");
    let lines = s.ledger.lines();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0], lines[1]);
    assert_eq!(lines[1], format!("roll {} c1", answered.text()));
    assert!(answered.text().ends_with(&format!(" at {FIRST_MS}")));
    // A new call of the second run is given the second run's values.
    let fresh = deliver(
        &executor(&s.b),
        &second_run,
        1,
        call("c2", "roll", json!({})),
    )
    .await;
    assert!(
        fresh.text().ends_with(&format!(" at {LATER_MS}")),
        "{}",
        fresh.text()
    );
}

async fn kept_records_are_shared_changed_by_compare_and_set_and_never_calls(s: Setup) {
    let space = format!("{}-space", s.id);
    let (mine, theirs) = (s.a.records(space.as_str()), s.b.records(space.as_str()));
    assert_eq!(mine.space().as_str(), space);
    assert!(mine.get("k").await.unwrap().is_none());
    assert!(mine.insert("k", &json!({"n": 1})).await.unwrap().is_none());
    // Another instance sees it; inserting a taken key writes nothing and
    // returns what is there.
    let seen = theirs.get("k").await.unwrap().unwrap();
    assert_eq!(
        (seen.key.as_str(), &seen.value, seen.revision),
        ("k", &json!({"n": 1}), 1)
    );
    let taken = theirs.insert("k", &json!({"n": 9})).await.unwrap().unwrap();
    assert_eq!(taken.value, json!({"n": 1}));
    // Two writers that read revision 1: the first wins, the second writes
    // nothing.
    assert!(theirs.replace("k", &json!({"n": 2}), 1).await.unwrap());
    assert!(!mine.replace("k", &json!({"n": 3}), 1).await.unwrap());
    let now = mine.get("k").await.unwrap().unwrap();
    assert_eq!((now.value, now.revision), (json!({"n": 2}), 2));
    assert!(!mine.replace("absent", &json!({}), 1).await.unwrap());
    assert!(mine.insert("j", &Value::Null).await.unwrap().is_none());
    let keys: Vec<String> = mine
        .all()
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.key)
        .collect();
    assert_eq!(keys, ["j", "k"]);
    // A space of records holds no calls: nothing to resume or to approve.
    let listed = s.a.runs_to_resume().await.unwrap();
    assert!(
        !listed.iter().any(|run| run.as_str() == space),
        "{listed:?}"
    );
    assert!(
        s.a.pending_approvals(Some(mine.space()))
            .await
            .unwrap()
            .is_empty()
    );
}
