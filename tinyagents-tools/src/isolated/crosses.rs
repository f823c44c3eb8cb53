//! [`CrossesProcess`]: the injected values an isolated tool may receive.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::{ErrorClass, ErrorKind, ToolError};
use crate::ids::{RunId, ThreadId, ToolCallId};
use crate::runtime::Secret;

/// A hidden value that can be sent to an isolated tool's worker process.
///
/// An isolated tool runs in another process, so a hidden parameter must be
/// turned into JSON in the agent (`to_wire`) and back in the worker
/// (`from_wire`). Ids and secrets whose value serializes can; handles to
/// things living in the agent process (stores, state, stream writers,
/// cancellation tokens, the runtime) cannot, and implement nothing here, so
/// asking for one is a compile error at the parameter.
///
/// ```
/// use tinyagents_tools::isolated::IsolatedTool;
/// use tinyagents_tools::{Secret, ToolCallId, ToolSpec};
///
/// let spec = ToolSpec::builder("lookup", "Look it up.").build().unwrap();
/// let tool: IsolatedTool = IsolatedTool::new(spec)
///     .inject::<ToolCallId>("call_id")
///     .inject::<Secret<String>>("api_key");
/// ```
///
/// A store handle stays in the agent process:
///
/// ```compile_fail
/// use tinyagents_tools::isolated::IsolatedTool;
/// use tinyagents_tools::{Store, ToolSpec};
///
/// let spec = ToolSpec::builder("lookup", "Look it up.").build().unwrap();
/// let tool: IsolatedTool = IsolatedTool::new(spec).inject::<Store<Vec<u8>>>("db");
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be injected into an isolated tool",
    label = "this value lives in the agent process and cannot cross into the worker",
    note = "isolated tools run in a worker process: inject only ids, secrets or other types implementing `CrossesProcess`"
)]
pub trait CrossesProcess: Sized {
    /// The value as JSON, in the agent process.
    fn to_wire(&self) -> Result<Value, ToolError>;

    /// The value back from JSON, in the worker.
    fn from_wire(value: Value) -> Result<Self, ToolError>;
}

/// The error for a hidden value that did not survive the crossing. Names the
/// type only, never the value.
pub(crate) fn crossing_failed(type_name: &'static str) -> ToolError {
    ToolError::new(
        ErrorClass::Fatal,
        ErrorKind::InjectionFailed { type_name },
        "the tool could not be given one of its inputs",
    )
}

fn to_wire<T: Serialize>(value: &T) -> Result<Value, ToolError> {
    serde_json::to_value(value).map_err(|_| crossing_failed(std::any::type_name::<T>()))
}

fn from_wire<T: DeserializeOwned>(value: Value) -> Result<T, ToolError> {
    serde_json::from_value(value).map_err(|_| crossing_failed(std::any::type_name::<T>()))
}

macro_rules! crosses_as_json {
    ($($ty:ty),*) => {$(
        impl CrossesProcess for $ty {
            fn to_wire(&self) -> Result<Value, ToolError> {
                to_wire(self)
            }
            fn from_wire(value: Value) -> Result<Self, ToolError> {
                from_wire(value)
            }
        }
    )*};
}

crosses_as_json!(RunId, ThreadId, ToolCallId);

impl<T: Serialize + DeserializeOwned> CrossesProcess for Secret<T> {
    fn to_wire(&self) -> Result<Value, ToolError> {
        to_wire(self.expose())
    }

    fn from_wire(value: Value) -> Result<Self, ToolError> {
        from_wire(value).map(Secret::new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_crosses_and_a_bad_value_names_no_content() {
        let secret = Secret::new("hunter2".to_owned());
        let back = Secret::<String>::from_wire(secret.to_wire().unwrap()).unwrap();
        assert_eq!(back.expose(), "hunter2");

        let error = Secret::<u32>::from_wire(Value::from("hunter2")).unwrap_err();
        assert!(!error.message().contains("hunter2"));
        assert!(matches!(error.kind(), ErrorKind::InjectionFailed { .. }));
    }
}
