//! The connection's thread: it takes a request, then every request queued
//! behind it, and runs them in one transaction, each under a savepoint,
//! answering each once the commit is known.

use super::*;
use rusqlite::{ToSql, params_from_iter};

/// Where an answer goes.
pub(super) type Reply<T> = oneshot::Sender<Result<T, JournalError>>;

/// A call's key, as its columns.
pub(super) struct KeyCols {
    pub(super) run_id: String,
    pub(super) turn: i64,
    pub(super) call_id: String,
}

impl KeyCols {
    pub(super) fn of(key: &CallKey) -> Self {
        KeyCols {
            run_id: key.run_id.as_str().to_owned(),
            turn: i64::from(key.turn),
            call_id: key.call_id.as_str().to_owned(),
        }
    }
}

/// A call record, as its columns.
pub(super) struct CallRow {
    pub(super) key: KeyCols,
    pub(super) state: &'static str,
    pub(super) approval_id: Option<String>,
    pub(super) record: String,
    pub(super) updated_at: i64,
}

impl CallRow {
    /// The values of `?1` to `?7` in the statements that write a call: key,
    /// state, approval id, record and update time.
    fn columns(&self) -> [&dyn ToSql; 7] {
        [
            &self.key.run_id,
            &self.key.turn,
            &self.key.call_id,
            &self.state,
            &self.approval_id,
            &self.record,
            &self.updated_at,
        ]
    }
}

/// A call record as read, not yet parsed.
pub(super) struct RawCall {
    pub(super) run_id: String,
    pub(super) turn: i64,
    pub(super) call_id: String,
    pub(super) revision: i64,
    pub(super) record: String,
}

/// A [`CallQuery`], as column values.
pub(super) struct FindCols {
    pub(super) run_id: Option<String>,
    pub(super) states: Vec<&'static str>,
    pub(super) approval_id: Option<String>,
}

/// One method call, run by the connection's thread.
pub(super) enum Request {
    Get(KeyCols, Reply<Option<RawCall>>),
    Insert(CallRow, Reply<Option<RawCall>>),
    Replace(CallRow, i64, Reply<bool>),
    Find(FindCols, Reply<Vec<RawCall>>),
    PutGrant(String, String, Reply<()>),
    Grants(String, Reply<Vec<String>>),
    Revoke(Option<String>, Reply<u64>),
    Append(Vec<(String, String)>, Reply<()>),
    Events(Option<String>, Reply<Vec<(i64, String)>>),
}

/// A request that ran in the batch's transaction: given the commit's
/// failure, if any, it sends its answer.
pub(super) type Settle = Box<dyn FnOnce(Option<&str>)>;

/// Sends `result` once the commit is known; a failed commit turns a success
/// into [`JournalError::Unavailable`].
pub(super) fn settle<T: 'static>(
    reply: Reply<T>,
    result: rusqlite::Result<T>,
    location: &str,
) -> Settle {
    let location = location.to_owned();
    let result = result.map_err(|e| statement_failure(&location, e));
    Box::new(move |commit_failure| {
        let answer = match commit_failure {
            Some(reason) if result.is_ok() => Err(unavailable(&location, reason)),
            _ => result,
        };
        // A caller that stopped waiting is no one to report to.
        let _ = reply.send(answer);
    })
}

impl Request {
    pub(super) fn writes(&self) -> bool {
        matches!(
            self,
            Request::Insert(..)
                | Request::Replace(..)
                | Request::PutGrant(..)
                | Request::Revoke(..)
                | Request::Append(..)
        )
    }

    /// Runs the request in the open transaction; a write runs under a
    /// savepoint of its own.
    pub(super) fn run(self, conn: &Connection, location: &str) -> Settle {
        match self {
            Request::Get(key, reply) => settle(reply, get(conn, &key), location),
            Request::Find(query, reply) => settle(reply, find(conn, &query), location),
            Request::Grants(tool, reply) => settle(reply, grants(conn, &tool), location),
            Request::Events(run, reply) => settle(reply, events(conn, run.as_deref()), location),
            Request::Insert(row, reply) => {
                settle(reply, savepoint(conn, || insert(conn, &row)), location)
            }
            Request::Replace(row, revision, reply) => settle(
                reply,
                savepoint(conn, || replace(conn, &row, revision)),
                location,
            ),
            Request::PutGrant(tool, record, reply) => settle(
                reply,
                savepoint(conn, || put_grant(conn, &tool, &record)),
                location,
            ),
            Request::Revoke(tool, reply) => settle(
                reply,
                savepoint(conn, || revoke(conn, tool.as_deref())),
                location,
            ),
            Request::Append(rows, reply) => {
                settle(reply, savepoint(conn, || append(conn, &rows)), location)
            }
        }
    }

