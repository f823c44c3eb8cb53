//! The PostgreSQL backend's tests: URLs without their passwords, and a throwaway server.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::super::temp_postgres::TempPostgres;
use super::*;
use crate::approval::approval_id;
use crate::error::ErrorClass;
use crate::journal::CallState;
use crate::journal::fixtures::{
    awaiting, check_events, check_grants, check_one_of_twenty_replaces_wins, check_round_trip,
    keys, record,
};

/// A database of its own on a throwaway server (or, with
/// `TINYAGENTS_TEST_POSTGRES_URL`, on that server, dropped afterwards).
struct Database {
    server: Option<TempPostgres>,
    name: String,
    url: String,
}

impl Database {
    async fn fresh() -> Database {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let server = tokio::task::spawn_blocking(TempPostgres::start)
            .await
            .expect("the starting thread")
            .unwrap_or_else(|e| panic!("{e}"));
        let name = format!(
            "journal_test_{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let admin = sql_client(server.url()).await;
        admin
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .await
            .expect("CREATE DATABASE");
        let url = with_database(server.url(), &name);
        Database {
            server: Some(server),
            name,
            url,
        }
    }

    fn is_external(&self) -> bool {
        std::env::var_os("TINYAGENTS_TEST_POSTGRES_URL").is_some()
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        let Some(server) = self.server.take() else {
            return;
        };
        if !self.is_external() {
            return;
        }
        let admin = server.url().to_owned();
        let name = self.name.clone();
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            runtime.block_on(async {
                let client = sql_client(&admin).await;
                let sql = format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)");
                let _ = client.batch_execute(&sql).await;
            });
            Ok::<(), std::io::Error>(())
        })
        .join();
    }
}

/// `url` naming database `name` instead.
fn with_database(url: &str, name: &str) -> String {
    let (base, query) = url
        .split_once('?')
        .map_or((url, None), |(b, q)| (b, Some(q)));
    let authority_start = base.find("://").map_or(0, |i| i + 3);
    let path_start = base[authority_start..]
        .find('/')
        .map_or(base.len(), |i| authority_start + i);
    let mut url = format!("{}/{name}", &base[..path_start]);
    if let Some(query) = query {
        url.push('?');
        url.push_str(query);
    }
    url
}

async fn sql_client(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, NoTls)
        .await
        .unwrap_or_else(|e| panic!("connecting to {url}: {}", describe(&e)));
    tokio::spawn(connection);
    client
}

