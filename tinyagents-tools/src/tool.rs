//! The [`Tool`] trait: a spec and an async call.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

use crate::error::ToolError;
use crate::output::ToolOutput;
use crate::runtime::ToolRuntime;
use crate::spec::ToolSpec;

/// The bound every application state `S` and run context `C` meets: the
/// executor shares them across tasks and threads for as long as it lives, so
/// they are `Send + Sync + 'static`. Every such type implements it already
/// (blanket impl); write `impl<S: Shared, C: Shared>` instead of repeating
/// the three bounds.
pub trait Shared: Send + Sync + 'static {}

impl<T: Send + Sync + 'static + ?Sized> Shared for T {}

/// A tool: a [`ToolSpec`] built once, and an async call.
///
/// `S` is the application state the executor holds; `C` the run's context
/// value. Both default to `()`. `#[tool]` implements this trait for you; a
/// hand-written implementation is just as good:
///
/// ```
/// use std::sync::OnceLock;
/// use serde_json::{json, Value};
/// use tinyagents_tools::*;
///
/// struct Echo;
///
/// #[async_trait]
/// impl Tool for Echo {
///     fn spec(&self) -> &ToolSpec {
///         static SPEC: OnceLock<ToolSpec> = OnceLock::new();
///         SPEC.get_or_init(|| {
///             ToolSpec::builder("echo", "Repeat the text back.")
///                 .input_schema(ToolSchema::from_value(json!({
///                     "type": "object",
///                     "properties": {"text": {"type": "string"}},
///                     "required": ["text"],
///                     "additionalProperties": false
///                 })))
///                 .safety(ToolSafety::pure())
///                 .build()
///                 .expect("a valid spec")
///         })
///     }
///
///     async fn call(&self, _: &(), _: &ToolRuntime, args: Value) -> Result<ToolOutput, ToolError> {
///         Ok(ToolOutput::text(args["text"].as_str().unwrap_or_default()))
///     }
/// }
/// ```
#[async_trait]
pub trait Tool<S = (), C = ()>: Send + Sync + 'static
where
    S: Send + Sync + 'static,
    C: Send + Sync + 'static,
{
    /// The tool's spec. Must return the same spec every time (build it once).
    fn spec(&self) -> &ToolSpec;

    /// Runs one call with validated `arguments` (an object matching the input
    /// schema).
    async fn call(
        &self,
        state: &S,
        runtime: &ToolRuntime<C>,
        arguments: Value,
    ) -> Result<ToolOutput, ToolError>;

    /// Whether this tool never waits: then the executor runs every attempt
    /// through [`call_now`](Tool::call_now), without a future, instead of
    /// [`call`](Tool::call). `#[tool]` says `true` for an `async fn` whose
    /// body has no `.await` (and no macro that might hide one); the default
    /// is `false`.
    fn never_waits(&self) -> bool {
        false
    }

    /// Runs one call at once, without a future. The executor calls it only
    /// when [`never_waits`](Tool::never_waits) is `true`, for every attempt,
    /// under the same panic guard, span and events as `call`; it must answer
    /// exactly as `call` would.
    ///
    /// The default, for a tool that waits, runs nothing and answers with a
    /// fatal error that says so.
    fn call_now(
        &self,
        state: &S,
        runtime: &ToolRuntime<C>,
        arguments: Value,
    ) -> Result<ToolOutput, ToolError> {
        let _ = (state, runtime, arguments);
        Err(ToolError::fatal(format!(
            "tool `{}` waits: it answers through `call`, not `call_now`",
            self.spec().name
        )))
    }
}

#[async_trait]
impl<S, C, T> Tool<S, C> for Arc<T>
where
    S: Send + Sync + 'static,
    C: Send + Sync + 'static,
    T: Tool<S, C> + ?Sized,
{
    fn spec(&self) -> &ToolSpec {
        (**self).spec()
    }

    async fn call(
        &self,
        state: &S,
        runtime: &ToolRuntime<C>,
        arguments: Value,
    ) -> Result<ToolOutput, ToolError> {
        (**self).call(state, runtime, arguments).await
    }

    fn never_waits(&self) -> bool {
        (**self).never_waits()
    }

    fn call_now(
        &self,
        state: &S,
        runtime: &ToolRuntime<C>,
        arguments: Value,
    ) -> Result<ToolOutput, ToolError> {
        (**self).call_now(state, runtime, arguments)
    }
}
