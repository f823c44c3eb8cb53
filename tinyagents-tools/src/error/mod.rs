//! Classified tool errors.
//!
//! Every failure a call can meet is a [`ToolError`] with a **class** (what the
//! agent loop should do: retry, let the model repair, or stop) and a **kind**
//! (what happened). Its [`message`](ToolError::message) is written for the
//! model and never carries internals; an optional source error is kept for the
//! application only.

use std::borrow::Cow;
use std::error::Error as StdError;
use std::fmt;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

mod classify;
mod kind;
pub(crate) mod panics;
pub use classify::{ClassifyError, MAX_ERROR_TEXT};
pub use kind::{ErrorClass, ErrorKind};
pub use panics::PanicMessage;

/// One problem with a call's arguments, located by JSON pointer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArgumentProblem {
    /// JSON pointer to the offending value (`""` for the whole object).
    pub pointer: String,
    /// What is wrong, written for the model; never contains a secret or an
    /// injected value.
    pub message: String,
}

impl ArgumentProblem {
    /// A problem at `pointer`.
    pub fn new(pointer: impl Into<String>, message: impl Into<String>) -> Self {
        ArgumentProblem {
            pointer: pointer.into(),
            message: message.into(),
        }
    }

    /// The pointer as a readable field path (`items[2].name`), or `arguments`
    /// for the root.
    pub fn field(&self) -> String {
        if self.pointer.is_empty() || self.pointer == "/" {
            return "arguments".to_owned();
        }
        let mut out = String::new();
        for seg in self.pointer.trim_start_matches('/').split('/') {
            let seg = seg.replace("~1", "/").replace("~0", "~");
            if !seg.is_empty() && seg.bytes().all(|b| b.is_ascii_digit()) {
                out.push('[');
                out.push_str(&seg);
                out.push(']');
            } else {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(&seg);
            }
        }
        out
    }
}

impl fmt::Display for ArgumentProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}", self.field(), self.message)
    }
}

/// A classified error from a tool call.
///
/// Tool authors build one with [`ToolError::retry`], [`ToolError::repair`] or
/// [`ToolError::fatal`]; the executor builds the others.
/// [`message`](ToolError::message) is the model-facing text; `Display` adds
/// the source's text, when there is one, for the application's logs.
///
/// ```
/// use tinyagents_tools::{ToolError, ErrorClass};
/// let e = ToolError::repair("`city` must be a city name, not a country");
/// assert_eq!(e.class(), ErrorClass::Repair);
/// ```
#[derive(Clone)]
pub struct ToolError(Box<ErrorParts>);

/// The parts of a [`ToolError`], boxed: a successful call's
/// `Result<ToolOutput, ToolError>` and every `ToolResult` stay small, and
/// only a failure pays for the allocation (next to its message's).
#[derive(Clone)]
struct ErrorParts {
    class: ErrorClass,
    kind: ErrorKind,
    message: String,
    source: Option<Arc<dyn StdError + Send + Sync>>,
}

impl ToolError {
    /// An error of `class` and `kind` with a model-facing `message`.
    pub fn new(class: ErrorClass, kind: ErrorKind, message: impl Into<String>) -> Self {
        ToolError(Box::new(ErrorParts {
            class,
            kind,
            message: message.into(),
            source: None,
        }))
    }

    /// A transient failure of the tool itself: the same call may succeed later.
    pub fn retry(message: impl Into<String>) -> Self {
        ToolError::new(ErrorClass::Retry, ErrorKind::Tool, message)
    }

    /// A failure the model can fix by calling differently; `message` tells it
    /// how.
    pub fn repair(message: impl Into<String>) -> Self {
        ToolError::new(ErrorClass::Repair, ErrorKind::Tool, message)
    }

    /// A failure that should stop the run.
    pub fn fatal(message: impl Into<String>) -> Self {
        ToolError::new(ErrorClass::Fatal, ErrorKind::Tool, message)
    }

    /// Invalid arguments: a repairable error listing every problem.
    pub fn invalid_arguments(problems: Vec<ArgumentProblem>) -> Self {
        let message = invalid_arguments_message(&problems);
        ToolError::new(
            ErrorClass::Repair,
            ErrorKind::InvalidArguments { problems },
            message,
        )
    }

    /// The called tool does not exist. The message lists no other names.
    pub fn unknown_tool(name: &str) -> Self {
        ToolError::unknown_tool_suggesting(name, None)
    }

    /// The called tool does not exist; when `suggestion` is given (a
    /// registered, advertised name close to `name`), the message asks
    /// "did you mean `suggestion`?" and names no other tool.
    pub fn unknown_tool_suggesting(name: &str, suggestion: Option<&str>) -> Self {
        let shown: String = name.chars().take(64).collect();
        let message = match suggestion {
            Some(close) => format!("there is no tool named `{shown}`; did you mean `{close}`?"),
            None => {
                format!("there is no tool named `{shown}`; call one of the tools you were given")
            }
        };
        ToolError::new(ErrorClass::Repair, ErrorKind::UnknownTool, message)
    }

