//! Faults together: in one batch a panicking tool, one that never returns,
//! one that ignores cancellation, one whose future panics when it is
//! dropped, one missing its store, one whose output the artifact store
//! cannot take, under panicking and slow subscribers. Every call is answered
//! exactly once, the good calls are untouched, and the executor serves the
//! next batch as before. (Each fault alone is covered in `executor_*`.)

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;
use tinyagents_tools::events::{Delivery, EventKind, EventSubscriber, ToolEvent};
use tinyagents_tools::spec::ToolSpecBuilder;
use tinyagents_tools::testkit::FnTool;
use tinyagents_tools::*;
use tinyagents_tools_examples::SearchDocsTool;
use tinyagents_tools_tests::*;

/// Panics when dropped.
struct Bomb;

impl Drop for Bomb {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            panic!("dropped while running");
        }
    }
}

/// `dropbomb`: never returns, and its future panics when it is dropped.
fn drop_bomb(spec: ToolSpec) -> impl Tool {
    FnTool::new(spec, |_, _| {
        Box::pin(async {
            let _bomb = Bomb;
            std::future::pending::<()>().await;
            Ok(ToolOutput::empty())
        })
    })
}

/// Panics on every event, in line or queued.
struct PanickingSubscriber(Delivery);

impl EventSubscriber for PanickingSubscriber {
    fn on_event(&self, _: &ToolEvent) {
        panic!("subscriber bug");
    }
    fn delivery(&self) -> Delivery {
        self.0
    }
}

/// Blocks its thread for a while on every event (queued).
struct SlowSubscriber(AtomicUsize);

impl EventSubscriber for SlowSubscriber {
    fn on_event(&self, _: &ToolEvent) {
        self.0.fetch_add(1, Ordering::SeqCst);
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn timed(name: &str, ms: u64) -> ToolSpecBuilder {
    spec(name, json!({"type": "object", "properties": {}}))
        .safety(ToolSafety::pure())
        .timeout(Duration::from_millis(ms))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_of_every_fault_answers_each_call_once_and_the_executor_serves_the_next_batch() {
    let never = sleeper(
        timed("never_returns", 100).build().unwrap(),
        Duration::from_secs(3600),
        true,
    );
    let stubborn = sleeper(
        timed("ignores_cancel", 100).build().unwrap(),
        Duration::from_secs(3600),
        false,
    );
    let bomb = Arc::new(drop_bomb(timed("dropbomb", 100).build().unwrap()));
    let echo = echo();
    let slow = Arc::new(SlowSubscriber(AtomicUsize::new(0)));
    let recorder = Recorder::new();
    let exec = executor(vec![
        echo.clone(),
        panicker(),
        never.clone(),
        stubborn.clone(),
        bomb,
        Arc::new(SearchDocsTool),
        big(100_000, false),
    ])
    .artifact_store(BrokenStore)
    .subscribe(PanickingSubscriber(Delivery::Inline))
    .subscribe(PanickingSubscriber(Delivery::Queued))
    .subscribe(slow.clone())
    .subscribe(recorder.clone())
    .configure(|c| {
        c.cancel_grace = Duration::from_millis(50);
        c.max_concurrency = std::num::NonZeroUsize::new(16).unwrap();
    })
    .build()
    .unwrap();
    // No DocIndex store in this run: search_docs cannot be given one.
    let run = RunContext::empty();
    let faults = [
        ("panicker", "{}", "panicked"),
        ("never_returns", "{}", "timeout"),
        ("ignores_cancel", "{}", "timeout"),
        ("dropbomb", "{}", "panicked"),
        ("search_docs", r#"{"query": "tools"}"#, "injection_failed"),
        ("big", "{}", "artifact_failed"),
        ("no_such_tool", "{}", "unknown_tool"),
        ("echo", "{not json", "invalid_arguments"),
    ];
    let mut calls = Vec::new();
    let mut expected = Vec::new();
    for i in 0..48 {
        let id = format!("c{i}");
        if i % 2 == 0 {
            let (tool, args, kind) = faults[(i / 2) % faults.len()];
            calls.push(call(&id, tool, args));
            expected.push((id, kind.to_owned()));
        } else {
            calls.push(call(&id, "echo", json!({"text": id})));
            expected.push((id, "ok".to_owned()));
        }
    }
    let started = Instant::now();
    let results = tokio::time::timeout(
        Duration::from_secs(30),
        exec.execute_batch(&run, &Turn::new(1), calls),
    )
    .await
    .expect("the batch ends although tools never return");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(results.len(), expected.len());
    for (r, (id, expected_kind)) in results.iter().zip(&expected) {
        assert_eq!(r.tool_call_id.as_str(), id);
        assert_eq!(kind(r), expected_kind, "{id}: {}", r.text());
        if expected_kind == "ok" {
            assert_eq!(&r.text(), id);
        }
    }
    assert!(never.saw_cancel());
    // Exactly one final event per call.
    let events = recorder.events();
    for (id, _) in &expected {
        let finals = events
            .iter()
            .filter(|e| e.call_id.as_str() == id)
            .filter(|e| {
                matches!(
                    e.kind,
                    EventKind::Completed | EventKind::Failed | EventKind::Rejected
                )
            })
            .count();
        assert_eq!(finals, 1, "{id}");
    }
    assert!(exec.events().panics() > 0);

    // The executor is as good as new.
    let calls = (0..64)
        .map(|i| {
            call(
                &format!("again{i}"),
                "echo",
                json!({"text": format!("again{i}")}),
            )
        })
        .collect();
    let again = exec.execute_batch(&run, &Turn::new(2), calls).await;
    assert!(
        again
            .iter()
            .enumerate()
            .all(|(i, r)| r.text() == format!("again{i}"))
    );
    assert_eq!(echo.runs(), 24 + 64);
    assert!(slow.0.load(Ordering::SeqCst) > 0);
}

/// Panics on every call; built `sequential` or with `max_concurrency = 1`.
fn bound_panicker(spec: ToolSpec) -> impl Tool {
    FnTool::new(spec, |_, _| {
        Box::pin(async {
            tokio::task::yield_now().await;
            panic!("bound panicker")
        })
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn panics_in_sequential_and_bounded_tools_never_leak_their_lock_or_permit() {
    let exclusive = bound_panicker(
        spec("exclusive", json!({"type": "object", "properties": {}}))
            .safety(ToolSafety::pure())
            .sequential()
            .build()
            .unwrap(),
    );
    let single = bound_panicker(
        spec("single", json!({"type": "object", "properties": {}}))
            .safety(ToolSafety::pure())
            .max_concurrency(std::num::NonZeroUsize::new(1).unwrap())
            .build()
            .unwrap(),
    );
    let exec = executor(vec![Arc::new(exclusive), Arc::new(single), echo()])
        .build()
        .unwrap();
    for round in 0..2 {
        let calls: Vec<ToolCall> = (0..30)
            .map(|i| match i % 3 {
                0 => call(&format!("x{i}"), "exclusive", "{}"),
                1 => call(&format!("s{i}"), "single", "{}"),
                _ => call(&format!("e{i}"), "echo", json!({"text": "ok"})),
            })
            .collect();
        let results = tokio::time::timeout(
            Duration::from_secs(20),
            exec.execute_batch(&RunContext::empty(), &Turn::new(round), calls),
        )
        .await
        .expect("no lock or permit is lost to a panic");
        for (i, r) in results.iter().enumerate() {
            let expected = if i % 3 == 2 { "ok" } else { "panicked" };
            assert_eq!(kind(r), expected, "{i}");
        }
    }
}
