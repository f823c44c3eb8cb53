//! Events: exact order per outcome, hashes instead of values, and
//! subscribers that cannot hurt execution.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

use serde_json::json;
use tinyagents_tools::events::{Delivery, EventKind, EventSubscriber, ToolEvent};
use tinyagents_tools::hash::canonical_hash;
use tinyagents_tools::*;
use tinyagents_tools_tests::*;

#[tokio::test]
async fn a_successful_call_emits_started_then_completed_with_hashes_and_ids() {
    let (recorder, exec) = recorded(vec![echo()]);
    let run = RunContext::builder(())
        .run_id("run-1")
        .thread_id("thread-1")
        .build();
    let args = json!({"text": "hello", "limit": 3});
    let r = execute_in(&exec, &run, call("c1", "echo", args.to_string())).await;
    assert_eq!(
        recorder.steps(),
        [("tool.started", 1), ("tool.completed", 1)]
    );
    let events = recorder.events();
    for e in &events {
        assert_eq!(e.run_id.as_str(), "run-1");
        assert_eq!(e.thread_id.as_str(), "thread-1");
        assert_eq!(e.call_id.as_str(), "c1");
        assert_eq!(e.tool, "echo");
        assert_eq!(e.args_hash.as_deref(), Some(canonical_hash(&args).as_str()));
    }
    let completed = &events[1];
    assert!(completed.elapsed.is_some());
    assert_eq!(
        completed.result_hash.as_deref(),
        Some(canonical_hash(&serde_json::to_value(&r.content).unwrap()).as_str())
    );
    assert!(!format!("{events:?}").contains("hello"));
}

#[tokio::test]
async fn a_refused_call_emits_only_rejected_with_its_class_and_kind() {
    let (recorder, exec) = recorded(vec![echo()]);
    execute_once(&exec, call("c1", "echo", "{oops")).await;
    assert_eq!(recorder.steps(), [("tool.rejected", 1)]);
    let e = &recorder.events()[0];
    assert_eq!(e.error_class, Some(ErrorClass::Repair));
    assert_eq!(e.error_kind, Some("invalid_arguments"));
}

#[tokio::test]
async fn a_retried_call_emits_started_retrying_per_failed_attempt_then_completed() {
    let (recorder, exec) = recorded(vec![flaky_idempotent(2, 3)]);
    execute_once(&exec, call("c1", "flaky", "{}")).await;
    assert_eq!(recorder.steps(), SUCCEEDED_ON_THE_THIRD_ATTEMPT);
}

#[tokio::test]
async fn a_failed_call_emits_started_then_failed_with_the_error_class() {
    let (recorder, exec) = recorded(vec![panicker()]);
    execute_once(&exec, call("c1", "panicker", "{}")).await;
    assert_eq!(recorder.steps(), [("tool.started", 1), ("tool.failed", 1)]);
    let failed = &recorder.events()[1];
    assert_eq!(failed.error_class, Some(ErrorClass::Fatal));
    assert_eq!(failed.error_kind, Some("panicked"));
}

#[tokio::test]
async fn progress_from_the_stream_writer_becomes_progress_events() {
    let spec = empty_input("steps").build().unwrap();
    let steps = FnTool::new(spec, |rt, _| {
        Box::pin(async move {
            rt.stream_writer().progress(1.0, Some(2.0), Some("half"));
            Ok(ToolOutput::text("done"))
        })
    });
    let (recorder, exec) = recorded(vec![Arc::new(steps)]);
    execute_once(&exec, call("c1", "steps", "{}")).await;
    let kinds: Vec<_> = recorder.events().iter().map(|e| e.kind).collect();
    assert_eq!(
        kinds,
        [
            EventKind::Started,
            EventKind::Progress,
            EventKind::Completed
        ]
    );
    assert_eq!(recorder.events()[1].call_id.as_str(), "c1");
}

/// Blocks on its first event until released.
struct Stuck {
    release: std::sync::Mutex<mpsc::Receiver<()>>,
    seen: AtomicUsize,
}

