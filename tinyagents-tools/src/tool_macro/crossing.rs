//! What `#[tool(isolated)]` generates uses to send hidden values into a
//! worker and read them back there.

use std::marker::PhantomData;

use serde_json::Value;

use crate::error::ToolError;
use crate::isolated::{CrossesProcess, WorkerCall};

/// Fails to compile, at the parameter type the generated code names, when
/// `T` cannot cross into a worker process (with [`CrossesProcess`]'s
/// message).
pub fn assert_crosses<T: CrossesProcess>() {}

/// Sends and receives a hidden value of type `T`, by autoref
/// specialization, so that a type that cannot cross is reported once, by
/// [`assert_crosses`], not again at every use.
pub struct CrossProbe<T>(PhantomData<fn() -> T>);

impl<T> CrossProbe<T> {
    /// A probe for `T`.
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        CrossProbe(PhantomData)
    }
}

/// Chosen when `T` crosses.
pub trait Crosses<T> {
    /// The value as JSON, in the agent.
    fn send(&self, value: &T) -> Result<Value, ToolError>;
    /// The value sent under `name`, in the worker.
    fn receive(&self, call: &mut WorkerCall, name: &str) -> Result<T, ToolError>;
}

impl<T: CrossesProcess> Crosses<T> for &CrossProbe<T> {
    fn send(&self, value: &T) -> Result<Value, ToolError> {
        value.to_wire()
    }

    fn receive(&self, call: &mut WorkerCall, name: &str) -> Result<T, ToolError> {
        call.injected(name)
    }
}

/// Chosen when `T` does not cross. A program that picks it never compiles
/// ([`assert_crosses`] requires the bound), so it never runs.
pub trait DoesNotCross<T> {
    /// Refuses.
    fn send(&self, _value: &T) -> Result<Value, ToolError> {
        Err(ToolError::fatal(
            "the value cannot be sent to an isolated tool",
        ))
    }
    /// Refuses.
    fn receive(&self, _call: &mut WorkerCall, _name: &str) -> Result<T, ToolError> {
        Err(ToolError::fatal(
            "the value cannot be sent to an isolated tool",
        ))
    }
}

impl<T> DoesNotCross<T> for CrossProbe<T> {}
