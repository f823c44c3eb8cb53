//! [`PostgresJournal`]: the call journal in PostgreSQL, for instances that
//! share runs (feature `journal-postgres`).
//!
//! A call is one row of `calls`, keyed by run, turn and call id, holding its
//! record as JSON text beside the columns it is looked up by (state,
//! approval id). A replacement is one `UPDATE ... WHERE revision = $n`: the
//! database, not process memory, decides which of two instances claims a
//! call. Standing grants live in `grants`, the event log in `events` (its
//! `seq` a `bigserial`). The schema's version is kept in `journal_meta`;
//! migrations run in one transaction under an advisory lock, so instances
//! starting together migrate once.
//!
//! Connections are plain TCP or a unix socket, without TLS.

use std::error::Error as StdError;
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use async_trait::async_trait;
use deadpool_postgres::{
    Client, Manager, ManagerConfig, Pool, PoolError, RecyclingMethod, Runtime, TimeoutType,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio_postgres::types::ToSql;
use tokio_postgres::{NoTls, Row, Statement, Transaction};

use super::record::{CallKey, CallRecord, JournalEvent, StandingGrant};
use super::store::{CallQuery, JournalError, JournalStore, SCHEMA_VERSION, Stored};
use crate::ids::RunId;

/// The values of a statement's `$1`, `$2`, ...
type Params<'a> = [&'a (dyn ToSql + Sync)];

/// How many connections [`PostgresJournal::connect`] keeps at most.
const DEFAULT_POOL_SIZE: usize = 16;

/// How long opening one connection may take, unless the URL says.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a statement waits for a connection of the pool.
const POOL_TIMEOUT: Duration = Duration::from_secs(30);

/// A journal store in a PostgreSQL database, shared by every instance that
/// connects to it; each keeps a pool of connections.
///
/// Opening it creates the journal's tables, or migrates them to this
/// build's [`SCHEMA_VERSION`]; a journal written by a newer build is
/// refused ([`JournalError::NewerSchema`]). A lost connection or an
/// exhausted pool is [`JournalError::Unavailable`] (class retry).
pub struct PostgresJournal {
    pool: Pool,
    location: String,
    secrets: Vec<String>,
}

impl fmt::Debug for PostgresJournal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresJournal")
            .field("location", &self.location)
            .finish_non_exhaustive()
    }
}

impl PostgresJournal {
    /// Opens the journal at `url` (`postgres://user:password@host:port/db`),
    /// with a pool of up to 16 connections.
    pub async fn connect(url: &str) -> Result<Self, JournalError> {
        PostgresJournal::connect_with(url, DEFAULT_POOL_SIZE).await
    }

    /// Opens the journal at `url` with a pool of up to `pool_size`
    /// connections (at least one).
    pub async fn connect_with(url: &str, pool_size: usize) -> Result<Self, JournalError> {
        PostgresJournal::open(url, pool_size, POOL_TIMEOUT).await
    }

    async fn open(url: &str, pool_size: usize, timeout: Duration) -> Result<Self, JournalError> {
        let (location, mut secrets) = redact(url);
        let open_error = |reason: String, secrets: &[String]| JournalError::Open {
            location: location.clone(),
            reason: scrub(secrets, reason),
        };
        let mut config = tokio_postgres::Config::from_str(url)
            .map_err(|e| open_error(describe(&e), &secrets))?;
        if let Some(password) = config.get_password() {
            secrets.push(String::from_utf8_lossy(password).into_owned());
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(pool_size.max(1))
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(timeout))
            .create_timeout(Some(timeout))
            .recycle_timeout(Some(timeout))
            .build()
            .map_err(|e| open_error(e.to_string(), &secrets))?;
        let journal = PostgresJournal {
            pool,
            location,
            secrets,
        };
        journal.migrate().await?;
        Ok(journal)
    }

