//! [`ToolExecutor`]: runs provider-supplied tool calls through a fail-closed
//! lifecycle.
//!
//! Each call goes through ten steps, in the order listed on
//! [`ToolExecutor::execute`]; a refusal at any of the first three, or by a
//! `before_tool` middleware, answers the call with a classified error and a
//! `tool.rejected` event, and nothing later runs.
//!
//! Every call id gets exactly one [`ToolResult`], whatever happens (a
//! panicking middleware included).
//!
//! # Cancellation
//! Once the run's token fires, a call without an answer yet is answered
//! `cancelled` ([`ErrorClass::Fatal`](crate::ErrorClass::Fatal)), whatever
//! step it was in: waiting for its place in a batch or for a permit, in a
//! `before_tool` middleware (no attempt starts in a cancelled run), running
//! (whatever error the tool returns on seeing its token) or between
//! retries. A call that finished before keeps its result; a panic stays
//! `panicked`.
//!
//! # What a call is charged with
//! [`CallLimits`](crate::runtime::CallLimits) are spent by calls that reach their tool or that a
//! middleware answers; a call refused by a `before_tool` middleware, or
//! cancelled while waiting for a permit, gives its slots back.
//! [`ToolResult::elapsed`] is the call's own time; the time it waited for
//! its place in a batch, for a permit and in `before_tool` middleware (an
//! approver) is [`ToolResult::waited`].
//!
//! # When repair is not allowed
//! With [`ExecutorConfig::repair_allowed`] off, every error that would be
//! [`ErrorClass::Repair`](crate::ErrorClass::Repair) comes back as
//! [`ErrorClass::Fatal`](crate::ErrorClass::Fatal) (same kind, same message,
//! in the result and in events), so an agent loop that stops on fatal errors
//! stops instead of asking the model to try again.

mod args;
mod batch;
mod config;
mod content;
mod lifecycle;

use std::fmt;
use std::sync::Arc;

use tokio::sync::Semaphore;

use crate::artifacts::ArtifactStore;
use crate::call::ToolCall;
use crate::events::{EventBus, EventSubscriber};
use crate::journal::Journal;
use crate::middleware::Middleware;
use crate::output::ToolResult;
use crate::policy::WorkspacePolicy;
use crate::registry::ToolRegistry;
use crate::runtime::{RunContext, Turn};
use lifecycle::MiddlewareSlot;
// The lifecycle reaches the call-limit steps through this module.

use crate::spec::SafetyItem;
use crate::tool::Shared;

pub use config::{ExecutorBuildError, ExecutorConfig};

/// Runs tool calls from a [`ToolRegistry`] for state `S` and run context `C`.
///
/// Built once with [`ToolExecutor::builder`] and shared (it is `Send + Sync`;
/// `execute` takes `&self`).
///
/// ```
/// # use std::sync::{Arc, OnceLock};
/// # use serde_json::{json, Value};
/// # use tinyagents_tools::*;
/// # struct Ping;
/// # #[async_trait]
/// # impl Tool for Ping {
/// #     fn spec(&self) -> &ToolSpec {
/// #         static S: OnceLock<ToolSpec> = OnceLock::new();
/// #         S.get_or_init(|| ToolSpec::builder("ping", "Answer pong.").safety(ToolSafety::pure()).build().unwrap())
/// #     }
/// #     async fn call(&self, _: &(), _: &ToolRuntime, _: Value) -> Result<ToolOutput, ToolError> {
/// #         Ok(ToolOutput::text("pong"))
/// #     }
/// # }
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let mut registry = ToolRegistry::new();
/// registry.register(Ping)?;
/// let executor = ToolExecutor::builder(registry, ()).build()?;
/// let run = RunContext::empty();
/// let result = executor
///     .execute(&run, &Turn::new(1), ToolCall::new("call-1", "ping", "{}"))
///     .await;
/// assert_eq!(result.text(), "pong");
/// assert_eq!(result.tool_call_id.as_str(), "call-1");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
pub struct ToolExecutor<S = (), C = ()> {
    registry: Arc<ToolRegistry<S, C>>,
    state: Arc<S>,
    events: Arc<EventBus>,
    middleware: Vec<MiddlewareSlot<S, C>>,
    config: ExecutorConfig,
    artifacts: Option<Arc<dyn ArtifactStore>>,
    /// One semaphore per registered tool with a `max_concurrency`, by
    /// registration index; shared by every run and batch of the executor.
    tool_permits: Vec<Option<Arc<Semaphore>>>,
    /// Where calls outlive the process, when the application keeps one.
    journal: Option<Journal>,
}

