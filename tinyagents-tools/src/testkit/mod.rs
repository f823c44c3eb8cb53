//! Testing your tools (cargo feature `testkit`).
//!
//! - [`ToolHarness`]: runs a tool through a real [`ToolExecutor`](crate::ToolExecutor)
//!   with the stores, resources, secrets and workspace you give it, so a test
//!   sees exactly what a model would (validation, refusals, middleware,
//!   bounded messages); [`ToolHarness::inject`] builds the same injected
//!   values for calling a `#[tool]` fn directly.
//! - [`FakeTool`]: a tool whose answers a test scripts (text, values,
//!   failures, waits, panics), for testing what surrounds tools: an agent
//!   loop, middleware, a policy; [`Spy`]: any tool, with the arguments of
//!   every call it ran kept.
//! - [`FnTool`]: a tool made of a spec and an async closure, for a body that
//!   reads its runtime (cancellation, secrets, progress) or awaits.
//! - [`BeforeTool`]: a middleware made of a name and a closure.
//! - [`Chunking`], [`chunk_text`], [`chunk_bytes`]: a model's output cut
//!   into the pieces a stream would deliver (fixed sizes, one character or
//!   byte at a time, random lengths from a seed), for testing streaming
//!   code without a provider.
//! - `ScriptedStream` (with the feature `stream` too): the stream a
//!   provider would send for a complete response (its events and
//!   server-sent-event bytes, text and arguments in deltas), or a model's
//!   raw text, fed to a reader in the pieces a [`Chunking`] cuts.
//! - [`EventRecorder`]: an in-line subscriber that keeps every event, with
//!   [`kinds`](EventRecorder::kinds), [`assert_kinds`](EventRecorder::assert_kinds)
//!   and [`assert_order`](EventRecorder::assert_order).
//! - [`ManualClock`]: a time source that moves only when the test advances
//!   it; [`SequentialIds`]: ids numbered in order (`note-0`, `note-1`, ...).
//!
//! Enable it for tests only:
//!
//! ```toml
//! [dev-dependencies]
//! tinyagents-tools = { version = "0.1", features = ["testkit"] }
//! ```

mod before;
mod chunks;
mod clock;
mod fake;
mod fn_tool;
mod harness;
mod ids;
mod recorder;
#[cfg(feature = "stream")]
mod scripted;
mod unavailable;

#[cfg(feature = "journal-postgres")]
#[cfg_attr(docsrs, doc(cfg(feature = "journal-postgres")))]
pub use crate::journal::temp_postgres::TempPostgres;
pub use before::BeforeTool;
pub use chunks::{Chunking, chunk_bytes, chunk_text};
pub use clock::ManualClock;
pub use fake::{FakeTool, Spy};
pub use fn_tool::{FnTool, ToolFuture};
pub use harness::{HarnessError, ToolHarness, ToolHarnessBuilder};
pub use ids::SequentialIds;
pub use recorder::EventRecorder;
#[cfg(feature = "stream")]
#[cfg_attr(docsrs, doc(cfg(feature = "stream")))]
pub use scripted::ScriptedStream;
pub use unavailable::UnavailableJournal;