async fn journal(db: &Database) -> PostgresJournal {
    PostgresJournal::connect(&db.url)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Tests that each run one of the checks every backend passes
/// (`journal::fixtures`) on a database of its own.
macro_rules! shared_checks {
    ($($test:ident: $check:ident,)*) => {$(
        #[tokio::test]
        async fn $test() {
            let db = Database::fresh().await;
            $check(&journal(&db).await).await;
        }
    )*};
}

shared_checks! {
    a_record_round_trips_and_a_stale_revision_is_refused: check_round_trip,
    grants_are_kept_per_tool_and_revoked: check_grants,
    events_are_logged_in_order_with_their_seq: check_events,
}

#[tokio::test]
async fn inserting_an_existing_key_returns_the_record_already_there() {
    let db = Database::fresh().await;
    let journal = journal(&db).await;
    let first = record("run-1", 3, "call-1", CallState::Received);
    let mut second = first.clone();
    second.tool = "delete_file".to_owned();
    assert_eq!(journal.insert(&first).await.unwrap(), None);
    let existing = Stored {
        record: first.clone(),
        revision: 1,
    };
    assert_eq!(
        journal.insert(&second).await.unwrap(),
        Some(existing.clone())
    );
    assert_eq!(journal.get(&first.key).await.unwrap(), Some(existing));
}

#[tokio::test]
async fn find_selects_by_run_state_and_approval_id_in_key_order() {
    let db = Database::fresh().await;
    let journal = journal(&db).await;
    let waiting = awaiting(
        "run-a",
        2,
        "call-x",
        &approval_id(&"run-a".into(), 2, &"call-x".into()),
    );
    let records = [
        record("run-b", 0, "call-1", CallState::Answered),
        record("run-a", 10, "call-1", CallState::Started),
        waiting.clone(),
        record("run-a", 2, "B", CallState::Received),
        record("run-a", 2, "a", CallState::Answered),
    ];
    for record in &records {
        assert_eq!(journal.insert(record).await.unwrap(), None);
    }

    // Ids compare by their bytes ("B" < "a" < "call-x"), turns as numbers.
    let all = journal.find(&CallQuery::all()).await.unwrap();
    assert_eq!(
        keys(&all),
        [
            "run-a/2/B",
            "run-a/2/a",
            "run-a/2/call-x",
            "run-a/10/call-1",
            "run-b/0/call-1"
        ]
    );
    assert!(all.iter().all(|s| s.revision == 1));

    let run_b = journal.find(&CallQuery::run("run-b")).await.unwrap();
    assert_eq!(keys(&run_b), ["run-b/0/call-1"]);

    let answered = journal
        .find(&CallQuery::all().in_states([CallState::Answered]))
        .await
        .unwrap();
    assert_eq!(keys(&answered), ["run-a/2/a", "run-b/0/call-1"]);

    let open_in_a = journal
        .find(
            &CallQuery::run("run-a").in_states([CallState::Received, CallState::AwaitingApproval]),
        )
        .await
        .unwrap();
    assert_eq!(keys(&open_in_a), ["run-a/2/B", "run-a/2/call-x"]);

    let by_approval = journal
        .find(&CallQuery {
            approval_id: waiting.approval_id().map(str::to_owned),
            ..CallQuery::default()
        })
        .await
        .unwrap();
    assert_eq!(
        by_approval,
        [Stored {
            record: waiting,
            revision: 1
        }]
    );

    let unknown = journal
        .find(&CallQuery {
            approval_id: Some("apr_000000000000000000000000".to_owned()),
            ..CallQuery::default()
        })
        .await
        .unwrap();
    assert!(unknown.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn of_twenty_replaces_at_one_revision_through_two_pools_exactly_one_wins() {
    let db = Database::fresh().await;
    check_one_of_twenty_replaces_wins([Arc::new(journal(&db).await), Arc::new(journal(&db).await)])
        .await;
}

#[tokio::test]
async fn two_instances_starting_together_both_open_one_schema() {
    let db = Database::fresh().await;
    let (a, b) = tokio::join!(
        PostgresJournal::connect(&db.url),
        PostgresJournal::connect(&db.url)
    );
    a.unwrap();
    b.unwrap();
    let client = sql_client(&db.url).await;
    let row = client
        .query_one(
            "SELECT value FROM journal_meta WHERE key = 'schema_version'",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(row.get::<_, String>(0), SCHEMA_VERSION.to_string());
}

#[tokio::test]
async fn a_journal_of_a_newer_schema_is_refused() {
    let db = Database::fresh().await;
    drop(journal(&db).await);
    let client = sql_client(&db.url).await;
    let newer = SCHEMA_VERSION + 1;
    client
        .execute(
            "UPDATE journal_meta SET value = $1 WHERE key = 'schema_version'",
            &[&newer.to_string()],
        )
        .await
        .unwrap();
    let error = PostgresJournal::connect(&db.url)
        .await
        .expect_err("a newer schema");
    match error {
        JournalError::NewerSchema {
            found, supported, ..
        } => assert_eq!((found, supported), (newer, SCHEMA_VERSION)),
        other => panic!("expected NewerSchema, got {other}"),
    }
}

#[tokio::test]
async fn tables_of_another_application_are_not_taken_for_a_journal() {
    let db = Database::fresh().await;
    let client = sql_client(&db.url).await;
    client
        .batch_execute("CREATE TABLE events (id serial PRIMARY KEY, title text)")
        .await
        .unwrap();
    let error = PostgresJournal::connect(&db.url)
        .await
        .expect_err("a foreign database");
    assert_eq!(error.kind(), "foreign", "{error}");
}

#[tokio::test]
async fn a_record_that_does_not_parse_is_reported_corrupt() {
    let db = Database::fresh().await;
    let journal = journal(&db).await;
    let received = record("run-1", 0, "call-1", CallState::Received);
    journal.insert(&received).await.unwrap();
    let client = sql_client(&db.url).await;
    client
        .execute("UPDATE calls SET record = '{\"tool\": 1'", &[])
        .await
        .unwrap();

    let error = journal.get(&received.key).await.expect_err("corrupt");
    assert_eq!(error.kind(), "corrupt", "{error}");
    assert!(error.to_string().contains("run-1/0/call-1"), "{error}");
    let error = journal.find(&CallQuery::all()).await.expect_err("corrupt");
    assert_eq!(error.kind(), "corrupt", "{error}");
}

#[tokio::test]
async fn an_exhausted_pool_is_unavailable_and_retryable() {
    let db = Database::fresh().await;
    let journal = PostgresJournal::open(&db.url, 1, Duration::from_millis(200))
        .await
        .unwrap();
    let held = journal.pool.get().await.unwrap();
    let error = journal
        .get(&CallKey::new("run-1", 0, "call-1"))
        .await
        .expect_err("no free connection");
    assert_eq!(error.kind(), "unavailable", "{error}");
    assert_eq!(error.class(), ErrorClass::Retry);
    drop(held);
    assert_eq!(
        journal
            .get(&CallKey::new("run-1", 0, "call-1"))
            .await
            .unwrap(),
        None
    );
}

#[tokio::test]
async fn a_stopped_server_is_unavailable_and_retryable() {
    let mut db = Database::fresh().await;
    if db.is_external() {
        return;
    }
    let journal = journal(&db).await;
    let key = CallKey::new("run-1", 0, "call-1");
    assert_eq!(journal.get(&key).await.unwrap(), None);
    drop(db.server.take());
    let error = journal.get(&key).await.expect_err("the server is gone");
    assert_eq!(error.kind(), "unavailable", "{error}");
    assert_eq!(error.class(), ErrorClass::Retry);
    assert_eq!(journal.location(), db.url);
}
