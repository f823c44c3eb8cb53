//! [`FnTool`]: a tool made of a spec and an async closure, for a test whose
//! tool must do what [`FakeTool`](super::FakeTool) cannot script: read its
//! runtime (cancellation, secrets, run, progress) or await something.

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;

use serde_json::Value;

use crate::error::ToolError;
use crate::output::ToolOutput;
use crate::runtime::ToolRuntime;
use crate::spec::ToolSpec;
use crate::tool::{Shared, Tool};

/// The future an [`FnTool`]'s body returns: it may borrow the call's
/// runtime.
pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = Result<ToolOutput, ToolError>> + Send + 'a>>;

/// A tool whose body is a closure of the call's runtime and arguments,
/// returning a boxed future (`Box::pin(async move { .. })`); its spec is the
/// one given. It ignores the state, so it registers in a registry of any
/// state type; a test that counts its calls wraps it in a
/// [`Spy`](super::Spy).
///
/// ```
/// use serde_json::json;
/// use tinyagents_tools::prelude::*;
/// use tinyagents_tools::testkit::{FnTool, ToolHarness};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let spec = ToolSpec::builder("whoami", "Say the call's id.").build().unwrap();
/// let whoami = FnTool::new(spec, |rt, _| {
///     Box::pin(async move { Ok(ToolOutput::text(rt.call_id().as_str())) })
/// });
/// let harness = ToolHarness::builder(whoami).build().unwrap();
/// assert_eq!(harness.call_ok(json!({})).await.text(), "call-1");
/// # });
/// ```
pub struct FnTool<F, C = ()> {
    spec: ToolSpec,
    body: F,
    context: PhantomData<fn() -> C>,
}

impl<F, C> FnTool<F, C>
where
    F: for<'a> Fn(&'a ToolRuntime<C>, Value) -> ToolFuture<'a>,
{
    /// A tool with `spec` that answers each call with what `body` makes of
    /// its runtime and arguments (a panic in it is the tool's panic).
    pub fn new(spec: ToolSpec, body: F) -> Self {
        FnTool {
            spec,
            body,
            context: PhantomData,
        }
    }
}

impl<F, C> std::fmt::Debug for FnTool<F, C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FnTool")
            .field("name", &self.spec.name)
            .finish_non_exhaustive()
    }
}

// Written without `#[async_trait]`: the body's future is already boxed, so
// `call` hands it on as it is instead of boxing it a second time.
impl<S, C, F> Tool<S, C> for FnTool<F, C>
where
    S: Shared,
    C: Shared,
    F: for<'a> Fn(&'a ToolRuntime<C>, Value) -> ToolFuture<'a> + Send + Sync + 'static,
{
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'tool, 'state, 'runtime, 'call>(
        &'tool self,
        _: &'state S,
        runtime: &'runtime ToolRuntime<C>,
        arguments: Value,
    ) -> ToolFuture<'call>
    where
        'tool: 'call,
        'state: 'call,
        'runtime: 'call,
        Self: 'call,
    {
        (self.body)(runtime, arguments)
    }
}
