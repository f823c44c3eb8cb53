//! The [`Tool`] trait (a spec and an async call), the groups tools come in
//! ([`Toolset`](crate::registry::Toolset), a `#[tools]` [`ToolService`]) and [`ToolSearch`], the tool
//! that finds the others.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

use crate::error::ToolError;
use crate::output::ToolOutput;
use crate::runtime::ToolRuntime;
use crate::spec::ToolSpec;

pub(crate) mod search;
pub(crate) mod service;

pub use search::ToolSearch;
pub use service::ToolService;

/// What one call of a tool answers: its output, or a classified error. The
/// return type of [`Tool::call`].
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
/// A `#[tool]` on a plain (not `async`) fn makes a tool whose calls the
/// executor answers at once, without a future; an `async fn` always answers
/// through [`call`](Tool::call).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a tool for state `{S}` and context `{C}`",
    label = "not a `Tool<{S}, {C}>`",
    note = "a registry holds tools of one state and context type, and `ToolRegistry::new()` is the registry of tools with neither (`ToolRegistry<(), ()>`): for tools with state `AppState`, make it with `ToolRegistry::<AppState>::default()` (or `ToolRegistry::default()`, and the executor's state names the type)",
    note = "a `#[tool]` fn is registered by its tool type, the fn's name in PascalCase plus `Tool`: `registry.register(WeatherTool)` for `fn weather`"
)]
#[async_trait]
pub trait Tool<S: Shared = (), C: Shared = ()>: Send + Sync + 'static {
    /// The tool's spec. Must return the same spec every time (build it once).
    fn spec(&self) -> &ToolSpec;

    /// Runs one call with validated `arguments` (an object matching the input
    /// schema).
    async fn call(&self, state: &S, runtime: &ToolRuntime<C>, arguments: Value) -> CallResult;

    /// Not public API: `#[tool]` implements it for a plain fn, whose calls
    /// the executor then answers without a future. Its type may change in
    /// any release.
    #[doc(hidden)]
    fn __inline(&self) -> Option<&dyn InlineCall<S, C>> {
        None
    }
}

/// Not public API: how the executor answers at once a call of a tool made
/// by `#[tool]` from a plain fn (reached through `tool_macro` only).
#[doc(hidden)]
pub trait InlineCall<S, C>: Send + Sync {
    /// Runs one call at once with borrowed, validated `arguments`; answers
    /// exactly as [`Tool::call`] would, with the runtime `runtime` makes.
    fn call_inline(
        &self,
        state: &S,
        runtime: &InlineRuntime<'_, C>,
        arguments: &Value,
    ) -> CallResult;
}

/// Not public API: the [`ToolRuntime`] of a call answered at once
/// ([`InlineCall`]), made the first time the tool asks for it. A tool that
/// injects nothing never asks, and its call makes no runtime.
#[doc(hidden)]
pub struct InlineRuntime<'a, C> {
    source: RuntimeSource<'a, C>,
    made: std::cell::OnceCell<ToolRuntime<C>>,
}

/// Where an [`InlineRuntime`] gets its runtime.
enum RuntimeSource<'a, C> {
    /// One made already.
    Made(&'a ToolRuntime<C>),
    /// Made by this, when first asked for.
    Make(&'a dyn Fn() -> ToolRuntime<C>),
}

impl<'a, C> InlineRuntime<'a, C> {
    /// The runtime `make` makes, once, if the tool asks for one.
    pub fn lazy(make: &'a dyn Fn() -> ToolRuntime<C>) -> Self {
        InlineRuntime {
            source: RuntimeSource::Make(make),
            made: std::cell::OnceCell::new(),
        }
    }

    /// The call's runtime (the same one however often it is asked for).
    #[inline]
    pub fn get(&self) -> &ToolRuntime<C> {
        match self.source {
            RuntimeSource::Made(runtime) => runtime,
            RuntimeSource::Make(make) => self.made.get_or_init(make),
        }
    }
}

impl<'a, C> From<&'a ToolRuntime<C>> for InlineRuntime<'a, C> {
    /// A runtime made already (a test calling a tool at once).
    fn from(runtime: &'a ToolRuntime<C>) -> Self {
        InlineRuntime {
            source: RuntimeSource::Made(runtime),
            made: std::cell::OnceCell::new(),
        }
    }
}

/// A boxed call future, as `#[async_trait]` writes [`Tool::call`].
type CallFuture<'a> = Pin<Box<dyn Future<Output = CallResult> + Send + 'a>>;

/// A shared tool: its calls are `T`'s own futures, handed on without a box
/// of their own (the signature is the one `#[async_trait]` gives
/// [`Tool::call`]).
impl<S: Shared, C: Shared, T: Tool<S, C> + ?Sized> Tool<S, C> for Arc<T> {
    fn spec(&self) -> &ToolSpec {
        (**self).spec()
    }

    fn call<'s, 'a, 'r, 'f>(
        &'s self,
        state: &'a S,
        runtime: &'r ToolRuntime<C>,
        arguments: Value,
    ) -> CallFuture<'f>
    where
        's: 'f,
        'a: 'f,
        'r: 'f,
        Self: 'f,
    {
        (**self).call(state, runtime, arguments)
    }

    fn __inline(&self) -> Option<&dyn InlineCall<S, C>> {
        (**self).__inline()
    }
}

/// Implements [`Tool`], for every state and context, for one of the crate's
/// own stateless tools: `$spec` is its spec (built once), `$answer` a
/// `fn(&Self, &Value) -> CallResult` that answers a call at once (so the
/// executor needs no future for it).
macro_rules! answered_at_once {
    ($tool:ty, spec: $spec:expr, answer: $answer:expr) => {
        #[::async_trait::async_trait]
        impl<S: $crate::tool::Shared, C: $crate::tool::Shared> $crate::tool::Tool<S, C> for $tool {
            fn spec(&self) -> &$crate::spec::ToolSpec {
                $spec
            }

            async fn call(
                &self,
                _: &S,
                _: &$crate::runtime::ToolRuntime<C>,
                arguments: ::serde_json::Value,
            ) -> $crate::tool::CallResult {
                ($answer)(self, &arguments)
            }

            fn __inline(&self) -> Option<&dyn $crate::tool::InlineCall<S, C>> {
                Some(self)
            }
        }

        impl<S: $crate::tool::Shared, C: $crate::tool::Shared> $crate::tool::InlineCall<S, C>
            for $tool
        {
            fn call_inline(
                &self,
                _: &S,
                _: &$crate::tool::InlineRuntime<'_, C>,
                arguments: &::serde_json::Value,
            ) -> $crate::tool::CallResult {
                ($answer)(self, arguments)
            }
        }
    };
}

pub(crate) use answered_at_once;
