//! The journal's tables in PostgreSQL: versioned migrations, applied under
//! an advisory lock so that instances starting at once do not race.

use super::*;

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

impl PostgresJournal {
    /// Brings the schema to [`SCHEMA_VERSION`], in one transaction under
    /// an advisory lock.
    pub(super) async fn migrate(&self) -> Result<(), JournalError> {
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
    pub(super) async fn apply_migrations(
        &self,
        tx: &Transaction<'_>,
        found: i64,
    ) -> Result<(), JournalError> {
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
    pub(super) async fn schema_version(&self, tx: &Transaction<'_>) -> Result<i64, JournalError> {
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
}
