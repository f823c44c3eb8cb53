//! How in-line subscribers are served: a digest computed once for all the
//! subscribers of an event, and only for one that reads it; a panicking
//! subscriber caught; a tool's own events and a batch's events delivered in
//! line and queued alike.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};

use serde_json::json;
use tinyagents_tools::artifacts::InMemoryArtifactStore;
use tinyagents_tools::events::{Delivery, EventKind, EventSubscriber, Progress, ToolEvent};
use tinyagents_tools::hash::canonical_hash;
use tinyagents_tools::*;
use tinyagents_tools_tests::*;

use super::inline_subscribers::*;

/// Reads each event's argument digest twice, and notes where its text
/// lives.
#[derive(Default)]
struct DigestReader(Mutex<Vec<(usize, String)>>);

impl EventSubscriber for DigestReader {
    fn on_event(&self, event: &ToolEvent) {
        if let Some(digest) = &event.args_hash {
            let hex = digest.as_str();
            assert!(std::ptr::eq(hex, digest.as_str()), "computed once");
            let at = hex.as_ptr() as usize;
            self.0.lock().unwrap().push((at, hex.to_owned()));
        }
    }

    fn delivery(&self) -> Delivery {
        Delivery::Inline
    }
}

#[tokio::test]
async fn a_digest_is_computed_once_for_every_subscriber_of_the_event() {
    let (first, second) = (
        Arc::new(DigestReader::default()),
        Arc::new(DigestReader::default()),
    );
    let exec = shouting()
        .subscribe(first.clone())
        .subscribe(second.clone())
        .build()
        .unwrap();
    let args = json!({"text": "hi"});
    for tool in ["shout", "shout_later"] {
        first.0.lock().unwrap().clear();
        second.0.lock().unwrap().clear();
        execute_once(&exec, call("c1", tool, args.to_string())).await;
        let (first, second) = (
            first.0.lock().unwrap().clone(),
            second.0.lock().unwrap().clone(),
        );
        assert_eq!(first.len(), 2, "{tool}: started and completed");
        assert_eq!(
            first, second,
            "{tool}: the second subscriber read the first one's digest"
        );
        for (_, hex) in &first {
            assert_eq!(*hex, canonical_hash(&args), "{tool}");
        }
    }
}

/// Panics on every event.
struct Panics(AtomicUsize);

impl EventSubscriber for Panics {
    fn on_event(&self, _: &ToolEvent) {
        self.0.fetch_add(1, Ordering::SeqCst);
        panic!("subscriber bug");
    }

    fn delivery(&self) -> Delivery {
        Delivery::Inline
    }
}

#[tokio::test]
async fn a_panic_in_an_in_line_on_event_is_caught_and_counted_and_the_call_goes_on() {
    for tool in ["shout", "shout_later"] {
        let panics = Arc::new(Panics(AtomicUsize::new(0)));
        let recorder = Recorder::new();
        let exec = shouting()
            .subscribe(panics.clone())
            .subscribe(recorder.clone())
            .build()
            .unwrap();
        let r = execute_once(&exec, call("c1", tool, r#"{"text": "hi"}"#)).await;
        assert!(!r.is_error, "{tool}: {:?}", r.error);
        assert_eq!(panics.0.load(Ordering::SeqCst), 2, "{tool}");
        assert_eq!(exec.events().panics(), 2, "{tool}");
        assert_eq!(
            recorder.kinds(),
            [EventKind::Started, EventKind::Completed],
            "{tool}"
        );
    }
}

/// Reports its progress and a phase, then answers with a text long enough
/// to go to the artifact store.
#[tool(read_only, local)]
fn report(#[inject] progress: StreamWriter, #[inject] events: EventEmitter) -> String {
    progress.progress(1.0, Some(2.0), Some("half"));
    events.emit("phase", json!({"step": 1}));
    "abcdefghij".repeat(2_000)
}

#[tokio::test]
async fn a_tool_s_own_events_and_artifact_keys_reach_in_line_and_queued_subscribers_alike() {
    let recorder = Recorder::new();
    let (tx, rx) = mpsc::channel();
    let exec = executor(vec![Arc::new(ReportTool)])
        .artifact_store(Arc::new(InMemoryArtifactStore::new()))
        .subscribe(recorder.clone())
        .subscribe(Queued(Mutex::new(tx)))
        .build()
        .unwrap();
    let r = execute_in(&exec, &run(), call("c1", "report", "{}")).await;
    assert!(!r.is_error, "{:?}", r.error);
    let keys: Vec<String> = r.artifacts.iter().map(|a| a.key.clone()).collect();
    assert_eq!(keys.len(), 1, "the answer went to the store");

    let events = recorder.events();
    assert_same_events(&events, &receive(&rx, events.len()), "in line and queued");
    let kinds: Vec<&str> = events.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "tool.started",
            "tool.progress",
            "tool.custom",
            "tool.completed"
        ]
    );
    for event in &events {
        assert_eq!(event.call_id.as_str(), "c1");
        assert_eq!(event.tool, "report");
        assert_eq!(event.attempt, 1);
        assert_eq!(event.run_id.as_str(), "run-1");
    }
    assert_eq!(
        events[1].progress,
        Some(Progress {
            progress: 1.0,
            total: Some(2.0),
            message: Some("half".into())
        })
    );
    assert_eq!(events[2].name.as_deref(), Some("phase"));
    assert_eq!(events[2].data, Some(json!({"step": 1})));
    assert_eq!(events[3].artifact_keys, keys);
    assert!(events[..3].iter().all(|e| e.artifact_keys.is_empty()));
}

