//! One call's steps, from the provider's call to its [`ToolResult`]: the
//! order of the steps, the checks before the call, and the answers and
//! events here; [`middleware`] (steps 5 to 7 with middleware), [`attempts`]
//! (running the tool) and [`outcome`] (the result) beside.

mod attempts;
mod middleware;
mod outcome;
mod span;

use std::borrow::Cow;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use futures_util::FutureExt;
use serde_json::Value;
use tokio::sync::{OwnedSemaphorePermit, RwLock, RwLockReadGuard, RwLockWriteGuard};
use tracing::Instrument;

use crate::call::ToolCall;
use crate::error::{ErrorClass, ErrorKind, ToolError};
use crate::events::{EventKind, ToolEvent};
use crate::executor::batch::Place;
use crate::executor::{ToolExecutor, Turn, args, canonical_hash, limits};
use crate::ids::{CallName, ToolCallId};
use crate::output::ToolResult;
use crate::panics::{self, PanicMessage};
use crate::policy::Redactor;
use crate::registry::RegisteredTool;
use crate::runtime::RunContext;
use crate::safety::RedactionPolicy;
use attempts::{first_poll, retries, settled};
use outcome::{Finished, content_hash};
use span::call_span;

/// A successful outcome checked against the tool's output schema: a
/// mismatch becomes the call's failure, never a success.
fn checked_output<S, C>(
    registered: &RegisteredTool<S, C>,
    outcome: Result<crate::output::ToolOutput, ToolError>,
) -> Result<crate::output::ToolOutput, ToolError>
where
    S: Send + Sync + 'static,
    C: Send + Sync + 'static,
{
    let output = outcome?;
    registered.check_output(&output)?;
    Ok(output)
}

/// What one call knows about itself while it goes through the steps.
struct CallCx<'a, C> {
    run: &'a RunContext<C>,
    /// The call's `execute_tool` span ([`call_span`]).
    span: &'a tracing::Span,
    /// The call's id; lent, with `name`, to the runtime of a call's one
    /// in-line attempt (moved out and back: the borrow checker sees that
    /// nothing reads them meanwhile).
    id: ToolCallId,
    /// The called name (masked); a successful result takes it.
    name: CallName,
    /// When the call arrived (with its batch), on the time-stamp counter
    /// clock (`quanta`): the two reads a call makes cost about a third of
    /// `std`'s.
    received: quanta::Instant,
    /// Time spent waiting so far (batch queue, permits, `before_tool`
    /// middleware), measured on tokio's clock: not the call's own time.
    waited: Duration,
    args_hash: Option<String>,
    /// Masks secrets and the tool's patterns in what the call shows; `None`
    /// when there is nothing to mask.
    redactor: Option<Arc<Redactor>>,
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

/// Runs a step under the call's span; a panic comes back as `Err` (and is
/// kept out of the process's panic output: [`panics`]).
fn guard<T>(span: &tracing::Span, step: impl FnOnce() -> T) -> std::thread::Result<T> {
    std::panic::catch_unwind(AssertUnwindSafe(|| span.in_scope(|| panics::quietly(step))))
}

/// [`guard`] for a step that waits.
fn guarded<F: Future + Unpin>(
    span: &tracing::Span,
    step: F,
) -> impl Future<Output = std::thread::Result<F::Output>> {
    AssertUnwindSafe(panics::Quiet(step))
        .catch_unwind()
        .instrument(span.clone())
}

/// Permits a call holds while it runs.
#[derive(Default)]
struct Permits<'b> {
    _shared: Option<RwLockReadGuard<'b, ()>>,
    _exclusive: Option<RwLockWriteGuard<'b, ()>>,
    _tool: Option<OwnedSemaphorePermit>,
}

impl<C> CallCx<'_, C> {
    /// The call's own time so far: since it was received, less the time it
    /// waited.
    fn own_time(&self) -> Duration {
        self.received.elapsed().saturating_sub(self.waited)
    }
}