    async fn client(&self) -> Result<Client, JournalError> {
        self.pool
            .get()
            .await
            .map_err(|e| self.unavailable(pool_reason(&e)))
    }

    fn open_error(&self, reason: String) -> JournalError {
        JournalError::Open {
            location: self.location.clone(),
            reason: scrub(&self.secrets, reason),
        }
    }

    fn foreign(&self, reason: String) -> JournalError {
        JournalError::Foreign {
            location: self.location.clone(),
            reason,
        }
    }

    fn unavailable(&self, reason: String) -> JournalError {
        JournalError::Unavailable {
            location: self.location.clone(),
            reason: scrub(&self.secrets, reason),
        }
    }

    fn failed(&self, error: tokio_postgres::Error) -> JournalError {
        self.unavailable(describe(&error))
    }

    fn corrupt(&self, reason: String) -> JournalError {
        JournalError::Corrupt {
            location: self.location.clone(),
            reason,
        }
    }

    fn encode<T: Serialize>(&self, value: &T, what: &str) -> Result<String, JournalError> {
        serde_json::to_string(value)
            .map_err(|e| self.corrupt(format!("{what} cannot be written as JSON: {e}")))
    }

    fn decode<T: DeserializeOwned>(&self, text: &str, what: &str) -> Result<T, JournalError> {
        serde_json::from_str(text).map_err(|e| self.corrupt(format!("{what}: {e}")))
    }

    fn column<'a, T: tokio_postgres::types::FromSql<'a>>(
        &self,
        row: &'a Row,
        index: usize,
    ) -> Result<T, JournalError> {
        row.try_get(index).map_err(|e| self.corrupt(describe(&e)))
    }

    /// A row of `SELECT run_id, turn, call_id, revision, record FROM calls`.
    fn stored(&self, row: &Row) -> Result<Stored, JournalError> {
        let run_id: String = self.column(row, 0)?;
        let turn: i64 = self.column(row, 1)?;
        let call_id: String = self.column(row, 2)?;
        let revision: i64 = self.column(row, 3)?;
        let text: String = self.column(row, 4)?;
        let what = format!("call {run_id}/{turn}/{call_id}");
        let record: CallRecord = self.decode(&text, &what)?;
        let key_matches = record.key.run_id.as_str() == run_id
            && i64::from(record.key.turn) == turn
            && record.key.call_id.as_str() == call_id;
        if !key_matches {
            return Err(self.corrupt(format!("{what} holds the record of {}", record.key)));
        }
        let revision = u64::try_from(revision)
            .map_err(|_| self.corrupt(format!("{what} is at revision {revision}")))?;
        Ok(Stored { record, revision })
    }

    /// Runs `run` with a connection of the pool and the statement `sql`,
    /// prepared once per connection.
    async fn with_statement<T>(
        &self,
        sql: &str,
        run: impl AsyncFnOnce(&Client, &Statement) -> Result<T, tokio_postgres::Error>,
    ) -> Result<T, JournalError> {
        let client = self.client().await?;
        let statement = client
            .prepare_cached(sql)
            .await
            .map_err(|e| self.failed(e))?;
        run(&client, &statement).await.map_err(|e| self.failed(e))
    }

    /// How many rows the statement `sql` changed.
    async fn execute(&self, sql: &str, params: &Params<'_>) -> Result<u64, JournalError> {
        self.with_statement(sql, async |client, statement| {
            client.execute(statement, params).await
        })
        .await
    }

    /// The rows the query `sql` returns.
    async fn query(&self, sql: &str, params: &Params<'_>) -> Result<Vec<Row>, JournalError> {
        self.with_statement(sql, async |client, statement| {
            client.query(statement, params).await
        })
        .await
    }

