//! [`ToolSpec`]: everything the runtime and the providers need to know about a
//! tool, built once per tool: its name and description, its input and output
//! schemas ([`ToolSchema`], helpers in [`schema`]), its safety metadata
//! ([`ToolSafety`]) and its retry policy ([`RetryPolicy`]).

use std::num::NonZeroUsize;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::ids::{NameError, ToolName};

/// Chained setters for the crate's builders: each row
/// `method(arg: Type) => field = value;` (with its doc comment) becomes
/// `pub fn method(mut self, arg: Type) -> Self` that sets `self.field` to
/// `value` and returns `self`.
macro_rules! setters {
    ($(
        $(#[$doc:meta])*
        $method:ident($arg:ident: $ty:ty) => $($field:ident).+ = $value:expr;
    )*) => {
        $(
            $(#[$doc])*
            pub fn $method(mut self, $arg: $ty) -> Self {
                self.$($field).+ = $value;
                self
            }
        )*
    };
}
pub(crate) use setters;

mod execution;
mod retry;
mod safety;
pub mod schema;

pub use execution::{ConcurrencyPolicy, ResourceBounds, TaskStart, TaskSupport};

pub use retry::{Jitter, RetryPolicy};
pub use safety::{
    Determinism, Effect, FilesystemAccess, Idempotency, Reach, RedactionPolicy, SafetyItem,
    ToolSafety,
};
pub use schema::ToolSchema;

/// What kind of hidden value an injected parameter receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum InjectedKind {
    /// The run context (ids and the application's context value).
    RunContext,
    /// The application's context value.
    Context,
    /// The thread id.
    ThreadId,
    /// The run id.
    RunId,
    /// The tool call id.
    ToolCallId,
    /// The full runtime handle.
    Runtime,
    /// Application state.
    State,
    /// A typed store handle.
    Store,
    /// An event emitter.
    Events,
    /// A stream writer (progress).
    Stream,
    /// The call's cancellation token.
    Cancellation,
    /// A secret.
    Secret,
    /// A provider client or other shared resource.
    Resource,
    /// The workspace root.
    Workspace,
    /// The call's time ([`Clock`](crate::runtime::Clock)).
    Clock,
    /// The call's random values ([`Random`](crate::runtime::Random)).
    Random,
    /// New ids ([`Ids`](crate::runtime::Ids)).
    Ids,
    /// An application-defined injectable.
    Custom,
}

/// A hidden parameter of a tool: listed for policy and docs, never in the
/// schema.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InjectedArgSpec {
    /// The parameter's name in the tool fn.
    pub name: String,
    /// The Rust type, as written.
    pub type_name: String,
    /// What it receives.
    pub kind: InjectedKind,
}

/// Why a spec could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SpecError {
    /// The name breaks the naming rule.
    #[error("invalid tool name `{name}`: {reason}")]
    InvalidName {
        /// The name given.
        name: String,
        /// The rule it breaks.
        reason: NameError,
    },
    /// No description was given.
    #[error("tool `{0}` has no description: the model needs one to decide when to call it")]
    MissingDescription(String),
    /// A retry policy was set on a tool that is not idempotent.
    #[error(
        "tool `{0}` retries but is not idempotent: a retry could repeat its effect; declare it idempotent or drop the retry policy"
    )]
    RetryWithoutIdempotency(String),
    /// A zero timeout.
    #[error("tool `{0}` has a zero timeout")]
    ZeroTimeout(String),
    /// A task start was set on a tool that never runs as a task.
    #[error(
        "tool `{0}` escalates to a task but does not support tasks: declare its task support optional or required"
    )]
    EscalatesWithoutTasks(String),
    /// A resource bound of zero: the tool could never run.
    #[error("tool `{name}` has a zero `{bound}` bound: it could never run")]
    ZeroBound {
        /// The tool's name.
        name: String,
        /// Which bound (`max_memory`, `max_cpu`, `fuel`).
        bound: &'static str,
    },
}

