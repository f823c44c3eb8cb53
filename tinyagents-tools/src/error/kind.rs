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
    /// The call was started by a process that stopped before it answered:
    /// the tool may have run, and it is not run again
    /// ([`journal`](crate::journal)).
    Interrupted,
    /// The call journal could not be written or read: the call was not
    /// run (a journaled executor never runs a call unjournaled).
    JournalUnavailable,
    /// The call's key (run, turn, call id) was already used for another
    /// tool or other arguments: the journal keeps the first.
    Conflict,
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
            ErrorKind::Interrupted => "interrupted",
            ErrorKind::JournalUnavailable => "journal_unavailable",
            ErrorKind::Conflict => "conflict",
        }
    }
}

impl ErrorKind {
    /// The kind an answer kept in a journal stands for, from its outcome
    /// word and detail (the policy, limit or resource; the timeout in ms).
    /// What a journal does not keep (argument problems, an injected type)
    /// comes back empty.
    pub(crate) fn from_outcome(outcome: &str, detail: Option<&str>) -> ErrorKind {
        let named = || Cow::Owned(detail.unwrap_or_default().to_owned());
        match outcome {
            "invalid_arguments" => ErrorKind::InvalidArguments {
                problems: Vec::new(),
            },
            "unknown_tool" => ErrorKind::UnknownTool,
            "not_advertised" => ErrorKind::NotAdvertised,
            "denied" => ErrorKind::Denied { policy: named() },
            "limit_exceeded" => ErrorKind::LimitExceeded { limit: named() },
            "timeout" => ErrorKind::Timeout {
                after: Duration::from_millis(detail_ms(detail)),
            },
            "cancelled" => ErrorKind::Cancelled,
            "injection_failed" => ErrorKind::InjectionFailed { type_name: "" },
            "panicked" => ErrorKind::Panicked,
            "artifact_failed" => ErrorKind::ArtifactFailed,
            "resource_exhausted" => ErrorKind::ResourceExhausted { resource: named() },
            "crashed" => ErrorKind::Crashed,
            "invalid_output" => ErrorKind::InvalidOutput,
            "interrupted" => ErrorKind::Interrupted,
            "journal_unavailable" => ErrorKind::JournalUnavailable,
            "conflict" => ErrorKind::Conflict,
            _ => ErrorKind::Tool,
        }
    }

    /// The detail [`from_outcome`](Self::from_outcome) reads back.
    pub(crate) fn detail(&self) -> Option<String> {
        match self {
            ErrorKind::Denied { policy } => Some(policy.to_string()),
            ErrorKind::LimitExceeded { limit } => Some(limit.to_string()),
            ErrorKind::ResourceExhausted { resource } => Some(resource.to_string()),
            ErrorKind::Timeout { after } => Some(after.as_millis().to_string()),
            _ => None,
        }
    }
}

/// A timeout's milliseconds, from a journal's detail.
fn detail_ms(detail: Option<&str>) -> u64 {
    detail.and_then(|d| d.parse().ok()).unwrap_or(0)
}
