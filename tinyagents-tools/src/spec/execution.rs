//! How a tool may run: beside other calls ([`ConcurrencyPolicy`]), as a
//! task of the MCP tasks extension ([`TaskSupport`], [`TaskStart`]), and
//! within which resource bounds ([`ResourceBounds`]).

use std::num::NonZeroUsize;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// How a tool may run beside other calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct ConcurrencyPolicy {
    /// Never overlaps any other call of the batch.
    pub sequential: bool,
    /// At most this many calls of this tool at once.
    pub max_concurrency: Option<NonZeroUsize>,
}

/// Whether a tool may run as a task of the MCP tasks extension
/// (`io.modelcontextprotocol/tasks`): answered at once with a task handle,
/// then polled by the client while the body runs. An MCP server exports it
/// as the tool's `execution.taskSupport`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskSupport {
    /// Never a task: every call is answered in its request.
    #[default]
    Forbidden,
    /// A task for a client that declared the tasks extension; a plain call
    /// for one that did not.
    Optional,
    /// Only a task: a client that did not declare the tasks extension is
    /// refused (`-32021`, a missing client capability).
    Required,
}

impl TaskSupport {
    /// `forbidden`, `optional` or `required`, as MCP writes them.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskSupport::Forbidden => "forbidden",
            TaskSupport::Optional => "optional",
            TaskSupport::Required => "required",
        }
    }

    /// True for [`TaskSupport::Forbidden`], the default.
    pub fn is_forbidden(&self) -> bool {
        *self == TaskSupport::Forbidden
    }
}

/// Where the task of a task-supporting call begins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStart {
    /// Before the body runs: the call is a task from its first line.
    #[default]
    Immediately,
    /// Where the body calls `McpPeer::escalate` (`tinyagents-tools-mcp`):
    /// until then the call runs in its request, and what it asks its client
    /// is asked in input rounds; a body that ends without escalating is
    /// answered in its request.
    OnEscalate,
}

impl TaskStart {
    /// True for [`TaskStart::Immediately`], the default.
    pub fn is_immediately(&self) -> bool {
        *self == TaskStart::Immediately
    }
}

/// The resource bounds a tool declares beyond its timeout.
///
/// Each bound is enforced by the mechanism that runs the tool, never by
/// accounting in the executor: `max_memory` and `max_cpu` by the operating
/// system in an isolated worker process (`setrlimit`, see the module
/// `isolated`, feature `isolated`), `fuel` by the WASM engine. A tool running in the
/// agent's own process cannot be bounded this way; its bounds are declared
/// only (the executor's timeout still applies to every tool).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ResourceBounds {
    /// The largest address space, in bytes, of the worker running the tool.
    pub max_memory: Option<u64>,
    /// The CPU time one call may use, in milliseconds (the OS counts whole
    /// seconds: a limit is rounded up to the next second).
    pub max_cpu_ms: Option<u64>,
    /// The WASM fuel one call may burn (about one unit per instruction).
    pub fuel: Option<u64>,
}

impl ResourceBounds {
    /// No bounds.
    pub const NONE: ResourceBounds = ResourceBounds {
        max_memory: None,
        max_cpu_ms: None,
        fuel: None,
    };

    /// True when no bound is set.
    pub fn is_unlimited(&self) -> bool {
        *self == ResourceBounds::NONE
    }

    setters! {
        /// Sets the memory bound, in bytes.
        with_max_memory(bytes: u64) => max_memory = Some(bytes);
        /// Sets the CPU time bound.
        with_max_cpu(cpu: Duration) =>
            max_cpu_ms = Some(u64::try_from(cpu.as_millis()).unwrap_or(u64::MAX));
        /// Sets the fuel bound.
        with_fuel(fuel: u64) => fuel = Some(fuel);
    }

    /// The CPU time bound as a duration.
    pub fn max_cpu(&self) -> Option<Duration> {
        self.max_cpu_ms.map(Duration::from_millis)
    }
}
