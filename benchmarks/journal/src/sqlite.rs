//! Case 1: SQLite. A journaled call against the same call unjournaled and
//! against a bare INSERT of a row of the same size into the same file,
//! interleaved round by round.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, params};
use serde_json::{Value, json};
use tinyagents_tools::ToolExecutor;
use tinyagents_tools::journal::{CallKey, CallState, Journal};

use crate::stats::Summary;
use crate::tools;

/// What one sample times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Contender {
    Journaled8,
    Journaled1,
    ReadOnly8,
    ReadOnly1,
    Plain8,
    Plain1,
    Bare,
}

use Contender::*;

pub const ALL: [Contender; 7] = [Journaled8, Journaled1, ReadOnly8, ReadOnly1, Plain8, Plain1, Bare];

/// The ratios reported: (key, numerator, denominator, bound).
const RATIOS: [(&str, Contender, Contender, Option<f64>); 6] = [
    ("journaled_batch8_vs_bare_insert", Journaled8, Bare, Some(1.5)),
    ("journaled_lone_vs_bare_insert", Journaled1, Bare, None),
    ("read_only_batch8_vs_bare_insert", ReadOnly8, Bare, None),
    ("read_only_lone_vs_bare_insert", ReadOnly1, Bare, None),
    ("journaled_batch8_vs_unjournaled_batch8", Journaled8, Plain8, None),
    ("journaled_lone_vs_unjournaled_lone", Journaled1, Plain1, None),
];

impl Contender {
    pub fn key(self) -> &'static str {
        match self {
            Journaled8 => "journaled_batch8",
            Journaled1 => "journaled_lone",
            ReadOnly8 => "read_only_journaled_batch8",
            ReadOnly1 => "read_only_journaled_lone",
            Plain8 => "unjournaled_batch8",
            Plain1 => "unjournaled_lone",
            Bare => "bare_insert",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Journaled8 => "journaled, batches of 8 (execute_batch)",
            Journaled1 => "journaled, lone calls (execute)",
            ReadOnly8 => "read-only tool journaled, batches of 8",
            ReadOnly1 => "read-only tool journaled, lone calls",
            Plain8 => "unjournaled, batches of 8",
            Plain1 => "unjournaled, lone calls",
            Bare => "bare INSERT, autocommit (the floor)",
        }
    }

    pub fn parse(key: &str) -> Option<Contender> {
        ALL.into_iter().find(|c| c.key() == key)
    }

    fn batch(self) -> usize {
        match self {
            Journaled8 | ReadOnly8 | Plain8 => 8,
            _ => 1,
        }
    }

    fn tool(self) -> &'static str {
        match self {
            ReadOnly8 | ReadOnly1 => tools::READS,
            _ => tools::WRITES,
        }
    }
}

/// How much to time.
pub struct Budget {
    pub rounds: usize,
    /// Calls per sample of a journaled contender and of the bare insert.
    pub durable_calls: usize,
    /// Calls per sample of an unjournaled contender.
    pub plain_calls: usize,
}

