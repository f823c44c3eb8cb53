//! The worker side: [`serve_if_worker`] and the [`WorkerRegistry`] of tool
//! bodies a worker can run.

use std::collections::HashMap;
use std::future::Future;
use std::io::{BufRead, Write};
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::time::Duration;

use futures_util::FutureExt;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::crosses::{CrossesProcess, crossing_failed};
use super::os;
use super::wire::{MAX_CPU_ENV, MAX_MEMORY_ENV, Reply, Request, WORKER_ENV};
use crate::error::{ArgumentProblem, ToolError};
use crate::ids::ToolCallId;
use crate::output::ToolOutput;

type Body = Box<dyn Fn(WorkerCall) -> Pin<Box<dyn Future<Output = Result<ToolOutput, ToolError>>>>>;

/// One call as a worker receives it: the validated arguments and the hidden
/// values that crossed from the agent.
#[derive(Debug)]
pub struct WorkerCall {
    call_id: ToolCallId,
    arguments: Value,
    injected: Map<String, Value>,
}

impl WorkerCall {
    /// A call built by hand, for testing a tool body without a worker.
    pub fn new(call_id: ToolCallId, arguments: Value) -> Self {
        WorkerCall {
            call_id,
            arguments,
            injected: Map::new(),
        }
    }

    /// Adds a hidden value, as the agent would send it.
    pub fn with_injected<T: CrossesProcess>(
        mut self,
        name: impl Into<String>,
        value: &T,
    ) -> Result<Self, ToolError> {
        self.injected.insert(name.into(), value.to_wire()?);
        Ok(self)
    }

    /// The call's id, as the agent's executor saw it.
    pub fn call_id(&self) -> &ToolCallId {
        &self.call_id
    }

    /// The arguments (already validated against the schema by the agent).
    pub fn arguments(&self) -> &Value {
        &self.arguments
    }

    /// The arguments as `T`; a mismatch is a repairable argument error.
    pub fn args<T: DeserializeOwned>(&self) -> Result<T, ToolError> {
        T::deserialize(&self.arguments).map_err(|e| {
            ToolError::invalid_arguments(vec![ArgumentProblem::new("", e.to_string())])
        })
    }

    /// The hidden value sent under `name`; missing or malformed is a fatal
    /// injection error naming the type only.
    pub fn injected<T: CrossesProcess>(&mut self, name: &str) -> Result<T, ToolError> {
        let value = self
            .injected
            .remove(name)
            .ok_or_else(|| crossing_failed(std::any::type_name::<T>()))?;
        T::from_wire(value)
    }
}

/// A tool body a worker can run, named like its tool: what `#[tool(isolated)]`
/// generates, and what a hand-written isolated tool may implement.
pub trait WorkerEntry: 'static {
    /// The tool's name (the spec's name).
    const NAME: &'static str;

    /// Runs one call in the worker.
    fn run(call: WorkerCall) -> impl Future<Output = Result<ToolOutput, ToolError>> + 'static;
}

/// The tool bodies a worker process can run, by tool name.
#[derive(Default)]
pub struct WorkerRegistry {
    bodies: HashMap<String, Body>,
}

impl std::fmt::Debug for WorkerRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.bodies.keys()).finish()
    }
}

impl WorkerRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        WorkerRegistry::default()
    }

    /// Adds the body of the tool `name`.
    pub fn tool<F, Fut>(mut self, name: impl Into<String>, body: F) -> Self
    where
        F: Fn(WorkerCall) -> Fut + 'static,
        Fut: Future<Output = Result<ToolOutput, ToolError>> + 'static,
    {
        self.bodies
            .insert(name.into(), Box::new(move |call| Box::pin(body(call))));
        self
    }

    /// Adds a [`WorkerEntry`].
    pub fn entry<E: WorkerEntry>(self) -> Self {
        self.tool(E::NAME, E::run)
    }

    /// Runs one call, catching a panic in the body.
    async fn run(&self, request: Request) -> Result<ToolOutput, ToolError> {
        let Some(body) = self.bodies.get(&request.tool) else {
            return Err(ToolError::fatal(
                "the tool is not available in its worker process",
            ));
        };
        let call = WorkerCall {
            call_id: request.call_id,
            arguments: request.arguments,
            injected: request.injected,
        };
        match AssertUnwindSafe(crate::error::panics::Quiet(body(call)))
            .catch_unwind()
            .await
        {
            Ok(result) => result,
            Err(_) => Err(ToolError::panicked()),
        }
    }
}

/// Turns this process into a tool worker when it was started as one, and
/// returns at once otherwise.
///
/// Call it first thing in `main`, before anything else runs: a worker sets
/// its limits, answers calls on stdin/stdout until the agent closes stdin,
/// and exits without ever returning. `registry` is only called in a worker.
///
/// ```no_run
/// use tinyagents_tools::isolated::{WorkerRegistry, serve_if_worker};
/// use tinyagents_tools::ToolOutput;
///
/// fn main() {
///     serve_if_worker(|| {
///         WorkerRegistry::new().tool("crunch", |call| async move {
///             let n: u64 = call.args::<serde_json::Value>()?["n"].as_u64().unwrap_or(0);
///             Ok(ToolOutput::text((1..=n).sum::<u64>().to_string()))
///         })
///     });
///     // ... the agent itself
/// }
/// ```
pub fn serve_if_worker(registry: impl FnOnce() -> WorkerRegistry) {
    if std::env::var_os(WORKER_ENV).is_none() {
        return;
    }
    let code = match serve(registry()) {
        Ok(()) => 0,
        Err(error) => {
            eprintln!("tinyagents-tools worker: {error}");
            70
        }
    };
    std::process::exit(code);
}

fn env_number(name: &str) -> std::io::Result<Option<u64>> {
    match std::env::var(name) {
        Err(_) => Ok(None),
        Ok(text) => text.parse().map(Some).map_err(|_| {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("bad {name}"))
        }),
    }
}

fn serve(registry: WorkerRegistry) -> std::io::Result<()> {
    // A tool's panic message may hold secrets: it stays out of the worker's
    // stderr (which the agent copies to its own) as it does in-process.
    crate::error::panics::install();
    os::no_core_dumps()?;
    if let Some(bytes) = env_number(MAX_MEMORY_ENV)? {
        os::limit_memory(bytes)?;
    }
    let cpu = env_number(MAX_CPU_ENV)?.map(Duration::from_millis);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()?;
    let stdout = std::io::stdout();
    let reply = |reply: Reply| -> std::io::Result<()> {
        let mut out = stdout.lock();
        out.write_all(reply.to_line().as_bytes())?;
        out.flush()
    };
    reply(Reply::Ready {
        pid: std::process::id(),
    })?;
    let mut line = String::new();
    let mut input = std::io::stdin().lock();
    loop {
        line.clear();
        if input.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let result = match serde_json::from_str::<Request>(&line) {
            Ok(request) => {
                if let Some(cpu) = cpu {
                    os::limit_cpu_from_now(cpu)?;
                }
                runtime.block_on(registry.run(request))
            }
            Err(_) => Err(ToolError::fatal("the worker received a malformed call")),
        };
        reply(Reply::from_result(result))?;
    }
}