impl<S: Shared, C: Shared> ToolExecutor<S, C> {
    /// Starts building an executor over `registry` with application state
    /// `state` (given by value or as an `Arc`).
    pub fn builder(
        registry: impl Into<Arc<ToolRegistry<S, C>>>,
        state: impl crate::inject::IntoState<S>,
    ) -> ToolExecutorBuilder<S, C> {
        ToolExecutorBuilder {
            registry: registry.into(),
            state: state.into_state(),
            events: EventBus::new(),
            shared_events: None,
            middleware: Vec::new(),
            config: ExecutorConfig::default(),
            artifacts: None,
            unenforced: Vec::new(),
            journal: None,
        }
    }

    /// Runs one call and answers it, in ten steps (a refusal or failure at
    /// one skips to the last). With a [journal](crate::journal) the
    /// journal admits the call first (a call it answered is answered from
    /// it, never run again) and keeps its answer last.
    ///
    /// 1. **resolve the tool**: the run is not cancelled; the tool exists
    ///    (canonical name or alias) and was advertised this [`Turn`];
    /// 2. **parse the arguments**: they parse, stay within the size and
    ///    depth limits, carry no key named like an injected parameter or a
    ///    runtime id, and validate against the registry's compiled input
    ///    schema (every problem listed at once);
    /// 3. **admit**: the [`CallLimits`](crate::runtime::CallLimits) admit the call; it waits for its
    ///    concurrency permits (the batch bound, `sequential`, the tool's
    ///    `max_concurrency`);
    /// 4. **`before_tool` middleware** (policies, approvers): each may let
    ///    the call through (changed arguments are validated again), answer
    ///    in its place, refuse it, or (with a journal) leave it waiting
    ///    for an approval;
    /// 5. **`tool.started`**, only when the body is about to run (with a
    ///    [journal](crate::journal), after the write-ahead `started` record
    ///    of a tool that may not run twice);
    /// 6. **run the tool** with its injected
    ///    [`ToolRuntime`](crate::ToolRuntime), whose cancellation token fires
    ///    on timeout and on run cancellation, retried per its
    ///    [`RetryPolicy`](crate::RetryPolicy) only when it is idempotent; a
    ///    panic becomes a `panicked` error;
    /// 7. **`after_tool` middleware**, in reverse order;
    /// 8. **format the message**: the output is checked against the tool's
    ///    output schema, redacted, and made into the bounded content of the
    ///    canonical [`ToolMessage`](crate::ToolMessage);
    /// 9. **store artifacts**: an output over the artifact threshold goes to
    ///    the [`ArtifactStore`] and the message shows a preview and its key;
    /// 10. **answer**: the [`ToolResult`] and `tool.completed`, or
    ///     `tool.rejected` / `tool.failed` for a call that stopped.
    ///
    /// Never panics, whatever the tool or a middleware does.
    pub fn execute(
        &self,
        run: &RunContext<C>,
        turn: &Turn,
        call: ToolCall,
    ) -> impl Future<Output = ToolResult> + Send {
        self.execute_in(run, turn, call, None)
    }

    /// Runs a turn's calls with at most [`ExecutorConfig::max_concurrency`]
    /// at once (1 runs them serially) and answers them in call order, one
    /// result per call. A `sequential` tool runs alone: no other call of the
    /// batch overlaps it. Every call is received with the batch: the time it
    /// waits for its place is in its [`ToolResult::waited`].
    pub async fn execute_batch(
        &self,
        run: &RunContext<C>,
        turn: &Turn,
        calls: Vec<ToolCall>,
    ) -> Vec<ToolResult> {
        batch::execute_batch(self, run, turn, calls).await
    }

