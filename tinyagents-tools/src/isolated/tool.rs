//! [`IsolatedTool`]: a [`Tool`] whose body runs in a worker process.

use async_trait::async_trait;
use serde_json::{Map, Value};

use super::crosses::CrossesProcess;
use super::pool::WorkerPool;
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
