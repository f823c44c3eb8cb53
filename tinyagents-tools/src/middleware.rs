//! [`Middleware`]: code that runs around every tool call.
//!
//! Middleware is composed as an onion in registration order: `before_tool`
//! runs first-registered first, `after_tool` runs in reverse. A
//! `before_tool` may
//! - let the call go on ([`BeforeOutcome::Continue`]), possibly after
//!   changing the arguments through [`BeforeToolCtx::arguments_mut`] (changed
//!   arguments are validated against the schema again before anything else
//!   sees them);
//! - answer the call itself ([`BeforeOutcome::Respond`]): the tool does not
//!   run, and the `after_tool` of the middleware registered *before* this one
//!   still sees the answer;
//! - refuse the call ([`BeforeOutcome::Deny`], or `Err(ToolError)`): the tool
//!   does not run, no `after_tool` runs, and a `tool.rejected` event names
//!   the refusing policy.
//!
//! `after_tool` sees the outcome of the call (the tool's output or its
//! error, after retries) and may replace it. Policies (confirmation,
//! read-only mode, allow lists, redaction, ...) are middleware: the context
//! gives them the spec, the run, the turn, the state and a per-call scratch
//! map ([`Extensions`]) shared between a call's `before_tool` and
//! `after_tool`.
//!
//! A hook a middleware does not write costs nothing: the executor sees,
//! on the first call, that the trait's default ran for that middleware
//! itself, and calls that hook no more. An `Arc<M>` is a middleware too,
//! so an application can add one and keep a handle on it.

use std::any::TypeId;
use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

use crate::approval::{ApprovalRecord, ApprovalRequest};
use crate::error::ToolError;
use crate::events::{EventBus, EventKind, ToolEvent};
use crate::ids::{CallName, ToolCallId};
use crate::output::ToolOutput;
use crate::runtime::RunContext;
use crate::runtime::Turn;
use crate::runtime::{CallDraw, Extensions};
use crate::spec::SafetyItem;
use crate::spec::ToolSpec;
use crate::tool::Shared;

/// What a `before_tool` decided.
#[derive(Debug, Clone, PartialEq)]
pub enum BeforeOutcome {
    /// Go on to the next middleware, then the tool.
    Continue,
    /// Answer the call with this output; the tool does not run.
    Respond(ToolOutput),
    /// Refuse the call. `policy` names the refusing policy in the
    /// `tool.rejected` event; `reason` is shown to the model.
    Deny {
        /// The policy's name.
        policy: Cow<'static, str>,
        /// Why, for the model.
        reason: String,
    },
    /// Neither run nor refuse it yet: it waits for a person's decision on
    /// `request`. With a [journal](crate::journal) the call ends
    /// `pending_approval` ([`ToolResult::pending`](crate::ToolResult::pending))
    /// and the request waits there; without one there is nowhere to wait,
    /// and the call is refused.
    AwaitApproval(Box<ApprovalRequest>),
}

impl BeforeOutcome {
    /// A refusal by `policy` with a model-facing `reason`.
    pub fn deny(policy: impl Into<Cow<'static, str>>, reason: impl Into<String>) -> Self {
        BeforeOutcome::Deny {
            policy: policy.into(),
            reason: reason.into(),
        }
    }
}

/// What both hook contexts show of a call: what it is and where it runs.
pub(crate) struct CallView<'a, S, C> {
    pub(crate) spec: &'a ToolSpec,
    pub(crate) called_name: &'a CallName,
    pub(crate) call_id: &'a ToolCallId,
    pub(crate) run: &'a RunContext<C>,
    pub(crate) turn: &'a Turn,
    pub(crate) state: &'a S,
}

// Only references: copied whatever `S` and `C` are.
impl<S, C> Clone for CallView<'_, S, C> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S, C> Copy for CallView<'_, S, C> {}

/// Tells the executor that a hook it called is the trait's default for the
/// middleware it called it on, so that it calls that hook no more.
///
/// The executor sets `called` to the type it added the middleware as; the
/// default hooks mark `default_ran` only when they run for that very type
/// (a middleware of the application's that calls another one's default
/// hook is not taken for a default), and an `Arc<M>` hands the question on
/// to `M`.
#[derive(Clone, Copy)]
pub(crate) struct Probe {
    called: TypeId,
    pub(crate) default_ran: bool,
}

impl Probe {
    /// A probe for a hook of the middleware added as type `called`.
    pub(crate) fn new(called: TypeId) -> Self {
        Probe {
            called,
            default_ran: false,
        }
    }

