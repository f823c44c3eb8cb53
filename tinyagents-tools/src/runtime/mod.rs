//! The run a call belongs to ([`RunContext`], and [`Ctx`], its context value
//! as a tool takes it) and the per-call handle a tool receives
//! ([`ToolRuntime`]).
//!
//! # Why tools get shared handles, not `&mut RunContext`
//!
//! A batch may run several calls of one run at once. Handing each of them
//! `&mut RunContext` would force the batch to run serially (only one `&mut` can
//! exist) or would need `unsafe`. Instead the run is an `Arc`-shared,
//! immutable-by-default value: every call sees the same ids, stores, secrets
//! and context, cheaply cloned. State that tools change lives behind the
//! synchronisation the application picks (a `Mutex` or atomics inside the
//! context type or a store), so concurrent calls stay sound and a tool that
//! needs exclusive access can be declared `sequential`. Per-call data (call
//! id, attempt, cancellation, stream writer) lives in [`ToolRuntime`], which
//! is built fresh for each attempt.

use std::fmt;
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use tokio_util::sync::CancellationToken;

use crate::events::EventBus;
use crate::ids::{CallName, IdSource, RunId, ThreadId, ToolCallId};
use crate::redact::Redactor;

mod draw;
mod emit;
mod extensions;
pub(crate) mod limits;
mod secret;
mod turn;

pub use draw::{CallDraw, Clock, Ids, Random, SystemClock, TimeSource};
use emit::EventScope;
pub use emit::{EventEmitter, StreamWriter};
pub use extensions::Extensions;
pub use limits::{CallCounter, CallLimits, RunCallCounts};
pub use secret::{Secret, Secrets};
pub use turn::Turn;

struct RunInner<C> {
    run_id: RunId,
    thread_id: ThreadId,
    context: C,
    stores: Extensions,
    resources: Extensions,
    secrets: Secrets,
    workspace: Option<PathBuf>,
    calls: RunCallCounts,
    /// The run's own token.
    cancel: CancellationToken,
    /// What every call's random seed derives from.
    seed: u64,
    /// Where calls read the time.
    time: Arc<dyn TimeSource>,
    /// Where new ids come from, when the run has a source of its own.
    ids: Option<Arc<dyn IdSource>>,
}

/// One agent run: its ids, the application's context value `C`, its stores,
/// resources and secrets, its workspace root, its cancellation token, and
/// where its calls' time, randomness and new ids come from (a time source,
/// a seed, an id source).
///
/// Cloning is cheap (one `Arc`).
///
/// ```
/// use tinyagents_tools::RunContext;
///
/// struct Account { user: String }
/// let run = RunContext::builder(Account { user: "ada".into() })
///     .run_id("run-1")
///     .thread_id("thread-9")
///     .build();
/// assert_eq!(run.context().user, "ada");
/// assert_eq!(run.run_id().as_str(), "run-1");
/// ```
pub struct RunContext<C = ()> {
    inner: Arc<RunInner<C>>,
    /// The token of a [`child_scope`](RunContext::child_scope); `None` for
    /// the run itself, whose token is in `inner`. A clone (one per call)
    /// then costs one increment, not the token's lock.
    scope: Option<Arc<CancellationToken>>,
    /// The id this value answers to, when it is not the run's own (see
    /// [`with_run_id`](RunContext::with_run_id)).
    run_id: Option<RunId>,
}

impl<C> Clone for RunContext<C> {
    fn clone(&self) -> Self {
        RunContext {
            inner: Arc::clone(&self.inner),
            scope: self.scope.clone(),
            run_id: self.run_id.clone(),
        }
    }
}

impl RunContext<()> {
    /// A run with no context value and generated ids.
    pub fn empty() -> Self {
        RunContext::builder(()).build()
    }
}

impl<C> RunContext<C> {
    /// Starts building a run around `context`.
    pub fn builder(context: C) -> RunContextBuilder<C> {
        RunContextBuilder {
            run_id: None,
            thread_id: None,
            context,
            stores: Extensions::new(),
            resources: Extensions::new(),
            secrets: Secrets::new(),
            workspace: None,
            cancel: None,
            seed: None,
            time: None,
            ids: None,
        }
    }

