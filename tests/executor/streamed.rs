//! A streamed turn: calls start the moment they arrive, while the model is
//! still writing, with every guarantee of a batch; answers come back in call
//! order; when the model's stream fails, calls already started finish.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures_util::Stream;
use serde_json::json;
use tinyagents_tools::journal::{Journal, MemoryJournal};
use tinyagents_tools::testkit::{FnTool, Spy};
use tinyagents_tools::*;
use tinyagents_tools_tests::*;
use tokio::sync::{Notify, mpsc};

/// A stream of the calls sent on the channel, ended when every sender is
/// dropped: what a stream reader's loop hands the executor.
fn channel() -> (
    mpsc::UnboundedSender<ToolCall>,
    impl Stream<Item = ToolCall> + Send,
) {
    let (tx, rx) = mpsc::unbounded_channel();
    let calls = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|call| (call, rx))
    });
    (tx, calls)
}

/// A pure tool named `name` that says it started (on `started`), then
/// waits until `release` is notified, and answers its call id.
fn signalling(name: &str, started: &Arc<Notify>, release: &Arc<Notify>) -> Arc<dyn Tool> {
    let (started, release) = (Arc::clone(started), Arc::clone(release));
    Arc::new(FnTool::new(
        empty_input(name)
            .safety(ToolSafety::pure())
            .build()
            .unwrap(),
        move |rt, _| {
            let (started, release) = (Arc::clone(&started), Arc::clone(&release));
            Box::pin(async move {
                started.notify_one();
                release.notified().await;
                Ok(ToolOutput::text(rt.call_id().as_str()))
            })
        },
    ))
}

#[tokio::test]
async fn a_call_starts_while_the_model_is_still_writing() {
    let (started, release) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let exec = executor(vec![signalling("slow", &started, &release), echo()])
        .build()
        .unwrap();
    let (tx, calls) = channel();
    // The model writes its second call only once the first one's body is
    // running: were the calls held until the stream ended, this would wait
    // for ever.
    let model = async {
        tx.send(call("c1", "slow", "{}")).unwrap();
        started.notified().await;
        tx.send(call("c2", "echo", json!({"text": "after"})))
            .unwrap();
        release.notify_one();
        drop(tx);
    };
    let (run, turn) = (RunContext::empty(), Turn::new(1));
    let streamed = async {
        let ((), results) = tokio::join!(model, exec.execute_stream(&run, &turn, calls));
        results
    };
    let results = tokio::time::timeout(Duration::from_secs(10), streamed)
        .await
        .expect("the first call did not start before the stream ended");
    assert_eq!(results[0].text(), "c1");
    assert_eq!(results[1].text(), "after");
}