/// The description of one tool.
///
/// Built once per tool (by `#[tool]` or by hand with [`ToolSpec::builder`])
/// and shared by reference; the executor never rebuilds it per call.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ToolSpec {
    /// The canonical name.
    pub name: ToolName,
    /// A human-readable title (MCP `title`).
    pub title: Option<String>,
    /// What the tool does, for the model.
    pub description: String,
    /// The input schema (an object at the root).
    pub input_schema: ToolSchema,
    /// The output schema, when the output type has one.
    pub output_schema: Option<ToolSchema>,
    /// The hidden parameters.
    pub injected: Vec<InjectedArgSpec>,
    /// Declared effects.
    pub safety: ToolSafety,
    /// The tool's own timeout (the executor's default applies otherwise).
    pub timeout: Option<Duration>,
    /// The retry policy.
    pub retry: RetryPolicy,
    /// Concurrency rules.
    pub concurrency: ConcurrencyPolicy,
    /// Groups the tool belongs to, for per-turn selection.
    pub tags: Vec<String>,
    /// True when the tool fn is synchronous and runs on the blocking pool.
    pub blocking: bool,
    /// Memory, CPU and fuel bounds (none by default; left out of the
    /// serialized spec when none is set).
    #[serde(skip_serializing_if = "ResourceBounds::is_unlimited")]
    pub bounds: ResourceBounds,
    /// Example arguments, each a JSON object a model could send. Checked
    /// against the input schema when the tool is registered, exported as
    /// Anthropic's `input_examples` and appended to the description for
    /// other providers (`providers::description_with_examples`).
    /// Left out of the serialized spec when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<serde_json::Value>,
    /// Whether the tool may run as an MCP task (never, by default; left
    /// out of the serialized spec then).
    #[serde(skip_serializing_if = "TaskSupport::is_forbidden")]
    pub task_support: TaskSupport,
    /// Where its task begins (left out of the serialized spec when
    /// [`TaskStart::Immediately`]).
    #[serde(skip_serializing_if = "TaskStart::is_immediately")]
    pub task_start: TaskStart,
}

impl ToolSpec {
    /// Starts a spec with a name and a description.
    pub fn builder(name: impl Into<String>, description: impl Into<String>) -> ToolSpecBuilder {
        ToolSpecBuilder {
            name: name.into(),
            description: description.into(),
            title: None,
            input_schema: ToolSchema::empty_object(),
            output_schema: None,
            injected: Vec::new(),
            safety: ToolSafety::default(),
            timeout: None,
            retry: RetryPolicy::none(),
            concurrency: ConcurrencyPolicy::default(),
            tags: Vec::new(),
            blocking: false,
            bounds: ResourceBounds::NONE,
            examples: Vec::new(),
            task_support: TaskSupport::Forbidden,
            task_start: TaskStart::Immediately,
        }
    }

    /// Whether the tool is idempotent.
    pub fn idempotency(&self) -> Idempotency {
        self.safety.idempotency
    }

    /// True when the tool takes what its call is given: the time, random
    /// values or new ids (an injected `Clock`, `Random` or `Ids`). The
    /// executor then draws them when the call is admitted, and a journal
    /// keeps the draw with the call.
    pub fn takes_draw(&self) -> bool {
        self.injected.iter().any(|arg| {
            matches!(
                arg.kind,
                InjectedKind::Clock | InjectedKind::Random | InjectedKind::Ids
            )
        })
    }
}

/// Builds a [`ToolSpec`], checking its rules in [`build`](Self::build).
#[derive(Debug, Clone)]
pub struct ToolSpecBuilder {
    name: String,
    description: String,
    title: Option<String>,
    input_schema: ToolSchema,
    output_schema: Option<ToolSchema>,
    injected: Vec<InjectedArgSpec>,
    safety: ToolSafety,
    timeout: Option<Duration>,
    retry: RetryPolicy,
    concurrency: ConcurrencyPolicy,
    tags: Vec<String>,
    blocking: bool,
    bounds: ResourceBounds,
    examples: Vec<serde_json::Value>,
    task_support: TaskSupport,
    task_start: TaskStart,
}