#[tokio::test]
async fn a_batch_s_in_line_and_queued_events_are_the_same_call_by_call() {
    let run = run();
    let calls = |tool: &str| {
        vec![
            call("a", tool, r#"{"text": "one"}"#),
            call("b", tool, "{oops"),
            call("c", tool, r#"{"text": "two", "then": "fail"}"#),
            call("d", tool, r#"{"text": "three", "then": "panic"}"#),
        ]
    };
    for tool in ["shout", "shout_later"] {
        let mut seen = Vec::new();
        for queued in [false, true] {
            let recorder = Recorder::new();
            let mut builder = shouting()
                .configure(|c| c.max_concurrency = std::num::NonZeroUsize::new(2).unwrap())
                .subscribe(recorder.clone());
            let (tx, rx) = mpsc::channel();
            if queued {
                builder = builder.subscribe(Queued(Mutex::new(tx)));
            }
            let exec = builder.build().unwrap();
            let results = exec.execute_batch(&run, &Turn::new(1), calls(tool)).await;
            assert_eq!(results.len(), 4);
            if queued {
                let queued = receive(&rx, recorder.len());
                for id in ["a", "b", "c", "d"] {
                    let of_call: Vec<ToolEvent<'static>> = queued
                        .iter()
                        .filter(|e| e.call_id.as_str() == id)
                        .cloned()
                        .collect();
                    let what = format!("{tool}, call {id}: in line and queued");
                    assert_same_events(&recorder.for_call(id), &of_call, &what);
                }
            }
            let per_call: Vec<Vec<ToolEvent<'static>>> = ["a", "b", "c", "d"]
                .map(|id| timeless(recorder.for_call(id)))
                .into();
            seen.push(per_call);
        }
        assert_eq!(
            seen[0], seen[1],
            "{tool}: with and without a queued subscriber"
        );
        let kinds = |events: &[ToolEvent<'_>]| events.last().map(|e| e.kind);
        assert_eq!(kinds(&seen[0][0]), Some(EventKind::Completed));
        assert_eq!(kinds(&seen[0][1]), Some(EventKind::Rejected));
        assert_eq!(kinds(&seen[0][2]), Some(EventKind::Failed));
        assert_eq!(kinds(&seen[0][3]), Some(EventKind::Failed));
        assert!(seen[0][0].iter().all(|e| e.args_hash.is_some()));
    }
}

/// Counts the events it receives, reading their kind and tool name and
/// nothing else.
#[derive(Default)]
struct Counter(AtomicUsize);

impl EventSubscriber for Counter {
    fn on_event(&self, event: &ToolEvent) {
        std::hint::black_box((event.kind, &event.tool, event.elapsed));
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    fn delivery(&self) -> Delivery {
        Delivery::Inline
    }
}

/// Counts the events it receives, reading their digests too.
#[derive(Default)]
struct DigestCounter(AtomicUsize);

impl EventSubscriber for DigestCounter {
    fn on_event(&self, event: &ToolEvent) {
        std::hint::black_box((event.args_hash.as_deref(), event.result_hash.as_deref()));
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    fn delivery(&self) -> Delivery {
        Delivery::Inline
    }
}

/// The allocations one call of `shout` makes on this thread (after a few
/// calls to warm up), through an executor with `subscriber`.
fn allocations_per_call(subscriber: Arc<dyn EventSubscriber>) -> usize {
    let exec = shouting().subscribe(subscriber).build().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let (run, turn) = (RunContext::empty(), Turn::new(1));
    let args = json!({"text": "hi"});
    let one = || {
        let call = call("c1", "shout", args.clone());
        let r = runtime.block_on(exec.execute(&run, &turn, call));
        assert!(!r.is_error, "{:?}", r.error);
    };
    (0..3).for_each(|_| one());
    crate::allocations::counted(one).1
}

#[test]
fn digests_are_computed_only_for_a_subscriber_that_reads_them() {
    let counter = Arc::new(Counter::default());
    let unread = allocations_per_call(counter.clone());
    assert!(counter.0.load(Ordering::Relaxed) >= 8, "it saw every event");
    let reader = Arc::new(DigestCounter::default());
    let read = allocations_per_call(reader.clone());
    assert!(reader.0.load(Ordering::Relaxed) >= 8, "it saw every event");
    // Reading computes the digests' hex text (arguments and result).
    assert!(
        read >= unread + 2,
        "{read} allocations reading the digests, {unread} without"
    );
}
