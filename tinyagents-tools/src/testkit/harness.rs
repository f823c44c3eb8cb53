//! [`ToolHarness`]: one or more tools behind a real [`ToolExecutor`], with a
//! run of fake injections and an [`EventRecorder`].

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::recorder::EventRecorder;
use crate::call::{RawArguments, ToolCall};
use crate::error::ToolError;
use crate::events::EventSubscriber;
use crate::executor::{ExecutorBuildError, ExecutorConfig, ToolExecutor, ToolExecutorBuilder};
use crate::ids::{IdSource, RunId, ThreadId};
use crate::inject::{Inject, InjectError, IntoState};
use crate::middleware::Middleware;
use crate::output::ToolResult;
use crate::registry::{RegistryError, ToolRegistry};
use crate::runtime::Secrets;
use crate::runtime::Turn;
use crate::runtime::{RunContext, RunContextBuilder, TimeSource, ToolRuntime};
use crate::spec::SafetyItem;
use crate::tool::Shared;
use crate::tool::Tool;

/// Why a harness could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HarnessError {
    /// The registry refused a tool (a bad schema, a duplicate name, ...).
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// The executor configuration does not fit the registry.
    #[error(transparent)]
    Executor(#[from] ExecutorBuildError),
}

/// Adds one middleware to an executor's builder.
type AddMiddleware<S, C> =
    Box<dyn FnOnce(ToolExecutorBuilder<S, C>) -> ToolExecutorBuilder<S, C> + Send>;

/// Builds a [`ToolHarness`]: the tools, the run's stores, resources, secrets
/// and workspace, and the executor's middleware and configuration.
pub struct ToolHarnessBuilder<S = (), C = ()> {
    registry: ToolRegistry<S, C>,
    registry_error: Option<RegistryError>,
    first_tool: Option<String>,
    state: Arc<S>,
    run: RunContextBuilder<C>,
    /// The middleware, each added to the executor's builder as the type it
    /// was given as.
    middleware: Vec<AddMiddleware<S, C>>,
    subscribers: Vec<Arc<dyn EventSubscriber>>,
    config: ExecutorConfig,
    unenforced: Vec<SafetyItem>,
}

impl<S: Shared, C: Shared> ToolHarnessBuilder<S, C> {
    /// Adds another tool (the first one added is the one
    /// [`ToolHarness::call`] runs).
    pub fn tool(mut self, tool: impl Tool<S, C>) -> Self {
        let name = tool.spec().name.to_string();
        match self.registry.register(tool) {
            Ok(_) => {
                self.first_tool.get_or_insert(name);
            }
            Err(e) => {
                self.registry_error.get_or_insert(e);
            }
        }
        self
    }

