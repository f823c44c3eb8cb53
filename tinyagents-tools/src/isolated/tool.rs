//! The agent side of an isolated tool, whose body runs in a worker
//! process: [`IsolatedTool`], written by hand; [`IsolatedFn`], what
//! `#[tool(isolated)]` implements for its tool type, and [`InPool`], such a
//! tool run by a pool of the caller's choice instead of the global one.

use async_trait::async_trait;
use serde_json::{Map, Value};

use super::crosses::CrossesProcess;
use super::pool::WorkerPool;
use super::worker::WorkerEntry;
use crate::error::ToolError;
use crate::inject::Inject;
use crate::runtime::ToolRuntime;
use crate::spec::ToolSpec;
use crate::tool::CallResult;
use crate::tool::Shared;
use crate::tool::Tool;

type Sender<S, C> = Box<dyn Fn(&S, &ToolRuntime<C>) -> Result<Value, ToolError> + Send + Sync>;

/// A tool that runs in a worker process, under its spec's memory and CPU
/// bounds ([`ToolSpec::bounds`]).
///
/// The agent side of the tool: it holds the spec (so the registry, the
/// policies and the exports see an ordinary tool), sends each call's
/// arguments and crossing hidden values to a worker of its [`WorkerPool`]
/// as JSON, and turns the answer back into a result. The body itself is
/// registered under the same name in the worker's
/// [`WorkerRegistry`](super::WorkerRegistry).
///
/// A worker that exceeds a bound, crashes or is killed gives the call a
/// classified error (`resource_exhausted` or `crashed`); the executor keeps
/// the call id, other calls go on, the pool starts a replacement. When the
/// executor's timeout fires, the worker is killed.
pub struct IsolatedTool<S = (), C = ()> {
    spec: ToolSpec,
    pool: WorkerPool,
    senders: Vec<(String, Sender<S, C>)>,
}

impl<S, C> std::fmt::Debug for IsolatedTool<S, C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IsolatedTool")
            .field("name", &self.spec.name)
            .field("bounds", &self.spec.bounds)
            .field(
                "injected",
                &self.senders.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl<S: Shared, C: Shared> IsolatedTool<S, C> {
    /// An isolated tool with `spec`, run by the [global](WorkerPool::global)
    /// pool.
    pub fn new(spec: ToolSpec) -> Self {
        IsolatedTool {
            spec,
            pool: WorkerPool::global().clone(),
            senders: Vec::new(),
        }
    }

    /// Runs the tool in `pool` instead.
    pub fn with_pool(mut self, pool: WorkerPool) -> Self {
        self.pool = pool;
        self
    }

    /// Sends the hidden value `T` under `name` with every call; the worker
    /// reads it with [`WorkerCall::injected`](super::WorkerCall::injected).
    /// Only values that can cross a process boundary are accepted.
    pub fn inject<T>(mut self, name: impl Into<String>) -> Self
    where
        T: Inject<S, C> + CrossesProcess,
    {
        let sender: Sender<S, C> = Box::new(|state, runtime| T::inject(state, runtime)?.to_wire());
        self.senders.push((name.into(), sender));
        self
    }

    /// The pool the tool runs in.
    pub fn pool(&self) -> &WorkerPool {
        &self.pool
    }
}

#[async_trait]
impl<S: Shared, C: Shared> Tool<S, C> for IsolatedTool<S, C> {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, state: &S, runtime: &ToolRuntime<C>, arguments: Value) -> CallResult {
        let mut injected = Map::new();
        for (name, send) in &self.senders {
            injected.insert(name.clone(), send(state, runtime)?);
        }
        self.pool
            .run(&self.spec, runtime.call_id(), arguments, injected)
            .await
    }
}

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