    /// The trait's default hook of `M` is running.
    fn default_of<M: ?Sized + 'static>(&mut self) {
        if self.called == TypeId::of::<M>() {
            self.default_ran = true;
        }
    }

    /// `Arc<M>`'s hook hands the call on to `M`'s.
    fn forwarded<M: ?Sized + 'static>(&mut self) {
        if self.called == TypeId::of::<Arc<M>>() {
            self.called = TypeId::of::<M>();
        }
    }
}

/// The accessors both hook contexts share, read from their [`CallView`].
macro_rules! call_accessors {
    () => {
        /// The tool's spec (safety metadata included).
        pub fn spec(&self) -> &ToolSpec {
            self.call.spec
        }

        /// The tool name as the model called it (an alias or the canonical
        /// name).
        pub fn called_name(&self) -> &str {
            self.call.called_name.as_str()
        }

        /// The call id.
        pub fn call_id(&self) -> &ToolCallId {
            self.call.call_id
        }

        /// The run.
        pub fn run(&self) -> &RunContext<C> {
            self.call.run
        }

        /// The turn.
        pub fn turn(&self) -> &Turn {
            self.call.turn
        }

        /// The executor's state.
        pub fn state(&self) -> &S {
            self.call.state
        }
    };
}

/// What a [`before_tool`](Middleware::before_tool) hook answers: go on,
/// answer in the tool's place, or refuse with a classified error.
pub type BeforeResult = Result<BeforeOutcome, ToolError>;

/// What `before_tool` sees of a call that passed every executor check.
pub struct BeforeToolCtx<'a, S = (), C = ()> {
    pub(crate) call: CallView<'a, S, C>,
    pub(crate) arguments: &'a mut Value,
    pub(crate) arguments_changed: bool,
    pub(crate) extensions: &'a mut Extensions,
    pub(crate) events: &'a EventBus,
    pub(crate) approvals: Approvals<'a>,
    pub(crate) draw: Option<&'a CallDraw>,
    pub(crate) probe: Probe,
}

/// What a `before_tool` context knows of the call's approval, and what a
/// policy decided about it there.
#[derive(Default)]
pub(crate) struct Approvals<'a> {
    /// The decision the journal holds for this call (or a standing grant
    /// kept there that covers it).
    pub(crate) journaled: Option<&'a ApprovalRecord>,
    /// The executor keeps a journal: a deferred approval can wait there.
    pub(crate) durable: bool,
    /// A decision a policy made during this hook, for the journal (boxed:
    /// every call's hook context keeps room for it, few calls make one).
    pub(crate) decided: Option<Box<ApprovalRecord>>,
}

impl<'a, S, C> BeforeToolCtx<'a, S, C> {
    call_accessors!();

    /// The approval decision kept for this call in the executor's
    /// [journal](crate::journal): a decision made for this very call (from
    /// any instance, maybe days ago), or a standing grant kept there that
    /// covers it. `None` without a journal or decision.
    pub fn journaled_approval(&self) -> Option<&ApprovalRecord> {
        self.approvals.journaled
    }

    /// True when the executor keeps a [journal](crate::journal), so a call
    /// whose approval is not decided now can wait for it
    /// ([`BeforeOutcome::AwaitApproval`]).
    pub fn can_wait_for_approval(&self) -> bool {
        self.approvals.durable
    }

    /// What the call is given (its time and random seed), when its tool
    /// takes them (an injected `Clock`, `Random` or `Ids`): the draw its
    /// journal record keeps, or the one made when it was admitted. `None`
    /// for a tool that takes neither.
    pub fn draw(&self) -> Option<CallDraw> {
        self.draw.copied()
    }

    /// Records, for the journal, an approval decided during this hook (by
    /// an approver answering at once, or a standing grant of the
    /// policy's own): the journal keeps it with the call.
    pub fn record_approval(&mut self, record: ApprovalRecord) {
        self.approvals.decided = Some(Box::new(record));
    }

    /// The validated arguments.
    pub fn arguments(&self) -> &Value {
        self.arguments
    }

    /// The arguments, to change. Changed arguments are validated again before
    /// the next middleware or the tool sees them.
    pub fn arguments_mut(&mut self) -> &mut Value {
        self.arguments_changed = true;
        self.arguments
    }

    /// Per-call scratch space shared with the same call's `after_tool`.
    pub fn extensions(&mut self) -> &mut Extensions {
        self.extensions
    }

