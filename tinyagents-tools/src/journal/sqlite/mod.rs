//! [`SqliteJournal`]: a journal store in an SQLite file (feature
//! `journal-sqlite`).
//!
//! Each journal has one connection, served by a thread of its own: the
//! async methods queue a request and await its answer, so they never block
//! the runtime. The thread runs every request queued at the time in one
//! transaction (one commit, one sync to disk for all of them), each under a
//! savepoint of its own so that a failing request fails alone; answers are
//! sent once the commit is done. A transaction that writes takes the file's
//! write lock first (`BEGIN IMMEDIATE`), so the compare-and-set of
//! `insert` and `replace` holds between journals and processes sharing
//! the file.

use std::collections::VecDeque;
use std::path::Path;
use std::sync::{Arc, mpsc};
use std::time::Duration;

use async_trait::async_trait;
use rusqlite::{Connection, ErrorCode, OpenFlags, OptionalExtension, Row, params};
use tokio::sync::oneshot;

use super::record::{CallKey, CallRecord, JournalEvent, StandingGrant};
use super::store::{CallQuery, JournalError, JournalStore, SCHEMA_VERSION, Stored};
use crate::ids::RunId;

/// The schema migrations, in order: `MIGRATIONS[i]` takes a journal from
/// schema version `i` to `i + 1` (version 0 is a file with only an empty
/// `journal_meta`).
const MIGRATIONS: &[&str] = &["
    CREATE TABLE calls (
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
    CREATE INDEX calls_approval_id ON calls (approval_id);
    CREATE INDEX calls_state ON calls (state);
    CREATE TABLE grants (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        tool TEXT NOT NULL,
        record TEXT NOT NULL
    );
    CREATE INDEX grants_tool ON grants (tool);
    CREATE TABLE events (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        run_id TEXT NOT NULL,
        record TEXT NOT NULL
    );
    CREATE INDEX events_run_id ON events (run_id, seq);
"];

const _: () = assert!(MIGRATIONS.len() as i64 == SCHEMA_VERSION);

/// How [`SqliteJournal::open_with`] sets up its connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqliteOptions {
    /// True (the default): every commit is synced to disk (`PRAGMA
    /// synchronous = FULL`), so a committed write survives a power loss.
    /// False (`NORMAL`): faster; a power loss may undo the last commits,
    /// never leaving the journal inconsistent.
    pub synchronous_full: bool,
    /// How long a transaction waits for another connection's lock on the
    /// file before failing with [`JournalError::Unavailable`] (default 5 s).
    pub busy_timeout: Duration,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        SqliteOptions {
            synchronous_full: true,
            busy_timeout: Duration::from_secs(5),
        }
    }
}

/// A journal store in an SQLite file, in WAL mode: every promise of the
/// journal across restarts, and between journals and processes that open
/// the same file. Dropping it ends its connection's thread once the
/// requests already queued are answered.
#[derive(Debug)]
pub struct SqliteJournal {
    location: Arc<str>,
    requests: mpsc::Sender<Request>,
}

impl SqliteJournal {
    /// Opens the journal at `path` with the default [`SqliteOptions`],
    /// creating the file (not its directory) when it is missing.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, JournalError> {
        SqliteJournal::open_with(path, SqliteOptions::default())
    }

    /// Opens the journal at `path`, creating the file (not its directory)
    /// when it is missing and bringing its schema up to
    /// [`SCHEMA_VERSION`].
    ///
    /// Fails with [`JournalError::Open`] when the file cannot be opened or
    /// is not an SQLite database, [`JournalError::Foreign`] when it holds
    /// tables of its own and no journal, and [`JournalError::NewerSchema`]
    /// when a newer build wrote it.
    pub fn open_with(path: impl AsRef<Path>, options: SqliteOptions) -> Result<Self, JournalError> {
        let path = path.as_ref();
        let location: Arc<str> = Arc::from(path.display().to_string());
        let conn = connect(path, &options).map_err(|e| open_failure(&location, e))?;
        migrate(&conn, &location)?;
        let (requests, queue) = mpsc::channel();
        let served = Arc::clone(&location);
        std::thread::Builder::new()
            .name("tinyagents-journal-sqlite".to_owned())
            .spawn(move || serve(&conn, &served, &queue))
            .map_err(|e| JournalError::Open {
                location: location.to_string(),
                reason: format!("cannot start its thread: {e}"),
            })?;
        Ok(SqliteJournal { location, requests })
    }

    /// Queues the request `make` builds around a reply channel and awaits
    /// its answer.
    async fn ask<T>(&self, make: impl FnOnce(Reply<T>) -> Request) -> Result<T, JournalError> {
        let (reply, answer) = oneshot::channel();
        let stopped = || unavailable(&self.location, "its connection thread has stopped");
        self.requests.send(make(reply)).map_err(|_| stopped())?;
        answer.await.map_err(|_| stopped())?
    }

    fn corrupt(&self, reason: String) -> JournalError {
        JournalError::Corrupt {
            location: self.location.to_string(),
            reason,
        }
    }

    /// A record's JSON, for its `record` column.
    fn to_json(
        &self,
        what: &dyn std::fmt::Display,
        value: &impl serde::Serialize,
    ) -> Result<String, JournalError> {
        serde_json::to_string(value)
            .map_err(|e| self.corrupt(format!("{what} cannot be written as JSON: {e}")))
    }

    /// A call record read back.
    fn stored(&self, raw: RawCall) -> Result<Stored, JournalError> {
        let key = || format!("call {}/{}/{}", raw.run_id, raw.turn, raw.call_id);
        let record = serde_json::from_str(&raw.record)
            .map_err(|e| self.corrupt(format!("{}: {e}", key())))?;
        let revision = u64::try_from(raw.revision)
            .map_err(|_| self.corrupt(format!("{}: revision {}", key(), raw.revision)))?;
        Ok(Stored { record, revision })
    }

    /// The columns of `record`.
    fn row(&self, record: &CallRecord) -> Result<CallRow, JournalError> {
        Ok(CallRow {
            key: KeyCols::of(&record.key),
            state: record.state.as_str(),
            approval_id: record.approval_id().map(str::to_owned),
            record: self.to_json(&format_args!("call {}", record.key), record)?,
            updated_at: record.updated_at,
        })
    }
}

