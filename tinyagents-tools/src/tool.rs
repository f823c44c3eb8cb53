//! The [`Tool`] trait: a spec and an async call; and [`InstantTool`], the
//! shorter way to write a stateless tool that answers at once.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

use crate::error::ToolError;
use crate::output::ToolOutput;
use crate::runtime::ToolRuntime;
use crate::spec::ToolSpec;

/// What one call of a tool answers: its output, or a classified error. The
/// return type of [`Tool::call`], [`Tool::call_now`] and
/// [`InstantTool::answer`].
pub type CallResult = Result<ToolOutput, ToolError>;

/// The bound every application state `S` and run context `C` meets: the
/// executor shares them across tasks and threads for as long as it lives, so
/// they are `Send + Sync + 'static`. Every such type implements it already
/// (blanket impl); write `impl<S: Shared, C: Shared>` instead of repeating
/// the three bounds.
pub trait Shared: Send + Sync + 'static {}

impl<T: Send + Sync + 'static + ?Sized> Shared for T {}

/// A tool: a [`ToolSpec`] built once, and an async call.
///
/// `S` is the application state the executor holds; `C` the run's context
/// value. Both default to `()`. `#[tool]` implements this trait for you; a
/// hand-written implementation is just as good:
///
/// ```
/// use std::sync::OnceLock;
/// use serde_json::{json, Value};
/// use tinyagents_tools::*;
/// use tinyagents_tools::prelude::CallResult;
///
/// struct Echo;
///
/// #[async_trait]
/// impl Tool for Echo {
///     fn spec(&self) -> &ToolSpec {
///         static SPEC: OnceLock<ToolSpec> = OnceLock::new();
///         SPEC.get_or_init(|| {
///             ToolSpec::builder("echo", "Repeat the text back.")
///                 .input_schema(ToolSchema::from_value(json!({
///                     "type": "object",
///                     "properties": {"text": {"type": "string"}},
///                     "required": ["text"],
///                     "additionalProperties": false
///                 })))
///                 .safety(ToolSafety::pure())
///                 .build()
///                 .expect("a valid spec")
///         })
///     }
///
///     async fn call(&self, _: &(), _: &ToolRuntime, args: Value) -> CallResult {
///         Ok(ToolOutput::text(args["text"].as_str().unwrap_or_default()))
///     }
/// }
/// ```
///
/// A tool that never waits and reads nothing but its arguments is shorter as
/// an [`InstantTool`].
#[async_trait]
pub trait Tool<S: Shared = (), C: Shared = ()>: Send + Sync + 'static {
    /// The tool's spec. Must return the same spec every time (build it once).
    fn spec(&self) -> &ToolSpec;

    /// Runs one call with validated `arguments` (an object matching the input
    /// schema).
    async fn call(&self, state: &S, runtime: &ToolRuntime<C>, arguments: Value) -> CallResult;

    /// Whether this tool never waits: then the executor runs every attempt
    /// through [`call_now`](Tool::call_now), without a future, instead of
    /// [`call`](Tool::call). `#[tool]` says `true` for an `async fn` whose
    /// body has no `.await` (and no macro that might hide one); the default
    /// is `false`.
    fn never_waits(&self) -> bool {
        false
    }

    /// Runs one call at once, without a future. The executor calls it only
    /// when [`never_waits`](Tool::never_waits) is `true`, for every attempt,
    /// under the same panic guard, span and events as `call`; it must answer
    /// exactly as `call` would.
    ///
    /// The default, for a tool that waits, runs nothing and answers with a
    /// fatal error that says so.
    fn call_now(&self, state: &S, runtime: &ToolRuntime<C>, arguments: Value) -> CallResult {
        let _ = (state, runtime, arguments);
        Err(ToolError::fatal(format!(
            "tool `{}` waits: it answers through `call`, not `call_now`",
            self.spec().name
        )))
    }

    /// [`call_now`](Tool::call_now) with borrowed `arguments`: the executor
    /// uses it when the arguments are needed after the tool answers
    /// (`after_tool` hooks read them; a retried tool gets them again; an
    /// in-line event subscriber may read their digest on the call's last
    /// event, [`EventRef::args_hash`](crate::events::EventRef::args_hash)), so
    /// that a tool that decodes them from a reference (`#[tool]` does) costs
    /// no copy of them. It must answer exactly as `call_now` would.
    ///
    /// The default copies the arguments and answers through `call_now`.
    fn call_now_ref(&self, state: &S, runtime: &ToolRuntime<C>, arguments: &Value) -> CallResult {
        self.call_now(state, runtime, arguments.clone())
    }
}

