//! Isolated tools: native tool bodies run in worker processes of the
//! application's own binary, with memory and CPU limits set by the operating
//! system.
//!
//! A tool that allocates without end or spins in a loop that never awaits
//! would take the agent down or hold a thread forever. Run in a worker, it
//! meets the OS's limits instead: the worker sets `RLIMIT_AS` to the tool's
//! `max_memory` and, before each call, `RLIMIT_CPU` to its `max_cpu` (whole
//! seconds, rounded up). A worker that runs out, crashes or is killed ends
//! only its own call, with a classified error and the call id kept; the pool
//! starts another. The executor's timeout kills the worker too.
//!
//! `#[tool(isolated, max_memory = "256MiB", max_cpu = "2s")]` writes the
//! agent side and the worker body of a tool fn ([`IsolatedFn`],
//! [`WorkerEntry`]); [`IsolatedTool`] and [`WorkerRegistry::tool`] do the
//! same by hand. Three pieces:
//! - in `main`, first thing: [`serve_if_worker`] with a [`WorkerRegistry`] of
//!   the tool bodies, which turns the process into a worker when it was
//!   started as one (the pool sets [`WORKER_ENV`]) and returns at once
//!   otherwise;
//! - in the agent: an [`IsolatedTool`] per tool, registered like any tool;
//!   its spec carries the bounds, [`IsolatedTool::inject`] names the hidden
//!   values that cross (only [`CrossesProcess`] types);
//! - a [`WorkerPool`] (by default [`WorkerPool::global`], the running
//!   binary).
//!
//! Arguments, hidden values and results cross as one JSON document per line
//! over the worker's stdin and stdout. A tool body must not read stdin;
//! what it prints to stdout is skipped, its stderr goes to the agent's.
//!
//! Platforms: Linux and macOS set both limits (macOS accepts `RLIMIT_AS` but
//! its kernel may not enforce it); elsewhere an unbounded isolated tool still
//! runs in a worker, and a bounded one is refused with a fatal error rather
//! than run without its limits.

mod crosses;
mod os;
mod pool;
mod tool;
mod wire;
mod worker;

pub use crosses::CrossesProcess;
pub use pool::{PoolStats, WorkerPool};
pub use tool::{InPool, IsolatedFn, IsolatedTool, run_isolated};
pub use wire::WORKER_ENV;
pub use worker::{WorkerCall, WorkerEntry, WorkerRegistry, serve_if_worker};