#[async_trait]
impl JournalStore for SqliteJournal {
    fn location(&self) -> String {
        self.location.to_string()
    }

    async fn get(&self, key: &CallKey) -> Result<Option<Stored>, JournalError> {
        let key = KeyCols::of(key);
        let raw = self.ask(|reply| Request::Get(key, reply)).await?;
        raw.map(|raw| self.stored(raw)).transpose()
    }

    async fn insert(&self, record: &CallRecord) -> Result<Option<Stored>, JournalError> {
        let row = self.row(record)?;
        let existing = self.ask(|reply| Request::Insert(row, reply)).await?;
        existing.map(|raw| self.stored(raw)).transpose()
    }

    async fn replace(&self, record: &CallRecord, revision: u64) -> Result<bool, JournalError> {
        // No record is ever at a revision past i64::MAX.
        let Ok(revision) = i64::try_from(revision) else {
            return Ok(false);
        };
        let row = self.row(record)?;
        self.ask(|reply| Request::Replace(row, revision, reply))
            .await
    }

    async fn find(&self, query: &CallQuery) -> Result<Vec<Stored>, JournalError> {
        let query = FindCols {
            run_id: query.run_id.as_ref().map(|r| r.as_str().to_owned()),
            states: query.states.iter().map(|s| s.as_str()).collect(),
            approval_id: query.approval_id.clone(),
        };
        let rows = self.ask(|reply| Request::Find(query, reply)).await?;
        rows.into_iter().map(|raw| self.stored(raw)).collect()
    }

    async fn put_grant(&self, grant: &StandingGrant) -> Result<(), JournalError> {
        let record = self.to_json(&format_args!("a grant for {}", grant.tool), grant)?;
        let tool = grant.tool.clone();
        self.ask(|reply| Request::PutGrant(tool, record, reply))
            .await
    }

    async fn grants(&self, tool: &str) -> Result<Vec<StandingGrant>, JournalError> {
        let tool = tool.to_owned();
        let records = self.ask(|reply| Request::Grants(tool, reply)).await?;
        records
            .iter()
            .map(|record| {
                serde_json::from_str(record).map_err(|e| self.corrupt(format!("grant: {e}")))
            })
            .collect()
    }

    async fn revoke_grants(&self, tool: Option<&str>) -> Result<u64, JournalError> {
        let tool = tool.map(str::to_owned);
        self.ask(|reply| Request::Revoke(tool, reply)).await
    }

    async fn append_events(&self, events: &[JournalEvent]) -> Result<(), JournalError> {
        if events.is_empty() {
            return Ok(());
        }
        let rows = events
            .iter()
            .map(|event| {
                let record = self.to_json(&format_args!("event {}", event.kind), event)?;
                Ok((event.run_id.as_str().to_owned(), record))
            })
            .collect::<Result<Vec<_>, JournalError>>()?;
        self.ask(|reply| Request::Append(rows, reply)).await
    }

    async fn events(&self, run: Option<&RunId>) -> Result<Vec<JournalEvent>, JournalError> {
        let run = run.map(|r| r.as_str().to_owned());
        let rows = self.ask(|reply| Request::Events(run, reply)).await?;
        rows.into_iter()
            .map(|(seq, record)| {
                let mut event: JournalEvent = serde_json::from_str(&record)
                    .map_err(|e| self.corrupt(format!("event {seq}: {e}")))?;
                event.seq = seq;
                Ok(event)
            })
            .collect()
    }
}

/// Opens the connection and sets its pragmas.
fn connect(path: &Path, options: &SqliteOptions) -> rusqlite::Result<Connection> {
    // No SQLITE_OPEN_URI: the path is a file name, even one starting `file:`.
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags)?;
    conn.busy_timeout(options.busy_timeout)?;
    // Readers never wait for the writer. A file system without shared
    // memory keeps the rollback journal: slower, and just as correct.
    conn.query_row("PRAGMA journal_mode = WAL", [], |row| {
        row.get::<_, String>(0)
    })?;
    conn.execute_batch(if options.synchronous_full {
        "PRAGMA synchronous = FULL"
    } else {
        "PRAGMA synchronous = NORMAL"
    })?;
    conn.set_prepared_statement_cache_capacity(32);
    Ok(conn)
}