    /// Writes `record` with `sql`, an `INSERT` or `UPDATE` of `calls` whose
    /// `$1` to `$7` are the record's columns (key, state, approval id, JSON
    /// text, update time) and whose `$8`, if any, is `revision`; returns how
    /// many rows it changed.
    async fn write_call(
        &self,
        sql: &str,
        record: &CallRecord,
        revision: Option<i64>,
    ) -> Result<u64, JournalError> {
        let text = self.encode(record, &format!("call {}", record.key))?;
        let (run_id, call_id) = (record.key.run_id.as_str(), record.key.call_id.as_str());
        let (turn, state) = (i64::from(record.key.turn), record.state.as_str());
        let approval_id = record.approval_id();
        let mut params: Vec<&(dyn ToSql + Sync)> = vec![
            &run_id,
            &turn,
            &call_id,
            &state,
            &approval_id,
            &text,
            &record.updated_at,
        ];
        if let Some(revision) = &revision {
            params.push(revision);
        }
        self.execute(sql, &params).await
    }

    /// The rows of `sql` (`SELECT id_or_seq, record ...`) decoded, each
    /// named `"{what} {id}"` when it does not parse.
    async fn decoded<T: DeserializeOwned>(
        &self,
        what: &str,
        sql: &str,
        params: &Params<'_>,
    ) -> Result<Vec<(i64, T)>, JournalError> {
        let rows = self.query(sql, params).await?;
        rows.iter()
            .map(|row| {
                let id: i64 = self.column(row, 0)?;
                let text: String = self.column(row, 1)?;
                Ok((id, self.decode(&text, &format!("{what} {id}"))?))
            })
            .collect()
    }
}

#[async_trait]
impl JournalStore for PostgresJournal {
    fn location(&self) -> String {
        self.location.clone()
    }

    async fn get(&self, key: &CallKey) -> Result<Option<Stored>, JournalError> {
        let rows = self
            .query(
                "SELECT run_id, turn, call_id, revision, record FROM calls \
                 WHERE run_id = $1 AND turn = $2 AND call_id = $3",
                &[
                    &key.run_id.as_str(),
                    &i64::from(key.turn),
                    &key.call_id.as_str(),
                ],
            )
            .await?;
        // The key is the table's primary key: one row at most.
        rows.first().map(|row| self.stored(row)).transpose()
    }

    async fn insert(&self, record: &CallRecord) -> Result<Option<Stored>, JournalError> {
        let inserted = self
            .write_call(
                "INSERT INTO calls \
                 (run_id, turn, call_id, state, approval_id, revision, record, updated_at) \
                 VALUES ($1, $2, $3, $4, $5, 1, $6, $7) \
                 ON CONFLICT (run_id, turn, call_id) DO NOTHING",
                record,
                None,
            )
            .await?;
        if inserted == 1 {
            return Ok(None);
        }
        // Records are never deleted: the one in the way is still there.
        match self.get(&record.key).await? {
            Some(existing) => Ok(Some(existing)),
            None => Err(self.unavailable(format!(
                "call {} was neither inserted nor found",
                record.key
            ))),
        }
    }

    async fn replace(&self, record: &CallRecord, revision: u64) -> Result<bool, JournalError> {
        let Ok(revision) = i64::try_from(revision) else {
            return Ok(false);
        };
        let replaced = self
            .write_call(
                "UPDATE calls SET state = $4, approval_id = $5, revision = revision + 1, \
                 record = $6, updated_at = $7 \
                 WHERE run_id = $1 AND turn = $2 AND call_id = $3 AND revision = $8",
                record,
                Some(revision),
            )
            .await?;
        Ok(replaced == 1)
    }

