//! Load: 100,000 calls through one `execute_batch` with 1,000 in flight, in
//! a debug build: nothing lost or duplicated, every result in call order,
//! under 30 s each, and the heap in use flat across further identical runs
//! (resident memory is reported beside it).
//!
//! The measured run happens in a child process that runs only this test
//! (the test re-runs its own binary), so other tests of the suite running in
//! parallel threads cannot disturb the memory reading.

use std::collections::HashSet;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tinyagents_tools::events::{Delivery, EventKind, EventSubscriber, ToolEvent};
use tinyagents_tools::*;
use tinyagents_tools_tests::*;

const CHILD: &str = "TINYAGENTS_LOAD_CHILD";
const TEST: &str = "load::one_hundred_thousand_calls_at_concurrency_one_thousand_lose_nothing_and_leave_memory_flat";
const CALLS: usize = 100_000;

/// Counts final events, in line (cheap enough for the load).
#[derive(Default)]
struct Finals {
    completed: AtomicU64,
    rejected: AtomicU64,
    other: AtomicU64,
}

impl EventSubscriber for Finals {
    fn on_event(&self, event: &ToolEvent) {
        let counter = match event.kind {
            EventKind::Completed => &self.completed,
            EventKind::Rejected => &self.rejected,
            EventKind::Started => return,
            _ => &self.other,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }
    fn delivery(&self) -> Delivery {
        Delivery::Inline
    }
}

/// What call `i` of the load is, and what it must come back as.
fn planned(i: usize) -> (ToolCall, &'static str) {
    let id = format!("load-{i}");
    if i % 100 == 99 {
        (call(&id, "no_such_tool", "{}"), "unknown_tool")
    } else if i % 10 == 7 {
        (call(&id, "echo", r#"{"text": 5}"#), "invalid_arguments")
    } else {
        let args = format!(r#"{{"text": "{id}", "limit": 3}}"#);
        (call(&id, "echo", args), "ok")
    }
}

fn resident_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("procfs");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("a VmRSS line")
}

/// One full load run; returns how long it took.
async fn load_once(exec: &ToolExecutor, finals: &Finals) -> Duration {
    let before = (
        finals.completed.load(Ordering::SeqCst),
        finals.rejected.load(Ordering::SeqCst),
    );
    let (calls, expected): (Vec<ToolCall>, Vec<&str>) = (0..CALLS).map(planned).unzip();
    let ids: Vec<ToolCallId> = calls.iter().map(|c| c.id.clone()).collect();
    let started = Instant::now();
    let results = exec
        .execute_batch(&RunContext::empty(), &Turn::new(1), calls)
        .await;
    let took = started.elapsed();
    assert_eq!(results.len(), CALLS, "no result lost or added");
    let mut seen = HashSet::with_capacity(CALLS);
    for ((r, id), want) in results.iter().zip(&ids).zip(&expected) {
        assert_eq!(&r.tool_call_id, id, "results in call order");
        assert!(seen.insert(r.tool_call_id.clone()), "{id} answered twice");
        assert_eq!(kind(r), *want, "{id}");
        if *want == "ok" {
            assert_eq!(r.text(), id.as_str());
        }
    }
    let ok = expected.iter().filter(|k| **k == "ok").count() as u64;
    assert_eq!(
        finals.completed.load(Ordering::SeqCst) - before.0,
        ok,
        "one tool.completed per good call"
    );
    assert_eq!(
        finals.rejected.load(Ordering::SeqCst) - before.1,
        CALLS as u64 - ok,
        "one tool.rejected per refused call"
    );
    assert_eq!(finals.other.load(Ordering::SeqCst), 0);
    took
}

fn measured_run() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let finals = Arc::new(Finals::default());
    // It keeps no arguments: 400,000 of them would look like a leak.
    let echo = echo_fake().forgetting_arguments().shared();
    let exec = executor(vec![echo.clone()])
        .subscribe(finals.clone())
        .configure(|c| c.max_concurrency = std::num::NonZeroUsize::new(1_000).unwrap())
        .build()
        .unwrap();
    runtime.block_on(async {
        // The first run warms the caches up; after it, the heap in use must
        // stay flat.
        let mut times = vec![load_once(&exec, &finals).await];
        times.push(load_once(&exec, &finals).await);
        let (heap_second, rss_second) = (crate::heap::in_use_kib(), resident_kib());
        times.push(load_once(&exec, &finals).await);
        times.push(load_once(&exec, &finals).await);
        let (heap_fourth, rss_fourth) = (crate::heap::in_use_kib(), resident_kib());
        let growth = heap_fourth - heap_second;
        println!(
            "load: {CALLS} calls a run, concurrency 1000, runs took {times:?}; \
             heap in use after the second run {heap_second} KiB, after the fourth {heap_fourth} KiB ({growth:+} KiB); \
             VmRSS {rss_second} KiB, then {rss_fourth} KiB"
        );
        for took in &times {
            assert!(*took < Duration::from_secs(30), "a run took {took:?}");
        }
        // Two more runs of 100,000 calls: a leak of 5 bytes a call would
        // add 1 MiB.
        assert!(growth < 1024, "the heap in use grew by {growth} KiB");
    });
    assert_eq!(echo.runs(), 4 * (CALLS - CALLS / 10 - CALLS / 100));
}

#[test]
fn one_hundred_thousand_calls_at_concurrency_one_thousand_lose_nothing_and_leave_memory_flat() {
    if std::env::var_os(CHILD).is_some() {
        measured_run();
        return;
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", TEST, "--test-threads=1", "--nocapture"])
        .env(CHILD, "1")
        .output()
        .expect("the test binary runs again");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("load: 100000 calls a run"),
        "the child ran the load: {stdout}"
    );
}
