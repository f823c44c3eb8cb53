//! What a call is charged with: call limits are spent only by calls that
//! reach their tool (or that a middleware answers), and `elapsed` is the
//! call's own time while waiting (batch queue, permits, an approver) is
//! reported apart in `waited`.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tinyagents_tools::events::EventKind;
use tinyagents_tools::middleware::{BeforeOutcome, BeforeToolCtx};
use tinyagents_tools::runtime::CallLimits;
use tinyagents_tools::*;
use tinyagents_tools_tests::*;

/// Decides by call id: `deny-*` is denied, `fail-*` gets an error from the
/// policy, `answer-*` is answered in the tool's place, the rest go on.
fn gatekeeper(ctx: &mut BeforeToolCtx<'_>) -> Result<BeforeOutcome, ToolError> {
    let id = ctx.call_id().as_str();
    if id.starts_with("deny") {
        Ok(BeforeOutcome::deny("confirmation", "the user said no"))
    } else if id.starts_with("fail") {
        Err(ToolError::repair("the path leaves the workspace"))
    } else if id.starts_with("answer") {
        Ok(BeforeOutcome::Respond(ToolOutput::text("from the cache")))
    } else {
        Ok(BeforeOutcome::Continue)
    }
}

fn limited(limits: CallLimits) -> (Arc<FakeTool>, ToolExecutor) {
    let email = send_email();
    let exec = executor(vec![email.clone(), echo()])
        .middleware(BeforeTool::new("gatekeeper", gatekeeper))
        .configure(|c| c.limits = limits)
        .build()
        .unwrap();
    (email, exec)
}

fn send(id: &str) -> ToolCall {
    call(id, "send_email", json!({"to": "a@example.com"}))
}

#[tokio::test]
async fn calls_a_policy_refuses_spend_no_call_limit() {
    let (email, exec) = limited(
        CallLimits::none()
            .per_turn(1)
            .per_run(1)
            .per_tool("send_email", 1),
    );
    let run = RunContext::empty();
    let turn = Turn::new(1);
    for refused in ["deny-1", "fail-2", "deny-3"] {
        let r = exec.execute(&run, &turn, send(refused)).await;
        assert!(r.is_error, "{refused}");
        assert_ne!(kind(&r), "limit_exceeded", "{refused}");
    }
    assert_eq!(run.call_counts().total(), 0);
    assert_eq!(run.call_counts().of_tool("send_email"), 0);
    // The one call each limit allows is still there.
    let sent = exec.execute(&run, &turn, send("ok-4")).await;
    assert_eq!(kind(&sent), "ok");
    assert_eq!(email.runs(), 1);
    assert_eq!(run.call_counts().total(), 1);
    let over = exec.execute(&run, &turn, send("ok-5")).await;
    assert_eq!(kind(&over), "limit_exceeded");
}