impl<S, C> ToolExecutor<S, C>
where
    S: Send + Sync + 'static,
    C: Send + Sync + 'static,
{
    /// Runs one call; `batch`, for a call of a batch, is its place there:
    /// the batch's exclusion lock for `sequential` tools, when the batch
    /// arrived and whether the call may have waited for its turn. A panic
    /// anywhere in the steps still answers the call.
    ///
    /// Only what has to wait is `async` here: the checks before the call and
    /// the formatting after it are plain functions, each run under the
    /// call's span and a panic guard, and the rarer waits (permits,
    /// middleware, retries, a slow tool, the artifact store) are boxed. The
    /// future of a common call stays small, and is not moved through layers
    /// of wrappers.
    pub(crate) async fn execute_in(
        &self,
        run: &RunContext<C>,
        turn: &Turn,
        ToolCall {
            id,
            mut name,
            arguments,
            ..
        }: ToolCall,
        batch: Option<Place<'_>>,
    ) -> ToolResult {
        // Large values that are only passed on are never bound to a name
        // that outlives an `await` (the steps' outcomes below are matched as
        // temporaries): a named one keeps its room in the future.
        let (received, waited) = match batch {
            Some(Place {
                batch,
                queued: true,
            }) => (batch.received, batch.since.elapsed()),
            Some(Place { batch, .. }) => (batch.received, Duration::ZERO),
            None => (quanta::Instant::now(), Duration::ZERO),
        };
        // Built once per call: it masks the called name here and serves the
        // steps until the tool (and its own policy) is known.
        let redactor = redactor_for(None, run);
        if let Some(redactor) = &redactor
            && let Cow::Owned(masked) = redactor.text(&name)
        {
            name = CallName::from(masked);
        }
        let span = call_span(&name, &id);
        let mut cx = CallCx {
            run,
            span: &span,
            id,
            name,
            received,
            waited,
            args_hash: None,
            redactor,
        };

        // Steps 1 to 3.
        let (registered, arguments) = match guard(&span, || self.admit(&mut cx, turn, arguments)) {
            Ok(Ok(admitted)) => admitted,
            Ok(Err(refused)) => return *refused,
            Err(_) => return self.panicked(&cx),
        };
        if !span.is_disabled() {
            self.describe_span(&cx, registered, &arguments);
        }
        let needs_permits = batch.is_some() || self.tool_permits[registered.index()].is_some();
        let _permits = if needs_permits {
            // The clock is read only when the permits are not free at once.
            let lock = batch.map(|place| &place.batch.lock);
            let mut permits = guarded(&span, Box::pin(self.permits(run, registered, lock)));
            let permits = match first_poll(&mut permits, &tracing::Span::none()).await {
                Poll::Ready(permits) => permits,
                Poll::Pending => {
                    let since = tokio::time::Instant::now();
                    let permits = permits.await;
                    cx.waited += since.elapsed();
                    permits
                }
            };
            match permits {
                Ok(Some(permits)) => permits,
                Ok(None) => {
                    let name = registered.spec().name.as_str();
                    limits::release(turn.counter(), run.call_counts(), name);
                    return self.reject(&cx, ToolError::cancelled(), None);
                }
                Err(_) => return self.panicked(&cx),
            }
        } else {
            Permits::default()
        };

        // Steps 4 to 7 (a subscriber may panic; with none, nothing to guard).
        if self.events.wants(EventKind::Started)
            && guard(&span, || {
                let bounds = registered.spec().bounds;
                self.emit(&cx, EventKind::Started, 1, |e| {
                    e.bounds = (!bounds.is_unlimited()).then_some(bounds)
                })
            })
            .is_err()
        {
            return self.panicked(&cx);
        }
        let spec = registered.spec();
        let (outcome, attempts) = match if !self.middleware.is_empty() {
            let steps = self.with_middleware(&mut cx, turn, registered, arguments);
            guarded(&span, Box::pin(steps)).await
        } else if retries(spec) {
            let attempts = self.retrying(&cx, registered, arguments, false);
            guarded(&span, Box::pin(attempts))
                .await
                .map(|(outcome, attempts, _)| Ok((outcome, attempts)))
        } else {
            // The one attempt of a tool that is not retried, in line. Its
            // runtime is lent the call's id and name (taken back below). A
            // tool that never waits answers at once (`Tool::call_now`);
            // otherwise the runtime and the tool's (boxed) future are all
            // this call keeps while it waits, and a tool that finishes on
            // its first poll arms no timer.
            //
            // This repeats the steps of `attempts::attempt` on purpose: a
            // shared async helper awaited from here made the lifecycle's
            // future 88 bytes larger and a call about 5% slower (paired
            // with rmcp's router: 0.95x to 1.01x, against 0.90x to 0.93x).
            let runtime = self.runtime_with(cx.run, cx.id, cx.name, cx.redactor.as_ref());
            // No `await` below sits inside a `match` on a large value: the
            // matched temporary would keep its room in the future.
            let outcome = 'attempt: {
                let arguments =
                    match span.in_scope(|| self.call_now(registered, &runtime, arguments)) {
                        // A tool that never waits answered at once.
                        Ok(outcome) => break 'attempt Ok(outcome),
                        Err(arguments) => arguments,
                    };
                let tool = registered.tool();
                let call = match guard(&span, || tool.call(&self.state, &runtime, arguments)) {
                    Ok(call) => call,
                    Err(panic) => break 'attempt Err(panic),
                };
                let mut call = AssertUnwindSafe(call).catch_unwind();
                if let Poll::Ready(result) = first_poll(&mut call, &span).await {
                    drop(call);
                    break 'attempt Ok(settled(result));
                }
                let timeout = self.timeout(registered);
                let rest = self.interruptible(cx.run, &runtime, call, timeout);
                guarded(&span, Box::pin(rest)).await
            };
            (cx.id, cx.name) = runtime.into_call();
            outcome.map(|outcome| Ok((outcome, 1)))
        } {
            Ok(Ok(done)) => done,
            Ok(Err(refused)) => return *refused,
            Err(_) => return self.panicked(&cx),
        };

        // Steps 8 to 10.
        let attempts = attempts.max(1);
        let outcome = checked_output(registered, outcome);
        let storing = match guard(&span, || self.finish(&cx, outcome, attempts)) {
            Ok(Finished::Answered(answer)) => return answer.into_result(cx.id, cx.name),
            Ok(Finished::Failed(result)) => return result,
            Ok(Finished::Store(output, pending)) => {
                Box::pin(self.store_output(&cx, output, pending, attempts))
            }
            Err(_) => return self.panicked(&cx),
        };
        let stored = guarded(&span, storing).await;
        match stored {
            Ok(Ok(answer)) => answer.into_result(cx.id, cx.name),
            Ok(Err(result)) => result,
            Err(_) => self.panicked(&cx),
        }
    }

    /// The answer to a call whose steps panicked.
    fn panicked(&self, cx: &CallCx<'_, C>) -> ToolResult {
        self.fail(cx, ToolError::panicked(), 1, EventKind::Failed, None)
    }

    /// Waits for the call's permits, or `None` when the run is cancelled
    /// first.
    async fn permits<'b>(
        &self,
        run: &RunContext<C>,
        registered: &RegisteredTool<S, C>,
        batch: Option<&'b RwLock<()>>,
    ) -> Option<Permits<'b>> {
        tokio::select! {
            biased;
            _ = run.cancellation().cancelled() => None,
            permits = self.acquire(registered, batch) => Some(permits),
        }
    }

    /// Steps 1 to 3, none of which waits: the run is live, the tool exists
    /// and was advertised, the arguments hold, the limits admit the call.
    fn admit<'r>(
        &'r self,
        cx: &mut CallCx<'_, C>,
        turn: &Turn,
        arguments: crate::call::RawArguments,
    ) -> Result<(&'r RegisteredTool<S, C>, Value), Box<ToolResult>> {
        // Refused before parsing, the arguments are still dropped without
        // recursion.
        let mut arguments = args::Pending::new(arguments);
        let run = cx.run;
        if run.cancellation().is_cancelled() {
            return Err(Box::new(self.reject(cx, ToolError::cancelled(), None)));
        }
        let Some(registered) = self.registry.resolve(&cx.name) else {
            let close = self.registry.closest_name(&cx.name, |n| turn.advertises(n));
            let e = ToolError::unknown_tool_suggesting(&cx.name, close);
            return Err(Box::new(self.reject(cx, e, None)));
        };
        let spec = registered.spec();
        let policy = &spec.safety.redaction;
        // A tool with the default policy keeps the redactor already built.
        if !policy.is_default() {
            cx.redactor = redactor_for(Some(policy), run);
        }
        if !turn.advertises(spec.name.as_str()) {
            let e = ToolError::not_advertised(spec.name.as_str());
            return Err(Box::new(self.reject(cx, e, None)));
        }
        let parsed = args::prepare(
            arguments.take(),
            spec,
            registered.input(),
            self.config.argument_limits(),
            cx.redactor.as_deref(),
        );
        let arguments = match parsed {
            Ok(value) => value,
            Err(e) => return Err(Box::new(self.reject(cx, e, None))),
        };
        if self.events.is_active() {
            cx.args_hash = Some(canonical_hash(&arguments));
        }
        if let Err(e) = limits::admit(
            &self.config.limits,
            turn.counter(),
            run.call_counts(),
            spec.name.as_str(),
        ) {
            args::dispose(arguments);
            return Err(Box::new(self.reject(cx, e, None)));
        }
        Ok((registered, arguments))
    }

    async fn acquire<'b>(
        &self,
        registered: &RegisteredTool<S, C>,
        batch: Option<&'b RwLock<()>>,
    ) -> Permits<'b> {
        let mut permits = Permits::default();
        if let Some(lock) = batch {
            if registered.spec().concurrency.sequential {
                permits._exclusive = Some(lock.write().await);
            } else {
                permits._shared = Some(lock.read().await);
            }
        }
        if let Some(sem) = &self.tool_permits[registered.index()] {
            permits._tool = Arc::clone(sem).acquire_owned().await.ok();
        }
        permits
    }

    /// A refusal: the call did not run.
    fn reject(
        &self,
        cx: &CallCx<'_, C>,
        error: ToolError,
        policy: Option<Cow<'static, str>>,
    ) -> ToolResult {
        self.fail(cx, error, 1, EventKind::Rejected, policy)
    }

    fn fail(
        &self,
        cx: &CallCx<'_, C>,
        error: ToolError,
        attempt: u32,
        kind: EventKind,
        mut policy: Option<Cow<'static, str>>,
    ) -> ToolResult {
        // Once the run is cancelled, a call still without an answer is
        // answered `cancelled`, whatever step it was in and whatever the
        // tool said on seeing its token (a panic stays `panicked`; both are
        // fatal).
        let error = if !matches!(error.kind(), ErrorKind::Cancelled | ErrorKind::Panicked)
            && cx.run.cancellation().is_cancelled()
        {
            policy = None;
            ToolError::cancelled()
        } else {
            error
        };
        let mut error = if !self.config.repair_allowed && error.class() == ErrorClass::Repair {
            error.with_class(ErrorClass::Fatal)
        } else {
            error
        };
        if let Some(redactor) = &cx.redactor
            && let Cow::Owned(masked) = redactor.text(error.message())
        {
            error.set_message(masked);
        }
        // A tool's panic message goes to the event, masked, and stays with
        // the error only masked.
        let panic = std::error::Error::source(&error)
            .and_then(|s| s.downcast_ref::<PanicMessage>())
            .map(|m| match &cx.redactor {
                Some(redactor) => redactor.text(m.as_str()).into_owned(),
                None => m.as_str().to_owned(),
            });
        if let Some(masked) = &panic {
            error = error.with_source(PanicMessage(masked.clone()));
        }
        cx.span.record("error.type", error.kind().as_str());
        cx.span.record("otel.status_code", "error");
        tracing::debug!(
            error_class = %error.class(),
            error_kind = error.kind().as_str(),
            "{}",
            kind.as_str()
        );
        let mut result =
            ToolResult::from_error(cx.id.clone(), cx.name.clone(), error, cx.own_time());
        result.waited = cx.waited;
        self.emit(cx, kind, attempt, |event| {
            let error = result.error.as_ref();
            event.error_class = error.map(ToolError::class);
            event.error_kind = error.map(|e| e.kind().as_str());
            event.policy = policy;
            event.result_hash = Some(content_hash(result.structured.as_ref(), &result.content));
            if let Some(message) = panic {
                event.data = Some(serde_json::json!({ "panic": message }));
            }
        });
        result
    }

    /// Emits an event for the call, built only when a subscriber accepts
    /// its kind.
    fn emit(
        &self,
        cx: &CallCx<'_, C>,
        kind: EventKind,
        attempt: u32,
        fill: impl FnOnce(&mut ToolEvent),
    ) {
        if !self.events.wants(kind) {
            return;
        }
        let mut event = ToolEvent::new(
            kind,
            cx.run.run_id().clone(),
            cx.run.thread_id().clone(),
            cx.id.clone(),
            cx.name.as_str(),
            attempt,
        );
        event.elapsed = Some(cx.own_time());
        event.waited = Some(cx.waited);
        event.args_hash = cx.args_hash.clone();
        fill(&mut event);
        self.events.emit(event);
    }
}
