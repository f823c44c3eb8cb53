//! [`WorkerPool`]: worker processes of the application's own binary, reused
//! across calls, replaced when one dies.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde_json::{Map, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;

use super::os::{self, Death};
use super::wire::{MAX_CPU_ENV, MAX_MEMORY_ENV, Reply, Request, WORKER_ENV};
use crate::error::ToolError;
use crate::ids::ToolCallId;
use crate::output::ToolOutput;
use crate::spec::{ResourceBounds, ToolSpec};

/// The longest reply line accepted from a worker.
const MAX_LINE: usize = 64 << 20;

/// The limits a worker runs under: workers are shared only between tools
/// with the same limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Limits {
    max_memory: Option<u64>,
    max_cpu_ms: Option<u64>,
}

impl Limits {
    fn of(bounds: &ResourceBounds) -> Self {
        Limits {
            max_memory: bounds.max_memory,
            max_cpu_ms: bounds.max_cpu_ms,
        }
    }
}

/// Counters of a pool's life, for tests and monitoring.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct PoolStats {
    /// Worker processes started (replacements included).
    pub spawned: u64,
    /// Workers that died during a call (limit, crash or outside kill).
    pub died: u64,
    /// Workers the pool killed because their call was abandoned (timeout,
    /// cancellation).
    pub killed: u64,
    /// Workers idle now, ready for a call.
    pub idle: usize,
}

/// A pool of worker processes running isolated tools.
///
/// Workers are started from `program` (by default the running binary,
/// [`std::env::current_exe`]) with [`WORKER_ENV`](super::WORKER_ENV) set; the
/// program must call [`serve_if_worker`](super::serve_if_worker) first thing
/// in `main`. At most `size` calls run at once; each uses a worker of its own,
/// started with its tool's memory and CPU limits. A worker that dies is
/// replaced in the background; a worker whose call is abandoned (the
/// executor's timeout, a cancellation) is killed, so a blocking loop cannot
/// outlive its call. Cloning shares the pool.
#[derive(Clone)]
pub struct WorkerPool {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for WorkerPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkerPool")
            .field("program", &self.inner.program)
            .field("size", &self.inner.size)
            .field("stats", &self.stats())
            .finish()
    }
}

struct Inner {
    program: Option<PathBuf>,
    size: usize,
    startup: Duration,
    calls: Semaphore,
    idle: Mutex<HashMap<Limits, Vec<Worker>>>,
    spawned: AtomicU64,
    died: AtomicU64,
    killed: AtomicU64,
}

struct Worker {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    stderr: JoinHandle<bool>,
}

impl WorkerPool {
    /// A pool of `size` workers (at least one) started from the running
    /// binary.
    pub fn new(size: usize) -> Self {
        WorkerPool::build(None, size)
    }

    /// A pool of `size` workers started from `program` instead of the running
    /// binary (a dedicated worker binary, or a test's).
    pub fn with_program(program: impl Into<PathBuf>, size: usize) -> Self {
        WorkerPool::build(Some(program.into()), size)
    }

    fn build(program: Option<PathBuf>, size: usize) -> Self {
        let size = size.max(1);
        WorkerPool {
            inner: Arc::new(Inner {
                program,
                size,
                startup: Duration::from_secs(10),
                calls: Semaphore::new(size),
                idle: Mutex::new(HashMap::new()),
                spawned: AtomicU64::new(0),
                died: AtomicU64::new(0),
                killed: AtomicU64::new(0),
            }),
        }
    }