    /// Runs a turn's calls as they arrive, while the model is still
    /// writing: each call starts the moment `calls` yields it (as soon as a
    /// place among the [`ExecutorConfig::max_concurrency`] calls in flight
    /// is free), and the results come back in call order, one per call,
    /// once `calls` has ended and every call is answered.
    ///
    /// Every guarantee of [`execute_batch`](Self::execute_batch) holds: the
    /// turn's advertised tools, the call limits, each tool's
    /// `max_concurrency`, a `sequential` tool running alone and in call
    /// order (it waits for the calls before it and the calls after it wait
    /// for it), approvals and the journal. A call's
    /// [`waited`](crate::ToolResult::waited) counts from when it arrived.
    ///
    /// **When the model's stream fails.** `calls` simply ends: the calls
    /// it already yielded are complete (a reader yields a call only once
    /// its arguments closed), so they run to their end and are answered,
    /// and nothing more starts. To stop calls already running as well,
    /// cancel the run ([`RunContext::cancellation`]): each call without an
    /// answer yet is then answered `cancelled`, as in a batch.
    ///
    /// ```
    /// # use std::sync::OnceLock;
    /// # use serde_json::Value;
    /// # use tinyagents_tools::*;
    /// # struct Ping;
    /// # #[async_trait]
    /// # impl Tool for Ping {
    /// #     fn spec(&self) -> &ToolSpec {
    /// #         static S: OnceLock<ToolSpec> = OnceLock::new();
    /// #         S.get_or_init(|| ToolSpec::builder("ping", "Answer pong.").safety(ToolSafety::pure()).build().unwrap())
    /// #     }
    /// #     async fn call(&self, _: &(), _: &ToolRuntime, _: Value) -> Result<ToolOutput, ToolError> {
    /// #         Ok(ToolOutput::text("pong"))
    /// #     }
    /// # }
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let mut registry = ToolRegistry::new();
    /// registry.register(Ping)?;
    /// let executor = ToolExecutor::builder(registry, ()).build()?;
    /// // Calls as a stream reader yields them, while the model writes on.
    /// let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    /// let model = async move {
    ///     tx.send(ToolCall::new("call_1", "ping", "{}")).unwrap();
    ///     tokio::task::yield_now().await; // ... more of the model's output
    ///     tx.send(ToolCall::new("call_2", "ping", "{}")).unwrap();
    /// };
    /// let calls = futures_util::stream::unfold(rx, |mut rx| async move {
    ///     rx.recv().await.map(|call| (call, rx))
    /// });
    /// let run = RunContext::empty();
    /// let turn = Turn::new(1);
    /// let ((), results) = tokio::join!(model, executor.execute_stream(&run, &turn, calls));
    /// assert_eq!(results.len(), 2);
    /// assert_eq!(results[1].tool_call_id.as_str(), "call_2");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// # }).unwrap();
    /// ```
    pub async fn execute_stream(
        &self,
        run: &RunContext<C>,
        turn: &Turn,
        calls: impl futures_util::Stream<Item = ToolCall> + Send,
    ) -> Vec<ToolResult> {
        batch::execute_stream(self, run, turn, calls).await
    }

    /// The registry.
    pub fn registry(&self) -> &Arc<ToolRegistry<S, C>> {
        &self.registry
    }

    /// The application state.
    pub fn state(&self) -> &Arc<S> {
        &self.state
    }

    /// The event bus (its counters say how many events were dropped for a
    /// queued subscriber that fell behind, or made a subscriber panic).
    pub fn events(&self) -> &Arc<EventBus> {
        &self.events
    }

    /// The configuration.
    pub fn config(&self) -> &ExecutorConfig {
        &self.config
    }
}

impl<S: Shared, C: Shared> fmt::Debug for ToolExecutor<S, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolExecutor")
            .field("registry", &self.registry)
            .field("middleware", &self.middleware.len())
            .field("config", &self.config)
            .field("artifacts", &self.artifacts.is_some())
            .field("journal", &self.journal)
            .finish()
    }
}

/// Builds a [`ToolExecutor`].
pub struct ToolExecutorBuilder<S = (), C = ()> {
    registry: Arc<ToolRegistry<S, C>>,
    state: Arc<S>,
    events: EventBus,
    shared_events: Option<Arc<EventBus>>,
    middleware: Vec<MiddlewareSlot<S, C>>,
    config: ExecutorConfig,
    artifacts: Option<Arc<dyn ArtifactStore>>,
    unenforced: Vec<SafetyItem>,
    journal: Option<Journal>,
}

impl<S: Shared, C: Shared> ToolExecutorBuilder<S, C> {
    /// Replaces the whole configuration.
    pub fn config(mut self, config: ExecutorConfig) -> Self {
        self.config = config;
        self
    }

    /// Changes the configuration in place.
    pub fn configure(mut self, f: impl FnOnce(&mut ExecutorConfig)) -> Self {
        f(&mut self.config);
        self
    }

    /// Adds a middleware; `before_tool` hooks run in the order added,
    /// `after_tool` hooks in reverse. An `Arc<M>` is a middleware too: add
    /// a clone to keep a handle on it.
    pub fn middleware(mut self, middleware: impl Middleware<S, C>) -> Self {
        self.middleware.push(MiddlewareSlot::new(middleware));
        self
    }