    /// Answers the request with `error`, without running it.
    pub(super) fn refuse(self, error: JournalError) {
        fn send<T>(reply: Reply<T>, error: JournalError) {
            // A caller that stopped waiting is no one to report to.
            let _ = reply.send(Err(error));
        }
        match self {
            Request::Get(_, reply) | Request::Insert(_, reply) => send(reply, error),
            Request::Replace(_, _, reply) => send(reply, error),
            Request::Find(_, reply) => send(reply, error),
            Request::PutGrant(_, _, reply) | Request::Append(_, reply) => send(reply, error),
            Request::Grants(_, reply) => send(reply, error),
            Request::Revoke(_, reply) => send(reply, error),
            Request::Events(_, reply) => send(reply, error),
        }
    }
}

/// The connection's thread: takes a request, then every request queued
/// behind it, and runs them in one transaction; ends when the journal is
/// dropped.
pub(super) fn serve(conn: &Connection, location: &str, queue: &mpsc::Receiver<Request>) {
    while let Ok(first) = queue.recv() {
        let mut batch = VecDeque::from([first]);
        batch.extend(queue.try_iter());
        run_batch(conn, location, batch);
    }
}

/// Runs `batch` in one transaction and answers each request after the
/// commit.
pub(super) fn run_batch(conn: &Connection, location: &str, mut batch: VecDeque<Request>) {
    while !batch.is_empty() {
        // Writers take the write lock up front: a deferred transaction that
        // read first could not take it later without failing.
        let begin = if batch.iter().any(Request::writes) {
            "BEGIN IMMEDIATE"
        } else {
            "BEGIN"
        };
        if let Err(e) = exec(conn, begin) {
            let reason = e.to_string();
            for request in batch {
                request.refuse(unavailable(location, &reason));
            }
            return;
        }
        let mut settled = Vec::with_capacity(batch.len());
        while let Some(request) = batch.pop_front() {
            settled.push(request.run(conn, location));
            // Some errors (I/O, a full disk) make SQLite roll the whole
            // transaction back: what ran is lost, the rest goes in a new one.
            if conn.is_autocommit() {
                break;
            }
        }
        let commit = if conn.is_autocommit() {
            Err("the transaction was rolled back".to_owned())
        } else {
            exec(conn, "COMMIT").map_err(|e| e.to_string())
        };
        if commit.is_err() && !conn.is_autocommit() {
            let _ = exec(conn, "ROLLBACK");
        }
        let failure = commit.err();
        for settle in settled {
            settle(failure.as_deref());
        }
    }
}

/// Runs `op` under a savepoint: when it fails, what it wrote is undone and
/// the rest of the transaction stands.
pub(super) fn savepoint<T>(
    conn: &Connection,
    op: impl FnOnce() -> rusqlite::Result<T>,
) -> rusqlite::Result<T> {
    exec(conn, "SAVEPOINT request")?;
    let result = op().and_then(|value| exec(conn, "RELEASE request").map(|()| value));
    if result.is_err() {
        // Fails only when the transaction is gone already.
        let _ = exec(conn, "ROLLBACK TO request").and_then(|()| exec(conn, "RELEASE request"));
    }
    result
}

const CALL_COLUMNS: &str = "run_id, turn, call_id, revision, record";

pub(super) fn raw_call(row: &Row<'_>) -> rusqlite::Result<RawCall> {
    Ok(RawCall {
        run_id: row.get(0)?,
        turn: row.get(1)?,
        call_id: row.get(2)?,
        revision: row.get(3)?,
        record: row.get(4)?,
    })
}

pub(super) fn get(conn: &Connection, key: &KeyCols) -> rusqlite::Result<Option<RawCall>> {
    conn.prepare_cached(
        "SELECT run_id, turn, call_id, revision, record FROM calls
         WHERE run_id = ?1 AND turn = ?2 AND call_id = ?3",
    )?
    .query_row(params![key.run_id, key.turn, key.call_id], raw_call)
    .optional()
}

