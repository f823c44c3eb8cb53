//! Batches: bounded concurrency, `sequential`, per-tool `max_concurrency`,
//! results in call order.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde_json::json;
use tinyagents_tools::*;
use tinyagents_tools_tests::*;

#[tokio::test]
async fn with_a_bound_of_four_no_more_than_four_calls_run_at_once() {
    let probe = Arc::new(Probe::default());
    let exec = bounded(&probe, 4);
    let results = execute_batch_once(&exec, calls_to("gauge", 0..12)).await;
    assert!(results.iter().all(|r| !r.is_error));
    let high = probe.high_water();
    assert!(high <= 4, "{high} calls ran at once");
    assert!(high >= 2, "the batch did not run concurrently at all");
}

#[tokio::test]
async fn a_sequential_tool_never_overlaps_another_call_of_the_batch() {
    let probe = Arc::new(Probe::default());
    let exec = executor(vec![
        gauge("gauge", &probe, false, None),
        gauge("exclusive", &probe, true, None),
    ])
    .build()
    .unwrap();
    let calls = (0..12)
        .map(|i| {
            let name = if i % 4 == 2 { "exclusive" } else { "gauge" };
            call(&format!("c{i}"), name, "{}")
        })
        .collect();
    let results = execute_batch_once(&exec, calls).await;
    assert!(results.iter().all(|r| !r.is_error));
    assert!(!probe.overlap.load(Ordering::SeqCst));
    assert!(
        probe.high_water() >= 2,
        "the other calls still ran concurrently"
    );
}

#[tokio::test]
async fn a_tools_max_concurrency_holds_inside_a_wider_batch() {
    let probe = Arc::new(Probe::default());
    let exec = executor(vec![gauge("gauge", &probe, false, Some(2))])
        .build()
        .unwrap();
    let results = execute_batch_once(&exec, calls_to("gauge", 0..8)).await;
    assert!(results.iter().all(|r| !r.is_error));
    assert!(probe.high_water() <= 2, "{}", probe.high_water());
}

#[tokio::test]
async fn results_come_back_in_call_order_with_every_id_answered_once() {
    let exec = executor(vec![echo(), flaky_idempotent(1, 2)])
        .build()
        .unwrap();
    let mut calls: Vec<ToolCall> = (0..30)
        .map(|i| call(&format!("id-{i}"), "echo", json!({"text": format!("t{i}")})))
        .collect();
    calls.insert(3, call("bad", "nope", "{}"));
    calls.insert(7, call("slow", "flaky", "{}"));
    let expected: Vec<String> = calls.iter().map(|c| c.id.to_string()).collect();
    let results = execute_batch_once(&exec, calls).await;
    let ids: Vec<String> = results.iter().map(|r| r.tool_call_id.to_string()).collect();
    assert_eq!(ids, expected);
    assert_eq!(results[0].text(), "t0");
    assert!(results[3].text().contains("no tool named"));
    assert_eq!(results[7].text(), "finally");
    assert_eq!(results[31].text(), "t29");
}

#[tokio::test]
async fn a_bound_of_one_runs_the_batch_serially() {
    let probe = Arc::new(Probe::default());
    execute_batch_once(&bounded(&probe, 1), calls_to("gauge", 0..4)).await;
    assert_eq!(probe.high_water(), 1);
}

/// An executor over one `gauge` sharing `probe`, running at most `bound`
/// calls of a batch at once.
fn bounded(probe: &Arc<Probe>, bound: usize) -> ToolExecutor {
    executor(vec![gauge("gauge", probe, false, None)])
        .configure(|c| c.max_concurrency = bound.try_into().unwrap())
        .build()
        .unwrap()
}
