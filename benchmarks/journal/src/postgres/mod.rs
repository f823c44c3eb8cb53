//! Case 2: PostgreSQL. 16 concurrent runs of journaled calls against 16
//! connections doing plain INSERTs of a row of the same size into the same
//! database, in windows of a fixed time, interleaved.

mod report;

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use serde_json::json;
use tinyagents_tools::journal::Journal;
use tinyagents_tools::testkit::TempPostgres;
use tinyagents_tools::{ToolCall, ToolExecutor, Turn};
use tokio::sync::Barrier;
use tokio_postgres::{Client, NoTls};

use crate::tools;
pub use report::Report;
use report::report;

/// Concurrent runs (and connections doing inserts).
pub const TASKS: usize = 16;

/// How much to time.
pub struct Budget {
    pub window: Duration,
    /// Window pairs: one journaled window and one insert window each.
    pub pairs: usize,
}

/// What a window counted.
struct Window {
    ops: u64,
    elapsed: Duration,
}

impl Window {
    fn rate(&self) -> f64 {
        self.ops as f64 / self.elapsed.as_secs_f64()
    }
}

pub async fn run(budget: &Budget) -> Result<Report, String> {
    let server = tokio::task::spawn_blocking(TempPostgres::start)
        .await
        .map_err(|e| e.to_string())??;
    let url = server.url().to_owned();
    let result = measure(&url, budget).await;
    tokio::task::spawn_blocking(move || drop(server))
        .await
        .map_err(|e| e.to_string())?;
    result
}

async fn measure(url: &str, budget: &Budget) -> Result<Report, String> {
    // Run ids of this process only: a server named by
    // TINYAGENTS_TEST_POSTGRES_URL may hold the rows of earlier runs.
    let nonce = format!(
        "{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis())
    );
    let journal = Journal::open(url).await.map_err(|e| e.to_string())?;
    let exec = Arc::new(tools::executor(Some(journal)));
    let admin = connect(url).await?;
    admin
        .batch_execute(
            // The journal's own columns (their collations too), key and
            // indexes (the partial one too).
            "CREATE TABLE IF NOT EXISTS bare_calls (LIKE calls INCLUDING ALL)",
        )
        .await
        .map_err(|e| format!("creating bare_calls: {e}"))?;
    // One call through the journal, for a record's size.
    let warmup = format!("{nonce}-warmup");
    let run = tools::run(&warmup);
    tools::run_batches(&exec, &run, tools::batches(tools::WRITES, 1, 1)).await?;
    let record: Arc<str> = admin
        .query_one(
            "SELECT record FROM calls WHERE run_id = $1 AND state = 'answered'",
            &[&warmup],
        )
        .await
        .map_err(|e| format!("reading a journal record back: {e}"))?
        .get::<_, String>(0)
        .into();
    let mut settings = serde_json::Map::new();
    for name in [
        "server_version",
        "synchronous_commit",
        "fsync",
        "wal_sync_method",
    ] {
        let row = admin
            .query_one(&format!("SHOW {name}"), &[])
            .await
            .map_err(|e| e.to_string())?;
        settings.insert(name.to_owned(), json!(row.get::<_, String>(0)));
    }

    // A short window of each, not counted.
    let warm = Duration::from_millis(300);
    let tag = format!("{nonce}-warm");
    let warm_calls = journaled_window(&exec, &tag, warm).await?.ops;
    insert_window(url, &record, &tag, warm).await?;

    let (mut calls, mut inserts) = (Vec::new(), Vec::new());
    for pair in 0..budget.pairs {
        let tag = format!("{nonce}-w{pair}");
        if pair % 2 == 0 {
            calls.push(journaled_window(&exec, &tag, budget.window).await?);
            inserts.push(insert_window(url, &record, &tag, budget.window).await?);
        } else {
            inserts.push(insert_window(url, &record, &tag, budget.window).await?);
            calls.push(journaled_window(&exec, &tag, budget.window).await?);
        }
        eprint!(".");
    }
    eprintln!();
    let answered: i64 = admin
        .query_one(
            "SELECT count(*) FROM calls WHERE state = 'answered' AND run_id LIKE $1",
            &[&format!("{nonce}-%")],
        )
        .await
        .map_err(|e| e.to_string())?
        .get(0);
    let made = calls.iter().map(|w| w.ops).sum::<u64>() + warm_calls + 1;
    if answered != made as i64 {
        return Err(format!(
            "the journal holds {answered} answered calls of this run, {made} were made"
        ));
    }
    Ok(report(
        budget, &calls, &inserts, &record, settings, answered,
    ))
}

