//! Hidden runtime injection: the [`Inject`] trait and the built-in
//! injectables.
//!
//! A tool parameter marked `#[inject]` is built from the call's runtime parts,
//! in the style of axum's extractors, and never appears in the schema. Add
//! your own injectable by implementing [`Inject`].
//!
//! | parameter type | receives |
//! | --- | --- |
//! | [`RunContext<C>`] | the whole run |
//! | [`Ctx<C>`] | the application's context value |
//! | [`ThreadId`], [`RunId`], [`ToolCallId`] | the ids |
//! | [`ToolRuntime<C>`] | the whole per-call runtime |
//! | [`State<T>`] | the executor's state (or a part of it, via [`FromState`]) |
//! | [`Store<T>`] | a store registered on the run |
//! | [`Resource<T>`] | a client or resource registered on the run |
//! | [`Secret<T>`] | a secret registered on the run |
//! | [`EventEmitter`] | custom events for this call |
//! | [`StreamWriter`] | progress for this call |
//! | [`CancellationToken`] | the call's cancellation token |
//! | [`WorkspaceRoot`] | the run's workspace root |
//! | [`Clock`] | the call's time (the same on every reading and every redelivery) |
//! | [`Random`] | the call's random values (a stream seeded by the call's seed) |
//! | [`Ids`] | new ids, drawn from the call's seed (or the run's id source) |
//!
//! [`Clock`], [`Random`] and [`Ids`] read the call's
//! [`CallDraw`](crate::runtime::CallDraw): drawn once per call from its run,
//! and kept by a journal, so a tool declared `#[tool(deterministic_given_injected)]`
//! computes the same result when its call is resumed or delivered again.

use std::fmt;
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::error::{ErrorClass, ErrorKind, ToolError};
use crate::ids::{RunId, ThreadId, ToolCallId};
use crate::runtime::Secret;
use crate::runtime::{Clock, Ids, Random};
use crate::runtime::{Ctx, EventEmitter, RunContext, StreamWriter, ToolRuntime};
use crate::spec::InjectedKind;

/// Why a hidden parameter could not be built.
///
/// Its `Display` is for the application; the model only ever sees the
/// generic text of [`InjectError::into_tool_error`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InjectError {
    /// No store of that type is registered on the run.
    #[error("no store of type `{0}` is registered on the run")]
    MissingStore(&'static str),
    /// No secret of that type is registered on the run.
    #[error("no secret of type `{0}` is registered on the run")]
    MissingSecret(&'static str),
    /// No resource of that type is registered on the run.
    #[error("no resource of type `{0}` is registered on the run")]
    MissingResource(&'static str),
    /// The run has no workspace root.
    #[error("the run has no workspace root")]
    MissingWorkspace,
    /// An application-defined injectable failed.
    #[error("`{type_name}` could not be injected: {message}")]
    Custom {
        /// The injected type.
        type_name: &'static str,
        /// What went wrong (for the application only).
        message: String,
    },
}

impl InjectError {
    /// The type that could not be injected.
    pub fn type_name(&self) -> &'static str {
        match self {
            InjectError::MissingStore(t)
            | InjectError::MissingSecret(t)
            | InjectError::MissingResource(t) => t,
            InjectError::MissingWorkspace => std::any::type_name::<WorkspaceRoot>(),
            InjectError::Custom { type_name, .. } => type_name,
        }
    }

    /// A fatal-class [`ToolError`] whose model-facing text names no internals;
    /// this error is kept as its source for the application.
    pub fn into_tool_error(self) -> ToolError {
        ToolError::new(
            ErrorClass::Fatal,
            ErrorKind::InjectionFailed {
                type_name: self.type_name(),
            },
            "the tool could not run: a resource it needs is not available",
        )
        .with_source(self)
    }
}

impl From<InjectError> for ToolError {
    fn from(err: InjectError) -> Self {
        err.into_tool_error()
    }
}

/// A value built from a call's runtime parts for an `#[inject]` parameter.
///
/// `S` is the executor's state type and `C` the run's context type. Implement
/// it for your own types to inject them:
///
/// ```
/// use tinyagents_tools::inject::InjectError;
/// use tinyagents_tools::{Inject, ToolRuntime};
///
/// /// The user the run acts for.
/// struct CurrentUser(String);
///
/// struct Session { user: String }
///
/// impl<S> Inject<S, Session> for CurrentUser {
///     fn inject(_state: &S, runtime: &ToolRuntime<Session>) -> Result<Self, InjectError> {
///         Ok(CurrentUser(runtime.context().user.clone()))
///     }
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be injected into a tool",
    label = "not injectable",
    note = "#[inject] takes a type that implements `tinyagents_tools::Inject<S, C>`: Ctx<C>, RunContext<C>, ThreadId, RunId, ToolCallId, ToolRuntime<C>, State<T>, Store<T>, Resource<T>, Secret<T>, EventEmitter, StreamWriter, CancellationToken, WorkspaceRoot, Clock, Random or Ids",
    note = "implement `Inject<S, C>` for `{Self}` to inject your own type; if it injects only for one state or context type, name them with #[tool(state = .., context = ..)]; if the model should supply the value, remove #[inject] and put it in the argument struct"
)]
pub trait Inject<S, C>: Sized + Send {
    /// What kind of value this is, listed in the tool's spec.
    const KIND: InjectedKind = InjectedKind::Custom;