    /// Adds an event subscriber (an `Arc<T>` of one, to keep a handle).
    pub fn subscribe(mut self, subscriber: impl EventSubscriber) -> Self {
        self.events.subscribe(subscriber);
        self
    }

    /// Uses an event bus shared with other executors, given by value or
    /// as an `Arc` (subscribers added with [`subscribe`](Self::subscribe)
    /// are then ignored).
    pub fn event_bus(mut self, bus: impl Into<Arc<EventBus>>) -> Self {
        self.shared_events = Some(bus.into());
        self
    }

    /// Stores outputs larger than [`ExecutorConfig::artifact_threshold`] in
    /// `store`; without one they are only cut to
    /// [`ExecutorConfig::max_content_bytes`]. An `Arc<T>` of a store is a
    /// store too, to keep a handle on it.
    pub fn artifact_store(mut self, store: impl ArtifactStore) -> Self {
        self.artifacts = Some(Arc::new(store));
        self
    }

    /// Keeps every call in `journal` ([`journal`](crate::journal)): a call
    /// already answered is answered from it and never run again, a
    /// non-idempotent body runs at most once across crashes and instances,
    /// and an approval not decided now waits there
    /// ([`ToolResult::pending`](crate::ToolResult::pending)) until
    /// [`ToolExecutor::resume`].
    pub fn journal(mut self, journal: Journal) -> Self {
        self.journal = Some(journal);
        self
    }

    /// Leaves a declared safety item unenforced: tools that declare it run
    /// without its policy, and their own code is responsible for it. Without
    /// this, [`build`](Self::build) makes sure every declared item has a
    /// policy.
    pub fn unenforced(mut self, item: SafetyItem) -> Self {
        if !self.unenforced.contains(&item) {
            self.unenforced.push(item);
        }
        self
    }

    /// Checks the configuration against the registry and builds the
    /// executor.
    ///
    /// Every safety item a registered tool declares is enforced: when a tool
    /// declares `workspace` or filesystem access and no middleware enforces
    /// [`SafetyItem::Workspace`], the executor puts a
    /// [`WorkspacePolicy`] before every other middleware; when a tool needs
    /// confirmation (`requires_confirmation`, `spend`, `shell`) and no
    /// middleware enforces [`SafetyItem::Confirmation`], the build is
    /// refused with [`ExecutorBuildError::MissingPolicy`] naming the tool.
    /// [`unenforced`](Self::unenforced) turns either off explicitly.
    pub fn build(mut self) -> Result<ToolExecutor<S, C>, ExecutorBuildError> {
        self.config.check(&self.registry)?;
        self.enforce_declared()?;
        crate::error::panics::install();
        let tool_permits = self
            .registry
            .iter()
            .map(|t| {
                t.spec()
                    .concurrency
                    .max_concurrency
                    .map(|n| Arc::new(Semaphore::new(n.get())))
            })
            .collect();
        Ok(ToolExecutor {
            registry: self.registry,
            state: self.state,
            events: self.shared_events.unwrap_or_else(|| Arc::new(self.events)),
            middleware: self.middleware,
            config: self.config,
            artifacts: self.artifacts,
            tool_permits,
            journal: self.journal,
        })
    }
}

impl<S: Shared, C: Shared> ToolExecutorBuilder<S, C> {
    /// Adds or demands a policy for every declared safety item.
    fn enforce_declared(&mut self) -> Result<(), ExecutorBuildError> {
        for item in SafetyItem::ALL {
            if self.unenforced.contains(&item)
                || self
                    .middleware
                    .iter()
                    .any(|m| m.middleware.enforces().contains(&item))
            {
                continue;
            }
            let Some(tool) = self
                .registry
                .iter()
                .find(|t| item.declared_by(&t.spec().safety))
            else {
                continue;
            };
            match item {
                SafetyItem::Workspace => {
                    self.middleware
                        .insert(0, MiddlewareSlot::new(WorkspacePolicy));
                }
                _ => {
                    return Err(ExecutorBuildError::MissingPolicy {
                        tool: tool.spec().name.as_str().to_owned(),
                        item,
                        policy: item.policy(),
                    });
                }
            }
        }
        Ok(())
    }
}

impl<S: Shared, C: Shared> fmt::Debug for ToolExecutorBuilder<S, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolExecutorBuilder")
            .field("registry", &self.registry)
            .field("config", &self.config)
            .field("middleware", &self.middleware.len())
            .field("unenforced", &self.unenforced)
            .finish_non_exhaustive()
    }
}