    /// Emits a `tool.custom` event named `name` for this call (a policy
    /// reporting what it decided). `data` must hold no secret: it is
    /// delivered as given.
    pub fn emit(&self, name: &str, data: Value) {
        if !self.events.wants(EventKind::Custom) {
            return;
        }
        let call = &self.call;
        let mut event = ToolEvent::new(
            EventKind::Custom,
            call.run.run_id().clone(),
            call.run.thread_id().clone(),
            call.call_id.clone(),
            call.called_name.clone(),
            1,
        );
        event.name = Some(name.to_owned());
        event.data = Some(data);
        self.events.emit(event);
    }
}

/// What `after_tool` sees: the call and its outcome, which it may replace.
pub struct AfterToolCtx<'a, S = (), C = ()> {
    pub(crate) call: CallView<'a, S, C>,
    pub(crate) arguments: &'a Value,
    pub(crate) attempts: u32,
    pub(crate) outcome: &'a mut Result<ToolOutput, ToolError>,
    pub(crate) extensions: &'a mut Extensions,
    pub(crate) probe: Probe,
}

impl<'a, S, C> AfterToolCtx<'a, S, C> {
    call_accessors!();

    /// The arguments the tool ran with.
    pub fn arguments(&self) -> &Value {
        self.arguments
    }

    /// How many attempts were made (0 when a middleware answered).
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// The outcome: the tool's output or its classified error.
    pub fn outcome(&self) -> &Result<ToolOutput, ToolError> {
        self.outcome
    }

    /// The outcome, to change.
    pub fn outcome_mut(&mut self) -> &mut Result<ToolOutput, ToolError> {
        self.outcome
    }

    /// Per-call scratch space filled by `before_tool`.
    pub fn extensions(&mut self) -> &mut Extensions {
        self.extensions
    }
}

/// Code that runs around every tool call of an executor.
///
/// Both hooks default to doing nothing, so a middleware implements only what
/// it needs; a hook it leaves to the default is not called at all once the
/// executor has seen it is the default (on the first call).
///
/// `Arc<M>` is a middleware when `M` is: add `Arc::clone(&policy)` to keep
/// a handle on a policy the executor also runs.
///
/// ```
/// use tinyagents_tools::middleware::{BeforeOutcome, BeforeToolCtx};
/// use tinyagents_tools::{Middleware, ToolError, async_trait};
///
/// /// Refuses every tool that changes something.
/// struct ReadOnlyMode;
///
/// #[async_trait]
/// impl Middleware for ReadOnlyMode {
///     fn name(&self) -> &str { "read_only_mode" }
///     async fn before_tool(&self, ctx: &mut BeforeToolCtx<'_>) -> Result<BeforeOutcome, ToolError> {
///         if ctx.spec().safety.is_read_only() {
///             Ok(BeforeOutcome::Continue)
///         } else {
///             Ok(BeforeOutcome::deny("read_only_mode", "this run may only read"))
///         }
///     }
/// }
/// ```
#[async_trait]
pub trait Middleware<S: Shared = (), C: Shared = ()>: Send + Sync + 'static {
    /// A short stable name, used as the policy name when this middleware
    /// refuses a call with an error.
    fn name(&self) -> &str;

    /// The declared safety items this middleware enforces (none by
    /// default). [`ToolExecutorBuilder::build`](crate::executor::ToolExecutorBuilder::build)
    /// reads it to check that every item a registered tool declares has a
    /// policy; a middleware that takes over an item's enforcement says so
    /// here.
    fn enforces(&self) -> &[SafetyItem] {
        &[]
    }

    /// Runs before the tool, after the executor's own checks. The default
    /// lets the call go on.
    async fn before_tool(&self, ctx: &mut BeforeToolCtx<'_, S, C>) -> BeforeResult {
        ctx.probe.default_of::<Self>();
        Ok(BeforeOutcome::Continue)
    }

    /// Runs after the tool (or after a later middleware answered), and may
    /// change the outcome. The default does nothing.
    async fn after_tool(&self, ctx: &mut AfterToolCtx<'_, S, C>) {
        ctx.probe.default_of::<Self>();
    }
}

/// A boxed hook future, as `#[async_trait]` writes the trait's hooks.
type Hook<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The shared middleware: its hooks are `M`'s own futures, handed on
/// without a box of their own. (The signatures are the ones
/// `#[async_trait]` gives the trait's hooks.)
impl<S: Shared, C: Shared, M: Middleware<S, C> + ?Sized> Middleware<S, C> for Arc<M> {
    fn name(&self) -> &str {
        (**self).name()
    }

