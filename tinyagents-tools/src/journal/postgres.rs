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
use tokio_postgres::{NoTls, Row, Transaction};

use super::record::{CallKey, CallRecord, JournalEvent, StandingGrant};
use super::store::{CallQuery, JournalError, JournalStore, SCHEMA_VERSION, Stored};
use crate::ids::RunId;

/// How many connections [`PostgresJournal::connect`] keeps at most.
const DEFAULT_POOL_SIZE: usize = 16;

/// How long opening one connection may take, unless the URL says.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a statement waits for a connection of the pool.
const POOL_TIMEOUT: Duration = Duration::from_secs(30);

/// The advisory lock migrations are applied under.
const MIGRATION_LOCK: i64 = i64::from_be_bytes(*b"tajrnl01");

/// The schema's migrations, oldest first: applying `MIGRATIONS[i]` brings
/// a journal from version `i` to version `i + 1`.
const MIGRATIONS: &[&str] = &[
    // Version 1. Ids sort by their bytes (`COLLATE "C"`), as `CallKey` does.
    r#"
    CREATE TABLE calls (
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
    CREATE INDEX calls_approval_id ON calls (approval_id) WHERE approval_id IS NOT NULL;
    CREATE INDEX calls_state ON calls (state);
    CREATE TABLE grants (
        id     bigserial PRIMARY KEY,
        tool   text NOT NULL,
        record text NOT NULL
    );
    CREATE INDEX grants_tool ON grants (tool);
    CREATE TABLE events (
        seq    bigserial PRIMARY KEY,
        run_id text NOT NULL,
        record text NOT NULL
    );
    CREATE INDEX events_run_id ON events (run_id, seq);
    "#,
];

const _: () = assert!(MIGRATIONS.len() as i64 == SCHEMA_VERSION);

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

    /// Brings the schema to [`SCHEMA_VERSION`], in one transaction under
    /// an advisory lock.
    async fn migrate(&self) -> Result<(), JournalError> {
        let mut client = self
            .pool
            .get()
            .await
            .map_err(|e| self.open_error(pool_reason(&e)))?;
        let tx = client
            .transaction()
            .await
            .map_err(|e| self.open_error(describe(&e)))?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
            .await
            .map_err(|e| self.open_error(describe(&e)))?;
        let found = self.schema_version(&tx).await?;
        if found > SCHEMA_VERSION {
            return Err(JournalError::NewerSchema {
                location: self.location.clone(),
                found,
                supported: SCHEMA_VERSION,
            });
        }
        if found < SCHEMA_VERSION {
            self.apply_migrations(&tx, found).await?;
        }
        tx.commit().await.map_err(|e| self.open_error(describe(&e)))
    }

    /// Applies the migrations after version `found`, and records the new
    /// version.
    async fn apply_migrations(&self, tx: &Transaction<'_>, found: i64) -> Result<(), JournalError> {
        for migration in MIGRATIONS.iter().skip(found as usize) {
            tx.batch_execute(migration)
                .await
                .map_err(|e| self.open_error(describe(&e)))?;
        }
        tx.execute(
            "INSERT INTO journal_meta (key, value) VALUES ('schema_version', $1) \
             ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            &[&SCHEMA_VERSION.to_string()],
        )
        .await
        .map_err(|e| self.open_error(describe(&e)))?;
        Ok(())
    }

    /// The schema version in `journal_meta` (0 for a database without the
    /// journal's tables, creating `journal_meta`).
    async fn schema_version(&self, tx: &Transaction<'_>) -> Result<i64, JournalError> {
        let ours: &[&str] = &["journal_meta", "calls", "grants", "events"];
        let rows = tx
            .query(
                "SELECT table_name::text FROM information_schema.tables \
                 WHERE table_schema = current_schema() AND table_name = ANY($1) \
                 ORDER BY 1",
                &[&ours],
            )
            .await
            .map_err(|e| self.open_error(describe(&e)))?;
        let tables: Vec<String> = rows.iter().map(|row| row.get(0)).collect();
        if !tables.iter().any(|t| t == "journal_meta") {
            if !tables.is_empty() {
                return Err(self.foreign(format!(
                    "it has tables named {} but no journal_meta",
                    tables.join(", ")
                )));
            }
            tx.batch_execute(
                "CREATE TABLE journal_meta (key text PRIMARY KEY, value text NOT NULL)",
            )
            .await
            .map_err(|e| self.open_error(describe(&e)))?;
            return Ok(0);
        }
        let row = tx
            .query_opt(
                "SELECT value FROM journal_meta WHERE key = 'schema_version'",
                &[],
            )
            .await
            .map_err(|e| self.open_error(describe(&e)))?;
        let Some(row) = row else {
            return Err(self.foreign("journal_meta has no schema_version".to_owned()));
        };
        let value: String = row
            .try_get(0)
            .map_err(|e| self.foreign(format!("journal_meta's schema_version: {e}")))?;
        match value.trim().parse::<i64>() {
            Ok(version) if version >= 0 => Ok(version),
            _ => Err(self.foreign(format!(
                "journal_meta's schema_version is {value:?}, not a version"
            ))),
        }
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
}

#[async_trait]
impl JournalStore for PostgresJournal {
    fn location(&self) -> String {
        self.location.clone()
    }

    async fn get(&self, key: &CallKey) -> Result<Option<Stored>, JournalError> {
        let client = self.client().await?;
        let statement = client
            .prepare_cached(
                "SELECT run_id, turn, call_id, revision, record FROM calls \
                 WHERE run_id = $1 AND turn = $2 AND call_id = $3",
            )
            .await
            .map_err(|e| self.failed(e))?;
        let row = client
            .query_opt(
                &statement,
                &[
                    &key.run_id.as_str(),
                    &i64::from(key.turn),
                    &key.call_id.as_str(),
                ],
            )
            .await
            .map_err(|e| self.failed(e))?;
        row.map(|row| self.stored(&row)).transpose()
    }

    async fn insert(&self, record: &CallRecord) -> Result<Option<Stored>, JournalError> {
        let text = self.encode(record, &format!("call {}", record.key))?;
        let client = self.client().await?;
        let statement = client
            .prepare_cached(
                "INSERT INTO calls \
                 (run_id, turn, call_id, state, approval_id, revision, record, updated_at) \
                 VALUES ($1, $2, $3, $4, $5, 1, $6, $7) \
                 ON CONFLICT (run_id, turn, call_id) DO NOTHING",
            )
            .await
            .map_err(|e| self.failed(e))?;
        let inserted = client
            .execute(
                &statement,
                &[
                    &record.key.run_id.as_str(),
                    &i64::from(record.key.turn),
                    &record.key.call_id.as_str(),
                    &record.state.as_str(),
                    &record.approval_id(),
                    &text,
                    &record.updated_at,
                ],
            )
            .await
            .map_err(|e| self.failed(e))?;
        if inserted == 1 {
            return Ok(None);
        }
        drop(client);
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
        let text = self.encode(record, &format!("call {}", record.key))?;
        let client = self.client().await?;
        let statement = client
            .prepare_cached(
                "UPDATE calls SET state = $4, approval_id = $5, revision = revision + 1, \
                 record = $6, updated_at = $7 \
                 WHERE run_id = $1 AND turn = $2 AND call_id = $3 AND revision = $8",
            )
            .await
            .map_err(|e| self.failed(e))?;
        let replaced = client
            .execute(
                &statement,
                &[
                    &record.key.run_id.as_str(),
                    &i64::from(record.key.turn),
                    &record.key.call_id.as_str(),
                    &record.state.as_str(),
                    &record.approval_id(),
                    &text,
                    &record.updated_at,
                    &revision,
                ],
            )
            .await
            .map_err(|e| self.failed(e))?;
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
        let client = self.client().await?;
        let statement = client
            .prepare_cached(&sql)
            .await
            .map_err(|e| self.failed(e))?;
        let rows = client
            .query(&statement, &params)
            .await
            .map_err(|e| self.failed(e))?;
        rows.iter().map(|row| self.stored(row)).collect()
    }

    async fn put_grant(&self, grant: &StandingGrant) -> Result<(), JournalError> {
        let text = self.encode(grant, &format!("a grant for {}", grant.tool))?;
        let client = self.client().await?;
        let statement = client
            .prepare_cached("INSERT INTO grants (tool, record) VALUES ($1, $2)")
            .await
            .map_err(|e| self.failed(e))?;
        client
            .execute(&statement, &[&grant.tool, &text])
            .await
            .map_err(|e| self.failed(e))?;
        Ok(())
    }

    async fn grants(&self, tool: &str) -> Result<Vec<StandingGrant>, JournalError> {
        let client = self.client().await?;
        let statement = client
            .prepare_cached("SELECT id, record FROM grants WHERE tool = $1 ORDER BY id")
            .await
            .map_err(|e| self.failed(e))?;
        let rows = client
            .query(&statement, &[&tool])
            .await
            .map_err(|e| self.failed(e))?;
        rows.iter()
            .map(|row| {
                let id: i64 = self.column(row, 0)?;
                let text: String = self.column(row, 1)?;
                self.decode(&text, &format!("grant {id}"))
            })
            .collect()
    }

    async fn revoke_grants(&self, tool: Option<&str>) -> Result<u64, JournalError> {
        let client = self.client().await?;
        let revoked = match tool {
            Some(tool) => {
                let statement = client
                    .prepare_cached("DELETE FROM grants WHERE tool = $1")
                    .await
                    .map_err(|e| self.failed(e))?;
                client.execute(&statement, &[&tool]).await
            }
            None => client.execute("DELETE FROM grants", &[]).await,
        };
        revoked.map_err(|e| self.failed(e))
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
        let client = self.client().await?;
        let rows = match run {
            Some(run) => {
                let statement = client
                    .prepare_cached("SELECT seq, record FROM events WHERE run_id = $1 ORDER BY seq")
                    .await
                    .map_err(|e| self.failed(e))?;
                client.query(&statement, &[&run.as_str()]).await
            }
            None => {
                let statement = client
                    .prepare_cached("SELECT seq, record FROM events ORDER BY seq")
                    .await
                    .map_err(|e| self.failed(e))?;
                client.query(&statement, &[]).await
            }
        }
        .map_err(|e| self.failed(e))?;
        rows.iter()
            .map(|row| {
                let seq: i64 = self.column(row, 0)?;
                let text: String = self.column(row, 1)?;
                let mut event: JournalEvent = self.decode(&text, &format!("event {seq}"))?;
                event.seq = seq;
                Ok(event)
            })
            .collect()
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

/// `text` with every secret replaced by `***`.
fn scrub(secrets: &[String], mut text: String) -> String {
    for secret in secrets.iter().filter(|s| !s.is_empty()) {
        text = text.replace(secret.as_str(), "***");
    }
    text
}

/// `url` with its password replaced by `***` (in the user info, or a
/// `password` parameter), and the passwords as they were written.
fn redact(url: &str) -> (String, Vec<String>) {
    let mut secrets = Vec::new();
    let Some(scheme_end) = url.find("://") else {
        return (redact_key_values(url, &mut secrets), secrets);
    };
    let rest_start = scheme_end + 3;
    let authority_end = url[rest_start..]
        .find(['/', '?'])
        .map_or(url.len(), |i| rest_start + i);
    let authority = &url[rest_start..authority_end];
    let mut redacted = url[..rest_start].to_owned();
    match authority.rfind('@') {
        Some(at) => {
            let userinfo = &authority[..at];
            match userinfo.split_once(':') {
                Some((user, password)) => {
                    secrets.push(password.to_owned());
                    redacted.push_str(user);
                    redacted.push_str(":***");
                }
                None => redacted.push_str(userinfo),
            }
            redacted.push_str(&authority[at..]);
        }
        None => redacted.push_str(authority),
    }
    let rest = &url[authority_end..];
    match rest.split_once('?') {
        Some((path, params)) => {
            redacted.push_str(path);
            redacted.push('?');
            let params: Vec<String> = params
                .split('&')
                .map(|param| match param.split_once('=') {
                    Some(("password", value)) => {
                        secrets.push(value.to_owned());
                        "password=***".to_owned()
                    }
                    _ => param.to_owned(),
                })
                .collect();
            redacted.push_str(&params.join("&"));
        }
        None => redacted.push_str(rest),
    }
    (redacted, secrets)
}

/// A `key=value` connection string with its password's value replaced by
/// `***`.
fn redact_key_values(text: &str, secrets: &mut Vec<String>) -> String {
    let Some(start) = text
        .match_indices("password")
        .map(|(i, _)| i)
        .find(|&i| i == 0 || text[..i].ends_with(char::is_whitespace))
    else {
        return text.to_owned();
    };
    let after_key = text[start + "password".len()..].trim_start();
    let Some(value) = after_key.strip_prefix('=') else {
        return text.to_owned();
    };
    let value = value.trim_start();
    let value_start = text.len() - value.len();
    let value_len = if let Some(quoted) = value.strip_prefix('\'') {
        let mut escaped = false;
        let close = quoted.char_indices().find(|&(_, c)| {
            let closes = c == '\'' && !escaped;
            escaped = c == '\\' && !escaped;
            closes
        });
        close.map_or(value.len(), |(i, _)| i + 2)
    } else {
        value.find(char::is_whitespace).unwrap_or(value.len())
    };
    let secret = &text[value_start..value_start + value_len];
    secrets.push(secret.trim_matches('\'').to_owned());
    format!(
        "{}***{}",
        &text[..value_start],
        &text[value_start + value_len..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_password_of_a_url_is_hidden() {
        let cases = [
            (
                "postgres://app:s3cret@db.internal:5432/agents",
                "postgres://app:***@db.internal:5432/agents",
            ),
            (
                "postgresql://app:p%40ss@db/agents?sslmode=disable&password=other",
                "postgresql://app:***@db/agents?sslmode=disable&password=***",
            ),
            ("postgres://app@db/agents", "postgres://app@db/agents"),
            ("postgres://db", "postgres://db"),
            (
                "host=db user=app password='a b' dbname=agents",
                "host=db user=app password=*** dbname=agents",
            ),
            ("host=db password=s3cret", "host=db password=***"),
        ];
        for (url, expected) in cases {
            assert_eq!(redact(url).0, expected, "{url}");
        }
    }

    #[tokio::test]
    async fn a_closed_port_fails_to_open_without_the_password() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
        let port = listener.local_addr().expect("its address").port();
        drop(listener);
        let url = format!("postgres://app:hunter2-secret@127.0.0.1:{port}/agents");
        let error = PostgresJournal::connect(&url)
            .await
            .expect_err("nothing listens there");
        assert_eq!(error.kind(), "open", "{error}");
        let message = error.to_string();
        assert!(!message.contains("hunter2-secret"), "{message}");
        assert!(
            message.contains(&format!("postgres://app:***@127.0.0.1:{port}/agents")),
            "{message}"
        );
    }
}

#[cfg(test)]
mod server_tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use serde_json::json;

    use super::super::temp_postgres::TempPostgres;
    use super::*;
    use crate::approval::{ApprovalRequest, GrantScope, approval_id};
    use crate::error::ErrorClass;
    use crate::journal::{ApprovalEntry, CallState};

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

    fn record(run: &str, turn: u32, call: &str, state: CallState) -> CallRecord {
        CallRecord {
            key: CallKey::new(run, turn, call),
            tool: "send_email".to_owned(),
            fingerprint: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
                .to_owned(),
            arguments: json!({"to": "ops@example.com", "subject": "weekly report"}),
            state,
            approval: None,
            owner: None,
            lease_until: None,
            answer: None,
            received_at: 1_700_000_000_000,
            updated_at: 1_700_000_000_000,
        }
    }

    fn awaiting_approval(run: &str, turn: u32, call: &str) -> CallRecord {
        let mut record = record(run, turn, call, CallState::AwaitingApproval);
        let request = ApprovalRequest {
            run_id: record.key.run_id.clone(),
            turn,
            call_id: record.key.call_id.clone(),
            tool: record.tool.clone(),
            arguments: record.arguments.clone(),
            fingerprint: record.fingerprint.clone(),
            reasons: Vec::new(),
            expires_at: None,
        };
        record.approval = Some(ApprovalEntry {
            id: approval_id(&record.key.run_id, turn, &record.key.call_id),
            request,
            decision: None,
            record: None,
        });
        record
    }

    fn event(seq_hint: u32, run: &str, kind: &str) -> JournalEvent {
        JournalEvent {
            seq: 0,
            kind: kind.to_owned(),
            run_id: run.into(),
            thread_id: "thread-1".into(),
            call_id: format!("call-{seq_hint}").into(),
            tool: "send_email".to_owned(),
            attempt: 1,
            at: 1_700_000_000_000 + i64::from(seq_hint),
            error_class: None,
            error_kind: None,
            policy: None,
            args_hash: None,
            result_hash: None,
            name: None,
            data: None,
        }
    }

    fn keys(found: &[Stored]) -> Vec<String> {
        found.iter().map(|s| s.record.key.to_string()).collect()
    }

    #[tokio::test]
    async fn a_record_round_trips_and_a_stale_revision_is_refused() {
        let db = Database::fresh().await;
        let journal = journal(&db).await;
        let received = record("run-1", 0, "call-1", CallState::Received);
        assert_eq!(journal.insert(&received).await.unwrap(), None);
        assert_eq!(
            journal.get(&received.key).await.unwrap(),
            Some(Stored {
                record: received.clone(),
                revision: 1
            })
        );

        let mut started = received.clone();
        started.state = CallState::Started;
        started.owner = Some("instance-a".to_owned());
        started.lease_until = Some(1_700_000_060_000);
        assert!(journal.replace(&started, 1).await.unwrap());
        let mut stale = received.clone();
        stale.owner = Some("instance-b".to_owned());
        assert!(!journal.replace(&stale, 1).await.unwrap());
        assert_eq!(
            journal.get(&received.key).await.unwrap(),
            Some(Stored {
                record: started,
                revision: 2
            })
        );

        let absent = record("run-1", 0, "call-2", CallState::Received);
        assert!(!journal.replace(&absent, 1).await.unwrap());
        assert_eq!(journal.get(&absent.key).await.unwrap(), None);
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
        let waiting = awaiting_approval("run-a", 2, "call-x");
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
                &CallQuery::run("run-a")
                    .in_states([CallState::Received, CallState::AwaitingApproval]),
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

    #[tokio::test]
    async fn grants_are_kept_per_tool_and_revoked() {
        let db = Database::fresh().await;
        let journal = journal(&db).await;
        let for_run = StandingGrant {
            tool: "send_email".to_owned(),
            scope: GrantScope::Run {
                run_id: "run-1".into(),
            },
            fingerprint: None,
            at: 1_700_000_000_000,
        };
        let everywhere = StandingGrant {
            tool: "send_email".to_owned(),
            scope: GrantScope::AllRuns,
            fingerprint: Some("ab".repeat(32)),
            at: 1_700_000_000_001,
        };
        let other = StandingGrant {
            tool: "delete_file".to_owned(),
            scope: GrantScope::AllRuns,
            fingerprint: None,
            at: 1_700_000_000_002,
        };
        for grant in [&for_run, &everywhere, &other] {
            journal.put_grant(grant).await.unwrap();
        }
        assert_eq!(
            journal.grants("send_email").await.unwrap(),
            [for_run, everywhere]
        );
        assert!(journal.grants("read_file").await.unwrap().is_empty());

        assert_eq!(journal.revoke_grants(Some("send_email")).await.unwrap(), 2);
        assert!(journal.grants("send_email").await.unwrap().is_empty());
        assert_eq!(journal.grants("delete_file").await.unwrap(), [other]);
        assert_eq!(journal.revoke_grants(None).await.unwrap(), 1);
        assert!(journal.grants("delete_file").await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn events_are_logged_in_order_with_their_seq() {
        let db = Database::fresh().await;
        let journal = journal(&db).await;
        let first = [
            event(1, "run-x", "tool.started"),
            event(2, "run-y", "tool.started"),
        ];
        let second = [event(3, "run-x", "tool.succeeded")];
        journal.append_events(&first).await.unwrap();
        journal.append_events(&[]).await.unwrap();
        journal.append_events(&second).await.unwrap();

        let logged = journal.events(None).await.unwrap();
        let seqs: Vec<i64> = logged.iter().map(|e| e.seq).collect();
        assert_eq!(seqs, [1, 2, 3]);
        let unnumbered: Vec<JournalEvent> = logged
            .into_iter()
            .map(|e| JournalEvent { seq: 0, ..e })
            .collect();
        assert_eq!(unnumbered, [&first[..], &second[..]].concat());

        let of_x = journal.events(Some(&"run-x".into())).await.unwrap();
        let summary: Vec<(i64, &str)> = of_x.iter().map(|e| (e.seq, e.kind.as_str())).collect();
        assert_eq!(summary, [(1, "tool.started"), (3, "tool.succeeded")]);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn of_twenty_replaces_at_one_revision_through_two_pools_exactly_one_wins() {
        let db = Database::fresh().await;
        let instances = [Arc::new(journal(&db).await), Arc::new(journal(&db).await)];
        let received = record("run-1", 0, "call-1", CallState::Received);
        assert_eq!(instances[0].insert(&received).await.unwrap(), None);

        let start = Arc::new(tokio::sync::Barrier::new(20));
        let attempts = (0..20).map(|i| {
            let journal = Arc::clone(&instances[i % 2]);
            let start = Arc::clone(&start);
            let mut claim = received.clone();
            claim.state = CallState::Started;
            claim.owner = Some(format!("instance-{i}"));
            tokio::spawn(async move {
                start.wait().await;
                let won = journal.replace(&claim, 1).await.unwrap();
                (won, claim)
            })
        });
        let mut winners = Vec::new();
        for attempt in attempts.collect::<Vec<_>>() {
            let (won, claim) = attempt.await.unwrap();
            if won {
                winners.push(claim);
            }
        }
        assert_eq!(winners.len(), 1, "{winners:?}");
        assert_eq!(
            instances[1].get(&received.key).await.unwrap(),
            Some(Stored {
                record: winners.remove(0),
                revision: 2
            })
        );
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
}