    /// The tool was not offered this turn.
    pub fn not_advertised(name: &str) -> Self {
        ToolError::new(
            ErrorClass::Repair,
            ErrorKind::NotAdvertised,
            format!(
                "the tool `{name}` is not available right now; call one of the tools you were given"
            ),
        )
    }

    /// A policy refused the call; `reason` is shown to the model.
    pub fn denied(policy: impl Into<Cow<'static, str>>, reason: impl Into<String>) -> Self {
        ToolError::new(
            ErrorClass::Repair,
            ErrorKind::Denied {
                policy: policy.into(),
            },
            reason,
        )
    }

    /// A limit was hit; `class` says whether the model may go on.
    pub fn limit_exceeded(
        class: ErrorClass,
        limit: impl Into<Cow<'static, str>>,
        message: impl Into<String>,
    ) -> Self {
        ToolError::new(
            class,
            ErrorKind::LimitExceeded {
                limit: limit.into(),
            },
            message,
        )
    }

    /// The call timed out after `after`.
    pub fn timeout(after: Duration) -> Self {
        ToolError::new(
            ErrorClass::Retry,
            ErrorKind::Timeout { after },
            format!("the tool did not finish within {} ms", after.as_millis()),
        )
    }

    /// The call was cancelled.
    pub fn cancelled() -> Self {
        ToolError::new(
            ErrorClass::Fatal,
            ErrorKind::Cancelled,
            "the call was cancelled",
        )
    }

    /// The tool panicked. The panic payload is never shown to the model.
    pub fn panicked() -> Self {
        ToolError::new(
            ErrorClass::Fatal,
            ErrorKind::Panicked,
            "the tool failed unexpectedly",
        )
    }

    /// The tool ran but its large output could not be stored; fatal, since
    /// neither a retry nor the model can fix the store. The model is told the
    /// tool ran, so it does not call a mutating tool again.
    pub fn artifact_failed() -> Self {
        ToolError::new(
            ErrorClass::Fatal,
            ErrorKind::ArtifactFailed,
            "the tool ran, but its output was too large to return and could not be stored",
        )
    }

    /// The tool ran out of `resource` (`memory`, `cpu`, `fuel`) and was
    /// stopped. Repairable: the same call would run out again, so the model
    /// is told to ask for less.
    pub fn resource_exhausted(resource: &'static str, limit: impl fmt::Display) -> Self {
        ToolError::new(
            ErrorClass::Repair,
            ErrorKind::ResourceExhausted {
                resource: Cow::Borrowed(resource),
            },
            format!(
                "the tool was stopped: it ran out of {resource} (limit {limit}); call it with a smaller request"
            ),
        )
    }

    /// The tool's output does not match its declared output schema. Fatal,
    /// like a panic: the tool is at fault, and neither a retry nor the
    /// model can fix it. The message names no value from the output; the
    /// mismatches are in the source, for the application.
    pub fn invalid_output() -> Self {
        ToolError::new(
            ErrorClass::Fatal,
            ErrorKind::InvalidOutput,
            "the tool failed: its output did not match its declared output schema",
        )
    }

    /// The process or engine running the tool died without answering. Fatal,
    /// like a panic; nothing about the crash is shown to the model.
    pub fn crashed() -> Self {
        ToolError::new(
            ErrorClass::Fatal,
            ErrorKind::Crashed,
            "the tool stopped unexpectedly",
        )
    }

    /// The call was started by a process that stopped before it answered
    /// ([`journal`](crate::journal)): the tool may have run, and it is not
    /// run again. Fatal: neither a retry nor the model should repeat a
    /// side effect that may have happened.
    pub fn interrupted() -> Self {
        ToolError::new(
            ErrorClass::Fatal,
            ErrorKind::Interrupted,
            "the call was interrupted before it answered; the tool may have run, and it is not run again",
        )
    }

    /// The call journal could not be reached: the call was not run.
    /// Retryable: delivering the call again once the journal is back runs
    /// it (or answers it from the journal).
    pub fn journal_unavailable() -> Self {
        ToolError::new(
            ErrorClass::Retry,
            ErrorKind::JournalUnavailable,
            "the call was not run: its journal is unavailable; try again",
        )
    }

    /// The call's id was already used in this turn for another tool or
    /// other arguments. Fatal: the conversation and the journal disagree.
    pub fn conflict(call_id: &str) -> Self {
        ToolError::new(
            ErrorClass::Fatal,
            ErrorKind::Conflict,
            format!(
                "call id `{call_id}` was already used in this turn with other arguments; the journal keeps the first call and this one was not run"
            ),
        )
    }

    /// Attaches an internal source error, kept for the application and never
    /// shown to the model.
    pub fn with_source(mut self, source: impl StdError + Send + Sync + 'static) -> Self {
        self.0.source = Some(Arc::new(source));
        self
    }