#[async_trait]
impl<S: Shared, C: Shared, T: Tool<S, C> + ?Sized> Tool<S, C> for Arc<T> {
    fn spec(&self) -> &ToolSpec {
        (**self).spec()
    }

    async fn call(&self, state: &S, runtime: &ToolRuntime<C>, arguments: Value) -> CallResult {
        (**self).call(state, runtime, arguments).await
    }

    fn never_waits(&self) -> bool {
        (**self).never_waits()
    }

    fn call_now(&self, state: &S, runtime: &ToolRuntime<C>, arguments: Value) -> CallResult {
        (**self).call_now(state, runtime, arguments)
    }

    fn call_now_ref(&self, state: &S, runtime: &ToolRuntime<C>, arguments: &Value) -> CallResult {
        (**self).call_now_ref(state, runtime, arguments)
    }
}

/// A tool that answers at once from its arguments alone: no state, no run
/// context, no runtime, nothing to wait for. Implementing it makes the type a
/// [`Tool`] for every state and context type, one that
/// [never waits](Tool::never_waits): the executor answers its calls through
/// [`call_now`](Tool::call_now), without a future, and `call` gives the same
/// answer. A tool that needs more implements [`Tool`] (or uses `#[tool]`).
///
/// ```
/// use std::sync::OnceLock;
/// use serde_json::{json, Value};
/// use tinyagents_tools::prelude::*;
/// use tinyagents_tools::ToolSchema;
///
/// struct Upper;
///
/// impl InstantTool for Upper {
///     fn spec(&self) -> &ToolSpec {
///         static SPEC: OnceLock<ToolSpec> = OnceLock::new();
///         SPEC.get_or_init(|| {
///             ToolSpec::builder("upper", "Return the text in capitals.")
///                 .input_schema(ToolSchema::from_value(json!({
///                     "type": "object",
///                     "properties": {"text": {"type": "string"}},
///                     "required": ["text"],
///                     "additionalProperties": false
///                 })))
///                 .build()
///                 .expect("a valid spec")
///         })
///     }
///
///     fn answer(&self, arguments: Value) -> CallResult {
///         let text = arguments["text"].as_str().unwrap_or_default();
///         Ok(ToolOutput::text(text.to_uppercase()))
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let mut registry: ToolRegistry = ToolRegistry::new();
/// registry.register(Upper)?;
/// let executor = ToolExecutor::builder(registry, ()).build()?;
/// let run = RunContext::builder(()).build();
/// let result = executor
///     .execute(&run, &Turn::new(1), ToolCall::new("c1", "upper", r#"{"text":"hi"}"#))
///     .await;
/// assert_eq!(result.text(), "HI");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
pub trait InstantTool: Send + Sync + 'static {
    /// The tool's spec. Must return the same spec every time (build it once).
    fn spec(&self) -> &ToolSpec;

    /// Answers one call with validated `arguments` (an object matching the
    /// input schema).
    fn answer(&self, arguments: Value) -> CallResult;

    /// [`answer`](InstantTool::answer) with borrowed `arguments`, for when
    /// the executor needs them after the tool answers (see
    /// [`Tool::call_now_ref`]). Implement it when the tool can read them
    /// from a reference without copying them; it must answer exactly as
    /// `answer` would. The default copies them and calls `answer`.
    fn answer_ref(&self, arguments: &Value) -> CallResult {
        self.answer(arguments.clone())
    }
}

// A type that is not a `Tool` is reported as such, not as a missing
// `InstantTool`.
#[diagnostic::do_not_recommend]
#[async_trait]
impl<S: Shared, C: Shared, T: InstantTool> Tool<S, C> for T {
    fn spec(&self) -> &ToolSpec {
        InstantTool::spec(self)
    }

    async fn call(&self, _: &S, _: &ToolRuntime<C>, arguments: Value) -> CallResult {
        self.answer(arguments)
    }

    fn never_waits(&self) -> bool {
        true
    }

    fn call_now(&self, _: &S, _: &ToolRuntime<C>, arguments: Value) -> CallResult {
        self.answer(arguments)
    }

    fn call_now_ref(&self, _: &S, _: &ToolRuntime<C>, arguments: &Value) -> CallResult {
        self.answer_ref(arguments)
    }
}