#[tokio::test]
async fn answers_come_back_in_call_order_with_every_id_answered_once() {
    let exec = executor(vec![echo(), flaky_idempotent(1, 2)])
        .build()
        .unwrap();
    let mut calls: Vec<ToolCall> = (0..20)
        .map(|i| call(&format!("id-{i}"), "echo", json!({"text": format!("t{i}")})))
        .collect();
    calls.insert(2, call("slow", "flaky", "{}"));
    calls.insert(5, call("unknown", "nope", "{}"));
    calls.insert(9, call("bad", "echo", r#"{"text": "#));
    let expected: Vec<String> = calls.iter().map(|c| c.id.to_string()).collect();
    let (run, turn) = (RunContext::empty(), Turn::new(1));
    let results = exec
        .execute_stream(&run, &turn, futures_util::stream::iter(calls))
        .await;
    let ids: Vec<String> = results.iter().map(|r| r.tool_call_id.to_string()).collect();
    assert_eq!(ids, expected);
    assert_eq!(results[2].text(), "finally");
    assert!(
        results[5].text().contains("no tool named"),
        "{}",
        results[5].text()
    );
    assert!(results[9].is_error);
    assert_eq!(results[22].text(), "t19");
}

#[tokio::test]
async fn the_concurrency_bound_and_a_tools_cap_hold_for_streamed_calls() {
    let probe = Arc::new(Probe::default());
    let exec = executor(vec![gauge("gauge", &probe, false, None)])
        .configure(|c| c.max_concurrency = 3.try_into().unwrap())
        .build()
        .unwrap();
    let (run, turn) = (RunContext::empty(), Turn::new(1));
    let results = exec
        .execute_stream(
            &run,
            &turn,
            futures_util::stream::iter(calls_to("gauge", 0..12)),
        )
        .await;
    assert!(results.iter().all(|r| !r.is_error));
    let high = probe.high_water();
    assert!(high <= 3, "{high} calls ran at once");
    assert!(
        high >= 2,
        "the streamed calls did not run concurrently at all"
    );

    let probe = Arc::new(Probe::default());
    let exec = executor(vec![gauge("gauge", &probe, false, Some(2))])
        .build()
        .unwrap();
    exec.execute_stream(
        &run,
        &turn,
        futures_util::stream::iter(calls_to("gauge", 0..8)),
    )
    .await;
    assert!(probe.high_water() <= 2, "{}", probe.high_water());
}

#[tokio::test]
async fn a_sequential_tool_runs_alone_between_the_calls_before_and_after_it() {
    let probe = Arc::new(Probe::default());
    let order = Arc::new(std::sync::Mutex::new(Vec::new()));
    let exclusive = {
        let (probe, order) = (Arc::clone(&probe), Arc::clone(&order));
        let gauge = gauge("exclusive", &probe, true, None);
        Arc::new(FnTool::new(gauge.spec().clone(), move |rt, args| {
            let (gauge, order) = (Arc::clone(&gauge), Arc::clone(&order));
            Box::pin(async move {
                order.lock().unwrap().push(rt.call_id().to_string());
                gauge.call(&(), rt, args).await
            })
        })) as Arc<dyn Tool>
    };
    let exec = executor(vec![gauge("gauge", &probe, false, None), exclusive])
        .build()
        .unwrap();
    let (tx, calls) = channel();
    let model = async {
        for i in 0..12 {
            let name = if i % 4 == 2 { "exclusive" } else { "gauge" };
            tx.send(call(&format!("c{i}"), name, "{}")).unwrap();
            // The model writes on while the calls run.
            tokio::time::sleep(Duration::from_millis(3)).await;
        }
        drop(tx);
    };
    let (run, turn) = (RunContext::empty(), Turn::new(1));
    let ((), results) = tokio::join!(model, exec.execute_stream(&run, &turn, calls));
    assert!(results.iter().all(|r| !r.is_error));
    assert!(
        !probe.overlap.load(Ordering::SeqCst),
        "a sequential call overlapped another"
    );
    assert_eq!(*order.lock().unwrap(), ["c2", "c6", "c10"]);
}

#[tokio::test]
async fn when_the_stream_fails_the_calls_already_started_finish_and_nothing_more_starts() {
    let (started, release) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let slow = Spy::new(signalling("slow", &started, &release));
    let exec = executor(vec![slow.clone() as Arc<dyn Tool>])
        .build()
        .unwrap();
    let (tx, calls) = channel();
    // The model's stream breaks after one complete call: the reader ends
    // the calls there.
    let model = async {
        tx.send(call("c1", "slow", "{}")).unwrap();
        drop(tx);
        started.notified().await;
        release.notify_one();
    };
    let (run, turn) = (RunContext::empty(), Turn::new(1));
    let ((), results) = tokio::join!(model, exec.execute_stream(&run, &turn, calls));
    assert_eq!(results.len(), 1);
    assert!(!results[0].is_error, "{}", results[0].text());
    assert_eq!(results[0].text(), "c1");
    assert_eq!(slow.runs(), 1);
}

#[tokio::test]
async fn cancelling_the_run_after_a_failed_stream_answers_the_running_calls_cancelled() {
    let (started, release) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let exec = executor(vec![signalling("slow", &started, &release)])
        .build()
        .unwrap();
    let (tx, calls) = channel();
    let run = RunContext::empty();
    let cancel = run.cancellation().clone();
    let model = async {
        tx.send(call("c1", "slow", "{}")).unwrap();
        started.notified().await;
        // The stream breaks, and the loop decides to stop the turn.
        drop(tx);
        cancel.cancel();
    };
    let turn = Turn::new(1);
    let ((), results) = tokio::join!(model, exec.execute_stream(&run, &turn, calls));
    assert_eq!(results.len(), 1);
    assert_eq!(kind(&results[0]), "cancelled");
}

#[tokio::test]
async fn a_streamed_call_is_held_to_the_turn_s_advertised_tools_and_limits() {
    let exec = executor(vec![echo(), no_args("other", true)])
        .configure(|c| c.limits.per_turn = Some(2))
        .build()
        .unwrap();
    let run = RunContext::empty();
    let turn = Turn::new(1).advertising(["echo"]);
    let calls = vec![
        call("a", "echo", json!({"text": "1"})),
        call("b", "other", "{}"),
        call("c", "echo", json!({"text": "2"})),
        call("d", "echo", json!({"text": "3"})),
    ];
    let results = exec
        .execute_stream(&run, &turn, futures_util::stream::iter(calls))
        .await;
    assert!(!results[0].is_error);
    assert_eq!(kind(&results[1]), "not_advertised");
    assert!(!results[2].is_error);
    assert_eq!(kind(&results[3]), "limit_exceeded");
}

#[tokio::test]
async fn with_a_journal_a_streamed_turn_delivered_again_runs_nothing_twice() {
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = {
        let runs = Arc::clone(&runs);
        Arc::new(FnTool::new(
            empty_input("append").build().unwrap(),
            move |rt, _| {
                runs.fetch_add(1, Ordering::SeqCst);
                Box::pin(async move { Ok(ToolOutput::text(rt.call_id().as_str())) })
            },
        )) as Arc<dyn Tool>
    };
    let journal = Journal::new(MemoryJournal::new());
    let exec = executor(vec![counted]).journal(journal).build().unwrap();
    let run = RunContext::builder(()).run_id("run-1").build();
    let turn = Turn::new(1);
    let stream = || futures_util::stream::iter(calls_to("append", 0..3));
    let first = exec.execute_stream(&run, &turn, stream()).await;
    let again = exec.execute_stream(&run, &turn, stream()).await;
    assert_eq!(runs.load(Ordering::SeqCst), 3);
    let texts = |rs: &[ToolResult]| rs.iter().map(|r| r.text()).collect::<Vec<_>>();
    assert_eq!(texts(&first), texts(&again));
}
