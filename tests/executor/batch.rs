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
    let exec = executor(vec![Gauge::new("gauge", probe.clone(), false, None)])
        .configure(|c| c.max_concurrency = 4.try_into().unwrap())
        .build()
        .unwrap();
    let calls = (0..12)
        .map(|i| call(&format!("g{i}"), "gauge", "{}"))
        .collect();
    let results = exec
        .execute_batch(&RunContext::empty(), &Turn::new(1), calls)
        .await;
    assert!(results.iter().all(|r| !r.is_error));
    let high = probe.high_water();
    assert!(high <= 4, "{high} calls ran at once");
    assert!(high >= 2, "the batch did not run concurrently at all");
}

#[tokio::test]
async fn a_sequential_tool_never_overlaps_another_call_of_the_batch() {
    let probe = Arc::new(Probe::default());
    let exec = executor(vec![
        Gauge::new("gauge", probe.clone(), false, None),
        Gauge::new("exclusive", probe.clone(), true, None),
    ])
    .build()
    .unwrap();
    let calls = (0..12)
        .map(|i| {
            let name = if i % 4 == 2 { "exclusive" } else { "gauge" };
            call(&format!("c{i}"), name, "{}")
        })
        .collect();
    let results = exec
        .execute_batch(&RunContext::empty(), &Turn::new(1), calls)
        .await;
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
    let exec = executor(vec![Gauge::new("gauge", probe.clone(), false, Some(2))])
        .build()
        .unwrap();
    let calls = (0..8)
        .map(|i| call(&format!("g{i}"), "gauge", "{}"))
        .collect();
    let results = exec
        .execute_batch(&RunContext::empty(), &Turn::new(1), calls)
        .await;
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
    let results = exec
        .execute_batch(&RunContext::empty(), &Turn::new(1), calls)
        .await;
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
    let exec = executor(vec![Gauge::new("gauge", probe.clone(), false, None)])
        .configure(|c| c.max_concurrency = 1.try_into().unwrap())
        .build()
        .unwrap();
    let calls = (0..4)
        .map(|i| call(&format!("g{i}"), "gauge", "{}"))
        .collect();
    exec.execute_batch(&RunContext::empty(), &Turn::new(1), calls)
        .await;
    assert_eq!(probe.high_water(), 1);
}
