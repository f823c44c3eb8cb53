//! One call's ten steps, from the provider's call to its [`ToolResult`]:
//! [`ToolExecutor::execute_in`] runs them in order, each a function named
//! for its step. The steps live beside, by concept: [`admit`] (1 to 3: the
//! tool, the arguments, limits and permits), [`middleware`] (4 and 7),
//! [`attempts`] (6), [`answer`] (5 and 8 to 10: `tool.started`, the
//! message, artifacts, events and the result) and [`durable`] (a journaled
//! call: the journal's admission before the steps, the write-ahead record
//! between 4 and 5, the answer kept after them).

mod admit;
mod answer;
mod attempts;
mod durable;
mod middleware;
mod span;

pub(super) use middleware::MiddlewareSlot;

use std::borrow::Cow;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::{Pin, pin};
use std::sync::{Arc, OnceLock};
use std::task::Poll;
use std::time::{Duration, SystemTime};

use futures_util::future::Either;
use tokio::time::Instant;

use crate::call::ToolCall;
use crate::error::panics;
use crate::events::Digest;
use crate::executor::batch::Place;
use crate::executor::{ToolExecutor, args};
use crate::ids::{CallName, ToolCallId};
use crate::output::ToolResult;
use crate::redact::Redactor;
use crate::runtime::Turn;
use crate::runtime::{CallDraw, RunContext};
use crate::spec::RedactionPolicy;
use crate::tool::Shared;
use admit::Permits;
use answer::{Done, Formatted, Stop};
use durable::DurableCx;
use span::call_span;

/// Takes the outcome of a step that may wait: one that is ready is taken
/// as it is, with no poll; only a step that waits is awaited. (The wait is
/// awaited whole, not moved out of the step's value: the call's future
/// then keeps one copy of it, not two.)
macro_rules! step {
    ($step:expr) => {
        match $step {
            Either::Left(ready) => ready.into_inner(),
            wait => wait.await,
        }
    };
}

/// What one call knows about itself while it goes through the steps.
struct CallCx<'a, C> {
    run: &'a RunContext<C>,
    /// The call's `execute_tool` span ([`call_span`]).
    span: &'a tracing::Span,
    /// The call's id.
    id: &'a ToolCallId,
    /// The called name (masked); the result takes a copy.
    name: &'a CallName,
    /// When the call arrived (with its batch, or alone when streamed), on
    /// tokio's clock.
    received: Instant,
    /// Time spent waiting so far (batch queue, permits, `before_tool`
    /// middleware), measured on tokio's clock: not the call's own time.
    waited: Duration,
    /// The digest of the arguments as they are now: made in step 2 when a
    /// queued subscriber may read it or the tool may take them, otherwise
    /// (`lend`) the first time a subscriber reads it; made again (or
    /// forgotten) when a hook changes them.
    args_hash: OnceLock<Digest<'static>>,
    /// The arguments stay with the call to its end (a tool reads them
    /// borrowed), and its events digest them there only when a subscriber
    /// asks: set when only in-line subscribers may read the digest.
    lend: bool,
    /// Masks secrets and the tool's patterns in what the call shows; `None`
    /// when there is nothing to mask.
    redactor: Option<Arc<Redactor>>,
    /// The run was seen live in step 1 and no code but the executor's ran
    /// since (no wait, no hook, no subscriber, no span): the first attempt
    /// need not ask again.
    seen_live: bool,
    /// The wall-clock time when the call was received, when a subscriber
    /// may want its events: they are dated from it on the call clock, with
    /// no reading of the wall clock, in the order and at the distance they
    /// were made.
    wall: Option<SystemTime>,
    /// The call's record and decisions, when the executor keeps a journal.
    durable: Option<&'a mut DurableCx>,
    /// What the call is given (time, seed), when its tool takes it: drawn
    /// when it is admitted (step 3), the same for every attempt.
    draw: Option<CallDraw>,
}

impl<C> CallCx<'_, C> {
    /// The time since the call was received, read now on the call clock
    /// (its own time is this less [`waited`](Self::waited)).
    #[inline]
    fn since_received(&self) -> Duration {
        Instant::now().saturating_duration_since(self.received)
    }
}

