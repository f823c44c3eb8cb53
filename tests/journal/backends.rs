//! The suite on each backend, and what only a backend can get wrong: a
//! database that fails mid-run, a URL it cannot open.

use std::sync::Arc;

use serde_json::json;
use tinyagents_tools::ErrorClass;
use tinyagents_tools::Turn;
use tinyagents_tools::journal::{Journal, JournalStore, MemoryJournal};

use crate::suite::run_suite;
use crate::tools::{Ledger, executor, run};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_suite_passes_on_the_memory_journal() {
    run_suite("memory", || async {
        let store: Arc<dyn JournalStore> = Arc::new(MemoryJournal::new());
        (Journal::new(store.clone()), Journal::new(store))
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_suite_passes_on_sqlite_with_two_connections_to_one_file() {
    let dir = std::env::temp_dir().join(format!("tinyagents-suite-sqlite-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let counter = std::sync::atomic::AtomicU32::new(0);
    run_suite("sqlite", || {
        let n = counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let url = format!("sqlite://{}", dir.join(format!("journal-{n}.db")).display());
        async move {
            // Two handles, two connections (and two writer threads) on one
            // file: as two processes would have.
            let a = Journal::open(&url).await.unwrap();
            let b = Journal::open(&url).await.unwrap();
            (a, b)
        }
    })
    .await;
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_suite_passes_on_postgres_with_two_pools_on_one_database() {
    let pg = tinyagents_tools::testkit::TempPostgres::start().unwrap_or_else(|e| panic!("{e}"));
    let url = pg.url().to_owned();
    run_suite("postgres", || {
        let url = url.clone();
        async move {
            let a = Journal::open(&url).await.unwrap();
            let b = Journal::open(&url).await.unwrap();
            (a, b)
        }
    })
    .await;
}

#[tokio::test]
async fn a_lost_database_fails_calls_retryably_and_runs_none_unjournaled() {
    let journal = Journal::new(tinyagents_tools::testkit::UnavailableJournal);
    let ledger = Arc::new(Ledger::default());
    let exec = executor(&journal);
    let results = exec
        .execute_batch(
            &run("run-gone", &ledger),
            &Turn::new(1),
            vec![
                tinyagents_tools::ToolCall::new("c1", "bump", json!({"by": 1})),
                tinyagents_tools::ToolCall::new("c2", "list_notes", json!({})),
                tinyagents_tools::ToolCall::new("c3", "delete_note", json!({"id": 1})),
            ],
        )
        .await;
    assert!(ledger.lines().is_empty(), "nothing ran unjournaled");
    for (result, id) in results.iter().zip(["c1", "c2", "c3"]) {
        assert_eq!(result.tool_call_id.as_str(), id);
        assert_eq!(result.outcome(), "journal_unavailable");
        let error = result.error.as_ref().unwrap();
        assert_eq!(error.class(), ErrorClass::Retry);
        // The model is told to try again, and nothing about the database.
        assert!(!result.text().contains("postgres"), "{}", result.text());
    }
    let e = exec.resume(&run("run-gone", &ledger)).await.unwrap_err();
    assert_eq!(e.class(), ErrorClass::Retry);
}

#[tokio::test]
async fn urls_a_build_cannot_open_are_refused_by_name() {
    let e = Journal::open("redis://cache/1").await.unwrap_err();
    assert!(e.to_string().contains("sqlite://PATH"), "{e}");
    assert!(Journal::open("memory:").await.is_ok());
}