async fn connect(url: &str) -> Result<Client, String> {
    let (client, connection) = tokio_postgres::connect(url, NoTls)
        .await
        .map_err(|e| format!("connecting to {url}: {e}"))?;
    tokio::spawn(connection);
    Ok(client)
}

/// `TASKS` runs, each making journaled calls one after another until the
/// window closes.
async fn journaled_window(
    exec: &Arc<ToolExecutor>,
    tag: &str,
    window: Duration,
) -> Result<Window, String> {
    let start = Arc::new(Start::new());
    let tasks: Vec<_> = (0..TASKS)
        .map(|t| {
            let exec = Arc::clone(exec);
            let start = Arc::clone(&start);
            let run = tools::run(&format!("{tag}-{t}"));
            tokio::spawn(async move {
                let deadline = start.wait(window).await;
                let mut n: u32 = 0;
                while Instant::now() < deadline {
                    n += 1;
                    let call = ToolCall::new("c0", tools::WRITES, json!({ "n": n }));
                    let result = exec.execute(&run, &Turn::new(n), call).await;
                    if result.message.is_error {
                        return Err(format!("a journaled call failed: {}", result.text()));
                    }
                }
                Ok(u64::from(n))
            })
        })
        .collect();
    gather(&start, tasks).await
}

/// `TASKS` connections, each making INSERTs (autocommit) one after
/// another until the window closes.
async fn insert_window(
    url: &str,
    record: &Arc<str>,
    tag: &str,
    window: Duration,
) -> Result<Window, String> {
    let start = Arc::new(Start::new());
    let mut tasks = Vec::with_capacity(TASKS);
    for t in 0..TASKS {
        let client = connect(url).await?;
        let statement = client
            .prepare(
                "INSERT INTO bare_calls \
                 (run_id, turn, call_id, state, approval_id, revision, record, updated_at) \
                 VALUES ($1, $2, 'c0', 'answered', NULL, 1, $3, $4) \
                 ON CONFLICT (run_id, turn, call_id) DO NOTHING",
            )
            .await
            .map_err(|e| e.to_string())?;
        let start = Arc::clone(&start);
        let record = Arc::clone(record);
        let run_id = format!("{tag}-{t}");
        tasks.push(tokio::spawn(async move {
            let deadline = start.wait(window).await;
            let mut n: i64 = 0;
            while Instant::now() < deadline {
                n += 1;
                let inserted = client
                    .execute(&statement, &[&run_id, &n, &&*record, &now_ms()])
                    .await
                    .map_err(|e| format!("bare insert: {e}"))?;
                if inserted != 1 {
                    return Err(format!("bare insert {run_id}/{n} inserted nothing"));
                }
            }
            Ok(n as u64)
        }));
    }
    gather(&start, tasks).await
}

/// The start of a window: every task waits for it, then runs until
/// `window` after the moment it was given.
struct Start {
    barrier: Barrier,
    at: OnceLock<Instant>,
}

impl Start {
    fn new() -> Start {
        Start {
            barrier: Barrier::new(TASKS + 1),
            at: OnceLock::new(),
        }
    }

    /// In a task: waits for the start; the window's deadline.
    async fn wait(&self, window: Duration) -> Instant {
        self.barrier.wait().await;
        *self.at.get().expect("set before the barrier opens") + window
    }
}

/// Releases the tasks together and adds up what they did.
async fn gather(
    start: &Start,
    tasks: Vec<tokio::task::JoinHandle<Result<u64, String>>>,
) -> Result<Window, String> {
    let at = Instant::now();
    start.at.set(at).expect("a window starts once");
    start.barrier.wait().await;
    let mut ops = 0;
    for task in tasks {
        ops += task.await.map_err(|e| e.to_string())??;
    }
    Ok(Window {
        ops,
        elapsed: at.elapsed(),
    })
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}