impl Budget {
    fn calls(&self, c: Contender) -> usize {
        match c {
            Plain8 | Plain1 => self.plain_calls,
            _ => self.durable_calls,
        }
    }
}

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
    path: PathBuf,
    journaled: ToolExecutor,
    plain: ToolExecutor,
    bare: Arc<Mutex<Connection>>,
    /// The JSON text of an answered journal record of the timed tool.
    record: Arc<str>,
    received_len: usize,
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
                    return Err(format!("bare insert {run_id}/{turn}/{call_id} inserted nothing"));
                }
            }
            Ok(start.elapsed())
        })
        .await
        .map_err(|e| e.to_string())?
    }

    /// The answered records in the journal, and how many there should be.
    fn answered(&self) -> Result<(i64, usize), String> {
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
    fn pragmas(&self) -> Result<(String, i64), String> {
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
/// and a table with the columns, key and indexes of the journal's `calls`.
fn connect(path: &std::path::Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(Duration::from_secs(5))?;
    conn.query_row("PRAGMA journal_mode = WAL", [], |row| {
        row.get::<_, String>(0)
    })?;
    conn.execute_batch(
        "PRAGMA synchronous = FULL;
         CREATE TABLE bare_calls (
             run_id TEXT NOT NULL,
             turn INTEGER NOT NULL,
             call_id TEXT NOT NULL,
             state TEXT NOT NULL,
             approval_id TEXT,
             revision INTEGER NOT NULL,
             record TEXT NOT NULL,
             updated_at INTEGER NOT NULL,
             PRIMARY KEY (run_id, turn, call_id)
         );
         CREATE INDEX bare_calls_approval_id ON bare_calls (approval_id);
         CREATE INDEX bare_calls_state ON bare_calls (state);",
    )?;
    Ok(conn)
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// The case's figures: JSON, and the table for people.
pub struct Report {
    pub json: Value,
    pub table: String,
    pub goal_met: bool,
}

/// Runs every contender `budget.rounds` times, in a rotated order each
/// round.
pub async fn run(budget: &Budget) -> Result<Report, String> {
    let mut bench = Bench::open().await?;
    // Warm-up: every contender once, not counted.
    for c in ALL {
        bench.sample(c, budget.calls(c).min(64)).await?;
    }
    let mut us: Vec<Vec<f64>> = vec![Vec::new(); ALL.len()];
    for r in 0..budget.rounds {
        let mut order = ALL;
        order.rotate_left(r % ALL.len());
        for c in order {
            let calls = budget.calls(c) / c.batch() * c.batch();
            let took = bench.sample(c, calls).await?;
            us[index(c)].push(took.as_secs_f64() * 1e6 / calls as f64);
        }
        eprint!(".");
    }
    eprintln!();
    let (found, expected) = bench.answered()?;
    if found != expected as i64 {
        return Err(format!(
            "the journal holds {found} answered calls, {expected} were made"
        ));
    }
    let (mode, sync) = bench.pragmas()?;
    Ok(report(budget, &bench, &us, (found, mode, sync)))
}

fn index(c: Contender) -> usize {
    ALL.iter().position(|x| *x == c).expect("listed")
}

fn report(budget: &Budget, bench: &Bench, us: &[Vec<f64>], check: (i64, String, i64)) -> Report {
    let mut table = String::new();
    let _ = writeln!(
        table,
        "SQLite {} ({}, synchronous={}), {} rounds; record {} bytes answered / {} received",
        rusqlite::version(),
        check.1,
        check.2,
        budget.rounds,
        bench.record.len(),
        bench.received_len,
    );
    let _ = writeln!(
        table,
        "{:<44} {:>6} {:>10} {:>10} {:>10}",
        "contender", "calls", "µs/call", "q1", "q3"
    );
    let mut per_call = serde_json::Map::new();
    for c in ALL {
        let xs = &us[index(c)];
        let s = Summary::of(xs);
        let _ = writeln!(
            table,
            "{:<44} {:>6} {:>10.2} {:>10.2} {:>10.2}",
            c.label(),
            budget.calls(c),
            s.median,
            s.q1,
            s.q3
        );
        per_call.insert(c.key().to_owned(), s.json(xs, 2));
    }
    let _ = writeln!(
        table,
        "{:<44} {:>6} {:>10} {:>10} {:>10}",
        "ratio, paired by round", "", "median", "q1", "q3"
    );
    let mut ratios = serde_json::Map::new();
    let mut goal_met = true;
    for (key, num, den, bound) in RATIOS {
        let xs: Vec<f64> = us[index(num)]
            .iter()
            .zip(&us[index(den)])
            .map(|(n, d)| n / d)
            .collect();
        let s = Summary::of(&xs);
        let verdict = match bound {
            Some(b) if s.median <= b => format!("  goal <= {b}: met"),
            Some(b) => {
                goal_met = false;
                format!("  goal <= {b}: MISSED")
            }
            None => String::new(),
        };
        let _ = writeln!(
            table,
            "{:<44} {:>6} {:>10.3} {:>10.3} {:>10.3}{verdict}",
            key, "", s.median, s.q1, s.q3
        );
        let mut entry = s.json(&xs, 3);
        if let Some(b) = bound {
            entry["bound"] = json!(b);
            entry["met"] = json!(s.median <= b);
        }
        ratios.insert(key.to_owned(), entry);
    }
    let json = json!({
        "sqlite_version": rusqlite::version(),
        "journal_mode": check.1,
        "synchronous": check.2,
        "file": bench.path.display().to_string(),
        "rounds": budget.rounds,
        "calls_per_sample": {
            "journaled_and_bare": budget.durable_calls,
            "unjournaled": budget.plain_calls,
        },
        "record_bytes": { "answered": bench.record.len(), "received": bench.received_len },
        "journal_rows_answered": check.0,
        "us_per_call": per_call,
        "ratios": ratios,
    });
    Report {
        json,
        table,
        goal_met,
    }
}

/// `--probe KEY CALLS`: the bench set up, then one sample of `CALLS` calls
/// of one contender (for counting syscalls: run it under `strace -c -f`
/// with 0 and with N calls).
pub async fn probe(c: Contender, calls: usize) -> Result<Value, String> {
    let mut bench = Bench::open().await?;
    let calls = calls / c.batch() * c.batch();
    let took = if calls > 0 {
        bench.sample(c, calls).await?
    } else {
        Duration::ZERO
    };
    Ok(json!({
        "probe": c.key(),
        "calls": calls,
        "us_per_call": if calls > 0 { took.as_secs_f64() * 1e6 / calls as f64 } else { 0.0 },
    }))
}