    /// Adds a store, injected as `Store<T>`.
    pub fn store<T: Send + Sync + 'static>(mut self, store: T) -> Self {
        self.run = self.run.store(store);
        self
    }

    /// Adds a shared store (keep a clone of the `Arc` to inspect it after the
    /// calls).
    pub fn store_arc<T: Send + Sync + 'static>(mut self, store: Arc<T>) -> Self {
        self.run = self.run.store_arc(store);
        self
    }

    /// Adds a resource, injected as `Resource<T>`.
    pub fn resource<T: Send + Sync + 'static>(mut self, resource: T) -> Self {
        self.run = self.run.resource(resource);
        self
    }

    /// Adds a secret with a text form, injected as `Secret<T>` and masked by
    /// redaction.
    pub fn secret<T: AsRef<str> + Send + Sync + 'static>(mut self, secret: T) -> Self {
        self.run = self.run.secret(secret);
        self
    }

    /// Replaces the run's secrets.
    pub fn secrets(mut self, secrets: Secrets) -> Self {
        self.run = self.run.secrets(secrets);
        self
    }

    /// Sets the workspace root, injected as `WorkspaceRoot`.
    pub fn workspace_root(mut self, root: impl Into<PathBuf>) -> Self {
        self.run = self.run.workspace_root(root);
        self
    }

    /// Sets the run's seed, from which each call's random values derive
    /// (drawn from the operating system otherwise).
    pub fn seed(mut self, seed: u64) -> Self {
        self.run = self.run.seed(seed);
        self
    }

    /// Sets where calls read the time (a [`ManualClock`](super::ManualClock)
    /// to move it by hand; the system clock otherwise).
    pub fn time_source(mut self, source: impl TimeSource) -> Self {
        self.run = self.run.time_source(source);
        self
    }

    /// Sets where new ids come from (a [`SequentialIds`](super::SequentialIds)
    /// to number them: `run-0`, `note-0`, ...).
    pub fn ids(mut self, source: impl IdSource) -> Self {
        self.run = self.run.ids(source);
        self
    }

    /// Sets the run id (generated otherwise).
    pub fn run_id(mut self, id: impl Into<RunId>) -> Self {
        self.run = self.run.run_id(id);
        self
    }

    /// Sets the thread id (generated otherwise).
    pub fn thread_id(mut self, id: impl Into<ThreadId>) -> Self {
        self.run = self.run.thread_id(id);
        self
    }

    /// Uses `token` as the run's cancellation token.
    pub fn cancellation(mut self, token: CancellationToken) -> Self {
        self.run = self.run.cancellation(token);
        self
    }

    /// Adds a middleware, in the order the executor's builder would.
    pub fn middleware(mut self, middleware: impl Middleware<S, C>) -> Self {
        self.middleware
            .push(Box::new(|builder| builder.middleware(middleware)));
        self
    }

    /// Adds an event subscriber besides the harness's recorder.
    pub fn subscribe(mut self, subscriber: impl EventSubscriber) -> Self {
        self.subscribers.push(Arc::new(subscriber));
        self
    }

    /// Leaves a declared safety item unenforced, as
    /// [`ToolExecutorBuilder::unenforced`](crate::executor::ToolExecutorBuilder::unenforced)
    /// does (to test a tool that needs confirmation without an approver).
    pub fn unenforced(mut self, item: SafetyItem) -> Self {
        self.unenforced.push(item);
        self
    }

    /// Changes the executor's configuration in place.
    pub fn configure(mut self, f: impl FnOnce(&mut ExecutorConfig)) -> Self {
        f(&mut self.config);
        self
    }

    /// Builds the executor and the run. Fails when the registry refused a
    /// tool or the configuration does not fit it.
    pub fn build(self) -> Result<ToolHarness<S, C>, HarnessError> {
        if let Some(e) = self.registry_error {
            return Err(e.into());
        }
        let recorder = EventRecorder::new();
        let mut builder = ToolExecutor::builder(self.registry, self.state)
            .config(self.config)
            .subscribe(recorder.clone());
        for subscriber in self.subscribers {
            builder = builder.subscribe(subscriber);
        }
        for add in self.middleware {
            builder = add(builder);
        }
        for item in self.unenforced {
            builder = builder.unenforced(item);
        }
        Ok(ToolHarness {
            executor: builder.build()?,
            run: self.run.build(),
            recorder,
            tool: self.first_tool.unwrap_or_default(),
            calls: AtomicU32::new(0),
        })
    }
}

/// Tools behind a real [`ToolExecutor`] with a run of test injections, for
/// testing tools the way an agent loop runs them: arguments are parsed and
/// validated, middleware and limits apply, and every event is recorded.
///
/// Calls get ids `call-1`, `call-2`, ... and each runs in a turn of its own
/// that advertises every tool.
///
/// ```
/// use tinyagents_tools::prelude::*;
/// use tinyagents_tools::events::EventKind;
/// use tinyagents_tools::testkit::ToolHarness;
///
/// struct Greeting(String);
///
/// #[derive(Deserialize, JsonSchema)]
/// struct GreetArgs {
///     /// Who to greet.
///     name: String,
/// }
///
/// /// Greet someone.
/// #[tool(read_only, idempotent, local)]
/// async fn greet(args: GreetArgs, #[inject] greeting: Store<Greeting>) -> String {
///     format!("{}, {}!", greeting.0, args.name)
/// }
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let harness = ToolHarness::builder(GreetTool)
///     .store(Greeting("Hello".into()))
///     .build()
///     .unwrap();
///
/// let result = harness.call_ok(serde_json::json!({"name": "Ada"})).await;
/// assert_eq!(result.structured, Some(serde_json::json!("Hello, Ada!")));
/// harness.events().assert_kinds(&[EventKind::Started, EventKind::Completed]);
///
/// // A forged key is refused by the executor's validation; the tool never runs.
/// let error = harness.call_err(serde_json::json!({"name": "Ada", "greeting": "Hi"})).await;
/// assert_eq!(error.kind().as_str(), "invalid_arguments");
/// harness.events().assert_order(&[EventKind::Completed, EventKind::Rejected]);
/// # });
/// ```
pub struct ToolHarness<S = (), C = ()> {
    executor: ToolExecutor<S, C>,
    run: RunContext<C>,
    recorder: Arc<EventRecorder>,
    tool: String,
    calls: AtomicU32,
}