impl<S: Shared, C: Shared> ToolExecutor<S, C> {
    /// Runs one call through the ten steps listed on
    /// [`ToolExecutor::execute`]; `batch`, for a call of a batch or a
    /// streamed turn, is its place there (the turn's exclusion lock for
    /// `sequential` tools, when the call arrived, whether it may have
    /// waited for its place).
    ///
    /// Steps 1 to 9 stop at the first refusal or failure ([`Stop`]); step
    /// 10 answers either way. A panic anywhere in the steps is caught (and
    /// kept out of the process's panic output: [`panics`]) and answered as
    /// `panicked`.
    ///
    /// The call is taken apart before the future is made: the future keeps
    /// its parts, not the whole call beside them, and its arguments once,
    /// in the [`args::Pending`] step 2 parses them in. Its state is boxed:
    /// a caller moves the unpolled future (often several times) and moves
    /// two words, and the box, within glibc's thread cache (1,032 B; a
    /// lib test pins it), is served from there.
    pub(crate) fn execute_in(
        &self,
        run: &RunContext<C>,
        turn: &Turn,
        call: ToolCall,
        batch: Option<Place<'_>>,
    ) -> impl Future<Output = ToolResult> + Send {
        if self.journal.is_some() {
            return Either::Right(Box::pin(self.execute_journaled(run, turn, call, batch)));
        }
        let ToolCall {
            id,
            name,
            arguments,
            ..
        } = call;
        let parts = (id, name, args::Pending::new(arguments));
        Either::Left(Box::pin(self.execute_parts(run, turn, parts, batch, None)))
    }

    /// [`execute_in`](Self::execute_in) of a call's id, name and arguments.
    ///
    /// A plain fn returning the call's future, not an `async fn`: the
    /// future takes the parts as they are and uses them in place (an
    /// `async fn` would keep its parameters and the locals made from them
    /// side by side). Nothing is done before the first poll.
    #[expect(
        clippy::manual_async_fn,
        reason = "an async fn keeps its parameters twice in its future"
    )]
    pub(crate) fn execute_parts<'a>(
        &self,
        run: &'a RunContext<C>,
        turn: &Turn,
        (id, mut name, mut arguments): (ToolCallId, CallName, args::Pending),
        batch: Option<Place<'_>>,
        durable: Option<&'a mut DurableCx>,
    ) -> impl Future<Output = ToolResult> + Send {
        // What the future keeps across its waits is kept once: the call's
        // id and name where they were given (the name masked in place, the
        // steps' context borrowing both), no step's local beside them.
        async move {
            // Built once per call: it masks the called name here and serves
            // the steps until the tool (and its own policy) is known.
            let redactor = redactor_for(None, run);
            mask(&mut name, redactor.as_deref());
            let span = call_span(&name, &id);
            let mut cx = {
                let (received, waited) = arrival(batch);
                CallCx {
                    run,
                    span: &span,
                    id: &id,
                    name: &name,
                    received,
                    waited,
                    args_hash: OnceLock::new(),
                    lend: false,
                    redactor,
                    seen_live: false,
                    wall: self
                        .events
                        .is_active()
                        .then(|| crate::events::wall_clock_at(received)),
                    durable,
                    draw: None,
                }
            };
            // The arguments stay here, raw then parsed, so that the call's
            // last event can still read them (whatever step it stopped at).
            let outcome = {
                // Each poll runs in the call's span (entered by reference:
                // the future keeps no second handle to it), with panics kept
                // quiet and caught. (The steps' future is made where it is
                // pinned, not moved there.)
                let mut steps =
                    panics::Quiet(pin!(self.steps(&mut cx, turn, &mut arguments, batch)));
                std::future::poll_fn(|task| {
                    let _in_span = span.enter();
                    let polled = std::panic::catch_unwind(AssertUnwindSafe(|| {
                        Pin::new(&mut steps).poll(task)
                    }));
                    polled.unwrap_or_else(|_| Poll::Ready(Err(Stop::panicked())))
                })
                .await
            };
            let answered = std::panic::catch_unwind(AssertUnwindSafe(|| {
                let parsed = arguments.parsed();
                span.in_scope(|| panics::quietly(|| self.answer(&mut cx, outcome, parsed)))
            }));
            answered
                .unwrap_or_else(|_| self.answer(&mut cx, Err(Stop::panicked()), arguments.parsed()))
        }
    }

    /// Steps 1 to 9, in order; the first refusal or failure ends the call.
    /// A step that answers at once is a plain call; the waits a call may
    /// make (permits, hooks, a tool that waits, the artifact store) are
    /// awaited only when it makes them, the rare ones boxed so that the
    /// call keeps no room for them otherwise.
    #[expect(
        clippy::manual_async_fn,
        reason = "an async fn keeps its parameters twice in its future"
    )]
    fn steps<'s>(
        &'s self,
        cx: &'s mut CallCx<'_, C>,
        turn: &'s Turn,
        arguments: &'s mut args::Pending,
        batch: Option<Place<'s>>,
    ) -> impl Future<Output = Result<Done, Stop>> + Send + 's {
        // A block, not an `async fn`: its references are kept once.
        async move {
            let registered = self.resolve_tool(cx, turn)?;
            let has_permits = self.has_permits(registered, batch);
            cx.seen_live = self.middleware.is_empty()
                && !self.events.is_active()
                && cx.span.is_disabled()
                && !has_permits;
            let arguments = self.parse_arguments(cx, registered, arguments)?;
            self.admit(cx, turn, registered)?;
            let _permits = if has_permits {
                Box::pin(self.wait_for_permits(cx, turn, registered, batch)).await?
            } else {
                Permits::default()
            };
            // The hooks' outcome and the tool's end with this block: the
            // wait after it keeps no room for them.
            let Formatted { done, to_store } = {
                let mut before = if self.middleware.is_empty() {
                    None
                } else {
                    Some(self.before_tool(cx, turn, registered, arguments).await?)
                };
                let runs_body = before.as_ref().is_none_or(|b| b.answered.is_none());
                if runs_body {
                    if cx.durable.is_some() {
                        Box::pin(self.write_ahead(cx, registered, arguments)).await?;
                    }
                    self.emit_started(cx, registered, arguments);
                }
                let ran = step!(self.run_tool(cx, registered, arguments, before.as_mut()));
                let ran = match before.as_mut().filter(|b| self.has_after_tool(b)) {
                    Some(before) => {
                        self.after_tool(cx, turn, registered, before, arguments, ran)
                            .await
                    }
                    None => ran,
                };
                self.format_message(cx, registered, ran)?
            };
            match to_store {
                None => Ok(done),
                Some(to_store) => Box::pin(self.store_artifacts(done, *to_store)).await,
            }
        }
    }
}