    /// The run id.
    pub fn run_id(&self) -> &RunId {
        self.run_id.as_ref().unwrap_or(&self.inner.run_id)
    }

    /// The same run (context, stores, secrets, call counts, cancellation)
    /// answering to run id `id`: a journal keys a call by its run's id, so
    /// a server that picks up, on any instance or after a restart, a call
    /// first journaled under another run's id makes it again under that id.
    ///
    /// ```
    /// use tinyagents_tools::RunContext;
    /// let run = RunContext::builder(()).run_id("run-2").build();
    /// let first = run.with_run_id("run-1");
    /// assert_eq!(first.run_id().as_str(), "run-1");
    /// assert_eq!(first.child_scope().run_id().as_str(), "run-1");
    /// assert_eq!(run.run_id().as_str(), "run-2");
    /// run.cancel();
    /// assert!(first.cancellation().is_cancelled());
    /// ```
    pub fn with_run_id(&self, id: impl Into<RunId>) -> RunContext<C> {
        RunContext {
            inner: Arc::clone(&self.inner),
            scope: self.scope.clone(),
            run_id: Some(id.into()),
        }
    }

    /// The thread id.
    pub fn thread_id(&self) -> &ThreadId {
        &self.inner.thread_id
    }

    /// The application's context value.
    pub fn context(&self) -> &C {
        &self.inner.context
    }

    /// The run's stores.
    pub fn stores(&self) -> &Extensions {
        &self.inner.stores
    }

    /// The run's resources (provider clients and the like).
    pub fn resources(&self) -> &Extensions {
        &self.inner.resources
    }

    /// The run's secrets.
    pub fn secrets(&self) -> &Secrets {
        &self.inner.secrets
    }

    /// The workspace root, when the run has one.
    pub fn workspace_root(&self) -> Option<&Path> {
        self.inner.workspace.as_deref()
    }

    /// The run's cancellation token: cancelling it cancels every call of the
    /// run.
    pub fn cancellation(&self) -> &CancellationToken {
        self.scope.as_deref().unwrap_or(&self.inner.cancel)
    }

    /// Cancels the run (or, for a [`child_scope`](Self::child_scope), only
    /// the calls made with it).
    pub fn cancel(&self) {
        self.cancellation().cancel();
    }

    /// The same run (ids, context, stores, secrets, call counts) under a
    /// cancellation token that is a child of this one's: cancelling the
    /// returned value cancels only the calls made with it, while cancelling
    /// this run still cancels them too. Used to cancel one call of a run.
    ///
    /// ```
    /// use tinyagents_tools::RunContext;
    /// let run = RunContext::empty();
    /// let call = run.child_scope();
    /// call.cancel();
    /// assert!(call.cancellation().is_cancelled());
    /// assert!(!run.cancellation().is_cancelled());
    /// assert_eq!(call.run_id(), run.run_id());
    /// ```
    pub fn child_scope(&self) -> RunContext<C> {
        RunContext {
            inner: Arc::clone(&self.inner),
            scope: Some(Arc::new(self.cancellation().child_token())),
            run_id: self.run_id.clone(),
        }
    }

    /// The tool calls admitted in this run so far (what per-run call limits
    /// read). Shared by every executor that serves the run.
    pub fn call_counts(&self) -> &RunCallCounts {
        &self.inner.calls
    }

    /// The run's seed: every call's random seed derives from it and the
    /// call's key ([`CallDraw::derive`]).
    pub fn seed(&self) -> u64 {
        self.inner.seed
    }

    /// Where the run's calls read the time.
    pub fn time_source(&self) -> &dyn TimeSource {
        &*self.inner.time
    }

    /// The run's own id source, when it has one.
    pub fn id_source(&self) -> Option<&Arc<dyn IdSource>> {
        self.inner.ids.as_ref()
    }

    /// What call `call_id` of turn `turn` is given when it is drawn now:
    /// the time source's reading and the seed derived from the run's seed
    /// and the call's key. The executor draws once per call, when it is
    /// admitted, and a journal keeps the draw with the call.
    pub fn draw(&self, turn: u32, call_id: &ToolCallId) -> CallDraw {
        CallDraw::derive(self.inner.seed, turn, call_id, self.inner.time.now())
    }
}