    fn enforces(&self) -> &[SafetyItem] {
        (**self).enforces()
    }

    fn before_tool<'s, 'r, 'c, 'f>(
        &'s self,
        ctx: &'r mut BeforeToolCtx<'c, S, C>,
    ) -> Hook<'f, BeforeResult>
    where
        's: 'f,
        'r: 'f,
        'c: 'f,
        Self: 'f,
    {
        ctx.probe.forwarded::<M>();
        (**self).before_tool(ctx)
    }

    fn after_tool<'s, 'r, 'c, 'f>(&'s self, ctx: &'r mut AfterToolCtx<'c, S, C>) -> Hook<'f, ()>
    where
        's: 'f,
        'r: 'f,
        'c: 'f,
        Self: 'f,
    {
        ctx.probe.forwarded::<M>();
        (**self).after_tool(ctx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Implements neither hook.
    struct Neither;

    impl Middleware for Neither {
        fn name(&self) -> &str {
            "neither"
        }
    }

    /// Runs its own code around `Neither`'s default hooks.
    struct Around(Neither);

    #[async_trait]
    impl Middleware for Around {
        fn name(&self) -> &str {
            "around"
        }

        async fn before_tool(&self, ctx: &mut BeforeToolCtx<'_>) -> BeforeResult {
            self.0.before_tool(ctx).await
        }

        async fn after_tool(&self, ctx: &mut AfterToolCtx<'_>) {
            self.0.after_tool(ctx).await;
        }
    }

    /// What a probe says after `mw`'s two hooks ran on contexts probing
    /// for type `called`: (before was the default, after was the default).
    async fn defaults_seen(mw: &dyn Middleware, called: TypeId) -> (bool, bool) {
        let spec = ToolSpec::builder("t", "A tool.").build().unwrap();
        let run = RunContext::empty();
        let turn = Turn::new(1);
        let call_id = ToolCallId::new("c1");
        let events = EventBus::new();
        let call = CallView {
            spec: &spec,
            called_name: &CallName::from("t"),
            call_id: &call_id,
            run: &run,
            turn: &turn,
            state: &(),
        };
        let mut extensions = Extensions::new();
        let mut null = Value::Null;
        let mut before = BeforeToolCtx {
            call,
            arguments: &mut null,
            arguments_changed: false,
            extensions: &mut extensions,
            events: &events,
            approvals: Approvals::default(),
            draw: None,
            probe: Probe::new(called),
        };
        assert!(matches!(
            mw.before_tool(&mut before).await,
            Ok(BeforeOutcome::Continue)
        ));
        let before = before.probe.default_ran;

        let mut outcome = Ok(ToolOutput::text("done"));
        let mut after = AfterToolCtx {
            call,
            arguments: &Value::Null,
            attempts: 1,
            outcome: &mut outcome,
            extensions: &mut extensions,
            probe: Probe::new(called),
        };
        mw.after_tool(&mut after).await;
        let after = after.probe.default_ran;
        assert_eq!(outcome, Ok(ToolOutput::text("done")));
        (before, after)
    }

    #[tokio::test]
    async fn the_default_hooks_let_the_call_go_on_keep_the_outcome_and_say_they_ran() {
        assert_eq!(
            defaults_seen(&Neither, TypeId::of::<Neither>()).await,
            (true, true)
        );
    }

    #[tokio::test]
    async fn a_middleware_running_another_ones_default_hooks_is_not_taken_for_a_default() {
        let around = Around(Neither);
        assert_eq!(
            defaults_seen(&around, TypeId::of::<Around>()).await,
            (false, false)
        );
    }

    #[tokio::test]
    async fn a_shared_middleware_hands_the_question_to_the_one_inside() {
        let shared = Arc::new(Neither);
        assert_eq!(
            defaults_seen(&shared, TypeId::of::<Arc<Neither>>()).await,
            (true, true)
        );
        let twice = Arc::new(Arc::new(Neither));
        assert_eq!(
            defaults_seen(&twice, TypeId::of::<Arc<Arc<Neither>>>()).await,
            (true, true)
        );
        let around = Arc::new(Around(Neither));
        assert_eq!(
            defaults_seen(&around, TypeId::of::<Arc<Around>>()).await,
            (false, false)
        );
        // A shared middleware of unknown type is never skipped.
        let unknown: Arc<dyn Middleware> = Arc::new(Neither);
        assert_eq!(
            defaults_seen(&unknown, TypeId::of::<Arc<dyn Middleware>>()).await,
            (false, false)
        );
    }
}