#[tokio::test]
async fn calls_outside_the_turns_selection_spend_no_call_limit() {
    let (email, exec) = limited(CallLimits::none().per_turn(1).per_run(1));
    let run = RunContext::empty();
    let turn = Turn::new(1).advertising(["echo"]);
    for i in 0..3 {
        let r = exec.execute(&run, &turn, send(&format!("ok-{i}"))).await;
        assert_eq!(kind(&r), "not_advertised");
    }
    let echoed = exec
        .execute(&run, &turn, call("e", "echo", r#"{"text":"x"}"#))
        .await;
    assert_eq!(echoed.text(), "x");
    assert_eq!(turn.calls(), 1);
    assert_eq!(email.runs(), 0);
}

#[tokio::test]
async fn refusals_in_a_batch_give_their_slots_back() {
    let (email, exec) = limited(CallLimits::none().per_run(2));
    let run = RunContext::empty();
    let mut calls: Vec<ToolCall> = (0..6).map(|i| send(&format!("deny-{i}"))).collect();
    calls.push(send("ok-a"));
    let results = exec.execute_batch(&run, &Turn::new(1), calls).await;
    assert_eq!(kind(&results[6]), "ok");
    assert_eq!(email.runs(), 1);
    assert_eq!(run.call_counts().total(), 1);
}

#[tokio::test]
async fn a_call_a_middleware_answers_in_the_tools_place_spends_its_limit() {
    let (email, exec) = limited(CallLimits::none().per_run(1));
    let run = RunContext::empty();
    let turn = Turn::new(1);
    let answered = exec.execute(&run, &turn, send("answer-1")).await;
    assert_eq!(answered.text(), "from the cache");
    let next = exec.execute(&run, &turn, send("ok-2")).await;
    assert_eq!(kind(&next), "limit_exceeded");
    assert_eq!(email.runs(), 0);
}

#[tokio::test]
async fn a_slow_approver_is_waiting_time_and_never_the_tools_time() {
    // Real time: the call clock is the wall clock.
    let wait = Duration::from_millis(300);
    let (recorder, exec) = recorded_with(executor(vec![echo()]).middleware(Pause::before(wait)));
    let r = approved_after(&exec, wait).await;
    let completed = recorder.events().pop().unwrap();
    assert_eq!(completed.kind, EventKind::Completed);
    assert_eq!(completed.waited, Some(r.waited));
    assert!(completed.elapsed.unwrap() < wait);
}

#[tokio::test(start_paused = true)]
async fn a_slow_approver_shows_as_waited_under_a_paused_clock() {
    let wait = Duration::from_secs(600);
    let exec = executor(vec![echo()])
        .middleware(Pause::before(wait))
        .build()
        .unwrap();
    approved_after(&exec, wait).await;
}

/// Runs one `echo` call through `exec`, whose approver takes `wait`, and
/// checks that the wait counts as waited and not as the call's own time.
async fn approved_after(exec: &ToolExecutor, wait: Duration) -> ToolResult {
    let r = execute_once(exec, call("c1", "echo", r#"{"text":"x"}"#)).await;
    assert_eq!(r.text(), "x");
    assert!(r.waited >= wait, "waited {:?}", r.waited);
    assert!(r.elapsed < wait, "elapsed {:?}", r.elapsed);
    r
}

/// How long a `nap` call sleeps (on tokio's clock).
const NAP: Duration = Duration::from_secs(10);

/// An executor over `echo` and `nap`, which sleeps [`NAP`] and answers
/// `slept`, sequential or not.
fn naps(sequential: bool, max_concurrency: usize) -> ToolExecutor {
    let mut spec = spec("nap", json!({"type": "object", "properties": {}}));
    if sequential {
        spec = spec.sequential();
    }
    executor(vec![sleeper(spec.build().unwrap(), NAP, false), echo()])
        .configure(|c| c.max_concurrency = max_concurrency.try_into().unwrap())
        .build()
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn time_in_the_batch_queue_and_for_a_sequential_slot_is_waited() {
    for (sequential, max_concurrency) in [(false, 1), (true, 8)] {
        let exec = naps(sequential, max_concurrency);
        let results = execute_batch_once(&exec, calls_to("nap", 0..3)).await;
        for (i, r) in results.iter().enumerate() {
            assert_eq!(r.text(), "slept");
            let before = NAP * i as u32;
            assert!(
                r.waited >= before && r.waited < before + NAP,
                "call {i} (sequential: {sequential}) waited {:?}",
                r.waited
            );
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_call_that_waits_for_nothing_reports_no_wait() {
    let exec = naps(false, 8);
    let results = execute_batch_once(&exec, calls_to("nap", 0..3)).await;
    assert!(results.iter().all(|r| r.waited.is_zero()), "{results:?}");
    let alone = execute_once(&exec, call("e", "echo", r#"{"text":"x"}"#)).await;
    assert_eq!(alone.waited, Duration::ZERO);
}

#[tokio::test(start_paused = true)]
async fn a_call_cancelled_while_it_waits_for_a_slot_gives_its_limit_back() {
    let exec = naps(true, 8);
    let run = RunContext::empty();
    let canceller = {
        let run = run.clone();
        tokio::spawn(async move {
            tokio::time::sleep(NAP / 2).await;
            run.cancel();
        })
    };
    let results = exec
        .execute_batch(&run, &Turn::new(1), calls_to("nap", 0..3))
        .await;
    canceller.await.unwrap();
    let kinds: Vec<&str> = results.iter().map(kind).collect();
    assert_eq!(kinds, ["cancelled", "cancelled", "cancelled"]);
    // The first ran (and was interrupted); the two behind it never did.
    assert_eq!(run.call_counts().total(), 1);
    assert_eq!(run.call_counts().of_tool("nap"), 1);
}