impl<C> fmt::Debug for RunContext<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunContext")
            .field("run_id", self.run_id())
            .field("thread_id", &self.inner.thread_id)
            .field("stores", &self.inner.stores)
            .field("resources", &self.inner.resources)
            .field("secrets", &self.inner.secrets)
            .field("workspace", &self.inner.workspace)
            .field("seed", &self.inner.seed)
            .finish_non_exhaustive()
    }
}

/// Builds a [`RunContext`].
pub struct RunContextBuilder<C> {
    run_id: Option<RunId>,
    thread_id: Option<ThreadId>,
    context: C,
    stores: Extensions,
    resources: Extensions,
    secrets: Secrets,
    workspace: Option<PathBuf>,
    cancel: Option<CancellationToken>,
    seed: Option<u64>,
    time: Option<Arc<dyn TimeSource>>,
    ids: Option<Arc<dyn IdSource>>,
}

impl<C> RunContextBuilder<C> {
    /// Sets the run id (generated otherwise).
    pub fn run_id(mut self, id: impl Into<RunId>) -> Self {
        self.run_id = Some(id.into());
        self
    }

    /// Sets the thread id (generated otherwise).
    pub fn thread_id(mut self, id: impl Into<ThreadId>) -> Self {
        self.thread_id = Some(id.into());
        self
    }

    /// Adds a store, injected as `Store<T>`.
    pub fn store<T: Send + Sync + 'static>(mut self, store: T) -> Self {
        self.stores.insert(store);
        self
    }

    /// Adds a shared store, injected as `Store<T>`.
    pub fn store_arc<T: Send + Sync + 'static>(mut self, store: Arc<T>) -> Self {
        self.stores.insert_arc(store);
        self
    }

    /// Adds a resource (a provider client, a connection pool), injected as
    /// `Resource<T>`.
    pub fn resource<T: Send + Sync + 'static>(mut self, resource: T) -> Self {
        self.resources.insert(resource);
        self
    }

    /// Adds a secret with a text form (masked by redaction), injected as
    /// `Secret<T>`.
    pub fn secret<T: AsRef<str> + Send + Sync + 'static>(mut self, secret: T) -> Self {
        self.secrets.insert(secret);
        self
    }

    /// Replaces the secrets.
    pub fn secrets(mut self, secrets: Secrets) -> Self {
        self.secrets = secrets;
        self
    }

    /// Sets the workspace root that path arguments are confined to.
    pub fn workspace_root(mut self, root: impl Into<PathBuf>) -> Self {
        self.workspace = Some(root.into());
        self
    }

    /// Uses `token` as the run's cancellation token.
    pub fn cancellation(mut self, token: CancellationToken) -> Self {
        self.cancel = Some(token);
        self
    }

    /// Sets the run's seed, from which every call's random values derive
    /// (drawn from the operating system's randomness otherwise): the same
    /// seed gives the same call (turn and call id) the same values.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// Sets where the run's calls read the time (the system clock
    /// otherwise): a [`SystemTime`](std::time::SystemTime) fixes it, the
    /// testkit's `ManualClock` moves when a test says so.
    pub fn time_source(mut self, source: impl TimeSource) -> Self {
        self.time = Some(Arc::new(source));
        self
    }

    /// Sets where new ids come from: the run's and thread's ids when they
    /// are not given, and the ids tools make with [`Ids`] (the testkit's
    /// `SequentialIds` numbers them: `run-0`, `note-0`, `note-1`, ...).
    pub fn ids(mut self, source: impl IdSource) -> Self {
        self.ids = Some(Arc::new(source));
        self
    }

    /// Builds the run.
    pub fn build(self) -> RunContext<C> {
        let ids = self.ids;
        let new_id = |prefix: &str| match &ids {
            Some(source) => source.next_id(prefix),
            None => fresh_id(prefix),
        };
        let run_id = self.run_id.unwrap_or_else(|| RunId::new(new_id("run")));
        let thread_id = self
            .thread_id
            .unwrap_or_else(|| ThreadId::new(new_id("thread")));
        RunContext {
            inner: Arc::new(RunInner {
                run_id,
                thread_id,
                context: self.context,
                stores: self.stores,
                resources: self.resources,
                secrets: self.secrets,
                workspace: self.workspace,
                calls: RunCallCounts::default(),
                cancel: self.cancel.unwrap_or_default(),
                seed: self.seed.unwrap_or_else(fresh_random),
                time: self.time.unwrap_or_else(|| Arc::new(SystemClock)),
                ids,
            }),
            scope: None,
            run_id: None,
        }
    }
}