impl ToolSpecBuilder {
    setters! {
        /// Sets the title.
        title(title: impl Into<String>) => title = Some(title.into());
        /// Sets the input schema.
        input_schema(schema: ToolSchema) => input_schema = schema;
        /// Sets the output schema.
        output_schema(schema: ToolSchema) => output_schema = Some(schema);
        /// Sets the safety metadata.
        safety(safety: ToolSafety) => safety = safety;
        /// Sets the timeout.
        timeout(timeout: Duration) => timeout = Some(timeout);
        /// Sets the retry policy (the tool must be idempotent to retry).
        retry(retry: RetryPolicy) => retry = retry;
        /// At most `n` calls of this tool at once.
        max_concurrency(n: NonZeroUsize) => concurrency.max_concurrency = Some(n);
        /// Marks the tool fn as synchronous (run on the blocking pool).
        blocking(blocking: bool) => blocking = blocking;
        /// Bounds the address space of the worker process that runs the tool,
        /// in bytes (enforced for isolated tools).
        max_memory(bytes: u64) => bounds.max_memory = Some(bytes);
        /// Bounds the fuel of one call (enforced for WASM tools).
        fuel(fuel: u64) => bounds.fuel = Some(fuel);
        /// Sets every resource bound at once.
        bounds(bounds: ResourceBounds) => bounds = bounds;
        /// Lets the tool run as an MCP task ([`TaskSupport`]).
        task_support(support: TaskSupport) => task_support = support;
        /// Where the tool's task begins ([`TaskStart`]); the tool must support
        /// tasks.
        task_start(start: TaskStart) => task_start = start;
    }

    /// Adds a hidden parameter.
    pub fn injected(
        mut self,
        name: impl Into<String>,
        type_name: impl Into<String>,
        kind: InjectedKind,
    ) -> Self {
        self.injected.push(InjectedArgSpec {
            name: name.into(),
            type_name: type_name.into(),
            kind,
        });
        self
    }

    /// Never overlap another call.
    pub fn sequential(mut self) -> Self {
        self.concurrency.sequential = true;
        self
    }

    /// Adds a group tag.
    pub fn tag(mut self, tag: impl Into<String>) -> Self {
        self.tags.push(tag.into());
        self
    }

    /// Bounds the CPU time of one call (enforced for isolated tools, in
    /// whole seconds rounded up).
    pub fn max_cpu(mut self, cpu: Duration) -> Self {
        self.bounds = self.bounds.with_max_cpu(cpu);
        self
    }

    /// Adds an example of arguments (a JSON object a model could send);
    /// registration refuses the tool when it does not match the input
    /// schema.
    pub fn example(mut self, arguments: serde_json::Value) -> Self {
        self.examples.push(arguments);
        self
    }

    /// Checks the rules and builds the spec.
    pub fn build(self) -> Result<ToolSpec, SpecError> {
        let name = ToolName::new(&self.name).map_err(|reason| SpecError::InvalidName {
            name: self.name.clone(),
            reason,
        })?;
        if self.description.trim().is_empty() {
            return Err(SpecError::MissingDescription(self.name));
        }
        if self.retry.retries() && !self.safety.idempotency.is_idempotent() {
            return Err(SpecError::RetryWithoutIdempotency(self.name));
        }
        if self.timeout == Some(Duration::ZERO) {
            return Err(SpecError::ZeroTimeout(self.name));
        }
        let zero = [
            ("max_memory", self.bounds.max_memory),
            ("max_cpu", self.bounds.max_cpu_ms),
            ("fuel", self.bounds.fuel),
        ]
        .into_iter()
        .find(|(_, value)| *value == Some(0));
        if self.task_support.is_forbidden() && !self.task_start.is_immediately() {
            return Err(SpecError::EscalatesWithoutTasks(self.name));
        }
        if let Some((bound, _)) = zero {
            return Err(SpecError::ZeroBound {
                name: self.name,
                bound,
            });
        }
        Ok(ToolSpec {
            name,
            title: self.title,
            description: self.description,
            input_schema: self.input_schema,
            output_schema: self.output_schema,
            injected: self.injected,
            safety: self.safety,
            timeout: self.timeout,
            retry: self.retry,
            concurrency: self.concurrency,
            tags: self.tags,
            blocking: self.blocking,
            bounds: self.bounds,
            examples: self.examples,
            task_support: self.task_support,
            task_start: self.task_start,
        })
    }
}