    /// Replaces the class.
    pub fn with_class(mut self, class: ErrorClass) -> Self {
        self.0.class = class;
        self
    }

    /// The class.
    pub fn class(&self) -> ErrorClass {
        self.0.class
    }

    /// The kind.
    pub fn kind(&self) -> &ErrorKind {
        &self.0.kind
    }

    /// The model-facing message.
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// Replaces the model-facing message (used by redaction).
    pub fn set_message(&mut self, message: String) {
        self.0.message = message;
    }

    /// The argument problems, when the kind is
    /// [`ErrorKind::InvalidArguments`].
    pub fn problems(&self) -> &[ArgumentProblem] {
        match &self.0.kind {
            ErrorKind::InvalidArguments { problems } => problems,
            _ => &[],
        }
    }

    /// True when the model may be told and asked to try again.
    pub fn is_repairable(&self) -> bool {
        self.0.class == ErrorClass::Repair
    }
}

/// `head` followed by a `- problem` line per problem.
pub(crate) fn bulleted(mut head: String, problems: &[ArgumentProblem]) -> String {
    for problem in problems {
        let _ = write!(head, "\n- {problem}");
    }
    head
}

fn invalid_arguments_message(problems: &[ArgumentProblem]) -> String {
    match problems {
        [] => "the arguments are invalid".to_owned(),
        [one] => format!("invalid arguments: {one}"),
        many => bulleted(
            format!("invalid arguments ({} problems):", many.len()),
            many,
        ),
    }
}

impl fmt::Debug for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("ToolError");
        d.field("class", &self.0.class)
            .field("kind", &self.0.kind)
            .field("message", &self.0.message);
        if let Some(source) = &self.0.source {
            d.field("source", &format_args!("{source}"));
        }
        d.finish()
    }
}

impl fmt::Display for ToolError {
    /// The model-facing message, then, for the application's logs, the
    /// source's own text when it says more (`the tool could not run: a
    /// resource it needs is not available (cause: the run has no workspace
    /// root)`). The executor never sends this text to the model: it sends
    /// [`message`](ToolError::message).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.message)?;
        if let Some(source) = &self.0.source {
            let cause = source.to_string();
            if !cause.is_empty() && !self.0.message.contains(cause.as_str()) {
                write!(f, " (cause: {cause})")?;
            }
        }
        Ok(())
    }
}

impl StdError for ToolError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.0
            .source
            .as_deref()
            .map(|e| e as &(dyn StdError + 'static))
    }
}

impl PartialEq for ToolError {
    fn eq(&self, other: &Self) -> bool {
        self.0.class == other.0.class
            && self.0.kind == other.0.kind
            && self.0.message == other.0.message
    }
}

impl From<String> for ToolError {
    /// A plain message from a tool is a repairable tool error: the model reads
    /// it and may call differently.
    fn from(message: String) -> Self {
        ToolError::repair(message)
    }
}

impl From<&str> for ToolError {
    fn from(message: &str) -> Self {
        ToolError::repair(message)
    }
}

impl From<std::io::Error> for ToolError {
    /// I/O errors are fatal unless they look transient; the message names the
    /// error kind only (paths and OS text stay in the source).
    fn from(err: std::io::Error) -> Self {
        use std::io::ErrorKind as K;
        let class = match err.kind() {
            K::TimedOut | K::Interrupted | K::WouldBlock | K::ConnectionReset => ErrorClass::Retry,
            K::NotFound | K::PermissionDenied | K::AlreadyExists | K::InvalidInput => {
                ErrorClass::Repair
            }
            _ => ErrorClass::Fatal,
        };
        let message = format!("I/O error: {}", err.kind());
        ToolError::new(class, ErrorKind::Tool, message).with_source(err)
    }
}

impl From<serde_json::Error> for ToolError {
    /// A JSON error inside a tool is fatal (the tool's own data is bad).
    fn from(err: serde_json::Error) -> Self {
        ToolError::fatal("the tool produced data it could not encode").with_source(err)
    }
}

impl From<std::convert::Infallible> for ToolError {
    fn from(never: std::convert::Infallible) -> Self {
        match never {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointer_becomes_a_readable_field_path() {
        assert_eq!(
            ArgumentProblem::new("/items/2/name", "x").field(),
            "items[2].name"
        );
        assert_eq!(ArgumentProblem::new("", "x").field(), "arguments");
        assert_eq!(ArgumentProblem::new("/a~1b", "x").field(), "a/b");
    }

    #[test]
    fn several_problems_are_listed_together() {
        let e = ToolError::invalid_arguments(vec![
            ArgumentProblem::new("/limit", "500 is greater than the maximum 50"),
            ArgumentProblem::new("/query", "is required"),
        ]);
        assert_eq!(
            e.message(),
            "invalid arguments (2 problems):\n- `limit`: 500 is greater than the maximum 50\n- `query`: is required"
        );
        assert_eq!(e.class(), ErrorClass::Repair);
    }
}
