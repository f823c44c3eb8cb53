//! The SQLite backend's tests: the store's semantics on a real file, group commit, two connections racing, and the files it refuses.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::*;
use crate::approval::GrantScope;
use crate::journal::fixtures::{awaiting, event, keys, record};
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
    let journal = SqliteJournal::open(&file.0).unwrap();
    assert_eq!(journal.location(), file.0.display().to_string());

    let received = record("run", 1, "call_1", CallState::Received);
    assert_eq!(journal.insert(&received).await.unwrap(), None);
    let stored = journal.get(&received.key).await.unwrap();
    assert_eq!(
        stored,
        Some(Stored {
            record: received.clone(),
            revision: 1
        })
    );

    let mut started = received.clone();
    started.state = CallState::Started;
    started.owner = Some("instance-a".to_owned());
    started.updated_at = 2_000;
    assert!(journal.replace(&started, 1).await.unwrap());
    assert!(!journal.replace(&received, 1).await.unwrap());
    let missing = record("run", 1, "call_9", CallState::Received);
    assert!(!journal.replace(&missing, 1).await.unwrap());
    assert!(!journal.replace(&started, u64::MAX).await.unwrap());
    drop(journal);

    let reopened = SqliteJournal::open(&file.0).unwrap();
    let stored = reopened.get(&received.key).await.unwrap();
    assert_eq!(
        stored,
        Some(Stored {
            record: started,
            revision: 2
        })
    );
    assert_eq!(reopened.get(&missing.key).await.unwrap(), None);
}

#[tokio::test(flavor = "multi_thread")]
async fn inserting_an_existing_key_returns_the_stored_record_and_writes_nothing() {
    let file = TempFile::new("insert-existing");
    let journal = SqliteJournal::open(&file.0).unwrap();
    let first = record("run", 1, "call_1", CallState::Received);
    journal.insert(&first).await.unwrap();

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
    let journal = SqliteJournal::open(&file.0).unwrap();
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
    let journal = SqliteJournal::open(&file.0).unwrap();
    let grant = |tool: &str, at: i64, scope: GrantScope| StandingGrant {
        tool: tool.to_owned(),
        scope,
        fingerprint: None,
        at,
    };
    let run_grant = grant(
        "deploy",
        1,
        GrantScope::Run {
            run_id: "run".into(),
        },
    );
    let all_runs = grant("deploy", 2, GrantScope::AllRuns);
    let delete = grant("delete", 3, GrantScope::AllRuns);
    for g in [&run_grant, &all_runs, &delete] {
        journal.put_grant(g).await.unwrap();
    }

    assert_eq!(
        journal.grants("deploy").await.unwrap(),
        [run_grant, all_runs]
    );
    assert!(journal.grants("other").await.unwrap().is_empty());
    assert_eq!(journal.revoke_grants(Some("deploy")).await.unwrap(), 2);
    assert!(journal.grants("deploy").await.unwrap().is_empty());
    assert_eq!(journal.grants("delete").await.unwrap(), [delete]);
    assert_eq!(journal.revoke_grants(None).await.unwrap(), 1);
    assert!(journal.grants("delete").await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn events_are_read_back_in_order_with_seq_from_one() {
    let file = TempFile::new("events");
    let journal = SqliteJournal::open(&file.0).unwrap();
    let first = [event("a", "tool.started", 1), event("b", "tool.started", 2)];
    journal.append_events(&first).await.unwrap();
    journal.append_events(&[]).await.unwrap();
    journal
        .append_events(&[event("a", "tool.completed", 3)])
        .await
        .unwrap();

    let all = journal.events(None).await.unwrap();
    let seen: Vec<_> = all
        .iter()
        .map(|e| (e.seq, e.run_id.as_str(), e.at))
        .collect();
    assert_eq!(seen, [(1, "a", 1), (2, "b", 2), (3, "a", 3)]);
    let run_a = journal.events(Some(&RunId::from("a"))).await.unwrap();
    let seen: Vec<_> = run_a.iter().map(|e| (e.seq, e.kind.as_str())).collect();
    assert_eq!(seen, [(1, "tool.started"), (3, "tool.completed")]);
}

#[tokio::test(flavor = "multi_thread")]
async fn fifty_concurrent_inserts_are_all_committed() {
    let file = TempFile::new("group-commit");
    let journal = Arc::new(SqliteJournal::open(&file.0).unwrap());
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
    let journals = [
        Arc::new(SqliteJournal::open(&file.0).unwrap()),
        Arc::new(SqliteJournal::open(&file.0).unwrap()),
    ];
    let received = record("run", 1, "call_1", CallState::Received);
    journals[0].insert(&received).await.unwrap();

    let tasks: Vec<_> = (0..20)
        .map(|i| {
            let journal = Arc::clone(&journals[i % 2]);
            let mut claim = received.clone();
            claim.state = CallState::Started;
            claim.owner = Some(format!("instance-{i}"));
            tokio::spawn(async move { (journal.replace(&claim, 1).await.unwrap(), claim) })
        })
        .collect();
    let mut winners = Vec::new();
    for task in tasks {
        let (won, claim) = task.await.unwrap();
        if won {
            winners.push(claim);
        }
    }

    assert_eq!(winners.len(), 1);
    let stored = journals[1].get(&received.key).await.unwrap();
    assert_eq!(
        stored,
        Some(Stored {
            record: winners.remove(0),
            revision: 2
        })
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failing_statement_fails_only_its_own_request() {
    let file = TempFile::new("savepoint");
    let journal = Arc::new(SqliteJournal::open(&file.0).unwrap());
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
    drop(SqliteJournal::open(&file.0).unwrap());
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
    let journal = SqliteJournal::open(&file.0).unwrap();
    let received = record("run", 1, "call_1", CallState::Received);
    journal.insert(&received).await.unwrap();
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
