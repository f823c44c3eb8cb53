//! [`InPool`]: a `#[tool(isolated)]` tool run by a pool of the caller's
//! choice instead of the global one.

use async_trait::async_trait;
use serde_json::{Map, Value};

use super::pool::WorkerPool;
use super::worker::WorkerEntry;
use crate::error::ToolError;
use crate::runtime::ToolRuntime;
use crate::spec::ToolSpec;
use crate::tool::CallResult;
use crate::tool::Shared;
use crate::tool::Tool;

/// The agent side of a tool whose body a worker runs: what
/// `#[tool(isolated)]` implements for its tool type.
pub trait IsolatedFn<S, C>: WorkerEntry {
    /// The tool's spec, bounds included.
    fn isolated_spec() -> &'static ToolSpec;

    /// The call's hidden values as they cross into the worker, by parameter
    /// name (each one's [`CrossesProcess::to_wire`](super::CrossesProcess::to_wire)).
    fn injected(state: &S, runtime: &ToolRuntime<C>) -> Result<Map<String, Value>, ToolError>;
}

/// An isolated tool `T` whose calls run in `pool` rather than in
/// [`WorkerPool::global`]: what `CrunchTool::in_pool(pool)` returns for a
/// `#[tool(isolated)] fn crunch`. Register it like the tool itself.
#[derive(Debug, Clone)]
pub struct InPool<T> {
    tool: T,
    pool: WorkerPool,
}

impl<T> InPool<T> {
    /// `tool`, run by `pool`.
    pub fn new(tool: T, pool: WorkerPool) -> Self {
        InPool { tool, pool }
    }

    /// The tool.
    pub fn tool(&self) -> &T {
        &self.tool
    }

    /// The pool its calls run in.
    pub fn pool(&self) -> &WorkerPool {
        &self.pool
    }
}

/// Runs one call of the isolated tool `T` in `pool`: its hidden values are
/// built and sent with the arguments to a worker bounded by the spec.
pub async fn run_isolated<T, S, C>(
    pool: &WorkerPool,
    state: &S,
    runtime: &ToolRuntime<C>,
    arguments: Value,
) -> CallResult
where
    T: IsolatedFn<S, C>,
{
    let injected = T::injected(state, runtime)?;
    pool.run(T::isolated_spec(), runtime.call_id(), arguments, injected)
        .await
}

#[async_trait]
impl<T, S, C> Tool<S, C> for InPool<T>
where
    T: IsolatedFn<S, C> + Send + Sync,
    S: Shared,
    C: Shared,
{
    fn spec(&self) -> &ToolSpec {
        T::isolated_spec()
    }

    async fn call(&self, state: &S, runtime: &ToolRuntime<C>, arguments: Value) -> CallResult {
        run_isolated::<T, S, C>(&self.pool, state, runtime, arguments).await
    }
}