    /// The pool isolated tools use unless given another: the running binary,
    /// as many workers as the machine has cores (at most 8).
    pub fn global() -> &'static WorkerPool {
        static GLOBAL: OnceLock<WorkerPool> = OnceLock::new();
        GLOBAL.get_or_init(|| {
            let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
            WorkerPool::new(cores.min(8))
        })
    }

    /// The pool's counters now.
    pub fn stats(&self) -> PoolStats {
        let idle = self
            .inner
            .idle
            .lock()
            .map_or(0, |idle| idle.values().map(Vec::len).sum());
        PoolStats {
            spawned: self.inner.spawned.load(Ordering::Relaxed),
            died: self.inner.died.load(Ordering::Relaxed),
            killed: self.inner.killed.load(Ordering::Relaxed),
            idle,
        }
    }

    /// Starts `count` workers for tools bounded by `bounds` ahead of their
    /// first call.
    pub async fn prewarm(&self, bounds: &ResourceBounds, count: usize) -> Result<(), ToolError> {
        let limits = Limits::of(bounds);
        for _ in 0..count.min(self.inner.size) {
            let worker = self.inner.spawn(limits).await?;
            self.inner.put_back(limits, worker);
        }
        Ok(())
    }

    /// Runs one call of the tool `spec` in a worker bounded by its
    /// [`bounds`](ToolSpec::bounds): what [`IsolatedTool`](super::IsolatedTool)
    /// does, for code that builds the hidden values itself (`injected`, by
    /// parameter name, each from [`CrossesProcess::to_wire`](super::CrossesProcess::to_wire)).
    pub async fn run(
        &self,
        spec: &ToolSpec,
        call_id: &ToolCallId,
        arguments: Value,
        injected: Map<String, Value>,
    ) -> Result<ToolOutput, ToolError> {
        let request = Request {
            tool: spec.name.as_str().to_owned(),
            call_id: call_id.clone(),
            arguments,
            injected,
        };
        self.call(&spec.bounds, &request).await
    }

    async fn call(
        &self,
        bounds: &ResourceBounds,
        request: &Request,
    ) -> Result<ToolOutput, ToolError> {
        let limits = Limits::of(bounds);
        let mut line = serde_json::to_string(request)?;
        line.push('\n');
        let _permit = self
            .inner
            .calls
            .acquire()
            .await
            .map_err(|_| ToolError::fatal("the worker pool is closed"))?;
        let worker = match self.inner.take_idle(limits) {
            Some(worker) => worker,
            None => self.inner.spawn(limits).await?,
        };
        // Held across the await: dropped early (a timeout, a cancellation),
        // it kills the worker.
        let mut lease = Lease {
            worker: Some(worker),
            inner: &self.inner,
            limits,
        };
        let worker = lease.worker.as_mut().expect("a leased worker");
        let sent = worker.stdin.write_all(line.as_bytes()).await;
        let answer = match sent {
            Ok(()) => worker.next_reply().await,
            Err(_) => None,
        };
        match answer {
            Some(reply) => {
                let worker = lease.worker.take().expect("a leased worker");
                self.inner.put_back(limits, worker);
                reply
            }
            None => {
                let worker = lease.worker.take().expect("a leased worker");
                self.inner.died.fetch_add(1, Ordering::Relaxed);
                self.inner.replace(limits);
                Err(worker.death(bounds).await)
            }
        }
    }
}

/// A worker out of the pool for one call.
struct Lease<'a> {
    worker: Option<Worker>,
    inner: &'a Arc<Inner>,
    limits: Limits,
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        if let Some(mut worker) = self.worker.take() {
            // The call was abandoned mid-way: the worker may be spinning.
            let _ = worker.child.start_kill();
            self.inner.killed.fetch_add(1, Ordering::Relaxed);
            self.inner.replace(self.limits);
            if let Ok(handle) = tokio::runtime::Handle::try_current() {
                handle.spawn(async move {
                    let _ = worker.child.wait().await;
                });
            }
        }
    }
}

impl Inner {
    /// An idle worker with these limits that is still alive (one killed
    /// from outside while idle is dropped here, not handed a call).
    fn take_idle(&self, limits: Limits) -> Option<Worker> {
        let mut idle = self.idle.lock().ok()?;
        let workers = idle.get_mut(&limits)?;
        while let Some(mut worker) = workers.pop() {
            if matches!(worker.child.try_wait(), Ok(None)) {
                return Some(worker);
            }
        }
        None
    }

    fn put_back(&self, limits: Limits, worker: Worker) {
        if let Ok(mut idle) = self.idle.lock() {
            let total: usize = idle.values().map(Vec::len).sum();
            if total < self.size {
                idle.entry(limits).or_default().push(worker);
            }
        }
    }

    /// Starts a replacement worker in the background, so the next call does
    /// not wait for one.
    fn replace(self: &Arc<Self>, limits: Limits) {
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let inner = Arc::clone(self);
        handle.spawn(async move {
            if let Ok(worker) = inner.spawn(limits).await {
                inner.put_back(limits, worker);
            }
        });
    }