impl ToolHarness {
    /// Starts a harness for `tool`, with no state and no run context value.
    pub fn builder(tool: impl Tool) -> ToolHarnessBuilder {
        ToolHarness::builder_with(tool, (), ())
    }
}

impl<S: Shared, C: Shared> ToolHarness<S, C> {
    /// Starts a harness for `tool` with application state `state` (by value
    /// or as an `Arc`) and run context value `context`.
    pub fn builder_with(
        tool: impl Tool<S, C>,
        state: impl IntoState<S>,
        context: C,
    ) -> ToolHarnessBuilder<S, C> {
        let builder = ToolHarnessBuilder {
            registry: ToolRegistry::default(),
            registry_error: None,
            first_tool: None,
            state: state.into_state(),
            run: RunContext::builder(context),
            middleware: Vec::new(),
            subscribers: Vec::new(),
            config: ExecutorConfig::default(),
            unenforced: Vec::new(),
        };
        builder.tool(tool)
    }

    fn next_id(&self) -> String {
        format!("call-{}", self.calls.fetch_add(1, Ordering::Relaxed) + 1)
    }

    /// Runs the first tool with `arguments` (a JSON object, as a provider
    /// would send it) and returns its result, success or not.
    pub async fn call(&self, arguments: Value) -> ToolResult {
        self.call_tool(&self.tool.clone(), arguments).await
    }

    /// Runs the tool named `name` with `arguments` (JSON, or JSON text as
    /// OpenAI sends it).
    pub async fn call_tool(&self, name: &str, arguments: impl Into<RawArguments>) -> ToolResult {
        let call = ToolCall::new(self.next_id(), name, arguments);
        self.execute(call).await
    }

    /// Runs one call exactly as given, in a turn of its own.
    pub async fn execute(&self, call: ToolCall) -> ToolResult {
        let turn = Turn::new(self.calls.load(Ordering::Relaxed));
        self.executor.execute(&self.run, &turn, call).await
    }

    /// Runs the first tool and returns its result; panics, with the error's
    /// kind, class and message, if the call failed or was refused.
    #[track_caller]
    pub fn call_ok(&self, arguments: Value) -> impl Future<Output = ToolResult> + '_ {
        let caller = std::panic::Location::caller();
        async move {
            let result = self.call(arguments).await;
            if let Some(e) = result.error.as_ref().filter(|_| result.is_error) {
                panic!(
                    "{caller}: expected `{}` to succeed, but it failed: {} ({}, {})",
                    result.name,
                    e.message(),
                    e.kind().as_str(),
                    e.class().as_str()
                );
            }
            result
        }
    }

    /// Runs the first tool and returns its error; panics, with the output, if
    /// the call succeeded.
    #[track_caller]
    pub fn call_err(&self, arguments: Value) -> impl Future<Output = ToolError> + '_ {
        let caller = std::panic::Location::caller();
        async move {
            let result = self.call(arguments).await;
            match result.error {
                Some(error) if result.is_error => error,
                _ => panic!(
                    "{caller}: expected `{}` to fail, but it succeeded with: {}",
                    result.name,
                    result.text()
                ),
            }
        }
    }

    /// Builds an injectable value the way the executor would for a call of
    /// the first tool, so a `#[tool]` fn can be called directly:
    /// `greet(args, harness.inject()?).await`.
    ///
    /// Its event handles (`StreamWriter`, `EventEmitter`) report to the
    /// harness's recorder under the call id `direct`.
    pub fn inject<T: Inject<S, C>>(&self) -> Result<T, InjectError> {
        T::inject(self.executor.state(), &self.runtime("direct"))
    }

    /// A runtime for a call `call_id` of the first tool, attached to the
    /// harness's events.
    pub fn runtime(&self, call_id: &str) -> ToolRuntime<C> {
        ToolRuntime::new(self.run.clone(), call_id, self.tool.as_str())
            .with_events(Arc::clone(self.executor.events()))
    }

    /// The recorder of every event of every call.
    pub fn events(&self) -> &Arc<EventRecorder> {
        &self.recorder
    }

    /// The run the calls belong to.
    pub fn run(&self) -> &RunContext<C> {
        &self.run
    }

    /// The executor.
    pub fn executor(&self) -> &ToolExecutor<S, C> {
        &self.executor
    }
}

impl<S: Shared, C: Shared> std::fmt::Debug for ToolHarness<S, C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolHarness")
            .field("executor", &self.executor)
            .field("run", &self.run)
            .field("tool", &self.tool)
            .finish_non_exhaustive()
    }
}
