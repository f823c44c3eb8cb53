//! The SQLite backend's tests: the store's semantics on a real file, group commit, two connections racing, and the files it refuses.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::*;
use crate::journal::fixtures::{
    awaiting, check_events, check_grants, check_one_of_twenty_replaces_wins, check_round_trip,
    keys, record,
};
use crate::journal::record::CallState;

/// A journal file under the temp directory, removed with its WAL files
/// when dropped.
struct TempFile(PathBuf);

impl TempFile {
    fn new(name: &str) -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let pid = std::process::id();
        TempFile(std::env::temp_dir().join(format!("tinyagents-sqlite-{pid}-{n}-{name}.db")))
    }

    /// A journal on the file.
    fn journal(&self) -> SqliteJournal {
        SqliteJournal::open(&self.0).unwrap()
    }

    /// A journal on the file, holding the call `run/1/call_1`, received.
    async fn journal_with_a_call(&self) -> (SqliteJournal, CallRecord) {
        let journal = self.journal();
        let received = record("run", 1, "call_1", CallState::Received);
        assert_eq!(journal.insert(&received).await.unwrap(), None);
        (journal, received)
    }

    fn raw(&self) -> Connection {
        let conn = Connection::open(&self.0).unwrap();
        conn.busy_timeout(Duration::from_secs(5)).unwrap();
        conn
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", self.0.display()));
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_record_round_trips_and_a_stale_revision_is_refused() {
    let file = TempFile::new("round-trip");
    let journal = file.journal();
    assert_eq!(journal.location(), file.0.display().to_string());
    let started = check_round_trip(&journal).await;
    drop(journal);

    // What was written is in the file.
    let reopened = file.journal();
    assert_eq!(
        reopened.get(&started.key).await.unwrap(),
        Some(Stored {
            record: started,
            revision: 2
        })
    );
    let absent = CallKey::new("run-1", 0, "call-2");
    assert_eq!(reopened.get(&absent).await.unwrap(), None);
}

#[tokio::test(flavor = "multi_thread")]
async fn inserting_an_existing_key_returns_the_stored_record_and_writes_nothing() {
    let file = TempFile::new("insert-existing");
    let (journal, first) = file.journal_with_a_call().await;

    let mut other = first.clone();
    other.fingerprint = "fp-other".to_owned();
    let existing = journal.insert(&other).await.unwrap();
    assert_eq!(
        existing,
        Some(Stored {
            record: first.clone(),
            revision: 1
        })
    );
    let stored = journal.get(&first.key).await.unwrap();
    assert_eq!(
        stored.map(|s| s.record.fingerprint),
        Some("fp-call_1".to_owned())
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn find_selects_by_run_state_and_approval_id_in_key_order() {
    let file = TempFile::new("find");
    let journal = file.journal();
    for record in [
        record("b", 1, "c1", CallState::Answered),
        record("a", 10, "c0", CallState::Received),
        awaiting("a", 2, "c0", "apr_one"),
        record("a", 1, "c1", CallState::Started),
        awaiting("b", 2, "c0", "apr_two"),
    ] {
        journal.insert(&record).await.unwrap();
    }

    let all = journal.find(&CallQuery::all()).await.unwrap();
    assert_eq!(
        keys(&all),
        ["a/1/c1", "a/2/c0", "a/10/c0", "b/1/c1", "b/2/c0"]
    );
    let run_a = journal.find(&CallQuery::run("a")).await.unwrap();
    assert_eq!(keys(&run_a), ["a/1/c1", "a/2/c0", "a/10/c0"]);
    let states = [CallState::Received, CallState::AwaitingApproval];
    let waiting = journal
        .find(&CallQuery::run("a").in_states(states))
        .await
        .unwrap();
    assert_eq!(keys(&waiting), ["a/2/c0", "a/10/c0"]);
    let answered = CallQuery::all().in_states([CallState::Answered]);
    assert_eq!(keys(&journal.find(&answered).await.unwrap()), ["b/1/c1"]);
    let by_approval = CallQuery {
        approval_id: Some("apr_two".to_owned()),
        ..CallQuery::default()
    };
    let found = journal.find(&by_approval).await.unwrap();
    assert_eq!(keys(&found), ["b/2/c0"]);
    assert_eq!(found[0].record.approval_id(), Some("apr_two"));
    assert!(journal.find(&CallQuery::run("c")).await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn grants_are_kept_per_tool_in_order_and_revoked() {
    let file = TempFile::new("grants");
    check_grants(&file.journal()).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn events_are_read_back_in_order_with_seq_from_one() {
    let file = TempFile::new("events");
    check_events(&file.journal()).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn fifty_concurrent_inserts_are_all_committed() {
    let file = TempFile::new("group-commit");
    let journal = Arc::new(file.journal());
    let tasks: Vec<_> = (0..50)
        .map(|i| {
            let journal = Arc::clone(&journal);
            tokio::spawn(async move {
                let call = format!("call_{i:02}");
                journal
                    .insert(&record("run", 1, &call, CallState::Received))
                    .await
            })
        })
        .collect();
    for task in tasks {
        assert_eq!(task.await.unwrap().unwrap(), None);
    }

    let found = journal.find(&CallQuery::run("run")).await.unwrap();
    assert_eq!(found.len(), 50);
    assert_eq!(found[0].record.key.call_id.as_str(), "call_00");
    assert_eq!(found[49].record.key.call_id.as_str(), "call_49");
}

#[tokio::test(flavor = "multi_thread")]
async fn exactly_one_of_twenty_replaces_at_one_revision_wins_across_two_journals() {
    let file = TempFile::new("cas-race");
    check_one_of_twenty_replaces_wins([Arc::new(file.journal()), Arc::new(file.journal())]).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failing_statement_fails_only_its_own_request() {
    let file = TempFile::new("savepoint");
    let journal = Arc::new(file.journal());
    file.raw()
        .execute_batch(
            "CREATE TRIGGER refuse BEFORE INSERT ON calls WHEN NEW.call_id = 'call_07'
                 BEGIN SELECT RAISE(ABORT, 'refused by a test trigger'); END;",
        )
        .unwrap();

    let tasks: Vec<_> = (0..20)
        .map(|i| {
            let journal = Arc::clone(&journal);
            let record = record("run", 1, &format!("call_{i:02}"), CallState::Received);
            tokio::spawn(async move { journal.insert(&record).await })
        })
        .collect();
    for (i, task) in tasks.into_iter().enumerate() {
        match task.await.unwrap() {
            Err(JournalError::Unavailable { reason, .. }) if i == 7 => {
                assert!(reason.contains("refused by a test trigger"), "{reason}");
            }
            Ok(None) if i != 7 => {}
            other => panic!("call {i}: {other:?}"),
        }
    }
    assert_eq!(
        journal.find(&CallQuery::run("run")).await.unwrap().len(),
        19
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_write_waiting_for_another_writer_past_the_timeout_is_unavailable() {
    let file = TempFile::new("busy");
    let options = SqliteOptions {
        busy_timeout: Duration::from_millis(100),
        ..SqliteOptions::default()
    };
    let journal = SqliteJournal::open_with(&file.0, options).unwrap();
    let received = record("run", 1, "call_1", CallState::Received);
    journal.insert(&received).await.unwrap();

    let other = file.raw();
    other.execute_batch("BEGIN IMMEDIATE").unwrap();
    let late = record("run", 1, "call_2", CallState::Received);
    let err = journal.insert(&late).await.unwrap_err();
    assert!(matches!(err, JournalError::Unavailable { .. }), "{err:?}");
    // Readers do not wait for the writer.
    assert!(journal.get(&received.key).await.unwrap().is_some());

    other.execute_batch("COMMIT").unwrap();
    assert_eq!(journal.insert(&late).await.unwrap(), None);
}

#[test]
fn a_file_that_is_not_a_database_is_refused_naming_it() {
    let file = TempFile::new("garbage");
    std::fs::write(&file.0, b"this is not an SQLite database\n".repeat(256)).unwrap();
    let path = file.0.display().to_string();

    let err = SqliteJournal::open(&file.0).unwrap_err();
    match &err {
        JournalError::Open { location, .. } | JournalError::Foreign { location, .. } => {
            assert_eq!(*location, path);
        }
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains(&path), "{err}");
}

#[test]
fn a_missing_directory_is_an_open_error_naming_the_path() {
    let file = TempFile::new("no-such-directory");
    let path = file.0.with_extension("d").join("journal.db");
    let err = SqliteJournal::open(&path).unwrap_err();
    assert!(matches!(err, JournalError::Open { .. }), "{err:?}");
    assert!(
        err.to_string().contains(&path.display().to_string()),
        "{err}"
    );
}

#[test]
fn a_database_with_tables_of_its_own_is_foreign() {
    let file = TempFile::new("foreign");
    file.raw()
        .execute_batch("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
        .unwrap();

    let err = SqliteJournal::open(&file.0).unwrap_err();
    match &err {
        JournalError::Foreign { location, reason } => {
            assert_eq!(*location, file.0.display().to_string());
            assert!(reason.contains("customers"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    assert!(
        err.to_string().contains(&file.0.display().to_string()),
        "{err}"
    );
}

#[test]
fn a_journal_of_a_newer_schema_is_refused_with_both_versions() {
    let file = TempFile::new("newer");
    drop(file.journal());
    let raw = file.raw();
    let version: String = raw
        .query_row(
            "SELECT value FROM journal_meta WHERE key = 'schema_version'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION.to_string());
    raw.execute(
        "UPDATE journal_meta SET value = ?1 WHERE key = 'schema_version'",
        [(SCHEMA_VERSION + 1).to_string()],
    )
    .unwrap();

    let err = SqliteJournal::open(&file.0).unwrap_err();
    match err {
        JournalError::NewerSchema {
            location,
            found,
            supported,
        } => {
            assert_eq!(location, file.0.display().to_string());
            assert_eq!((found, supported), (SCHEMA_VERSION + 1, SCHEMA_VERSION));
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_corrupt_record_is_reported_by_get_and_find() {
    let file = TempFile::new("corrupt");
    let (journal, received) = file.journal_with_a_call().await;
    file.raw()
        .execute(
            "UPDATE calls SET record = '{\"run_id\": 12' WHERE call_id = 'call_1'",
            [],
        )
        .unwrap();

    let err = journal.get(&received.key).await.unwrap_err();
    match &err {
        JournalError::Corrupt { location, reason } => {
            assert_eq!(*location, file.0.display().to_string());
            assert!(reason.contains("run/1/call_1"), "{reason}");
        }
        other => panic!("{other:?}"),
    }
    let err = journal.find(&CallQuery::all()).await.unwrap_err();
    assert!(matches!(err, JournalError::Corrupt { .. }), "{err:?}");
}