/// The application's context value, injected by `#[inject] ctx: Ctx<C>`.
/// Dereferences to `C`.
pub struct Ctx<C>(RunContext<C>);

impl<C> Ctx<C> {
    /// The whole run context.
    pub fn run(&self) -> &RunContext<C> {
        &self.0
    }
}

impl<C> Deref for Ctx<C> {
    type Target = C;
    fn deref(&self) -> &C {
        self.0.context()
    }
}

impl<C> Clone for Ctx<C> {
    fn clone(&self) -> Self {
        Ctx(self.0.clone())
    }
}

impl<C> fmt::Debug for Ctx<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Ctx").field(&self.0).finish()
    }
}

impl<C> From<RunContext<C>> for Ctx<C> {
    fn from(run: RunContext<C>) -> Self {
        Ctx(run)
    }
}

/// A process-unique id with a prefix (`run-3f2a…`).
pub(crate) fn fresh_id(prefix: &str) -> String {
    format!("{prefix}-{:016x}", fresh_random())
}

/// 64 random bits: std's randomly keyed hasher (keyed from the operating
/// system's randomness) over a process-wide counter.
fn fresh_random() -> u64 {
    use std::hash::BuildHasher;
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    std::collections::hash_map::RandomState::new().hash_one(n)
}

/// What a tool sees of its call: the run, the call id, the attempt, the
/// call's cancellation token, and handles to emit events and progress.
///
/// The executor builds one per attempt. Tools usually take the parts they
/// need through `#[inject]` rather than the whole runtime.
pub struct ToolRuntime<C = ()> {
    run: RunContext<C>,
    call_id: ToolCallId,
    tool: CallName,
    attempt: u32,
    /// The call's token, a child of the run's, made on first use: most
    /// tools never ask for it, and making one costs an allocation and a lock.
    cancel: OnceLock<CancellationToken>,
    /// Set when the call was interrupted (timeout) before or after the token
    /// was made; a token made later starts cancelled.
    interrupted: AtomicBool,
    events: Option<Arc<EventBus>>,
    redactor: Option<Arc<Redactor>>,
    /// What the call is given: set by the executor, or drawn from the run
    /// on first use.
    draw: OnceLock<CallDraw>,
}

impl<C> Clone for ToolRuntime<C> {
    fn clone(&self) -> Self {
        // A clone shares the call's token, so make it now.
        let cancel = OnceLock::from(self.cancellation().clone());
        ToolRuntime {
            run: self.run.clone(),
            call_id: self.call_id.clone(),
            tool: self.tool.clone(),
            attempt: self.attempt,
            cancel,
            interrupted: AtomicBool::new(self.interrupted.load(Ordering::Acquire)),
            events: self.events.clone(),
            redactor: self.redactor.clone(),
            draw: self.draw.clone(),
        }
    }
}

impl<C> ToolRuntime<C> {
    /// A runtime for call `call_id` of tool `tool` in `run`: attempt 1, a
    /// cancellation token that is a child of the run's, no event bus.
    pub fn new(
        run: RunContext<C>,
        call_id: impl Into<ToolCallId>,
        tool: impl Into<CallName>,
    ) -> Self {
        ToolRuntime::of_attempt(run, call_id.into(), tool.into(), 1, None, None, None)
    }

    /// The runtime of attempt `attempt` of a call, made whole at once (the
    /// executor makes one per attempt; the `with_` steps would move it
    /// once each).
    #[inline]
    pub(crate) fn of_attempt(
        run: RunContext<C>,
        call_id: ToolCallId,
        tool: CallName,
        attempt: u32,
        events: Option<Arc<EventBus>>,
        redactor: Option<Arc<Redactor>>,
        draw: Option<CallDraw>,
    ) -> Self {
        ToolRuntime {
            run,
            call_id,
            tool,
            attempt,
            cancel: OnceLock::new(),
            interrupted: AtomicBool::new(false),
            events,
            redactor,
            draw: draw.map_or_else(OnceLock::new, OnceLock::from),
        }
    }