    async fn spawn(&self, limits: Limits) -> Result<Worker, ToolError> {
        if std::env::var_os(WORKER_ENV).is_some() {
            return Err(ToolError::fatal(
                "an isolated tool cannot start workers from inside a worker",
            ));
        }
        let bounded = limits.max_memory.is_some() || limits.max_cpu_ms.is_some();
        if bounded && !os::SUPPORTED {
            return Err(ToolError::fatal(
                "the tool's memory and CPU limits cannot be enforced on this platform",
            ));
        }
        let program = match &self.program {
            Some(program) => program.clone(),
            None => std::env::current_exe().map_err(not_started)?,
        };
        let mut command = Command::new(program);
        command
            .env(WORKER_ENV, "1")
            .env_remove(MAX_MEMORY_ENV)
            .env_remove(MAX_CPU_ENV)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if let Some(bytes) = limits.max_memory {
            command.env(MAX_MEMORY_ENV, bytes.to_string());
        }
        if let Some(ms) = limits.max_cpu_ms {
            command.env(MAX_CPU_ENV, ms.to_string());
        }
        let mut child = command.spawn().map_err(not_started)?;
        self.spawned.fetch_add(1, Ordering::Relaxed);
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(ToolError::fatal(
                "the tool's worker process could not be started",
            ));
        };
        let mut worker = Worker {
            child,
            stdin,
            stdout: BufReader::new(stdout),
            stderr: tokio::spawn(watch_stderr(stderr)),
        };
        match tokio::time::timeout(self.startup, worker.next_frame()).await {
            Ok(Some(Ok(Reply::Ready { .. }))) => Ok(worker),
            _ => {
                let _ = worker.child.start_kill();
                Err(ToolError::fatal(
                    "the tool's worker process did not start: its program must call `serve_if_worker` first thing in `main`",
                ))
            }
        }
    }
}

fn not_started(error: std::io::Error) -> ToolError {
    ToolError::fatal("the tool's worker process could not be started").with_source(error)
}

/// Copies a worker's stderr to ours, and tells whether Rust's
/// allocation-failure message went by (what a worker under a memory limit
/// prints before it aborts).
async fn watch_stderr(mut stderr: tokio::process::ChildStderr) -> bool {
    let marker = os::ALLOCATION_FAILED.as_bytes();
    let mut seen = false;
    // The end of the previous read, so a marker split across reads is found.
    let mut window: Vec<u8> = Vec::with_capacity(1024 + marker.len());
    let mut buf = [0u8; 1024];
    while let Ok(n) = stderr.read(&mut buf).await {
        if n == 0 {
            break;
        }
        let _ = std::io::Write::write_all(&mut std::io::stderr(), &buf[..n]);
        window.extend_from_slice(&buf[..n]);
        seen |= window.windows(marker.len()).any(|w| w == marker);
        let keep = window.len().saturating_sub(marker.len() - 1);
        window.drain(..keep);
    }
    seen
}

impl Worker {
    /// The next framed reply, skipping what the tool printed itself; `None`
    /// at end of output (the worker died).
    async fn next_frame(&mut self) -> Option<Result<Reply, serde_json::Error>> {
        let mut line = Vec::new();
        loop {
            line.clear();
            let n = (&mut self.stdout)
                .take(MAX_LINE as u64)
                .read_until(b'\n', &mut line)
                .await
                .ok()?;
            if n == 0 {
                return None;
            }
            if let Some(frame) = Reply::from_line(&String::from_utf8_lossy(&line)) {
                return Some(frame);
            }
        }
    }

    /// The call's result, or `None` when the worker died first.
    async fn next_reply(&mut self) -> Option<Result<ToolOutput, ToolError>> {
        loop {
            match self.next_frame().await? {
                Ok(reply) => {
                    if let Some(result) = reply.into_result() {
                        return Some(result);
                    }
                }
                Err(_) => return None,
            }
        }
    }

    /// Why the worker died, as a classified error.
    async fn death(mut self, bounds: &ResourceBounds) -> ToolError {
        drop(self.stdin);
        let status = match tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await {
            Ok(Ok(status)) => Some(status),
            _ => {
                let _ = self.child.start_kill();
                None
            }
        };
        let allocation_failed = tokio::time::timeout(Duration::from_secs(1), self.stderr)
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default();
        match status.map(|status| os::death(status, allocation_failed)) {
            Some(Death::Cpu) => match bounds.max_cpu_ms {
                Some(ms) => ToolError::resource_exhausted("cpu", format_args!("{ms} ms")),
                None => ToolError::resource_exhausted("cpu", "of the system"),
            },
            Some(Death::Memory) => match bounds.max_memory {
                Some(bytes) if bytes % (1 << 20) == 0 => {
                    ToolError::resource_exhausted("memory", format_args!("{} MiB", bytes >> 20))
                }
                Some(bytes) => {
                    ToolError::resource_exhausted("memory", format_args!("{bytes} bytes"))
                }
                None => ToolError::resource_exhausted("memory", "of the system"),
            },
            _ => ToolError::crashed(),
        }
    }
}