    /// Builds the value for one call.
    fn inject(state: &S, runtime: &ToolRuntime<C>) -> Result<Self, InjectError>;
}

/// `Inject` for the values a call reads from its runtime alone, whatever the
/// state: per row the type, its [`InjectedKind`] and how `runtime` gives it.
macro_rules! from_runtime {
    ($($ty:ty => $kind:ident, |$runtime:ident| $read:expr;)*) => {$(
        impl<S, C: Send + Sync> Inject<S, C> for $ty {
            const KIND: InjectedKind = InjectedKind::$kind;
            fn inject(_: &S, $runtime: &ToolRuntime<C>) -> Result<Self, InjectError> {
                Ok($read)
            }
        }
    )*};
}

from_runtime! {
    RunContext<C> => RunContext, |runtime| runtime.run().clone();
    Ctx<C> => Context, |runtime| Ctx::from(runtime.run().clone());
    ToolRuntime<C> => Runtime, |runtime| runtime.clone();
    ThreadId => ThreadId, |runtime| runtime.run().thread_id().clone();
    RunId => RunId, |runtime| runtime.run().run_id().clone();
    ToolCallId => ToolCallId, |runtime| runtime.call_id().clone();
    CancellationToken => Cancellation, |runtime| runtime.cancellation().clone();
    EventEmitter => Events, |runtime| runtime.emitter();
    StreamWriter => Stream, |runtime| runtime.stream_writer();
    Clock => Clock, |runtime| Clock::new(runtime.draw());
    Random => Random, |runtime| Random::new(runtime.draw().seed);
    Ids => Ids, |runtime| match runtime.run().id_source() {
        Some(source) => Ids::from_source(Arc::clone(source)),
        None => Ids::drawn(runtime.draw().seed),
    };
}

impl<S, C, T: Send + Sync + 'static> Inject<S, C> for Secret<T> {
    const KIND: InjectedKind = InjectedKind::Secret;
    fn inject(_: &S, runtime: &ToolRuntime<C>) -> Result<Self, InjectError> {
        runtime
            .run()
            .secrets()
            .get::<T>()
            .ok_or(InjectError::MissingSecret(std::any::type_name::<T>()))
    }
}

/// Builds a part of the executor's state `S`; [`State<T>`] uses it.
///
/// Every `T: Clone` is a part of itself. Implement it to inject a part of a
/// larger state, as axum's `FromRef` does.
#[diagnostic::on_unimplemented(
    message = "this tool takes `State<{Self}>`, but the state is `{S}`",
    label = "not a part of the state `{S}`",
    note = "inject `State<{S}>`, or implement `FromState<{S}>` for `{Self}` to take a part of the state; name the executor's state with #[tool(state = ..)]"
)]
pub trait FromState<S> {
    /// Takes the part out of the state.
    fn from_state(state: &S) -> Self;
}

