//! The call journal: one suite of durable-call checks run against every
//! backend (memory, SQLite, PostgreSQL), the records' JSON form, the bad
//! inputs, and the crash test that kills processes mid-call.

mod backends;
mod crash;
mod example;
mod ledger;
mod readme;
mod suite;
mod tools;
