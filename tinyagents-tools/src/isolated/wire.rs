//! The worker protocol: one JSON document per line over the worker's stdin
//! and stdout.
//!
//! The agent writes a [`Request`] line; the worker answers with one
//! [`Reply`] line, prefixed by [`FRAME`] so that anything else the tool
//! prints to stdout is told apart and skipped. A worker announces itself with
//! [`Reply::Ready`] once its limits are set.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{ArgumentProblem, ErrorClass, ToolError};
use crate::ids::ToolCallId;
use crate::output::{ArtifactRef, ContentBlock, ToolOutput};

/// Set (to `1`) in a worker's environment: the process serves tool calls.
pub const WORKER_ENV: &str = "TINYAGENTS_TOOLS_WORKER";
/// The worker's address-space limit in bytes, when set.
pub(crate) const MAX_MEMORY_ENV: &str = "TINYAGENTS_TOOLS_WORKER_MAX_MEMORY";
/// The worker's CPU time limit per call in milliseconds, when set.
pub(crate) const MAX_CPU_ENV: &str = "TINYAGENTS_TOOLS_WORKER_MAX_CPU_MS";

/// Starts every reply line. JSON never holds a raw record separator (it is
/// escaped as `\u001e`), so the marker cannot be forged by a string value.
pub(crate) const FRAME: &str = "\u{1e}tinyagents-worker ";

/// One call sent to a worker.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Request {
    pub tool: String,
    pub call_id: ToolCallId,
    pub arguments: Value,
    #[serde(default)]
    pub injected: Map<String, Value>,
}

/// What a worker sends back.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Reply {
    /// The worker set its limits and waits for calls.
    Ready { pid: u32 },
    /// The tool's output.
    Ok {
        content: Vec<ContentBlock>,
        #[serde(default)]
        structured: Option<Value>,
        #[serde(default)]
        artifacts: Vec<ArtifactRef>,
    },
    /// The tool's error: its class and model-facing message cross, its
    /// source stays in the worker.
    Err {
        class: ErrorClass,
        #[serde(default)]
        panicked: bool,
        #[serde(default)]
        problems: Vec<ArgumentProblem>,
        message: String,
    },
}

impl Reply {
    pub(crate) fn from_result(result: Result<ToolOutput, ToolError>) -> Reply {
        match result {
            Ok(output) => Reply::Ok {
                content: output.content,
                structured: output.structured,
                artifacts: output.artifacts,
            },
            Err(error) => Reply::Err {
                class: error.class(),
                panicked: matches!(error.kind(), crate::error::ErrorKind::Panicked),
                problems: error.problems().to_vec(),
                message: error.message().to_owned(),
            },
        }
    }

    /// The reply as the call's result; `None` for `Ready`.
    pub(crate) fn into_result(self) -> Option<Result<ToolOutput, ToolError>> {
        match self {
            Reply::Ready { .. } => None,
            Reply::Ok {
                content,
                structured,
                artifacts,
            } => Some(Ok(ToolOutput {
                content,
                structured,
                artifacts,
            })),
            Reply::Err {
                class,
                panicked,
                problems,
                message,
            } => Some(Err(if panicked {
                ToolError::panicked()
            } else if !problems.is_empty() {
                ToolError::invalid_arguments(problems).with_class(class)
            } else {
                ToolError::new(class, crate::error::ErrorKind::Tool, message)
            })),
        }
    }

    /// The framed line, newline included.
    pub(crate) fn to_line(&self) -> String {
        let json = serde_json::to_string(self).unwrap_or_else(|_| {
            r#"{"err":{"class":"fatal","message":"the tool produced data it could not encode"}}"#
                .to_owned()
        });
        format!("{FRAME}{json}\n")
    }

    /// The reply in a line of worker output, if the line carries one.
    pub(crate) fn from_line(line: &str) -> Option<Result<Reply, serde_json::Error>> {
        let start = line.find(FRAME)? + FRAME.len();
        Some(serde_json::from_str(line[start..].trim_end()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_is_found_after_text_the_tool_printed_on_the_same_line() {
        let line = format!("partial output{}", Reply::Ready { pid: 7 }.to_line());
        let reply = Reply::from_line(&line).unwrap().unwrap();
        assert!(matches!(reply, Reply::Ready { pid: 7 }));
        assert!(Reply::from_line("plain text from the tool\n").is_none());
    }

    #[test]
    fn a_string_holding_the_marker_cannot_forge_a_reply() {
        let reply = Reply::from_result(Ok(ToolOutput::text(FRAME)));
        let line = reply.to_line();
        assert_eq!(line.matches('\u{1e}').count(), 1);
        let back = Reply::from_line(&line).unwrap().unwrap().into_result();
        assert_eq!(back.unwrap().unwrap(), ToolOutput::text(FRAME));
    }
}
