//! The call journal: durable calls.
//!
//! A journal turns the executor's promises into promises that outlive a
//! process. With one ([`ToolExecutorBuilder::journal`](crate::executor::ToolExecutorBuilder::journal)),
//! every call of a run is recorded under its key (run, turn, call id) with
//! its argument fingerprint, through its states ([`CallState`]):
//!
//! - a call already answered is answered from the journal and never run
//!   again, in this process or another, before or after a restart;
//! - the `started` record of a tool that is neither read-only nor
//!   idempotent is durable before its body runs; a call found `started`
//!   with its owner gone (the process died mid-call) is never run again by
//!   itself: it is answered `interrupted` (class fatal, "may have run"),
//!   and the application may settle it ([`Journal::settle`]);
//! - two instances resuming the same run: the database decides which one
//!   runs each call; the other answers from the journal;
//! - a call whose approval is not decided now ends `pending_approval`; its
//!   request waits in the journal until a decision comes, from any
//!   instance ([`Journal::decide`]), and resuming runs exactly the approved
//!   calls.
//!
//! Backends implement [`JournalStore`]: [`MemoryJournal`] (always),
//! SQLite (feature `journal-sqlite`, `sqlite://PATH`) and PostgreSQL
//! (feature `journal-postgres`, `postgres://...`).
//!
//! An adapter keeps its own durable state beside the calls, with the same
//! guarantees, through [`Journal::records`] (JSON values by key, every
//! change a compare-and-set on a revision), and names the instance that
//! works on something with [`new_owner`] (or [`Journal::owner`]) and
//! [`process_gone`]: the MCP server keeps its tasks so.

#[cfg(all(test, any(feature = "journal-sqlite", feature = "journal-postgres")))]
mod fixtures;
mod handle;
mod lifecycle;
mod memory;
mod owner;
#[cfg(feature = "journal-postgres")]
mod postgres;
mod record;
mod recorder;
mod records;
#[cfg(feature = "journal-sqlite")]
mod sqlite;
mod store;
/// A throwaway PostgreSQL server for tests (re-exported by the testkit).
#[cfg(all(feature = "journal-postgres", any(test, feature = "testkit")))]
pub(crate) mod temp_postgres;

pub use handle::{INTERRUPTED, Journal};
pub use memory::MemoryJournal;
#[cfg(feature = "journal-postgres")]
#[cfg_attr(docsrs, doc(cfg(feature = "journal-postgres")))]
pub use postgres::PostgresJournal;
pub use record::{
    ApprovalEntry, CallKey, CallRecord, CallState, JournalAnswer, JournalEvent, StandingGrant,
};
pub use recorder::JournalRecorder;
#[cfg(feature = "journal-sqlite")]
#[cfg_attr(docsrs, doc(cfg(feature = "journal-sqlite")))]
pub use sqlite::{SqliteJournal, SqliteOptions};
pub use store::{CallQuery, JournalError, JournalStore, SCHEMA_VERSION, Stored};

pub use owner::{new_owner, process_gone};
pub use records::{KeptRecord, Records};

pub(crate) use handle::now_ms;
pub(crate) use lifecycle::{Admission, Delivery, RESUMABLE};

impl Journal {
    /// An event subscriber that logs every event of the executor it is
    /// added to into this journal ([`Journal::events`] reads them back).
    pub fn recorder(&self) -> JournalRecorder {
        JournalRecorder::new(std::sync::Arc::clone(self.store()))
    }
}

/// `url` with any password replaced by `***`.
pub(crate) fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let (authority, tail) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    match authority.rsplit_once('@') {
        Some((user_info, host)) => match user_info.split_once(':') {
            Some((user, _)) => format!("{scheme}://{user}:***@{host}{tail}"),
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

/// The time `ms` milliseconds after the Unix epoch.
pub(crate) fn from_ms(ms: i64) -> std::time::SystemTime {
    crate::approval::from_unix_ms(ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_shown_in_an_error_never_carries_its_password() {
        assert_eq!(
            redact_url("postgres://app:s3cret@db:5432/tools"),
            "postgres://app:***@db:5432/tools"
        );
        assert_eq!(redact_url("postgres://db/tools"), "postgres://db/tools");
        assert_eq!(redact_url("sqlite:///tmp/j.db"), "sqlite:///tmp/j.db");
    }
}