    /// Sets the attempt number.
    pub fn with_attempt(mut self, attempt: u32) -> Self {
        self.attempt = attempt;
        self
    }

    /// Sets the event bus that `EventEmitter` and `StreamWriter` write to.
    pub fn with_events(mut self, events: Arc<EventBus>) -> Self {
        self.events = Some(events);
        self
    }

    /// Masks custom event payloads and progress messages with `redactor`
    /// before they are emitted.
    pub fn with_redactor(mut self, redactor: Arc<Redactor>) -> Self {
        self.redactor = Some(redactor);
        self
    }

    /// Uses `token` as the call's cancellation token.
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        self.cancel = OnceLock::from(token);
        self
    }

    /// Gives the call `draw` (the executor gives every attempt of a call the
    /// draw made when the call was admitted, or the one its journal kept).
    pub fn with_draw(mut self, draw: CallDraw) -> Self {
        self.draw = OnceLock::from(draw);
        self
    }

    /// What the call is given: its time and seed ([`Clock`], [`Random`] and
    /// [`Ids`] read it). A runtime made by hand without
    /// [`with_draw`](Self::with_draw) draws from its run on first use, as
    /// for turn 0.
    pub fn draw(&self) -> CallDraw {
        *self.draw.get_or_init(|| self.run.draw(0, &self.call_id))
    }

    /// Interrupts the call: its token fires now, or as soon as it is made.
    pub(crate) fn interrupt(&self) {
        self.interrupted.store(true, Ordering::Release);
        if let Some(token) = self.cancel.get() {
            token.cancel();
        }
    }

    /// The run.
    pub fn run(&self) -> &RunContext<C> {
        &self.run
    }

    /// The application's context value.
    pub fn context(&self) -> &C {
        self.run.context()
    }

    /// The call id.
    pub fn call_id(&self) -> &ToolCallId {
        &self.call_id
    }

    /// The tool name as called.
    pub fn tool_name(&self) -> &str {
        &self.tool
    }

    /// The attempt (1 for the first).
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// The call's cancellation token (fires on timeout and on run
    /// cancellation).
    pub fn cancellation(&self) -> &CancellationToken {
        self.cancel.get_or_init(|| {
            let token = self.run.cancellation().child_token();
            if self.interrupted.load(Ordering::Acquire) {
                token.cancel();
            }
            token
        })
    }

    /// The call's redactor, the one the executor masks this call's events
    /// and messages with (its tool's redaction policy and the run's
    /// secrets); `None` when it masks nothing. An injected handle that
    /// sends a tool's text out of the process (log messages, questions to
    /// a client) masks it with this first, as the executor masks what the
    /// model sees.
    pub fn redactor(&self) -> Option<&Arc<Redactor>> {
        self.redactor.as_ref()
    }

    /// A handle that emits custom events for this call.
    pub fn emitter(&self) -> EventEmitter {
        EventEmitter {
            scope: self.event_scope(),
        }
    }

    /// A handle that reports progress for this call.
    pub fn stream_writer(&self) -> StreamWriter {
        StreamWriter {
            scope: self.event_scope(),
        }
    }

    fn event_scope(&self) -> Option<Arc<EventScope>> {
        self.events.as_ref().map(|bus| {
            Arc::new(EventScope {
                bus: Arc::clone(bus),
                run_id: self.run.run_id().clone(),
                thread_id: self.run.thread_id().clone(),
                call_id: self.call_id.clone(),
                tool: self.tool.clone(),
                attempt: self.attempt,
                redactor: self.redactor.clone(),
            })
        })
    }
}

impl<C> fmt::Debug for ToolRuntime<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolRuntime")
            .field("run", &self.run)
            .field("call_id", &self.call_id)
            .field("tool", &self.tool)
            .field("attempt", &self.attempt)
            .finish_non_exhaustive()
    }
}