pub(super) fn insert(conn: &Connection, row: &CallRow) -> rusqlite::Result<Option<RawCall>> {
    let inserted = conn
        .prepare_cached(
            "INSERT INTO calls (run_id, turn, call_id, state, approval_id, revision, record, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, 1, ?6, ?7)
             ON CONFLICT (run_id, turn, call_id) DO NOTHING",
        )?
        .execute(row.columns())?;
    if inserted == 1 {
        return Ok(None);
    }
    // The write lock is held: the record found is the one that won.
    get(conn, &row.key)?
        .ok_or(rusqlite::Error::QueryReturnedNoRows)
        .map(Some)
}

pub(super) fn replace(conn: &Connection, row: &CallRow, revision: i64) -> rusqlite::Result<bool> {
    let replaced = conn
        .prepare_cached(
            "UPDATE calls SET state = ?4, approval_id = ?5, record = ?6, updated_at = ?7,
                revision = revision + 1
             WHERE run_id = ?1 AND turn = ?2 AND call_id = ?3 AND revision = ?8",
        )?
        .execute(params_from_iter(
            row.columns().into_iter().chain([&revision as &dyn ToSql]),
        ))?;
    Ok(replaced == 1)
}

pub(super) fn find(conn: &Connection, query: &FindCols) -> rusqlite::Result<Vec<RawCall>> {
    let mut sql = format!("SELECT {CALL_COLUMNS} FROM calls WHERE 1");
    let mut values: Vec<&str> = Vec::new();
    if let Some(run) = &query.run_id {
        sql.push_str(" AND run_id = ?");
        values.push(run);
    }
    if !query.states.is_empty() {
        let marks = vec!["?"; query.states.len()].join(", ");
        sql.push_str(&format!(" AND state IN ({marks})"));
        values.extend(query.states.iter().copied());
    }
    if let Some(id) = &query.approval_id {
        sql.push_str(" AND approval_id = ?");
        values.push(id);
    }
    // BINARY collation compares UTF-8 bytes, as `str`'s `Ord` does.
    sql.push_str(" ORDER BY run_id, turn, call_id");
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(rusqlite::params_from_iter(values), raw_call)?;
    rows.collect()
}

pub(super) fn put_grant(conn: &Connection, tool: &str, record: &str) -> rusqlite::Result<()> {
    conn.prepare_cached("INSERT INTO grants (tool, record) VALUES (?1, ?2)")?
        .execute(params![tool, record])
        .map(drop)
}

pub(super) fn grants(conn: &Connection, tool: &str) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare_cached("SELECT record FROM grants WHERE tool = ?1 ORDER BY id")?;
    let rows = stmt.query_map([tool], |row| row.get(0))?;
    rows.collect()
}

pub(super) fn revoke(conn: &Connection, tool: Option<&str>) -> rusqlite::Result<u64> {
    let revoked = match tool {
        Some(tool) => conn
            .prepare_cached("DELETE FROM grants WHERE tool = ?1")?
            .execute([tool])?,
        None => conn.prepare_cached("DELETE FROM grants")?.execute([])?,
    };
    Ok(revoked as u64)
}

pub(super) fn append(conn: &Connection, rows: &[(String, String)]) -> rusqlite::Result<()> {
    let mut stmt = conn.prepare_cached("INSERT INTO events (run_id, record) VALUES (?1, ?2)")?;
    for (run_id, record) in rows {
        stmt.execute([run_id, record])?;
    }
    Ok(())
}

pub(super) fn events(conn: &Connection, run: Option<&str>) -> rusqlite::Result<Vec<(i64, String)>> {
    let row = |row: &Row<'_>| -> rusqlite::Result<(i64, String)> { Ok((row.get(0)?, row.get(1)?)) };
    match run {
        Some(run) => {
            let mut stmt = conn
                .prepare_cached("SELECT seq, record FROM events WHERE run_id = ?1 ORDER BY seq")?;
            let rows = stmt.query_map([run], row)?;
            rows.collect()
        }
        None => {
            let mut stmt = conn.prepare_cached("SELECT seq, record FROM events ORDER BY seq")?;
            let rows = stmt.query_map([], row)?;
            rows.collect()
        }
    }
}