    async fn find(&self, query: &CallQuery) -> Result<Vec<Stored>, JournalError> {
        let run = query.run_id.as_ref().map(RunId::as_str);
        let states: Vec<&str> = query.states.iter().map(|s| s.as_str()).collect();
        let mut clauses = Vec::new();
        let mut params: Vec<&(dyn ToSql + Sync)> = Vec::new();
        if let Some(run) = &run {
            params.push(run);
            clauses.push(format!("run_id = ${}", params.len()));
        }
        if !states.is_empty() {
            params.push(&states);
            clauses.push(format!("state = ANY(${})", params.len()));
        }
        if let Some(approval_id) = &query.approval_id {
            params.push(approval_id);
            clauses.push(format!("approval_id = ${}", params.len()));
        }
        let mut sql = String::from("SELECT run_id, turn, call_id, revision, record FROM calls");
        if !clauses.is_empty() {
            sql.push_str(" WHERE ");
            sql.push_str(&clauses.join(" AND "));
        }
        sql.push_str(" ORDER BY run_id, turn, call_id");
        let rows = self.query(&sql, &params).await?;
        rows.iter().map(|row| self.stored(row)).collect()
    }

    async fn put_grant(&self, grant: &StandingGrant) -> Result<(), JournalError> {
        let text = self.encode(grant, &format!("a grant for {}", grant.tool))?;
        let sql = "INSERT INTO grants (tool, record) VALUES ($1, $2)";
        self.execute(sql, &[&grant.tool, &text]).await?;
        Ok(())
    }

    async fn grants(&self, tool: &str) -> Result<Vec<StandingGrant>, JournalError> {
        let sql = "SELECT id, record FROM grants WHERE tool = $1 ORDER BY id";
        let grants = self.decoded("grant", sql, &[&tool]).await?;
        Ok(grants.into_iter().map(|(_, grant)| grant).collect())
    }

    async fn revoke_grants(&self, tool: Option<&str>) -> Result<u64, JournalError> {
        match tool {
            Some(tool) => {
                let sql = "DELETE FROM grants WHERE tool = $1";
                self.execute(sql, &[&tool]).await
            }
            None => self.execute("DELETE FROM grants", &[]).await,
        }
    }

    async fn append_events(&self, events: &[JournalEvent]) -> Result<(), JournalError> {
        if events.is_empty() {
            return Ok(());
        }
        let texts = events
            .iter()
            .map(|event| self.encode(event, &format!("a {} event", event.kind)))
            .collect::<Result<Vec<_>, _>>()?;
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(|e| self.failed(e))?;
        let statement = tx
            .prepare_cached("INSERT INTO events (run_id, record) VALUES ($1, $2)")
            .await
            .map_err(|e| self.failed(e))?;
        for (event, text) in events.iter().zip(&texts) {
            tx.execute(&statement, &[&event.run_id.as_str(), text])
                .await
                .map_err(|e| self.failed(e))?;
        }
        tx.commit().await.map_err(|e| self.failed(e))
    }

    async fn events(&self, run: Option<&RunId>) -> Result<Vec<JournalEvent>, JournalError> {
        let events = match run {
            Some(run) => {
                let sql = "SELECT seq, record FROM events WHERE run_id = $1 ORDER BY seq";
                self.decoded("event", sql, &[&run.as_str()]).await?
            }
            None => {
                let sql = "SELECT seq, record FROM events ORDER BY seq";
                self.decoded("event", sql, &[]).await?
            }
        };
        Ok(events
            .into_iter()
            .map(|(seq, event)| JournalEvent { seq, ..event })
            .collect())
    }
}

/// An error and its causes, as one line of text.
fn describe(error: &(dyn StdError + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// Why the pool gave no connection.
fn pool_reason(error: &PoolError) -> String {
    match error {
        PoolError::Timeout(TimeoutType::Wait) => {
            "no connection of the pool became free in time".to_owned()
        }
        PoolError::Timeout(TimeoutType::Create) => "connecting timed out".to_owned(),
        PoolError::Timeout(TimeoutType::Recycle) => {
            "checking a pooled connection timed out".to_owned()
        }
        PoolError::Backend(error) => describe(error),
        other => other.to_string(),
    }
}

mod schema;
mod url;

use url::{redact, scrub};

#[cfg(test)]
mod tests;
