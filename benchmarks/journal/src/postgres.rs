//! Case 2: PostgreSQL. 16 concurrent runs of journaled calls against 16
//! connections doing plain INSERTs of a row of the same size into the same
//! database, in windows of a fixed time, interleaved.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tinyagents_tools::journal::Journal;
use tinyagents_tools::testkit::TempPostgres;
use tinyagents_tools::{ToolCall, ToolExecutor, Turn};
use tokio::sync::Barrier;
use tokio_postgres::{Client, NoTls};

use crate::stats::{Summary, round};
use crate::tools;

/// Concurrent runs (and connections doing inserts).
pub const TASKS: usize = 16;

/// How much to time.
pub struct Budget {
    pub window: Duration,
    /// Window pairs: one journaled window and one insert window each.
    pub pairs: usize,
}

/// The case's figures: JSON, and the table for people.
pub struct Report {
    pub json: Value,
    pub table: String,
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
    let journal = Journal::open(url).await.map_err(|e| e.to_string())?;
    let exec = Arc::new(tools::executor(Some(journal)));
    let admin = connect(url).await?;
    admin
        .batch_execute(
            r#"CREATE TABLE bare_calls (
                run_id      text COLLATE "C" NOT NULL,
                turn        bigint NOT NULL,
                call_id     text COLLATE "C" NOT NULL,
                state       text NOT NULL,
                approval_id text,
                revision    bigint NOT NULL,
                record      text NOT NULL,
                updated_at  bigint NOT NULL,
                PRIMARY KEY (run_id, turn, call_id)
            );
            CREATE INDEX bare_calls_approval_id ON bare_calls (approval_id)
                WHERE approval_id IS NOT NULL;
            CREATE INDEX bare_calls_state ON bare_calls (state);"#,
        )
        .await
        .map_err(|e| format!("creating bare_calls: {e}"))?;
    // One call through the journal, for a record's size.
    let run = tools::run("warmup");
    tools::run_batches(&exec, &run, tools::batches(tools::WRITES, 1, 1)).await?;
    let record: Arc<str> = admin
        .query_one(
            "SELECT record FROM calls WHERE run_id = 'warmup' AND state = 'answered'",
            &[],
        )
        .await
        .map_err(|e| format!("reading a journal record back: {e}"))?
        .get::<_, String>(0)
        .into();
    let mut settings = serde_json::Map::new();
    for name in ["server_version", "synchronous_commit", "fsync", "wal_sync_method"] {
        let row = admin
            .query_one(&format!("SHOW {name}"), &[])
            .await
            .map_err(|e| e.to_string())?;
        settings.insert(name.to_owned(), json!(row.get::<_, String>(0)));
    }

    // A short window of each, not counted.
    let warm = Duration::from_millis(300);
    journaled_window(&exec, "warm", warm).await?;
    insert_window(url, &record, "warm", warm).await?;

    let (mut calls, mut inserts) = (Vec::new(), Vec::new());
    for pair in 0..budget.pairs {
        let tag = format!("w{pair}");
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
        .query_one("SELECT count(*) FROM calls WHERE state = 'answered'", &[])
        .await
        .map_err(|e| e.to_string())?
        .get(0);
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
    let barrier = Arc::new(Barrier::new(TASKS + 1));
    let tasks: Vec<_> = (0..TASKS)
        .map(|t| {
            let exec = Arc::clone(exec);
            let barrier = Arc::clone(&barrier);
            let run = tools::run(&format!("pg-{tag}-{t}"));
            tokio::spawn(async move {
                barrier.wait().await;
                let deadline = Instant::now() + window;
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
    gather(barrier, tasks).await
}

/// `TASKS` connections, each making INSERTs (autocommit) one after
/// another until the window closes.
async fn insert_window(
    url: &str,
    record: &Arc<str>,
    tag: &str,
    window: Duration,
) -> Result<Window, String> {
    let barrier = Arc::new(Barrier::new(TASKS + 1));
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
        let barrier = Arc::clone(&barrier);
        let record = Arc::clone(record);
        let run_id = format!("pg-{tag}-{t}");
        tasks.push(tokio::spawn(async move {
            barrier.wait().await;
            let deadline = Instant::now() + window;
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
    gather(barrier, tasks).await
}

/// Releases the tasks together and adds up what they did.
async fn gather(
    barrier: Arc<Barrier>,
    tasks: Vec<tokio::task::JoinHandle<Result<u64, String>>>,
) -> Result<Window, String> {
    barrier.wait().await;
    let start = Instant::now();
    let mut ops = 0;
    for task in tasks {
        ops += task.await.map_err(|e| e.to_string())??;
    }
    Ok(Window {
        ops,
        elapsed: start.elapsed(),
    })
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

fn report(
    budget: &Budget,
    calls: &[Window],
    inserts: &[Window],
    record: &str,
    settings: serde_json::Map<String, Value>,
    answered: i64,
) -> Report {
    let call_rates: Vec<f64> = calls.iter().map(Window::rate).collect();
    let insert_rates: Vec<f64> = inserts.iter().map(Window::rate).collect();
    let ratios: Vec<f64> = call_rates
        .iter()
        .zip(&insert_rates)
        .map(|(c, i)| c / i)
        .collect();
    let (c, i, r) = (
        Summary::of(&call_rates),
        Summary::of(&insert_rates),
        Summary::of(&ratios),
    );
    let mut table = String::new();
    let _ = writeln!(
        table,
        "PostgreSQL {} (synchronous_commit={}, fsync={}), {TASKS} concurrent tasks, \
         {} window pairs of {:.1} s; record {} bytes",
        settings["server_version"].as_str().unwrap_or("?"),
        settings["synchronous_commit"].as_str().unwrap_or("?"),
        settings["fsync"].as_str().unwrap_or("?"),
        budget.pairs,
        budget.window.as_secs_f64(),
        record.len(),
    );
    let _ = writeln!(
        table,
        "{:<44} {:>10} {:>10} {:>10}",
        "contender", "per s", "q1", "q3"
    );
    let _ = writeln!(
        table,
        "{:<44} {:>10.0} {:>10.0} {:>10.0}",
        "journaled calls (16 runs)", c.median, c.q1, c.q3
    );
    let _ = writeln!(
        table,
        "{:<44} {:>10.0} {:>10.0} {:>10.0}",
        "plain INSERTs (16 connections, autocommit)", i.median, i.q1, i.q3
    );
    let _ = writeln!(
        table,
        "{:<44} {:>10.3} {:>10.3} {:>10.3}  (reported)",
        "journaled calls/s / inserts/s, paired", r.median, r.q1, r.q3
    );
    let json = json!({
        "settings": settings,
        "tasks": TASKS,
        "window_s": budget.window.as_secs_f64(),
        "pairs": budget.pairs,
        "record_bytes": record.len(),
        "journal_rows_answered": answered,
        "journaled_calls_per_s": c.json(&call_rates, 1),
        "inserts_per_s": i.json(&insert_rates, 1),
        "calls_per_s_vs_inserts_per_s": r.json(&ratios, 3),
        "calls_counted": calls.iter().map(|w| w.ops).sum::<u64>(),
        "inserts_counted": inserts.iter().map(|w| w.ops).sum::<u64>(),
        "window_elapsed_s": {
            "journaled": calls.iter().map(|w| round(w.elapsed.as_secs_f64(), 3)).collect::<Vec<_>>(),
            "inserts": inserts.iter().map(|w| round(w.elapsed.as_secs_f64(), 3)).collect::<Vec<_>>(),
        },
    });
    Report { json, table }
}