/// Brings the schema up to [`SCHEMA_VERSION`]. A current schema is only
/// read; a migration holds the write lock, so two processes opening a new
/// file do not both create it.
fn migrate(conn: &Connection, location: &str) -> Result<(), JournalError> {
    if schema_version(conn, location)? == Some(SCHEMA_VERSION) {
        return Ok(());
    }
    exec(conn, "BEGIN IMMEDIATE").map_err(|e| open_failure(location, e))?;
    let upgraded = upgrade(conn, location);
    let end = if upgraded.is_ok() {
        "COMMIT"
    } else {
        "ROLLBACK"
    };
    let ended = exec(conn, end).map_err(|e| open_failure(location, e));
    upgraded.and(ended)
}

/// Applies the migrations the journal lacks; the write lock is held.
fn upgrade(conn: &Connection, location: &str) -> Result<(), JournalError> {
    let failed = |e| open_failure(location, e);
    let found = match schema_version(conn, location)? {
        Some(version) => version,
        None => {
            conn.execute_batch("CREATE TABLE journal_meta (key TEXT PRIMARY KEY, value TEXT)")
                .map_err(failed)?;
            0
        }
    };
    let applied = usize::try_from(found).unwrap_or(usize::MAX);
    for (done, migration) in MIGRATIONS.iter().enumerate().skip(applied) {
        conn.execute_batch(migration)
            .map_err(|e| JournalError::Open {
                location: location.to_owned(),
                reason: format!("migration to schema version {}: {e}", done + 1),
            })?;
    }
    conn.execute(
        "INSERT INTO journal_meta (key, value) VALUES ('schema_version', ?1)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        [SCHEMA_VERSION.to_string()],
    )
    .map_err(failed)?;
    Ok(())
}

/// The journal's schema version; `None` for a database with no tables.
fn schema_version(conn: &Connection, location: &str) -> Result<Option<i64>, JournalError> {
    let failed = |e| open_failure(location, e);
    let foreign = |reason: String| JournalError::Foreign {
        location: location.to_owned(),
        reason,
    };
    let tables: Vec<String> = conn
        .prepare(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%'
             ORDER BY name",
        )
        .and_then(|mut stmt| {
            let names = stmt.query_map([], |row| row.get(0))?;
            names.collect()
        })
        .map_err(failed)?;
    if tables.is_empty() {
        return Ok(None);
    }
    if !tables.iter().any(|t| t == "journal_meta") {
        return Err(foreign(format!(
            "it has tables of its own ({}) and no journal_meta",
            tables.join(", ")
        )));
    }
    let value: Option<String> = conn
        .query_row(
            "SELECT value FROM journal_meta WHERE key = 'schema_version'",
            [],
            |row| row.get(0),
        )
        .optional()
        .map_err(failed)?;
    let found = value
        .as_deref()
        .and_then(|v| v.parse::<i64>().ok())
        .filter(|v| *v >= 0)
        .ok_or_else(|| foreign(format!("its journal_meta has schema_version {value:?}")))?;
    if found > SCHEMA_VERSION {
        return Err(JournalError::NewerSchema {
            location: location.to_owned(),
            found,
            supported: SCHEMA_VERSION,
        });
    }
    Ok(Some(found))
}

/// An error while opening: a lock held too long is worth retrying, anything
/// else is not.
fn open_failure(location: &str, error: rusqlite::Error) -> JournalError {
    match error.sqlite_error_code() {
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => {
            unavailable(location, &error.to_string())
        }
        _ => JournalError::Open {
            location: location.to_owned(),
            reason: error.to_string(),
        },
    }
}

/// An error of a statement: a value that cannot be read back is corrupt;
/// anything else (a lock held too long, an I/O error) may pass.
fn statement_failure(location: &str, error: rusqlite::Error) -> JournalError {
    let unreadable = matches!(
        error,
        rusqlite::Error::InvalidColumnType(..)
            | rusqlite::Error::FromSqlConversionFailure(..)
            | rusqlite::Error::IntegralValueOutOfRange(..)
    ) || matches!(
        error.sqlite_error_code(),
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase)
    );
    if unreadable {
        JournalError::Corrupt {
            location: location.to_owned(),
            reason: error.to_string(),
        }
    } else {
        unavailable(location, &error.to_string())
    }
}

fn unavailable(location: &str, reason: &str) -> JournalError {
    JournalError::Unavailable {
        location: location.to_owned(),
        reason: reason.to_owned(),
    }
}

/// Runs one statement without parameters, prepared once per connection.
fn exec(conn: &Connection, sql: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(sql)?.execute([]).map(drop)
}

mod thread;

use thread::*;

#[cfg(test)]
mod tests;