impl EventSubscriber for Stuck {
    fn on_event(&self, _: &ToolEvent) {
        if self.seen.fetch_add(1, Ordering::SeqCst) == 0 {
            let _ = self.release.lock().unwrap().recv();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stuck_queued_subscriber_does_not_stall_calls() {
    let (tx, rx) = mpsc::channel();
    let stuck = Arc::new(Stuck {
        release: std::sync::Mutex::new(rx),
        seen: AtomicUsize::new(0),
    });
    let exec = executor(vec![echo()])
        .subscribe(stuck.clone())
        .build()
        .unwrap();
    let calls = (0..20)
        .map(|i| call(&format!("c{i}"), "echo", r#"{"text":"x"}"#))
        .collect();
    let results = tokio::time::timeout(
        Duration::from_secs(30),
        exec.execute_batch(&RunContext::empty(), &Turn::new(1), calls),
    )
    .await
    .expect("calls finish while the subscriber is stuck");
    assert!(results.iter().all(|r| !r.is_error));
    tx.send(()).unwrap();
}

#[tokio::test]
async fn a_panicking_subscriber_breaks_neither_the_calls_nor_other_subscribers() {
    let recorder = Recorder::new();
    let exec = executor(vec![echo()])
        .subscribe(PanickingSubscriber::new(Delivery::Inline))
        .subscribe(recorder.clone())
        .build()
        .unwrap();
    let r = execute_once(&exec, call("c1", "echo", r#"{"text":"x"}"#)).await;
    assert_eq!(r.text(), "x");
    assert_eq!(exec.events().panics(), 2);
    assert_eq!(
        recorder.steps(),
        [("tool.started", 1), ("tool.completed", 1)]
    );
}

#[tokio::test]
async fn a_structured_result_and_the_arguments_are_digested_as_their_canonical_json() {
    let value = json!({"z": 1, "a": [2, {"c": "\u{1}", "b": 4.5}]});
    let schema = json!({
        "type": "object",
        "properties": {"x": {"type": "string"}, "y": {"type": "array"}},
    });
    let spec = spec("sum", schema).build().unwrap();
    let tool = testkit::FakeTool::new(spec).answering(ToolOutput::structured(value.clone()));
    let (recorder, exec) = recorded(vec![Arc::new(tool)]);
    let args = json!({"y": [true, null], "x": "two"});
    execute_once(&exec, call("c1", "sum", args.to_string())).await;
    let events = recorder.events();
    assert_eq!(
        recorder.steps(),
        [("tool.started", 1), ("tool.completed", 1)]
    );
    for e in &events {
        assert_eq!(e.args_hash.as_deref(), Some(canonical_hash(&args).as_str()));
    }
    assert_eq!(
        events[1].result_hash.as_deref(),
        Some(canonical_hash(&value).as_str())
    );
}

#[tokio::test]
async fn a_result_digest_is_the_canonical_digest_whatever_the_content_shows() {
    // Keys in order (the content's JSON text is then the canonical text),
    // keys out of order, and a text cut short by the content bound: the
    // result's digest is the canonical digest of the structured value each
    // time.
    let sorted = json!({"a": [1, {"b": "x\"y\u{1}", "c": 2.5}], "z": -3, "é": null});
    let unsorted = json!({"z": -3, "a": [1, {"c": 2.5, "b": "x\"y\u{1}"}]});
    let long = json!({"a": "x".repeat(300), "b": 1});
    for (value, max_content_bytes) in [(sorted, 4_000), (unsorted, 4_000), (long, 100)] {
        let schema = json!({"type": "object"});
        let spec = spec("shape", schema).build().unwrap();
        let tool = testkit::FakeTool::new(spec).answering(ToolOutput::structured(value.clone()));
        let (recorder, exec) = recorded_with(
            executor(vec![Arc::new(tool)]).configure(|c| c.max_content_bytes = max_content_bytes),
        );
        let r = execute_once(&exec, call("c1", "shape", "{}")).await;
        assert!(!r.is_error, "{:?}", r.error);
        assert_eq!(r.structured.as_ref(), Some(&value));
        let events = recorder.events();
        assert_eq!(
            events[1].result_hash.as_deref(),
            Some(canonical_hash(&value).as_str()),
            "{value}"
        );
    }
}

#[tokio::test]
async fn a_call_s_events_are_dated_in_order_within_the_call() {
    // The first event reads the wall clock; later ones count on from it on
    // the call clock, so their dates and their own times move together.
    let (recorder, exec) = recorded(vec![echo()]);
    let before = std::time::SystemTime::now();
    execute_once(&exec, call("c1", "echo", json!({"text": "hi"}))).await;
    let after = std::time::SystemTime::now();
    let events = recorder.events();
    assert_eq!(
        recorder.steps(),
        [("tool.started", 1), ("tool.completed", 1)]
    );
    let slack = std::time::Duration::from_millis(5);
    for e in &events {
        assert!(
            e.timestamp >= before && e.timestamp <= after + slack,
            "{e:?}"
        );
    }
    let gap = events[1]
        .timestamp
        .duration_since(events[0].timestamp)
        .expect("in order");
    let own = events[1].elapsed.unwrap() - events[0].elapsed.unwrap();
    let apart = gap.abs_diff(own);
    assert!(
        apart < std::time::Duration::from_micros(1),
        "{gap:?} against {own:?}"
    );
}
