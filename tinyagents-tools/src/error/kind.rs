//! The two words that classify a [`ToolError`](super::ToolError): its
//! [`ErrorClass`] (what the agent loop should do) and its [`ErrorKind`]
//! (what happened).

use std::borrow::Cow;
use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::ArgumentProblem;

/// What the agent loop should do about an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorClass {
    /// Transient: trying the same call again may succeed (the executor may
    /// retry idempotent tools).
    Retry,
    /// The model can fix it: the message says what to change.
    Repair,
    /// The loop must stop: retrying or repairing will not help.
    Fatal,
}

impl ErrorClass {
    /// The class as a short lowercase word (`retry`, `repair`, `fatal`).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorClass::Retry => "retry",
            ErrorClass::Repair => "repair",
            ErrorClass::Fatal => "fatal",
        }
    }
}

impl fmt::Display for ErrorClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The arguments did not parse or did not match the input schema.
    InvalidArguments {
        /// Every problem found, in document order.
        problems: Vec<ArgumentProblem>,
    },
    /// No tool of that name is registered.
    UnknownTool,
    /// The tool exists but was not offered to the model this turn.
    NotAdvertised,
    /// A policy refused the call.
    Denied {
        /// The name of the policy that refused.
        policy: Cow<'static, str>,
    },
    /// A call limit (per turn, run or tool) or a concurrency limit was hit.
    LimitExceeded {
        /// Which limit.
        limit: Cow<'static, str>,
    },
    /// The call ran past its timeout.
    Timeout {
        /// The timeout that expired.
        after: Duration,
    },
    /// The call, or its run, was cancelled.
    Cancelled,
    /// A hidden parameter could not be built (a missing store, secret or
    /// resource).
    InjectionFailed {
        /// The type that could not be injected (for the application only).
        type_name: &'static str,
    },
    /// The tool panicked.
    Panicked,
    /// The tool ran, but its output was too large to return and could not be
    /// stored as an artifact.
    ArtifactFailed,
    /// The tool ran out of a bounded resource (memory, CPU time, WASM fuel)
    /// and was stopped by the mechanism enforcing the bound.
    ResourceExhausted {
        /// Which resource: `memory`, `cpu` or `fuel`.
        resource: Cow<'static, str>,
    },
    /// The process or engine running the tool died without answering (a
    /// crash, an abort, a kill from outside).
    Crashed,
    /// The tool returned a value that does not match its declared output
    /// schema: a fault of the tool, never shown to the model as a success.
    InvalidOutput,
    /// The tool returned an error of its own.
    Tool,
}

impl ErrorKind {
    /// A short stable identifier (`invalid_arguments`, `timeout`, ...), as used
    /// in events.
    pub fn as_str(&self) -> &'static str {
        match self {
            ErrorKind::InvalidArguments { .. } => "invalid_arguments",
            ErrorKind::UnknownTool => "unknown_tool",
            ErrorKind::NotAdvertised => "not_advertised",
            ErrorKind::Denied { .. } => "denied",
            ErrorKind::LimitExceeded { .. } => "limit_exceeded",
            ErrorKind::Timeout { .. } => "timeout",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::InjectionFailed { .. } => "injection_failed",
            ErrorKind::Panicked => "panicked",
            ErrorKind::ArtifactFailed => "artifact_failed",
            ErrorKind::ResourceExhausted { .. } => "resource_exhausted",
            ErrorKind::Crashed => "crashed",
            ErrorKind::InvalidOutput => "invalid_output",
            ErrorKind::Tool => "tool",
        }
    }
}