/// When the call was received, and how long it already waited for its
/// place among the calls of its turn.
fn arrival(batch: Option<Place<'_>>) -> (Instant, Duration) {
    match batch {
        Some(Place {
            received,
            queued: true,
            ..
        }) => (received, received.elapsed()),
        Some(Place { received, .. }) => (received, Duration::ZERO),
        None => (Instant::now(), Duration::ZERO),
    }
}

/// Masks the called name as the call may show it (events, span, result).
fn mask(name: &mut CallName, redactor: Option<&Redactor>) {
    if let Some(Cow::Owned(masked)) = redactor.map(|r| r.text(name)) {
        *name = CallName::from(masked);
    }
}

/// The redactor for a tool's policy (or the default policy, before the tool
/// is known) in `run`; `None` when it would mask nothing.
fn redactor_for<C>(policy: Option<&RedactionPolicy>, run: &RunContext<C>) -> Option<Arc<Redactor>> {
    let secrets = run.secrets().redaction_forms();
    let masks_secrets = policy.is_none_or(|p| p.secrets) && !secrets.is_empty();
    let has_own = policy.is_some_and(|p| !p.patterns.is_empty() || !p.fields.is_empty());
    if !masks_secrets && !has_own {
        return None;
    }
    let default = RedactionPolicy::default();
    let redactor = Redactor::for_policy_forms(policy.unwrap_or(&default), secrets);
    (!redactor.is_noop()).then(|| Arc::new(redactor))
}

#[cfg(test)]
mod tests {
    use async_trait::async_trait;
    use serde_json::Value;

    use super::*;
    use crate::output::ToolOutput;
    use crate::registry::ToolRegistry;
    use crate::runtime::ToolRuntime;
    use crate::spec::{ToolSafety, ToolSpec};
    use crate::tool::{CallResult, Tool};

    /// A tool that answers `pong` (the middleware tests' too).
    pub(super) struct Ping(pub(super) ToolSpec);

    #[async_trait]
    impl Tool for Ping {
        fn spec(&self) -> &ToolSpec {
            &self.0
        }

        async fn call(&self, _: &(), _: &ToolRuntime, _: Value) -> CallResult {
            Ok(ToolOutput::text("pong"))
        }
    }

    /// The size of a call's state, on the heap, for a tool of the default
    /// shape (1,184 B before its steps kept their hooks' outcome and the
    /// tool's only while they needed them): at most glibc's largest
    /// thread-cached block, 1,032 B, which its box is served from.
    const STATE_BOUND: usize = 1_032;

    #[tokio::test]
    async fn the_call_future_stays_within_its_size_and_answers() {
        let spec = ToolSpec::builder("ping", "Answer pong.")
            .safety(ToolSafety::pure())
            .build()
            .unwrap();
        let mut registry = ToolRegistry::new();
        registry.register(Ping(spec)).unwrap();
        let executor: ToolExecutor = ToolExecutor::builder(registry, ()).build().unwrap();
        let (run, turn) = (RunContext::empty(), Turn::new(1));
        let parts = (
            ToolCallId::from("c0"),
            CallName::from("ping"),
            args::Pending::new(crate::call::RawArguments::Text("{}".into())),
        );
        let state = executor.execute_parts(&run, &turn, parts, None, None);
        let bytes = std::mem::size_of_val(&state);
        assert!(
            bytes <= STATE_BOUND,
            "the call's state is {bytes} B, over {STATE_BOUND} B"
        );
        assert_eq!(state.await.text(), "pong");
        // What a caller holds and moves is the box: two words.
        let future = executor.execute(&run, &turn, ToolCall::new("c1", "ping", "{}"));
        let words = std::mem::size_of_val(&future) / std::mem::size_of::<usize>();
        assert!(words <= 2, "the call's future is {words} words");
        assert_eq!(future.await.text(), "pong");
    }
}
