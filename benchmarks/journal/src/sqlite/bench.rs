//! The journal file, the executors and the bare connection.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, params};
use serde_json::json;
use tinyagents_tools::ToolExecutor;
use tinyagents_tools::journal::{CallKey, CallState, Journal};

use super::Contender::{self, *};
use crate::tools;

/// A directory of its own under the system's temporary directory, removed
/// on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Result<TempDir, String> {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir = std::env::temp_dir().join(format!(
            "tinyagents-journal-bench-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        Ok(TempDir(dir))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The journal file, both executors and the bare connection.
pub struct Bench {
    pub path: PathBuf,
    journaled: ToolExecutor,
    plain: ToolExecutor,
    bare: Arc<Mutex<Connection>>,
    /// The JSON text of an answered journal record of the timed tool.
    pub record: Arc<str>,
    /// The size of the same record as the journal inserted it.
    pub received_len: usize,
    next_run: usize,
    journaled_calls: usize,
    // Last: removed after everything above is closed.
    _dir: TempDir,
}

impl Bench {
    /// A fresh journal file with the bare table beside the journal's, and
    /// one batch through the journal to take a record's size from.
    pub async fn open() -> Result<Bench, String> {
        let dir = TempDir::new()?;
        let path = dir.0.join("journal.db");
        let url = format!("sqlite://{}", path.display());
        let journal = Journal::open(&url).await.map_err(|e| e.to_string())?;
        let bare = connect(&path).map_err(|e| format!("bare connection: {e}"))?;
        let journaled = tools::executor(Some(journal.clone()));
        let run = tools::run("warmup");
        tools::run_batches(&journaled, &run, tools::batches(tools::WRITES, 8, 8)).await?;
        let record: String = bare
            .query_row(
                "SELECT record FROM calls WHERE run_id = 'warmup' AND state = 'answered' LIMIT 1",
                [],
                |row| row.get(0),
            )
            .map_err(|e| format!("reading a journal record back: {e}"))?;
        // The same call as the journal's insert wrote it, `received`.
        let key = CallKey::new("warmup", 1, "c0");
        let mut received = journal
            .call(&key)
            .await
            .map_err(|e| e.to_string())?
            .ok_or("the warm-up call is not in the journal")?;
        received.state = CallState::Received;
        received.arguments = json!({ "n": 0 });
        received.answer = None;
        received.owner = None;
        received.lease_until = None;
        let received_len = serde_json::to_string(&received)
            .map_err(|e| e.to_string())?
            .len();
        Ok(Bench {
            path,
            journaled,
            plain: tools::executor(None),
            bare: Arc::new(Mutex::new(bare)),
            record: record.into(),
            received_len,
            next_run: 0,
            journaled_calls: 8,
            _dir: dir,
        })
    }

    /// Times `calls` calls of `c`.
    pub async fn sample(&mut self, c: Contender, calls: usize) -> Result<Duration, String> {
        self.next_run += 1;
        let id = format!("{}-{}", c.key(), self.next_run);
        let exec = match c {
            Bare => return self.bare_inserts(id, calls).await,
            Plain8 | Plain1 => &self.plain,
            _ => {
                self.journaled_calls += calls / c.batch() * c.batch();
                &self.journaled
            }
        };
        let batches = tools::batches(c.tool(), calls, c.batch());
        let run = tools::run(&id);
        let start = Instant::now();
        tools::run_batches(exec, &run, batches).await?;
        Ok(start.elapsed())
    }

    /// `calls` INSERTs of a journal-sized row, each its own transaction,
    /// on a blocking thread.
    async fn bare_inserts(&self, run_id: String, calls: usize) -> Result<Duration, String> {
        let bare = Arc::clone(&self.bare);
        let record = Arc::clone(&self.record);
        let keys: Vec<(i64, String)> = (0..calls)
            .map(|i| ((i / 8 + 1) as i64, format!("c{}", i % 8)))
            .collect();
        tokio::task::spawn_blocking(move || {
            let conn = bare.lock().expect("not poisoned");
            let mut insert = conn
                .prepare_cached(
                    "INSERT INTO bare_calls
                     (run_id, turn, call_id, state, approval_id, revision, record, updated_at)
                     VALUES (?1, ?2, ?3, 'answered', NULL, 1, ?4, ?5)
                     ON CONFLICT (run_id, turn, call_id) DO NOTHING",
                )
                .map_err(|e| e.to_string())?;
            let start = Instant::now();
            for (turn, call_id) in &keys {
                let inserted = insert
                    .execute(params![run_id, turn, call_id, &*record, now_ms()])
                    .map_err(|e| e.to_string())?;
                if inserted != 1 {
                    return Err(format!(
                        "bare insert {run_id}/{turn}/{call_id} inserted nothing"
                    ));
                }
            }
            Ok(start.elapsed())
        })
        .await
        .map_err(|e| e.to_string())?
    }

    /// The answered records in the journal, and how many there should be.
    pub fn answered(&self) -> Result<(i64, usize), String> {
        let conn = self.bare.lock().expect("not poisoned");
        let found = conn
            .query_row(
                "SELECT count(*) FROM calls WHERE state = 'answered'",
                [],
                |row| row.get(0),
            )
            .map_err(|e| e.to_string())?;
        Ok((found, self.journaled_calls))
    }

    /// The bare connection's journal mode and synchronous setting.
    pub fn pragmas(&self) -> Result<(String, i64), String> {
        let conn = self.bare.lock().expect("not poisoned");
        let mode = conn
            .query_row("PRAGMA journal_mode", [], |row| row.get(0))
            .map_err(|e| e.to_string())?;
        let sync = conn
            .query_row("PRAGMA synchronous", [], |row| row.get(0))
            .map_err(|e| e.to_string())?;
        Ok((mode, sync))
    }
}

/// The bare connection: the journal's pragmas (WAL, synchronous = FULL),
/// and a table `bare_calls` made by the journal's own statements for
/// `calls` (its table and indexes, read back from `sqlite_master`), so
/// that both have the same columns, key and indexes.
fn connect(path: &std::path::Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(Duration::from_secs(5))?;
    conn.query_row("PRAGMA journal_mode = WAL", [], |row| {
        row.get::<_, String>(0)
    })?;
    conn.execute_batch("PRAGMA synchronous = FULL")?;
    // The table first, then its indexes (the key's own index has no SQL).
    let calls: Vec<String> = conn
        .prepare(
            "SELECT sql FROM sqlite_master WHERE tbl_name = 'calls' AND sql IS NOT NULL
             ORDER BY type = 'index'",
        )?
        .query_map([], |row| row.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    for statement in calls {
        // `calls` names the table and starts its indexes' names; no column.
        conn.execute_batch(&statement.replace("calls", "bare_calls"))?;
    }
    Ok(conn)
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}