impl<T: Clone> FromState<T> for T {
    fn from_state(state: &T) -> Self {
        state.clone()
    }
}

/// The application state an executor is built with: the state itself, an
/// `Arc` of it, or a `Box` of it.
#[diagnostic::on_unimplemented(
    message = "this tool needs state of type `{S}`; the executor was built with `{Self}`",
    label = "the executor's state",
    note = "build the executor with a `{S}` (or an `Arc<{S}>`), or change the tool's `State<..>` parameter or #[tool(state = ..)] to `{Self}`"
)]
pub trait IntoState<S> {
    /// The state, shared.
    fn into_state(self) -> Arc<S>;
}

impl<S> IntoState<S> for S {
    fn into_state(self) -> Arc<S> {
        Arc::new(self)
    }
}

impl<S> IntoState<S> for Arc<S> {
    fn into_state(self) -> Arc<S> {
        self
    }
}

impl<S> IntoState<S> for Box<S> {
    fn into_state(self) -> Arc<S> {
        Arc::from(self)
    }
}

/// The executor's state, or a part of it, injected by
/// `#[inject] state: State<T>`.
///
/// A wrapper rather than `&S`, so that it cannot overlap the other injectables.
/// Keep the state cheap to clone (an `Arc` around it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct State<T>(pub T);

impl<T> Deref for State<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<S, C, T: FromState<S> + Send> Inject<S, C> for State<T> {
    const KIND: InjectedKind = InjectedKind::State;
    fn inject(state: &S, _: &ToolRuntime<C>) -> Result<Self, InjectError> {
        Ok(State(T::from_state(state)))
    }
}

macro_rules! arc_handle {
    ($(#[$meta:meta])* $name:ident, $kind:ident, $getter:ident, $missing:ident) => {
        $(#[$meta])*
        pub struct $name<T: ?Sized>(Arc<T>);

        impl<T: ?Sized> $name<T> {
            /// Wraps a shared value (for tests and hand-built runtimes).
            pub fn new(value: Arc<T>) -> Self {
                $name(value)
            }

            /// The shared value.
            pub fn arc(&self) -> &Arc<T> {
                &self.0
            }
        }

        impl<T: ?Sized> Deref for $name<T> {
            type Target = T;
            fn deref(&self) -> &T {
                &self.0
            }
        }

        impl<T: ?Sized> Clone for $name<T> {
            fn clone(&self) -> Self {
                $name(Arc::clone(&self.0))
            }
        }

        impl<T: ?Sized> fmt::Debug for $name<T> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}<{}>", stringify!($name), std::any::type_name::<T>())
            }
        }

        impl<S, C, T: Send + Sync + 'static> Inject<S, C> for $name<T> {
            const KIND: InjectedKind = InjectedKind::$kind;
            fn inject(_: &S, runtime: &ToolRuntime<C>) -> Result<Self, InjectError> {
                runtime
                    .run()
                    .$getter()
                    .get::<T>()
                    .map($name)
                    .ok_or(InjectError::$missing(std::any::type_name::<T>()))
            }
        }
    };
}

arc_handle! {
    /// A typed store registered on the run (`RunContext::builder(..).store(x)`),
    /// injected by `#[inject] docs: Store<DocIndex>`. Dereferences to `T`.
    Store, Store, stores, MissingStore
}

arc_handle! {
    /// A provider client or other resource registered on the run
    /// (`RunContext::builder(..).resource(x)`), injected by
    /// `#[inject] http: Resource<HttpClient>`. Dereferences to `T`.
    Resource, Resource, resources, MissingResource
}

/// The run's workspace root, injected by `#[inject] root: WorkspaceRoot`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceRoot(PathBuf);

impl WorkspaceRoot {
    /// The root path.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl<S, C> Inject<S, C> for WorkspaceRoot {
    const KIND: InjectedKind = InjectedKind::Workspace;
    fn inject(_: &S, runtime: &ToolRuntime<C>) -> Result<Self, InjectError> {
        runtime
            .run()
            .workspace_root()
            .map(|p| WorkspaceRoot(p.to_path_buf()))
            .ok_or(InjectError::MissingWorkspace)
    }
}
