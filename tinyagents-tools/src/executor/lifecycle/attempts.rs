//! Step 6 of a call: the tool's attempts (one, or several for a tool that
//! may be retried), each with its injected [`ToolRuntime`], under its
//! timeout, the run's cancellation and a panic guard.

use std::future::{Future, Ready, ready};
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::{BoxFuture, Either};
use serde_json::Value;

use super::CallCx;
use super::middleware::Before;
use crate::error::panics;
use crate::error::{ErrorKind, ToolError};
use crate::events::EventKind;
use crate::executor::ToolExecutor;
use crate::output::ToolOutput;
use crate::registry::RegisteredTool;
use crate::runtime::{RunContext, ToolRuntime};
use crate::tool::{InlineRuntime, Shared};

/// How a call's tool (or the hook that answered in its place) came out.
pub(super) struct Ran {
    /// The output, or the classified error.
    pub(super) outcome: Result<ToolOutput, ToolError>,
    /// Attempts made: 0 when a `before_tool` hook answered.
    pub(super) attempts: u32,
}

/// One attempt's outcome.
type Attempted = Result<ToolOutput, ToolError>;

/// Polls a future once: most tools (and hooks) finish on their first poll,
/// and then no timer is armed and no clock is read for them.
pub(super) fn first_poll<F: Future + Unpin>(
    future: &mut F,
) -> impl Future<Output = Poll<F::Output>> + '_ {
    std::future::poll_fn(move |task| Poll::Ready(Pin::new(&mut *future).poll(task)))
}

/// A finished call's outcome, a panic in the tool being a `panicked` error.
#[inline]
fn settled(
    result: std::thread::Result<Result<ToolOutput, ToolError>>,
) -> Result<ToolOutput, ToolError> {
    result.unwrap_or_else(|payload| Err(panics::panicked(&*payload)))
}

impl<S: Shared, C: Shared> ToolExecutor<S, C> {
    /// Step 6: runs the tool, unless a `before_tool` hook answered (`before`
    /// is what the hooks said, `None` with no middleware); an idempotent
    /// tool whose [`RetryPolicy`](crate::RetryPolicy) allows it is retried
    /// after a retryable error, with the policy's delay. The arguments stay
    /// in `arguments` for `after_tool` hooks that need them.
    #[inline]
    pub(super) fn run_tool<'a>(
        &'a self,
        cx: &'a CallCx<'_, C>,
        registered: &'a RegisteredTool<S, C>,
        arguments: &'a mut Value,
        mut before: Option<&'a mut Before>,
    ) -> Either<Ready<Ran>, impl Future<Output = Ran> + Send + 'a> {
        if let Some(output) = before.as_mut().and_then(|b| b.answered.take()) {
            return Either::Left(ready(Ran {
                outcome: Ok(*output),
                attempts: 0,
            }));
        }
        // `after_tool` hooks, or the call's events, read the arguments once
        // the tool answered.
        let keep = cx.lend || before.is_some_and(|before| before.entered > 0);
        let spec = registered.spec();
        if spec.safety.idempotency.is_idempotent() && spec.retry.max_attempts > 1 {
            // The retry loop (its back-off timer) lives on the heap, so a
            // call to a tool that is never retried keeps no room for it.
            let retrying: BoxFuture<'a, Ran> =
                Box::pin(self.retrying(cx, registered, arguments, keep));
            return Either::Right(Either::Right(retrying));
        }
        let ran = |outcome: Attempted| Ran {
            outcome,
            attempts: 1,
        };
        match self.attempt(cx, registered, arguments, keep, 1) {
            Either::Left(now) => Either::Left(ready(ran(now.into_inner()))),
            Either::Right(waits) => Either::Right(Either::Left(waits.map(ran))),
        }
    }

    /// Step 6 for a tool that may be retried: attempts until one succeeds,
    /// the error is not retryable, the attempts run out or the run is
    /// cancelled.
    async fn retrying(
        &self,
        cx: &CallCx<'_, C>,
        registered: &RegisteredTool<S, C>,
        arguments: &mut Value,
        keep: bool,
    ) -> Ran {
        let policy = &registered.spec().retry;
        let mut attempt = 1;
        loop {
            // The last attempt may take the arguments, unless a hook needs
            // them after.
            let last = attempt >= policy.max_attempts;
            let keep = keep || !last;
            if attempt > 1 {
                // The span opens with `attempt = 1`.
                cx.span.record("attempt", attempt);
            }
            let error = match self.attempt(cx, registered, arguments, keep, attempt).await {
                Ok(output) => {
                    return Ran {
                        outcome: Ok(output),
                        attempts: attempt,
                    };
                }
                Err(e) => e,
            };
            let retry = !last
                && policy.retries_class(error.class())
                && !matches!(error.kind(), ErrorKind::Cancelled | ErrorKind::Panicked)
                && !cx.run.cancellation().is_cancelled();
            if !retry {
                return Ran {
                    outcome: Err(error),
                    attempts: attempt,
                };
            }
            self.emit(cx, EventKind::Retrying, attempt, Some(arguments), |event| {
                event.error_class = Some(error.class());
                event.error_kind = Some(error.kind().as_str());
            });
            if !back_off(cx.run, policy.delay(attempt + 1)).await {
                return Ran {
                    outcome: Err(ToolError::cancelled()),
                    attempts: attempt,
                };
            }
            attempt += 1;
        }
    }

    /// One attempt: the tool's call with its own [`ToolRuntime`], answered
    /// at once when the tool is a plain fn's (no future),
    /// otherwise under its timeout and the run's cancellation. A panic in
    /// the tool is the attempt's `panicked` error; no attempt starts in a
    /// cancelled run.
    ///
    /// A tool answered at once reads the arguments borrowed; an async one
    /// takes them, unless `keep` says they are needed after the attempt:
    /// then it gets a copy.
    #[inline]
    fn attempt<'a>(
        &'a self,
        cx: &'a CallCx<'_, C>,
        registered: &'a RegisteredTool<S, C>,
        arguments: &mut Value,
        keep: bool,
        attempt: u32,
    ) -> Either<Ready<Attempted>, impl Future<Output = Attempted> + Send + 'a> {
        // (Step 1 saw the run live; a first attempt nothing else ran before
        // need not ask again.)
        let seen_live = attempt == 1 && cx.seen_live;
        if !seen_live && cx.run.cancellation().is_cancelled() {
            return Either::Left(ready(Err(ToolError::cancelled())));
        }
        let tool = registered.tool();
        if let Some(inline) = tool.__inline() {
            // Made only if the tool injects something.
            let make = || self.runtime_for(cx, attempt);
            let runtime = InlineRuntime::lazy(&make);
            let called = std::panic::catch_unwind(AssertUnwindSafe(|| {
                inline.call_inline(&self.state, &runtime, arguments)
            }));
            return Either::Left(ready(settled(called)));
        }
        let arguments = if keep {
            arguments.clone()
        } else {
            std::mem::take(arguments)
        };
        Either::Right(async move {
            // The tool's future borrows its runtime: both live here.
            let runtime = self.runtime_for(cx, attempt);
            let called = std::panic::catch_unwind(AssertUnwindSafe(|| {
                tool.call(&self.state, &runtime, arguments)
            }));
            let call = match called {
                Ok(call) => call,
                Err(payload) => return Err(panics::panicked(&*payload)),
            };
            let mut call = AssertUnwindSafe(call).catch_unwind();
            if let Poll::Ready(result) = first_poll(&mut call).await {
                return settled(result);
            }
            let timeout = registered
                .spec()
                .timeout
                .unwrap_or(self.config.default_timeout);
            Box::pin(self.interruptible(cx.run, &runtime, call, timeout)).await
        })
    }

    /// The [`ToolRuntime`] of one attempt: the call's id and name, the
    /// event bus when anyone listens, the call's redactor.
    #[inline]
    fn runtime_for(&self, cx: &CallCx<'_, C>, attempt: u32) -> ToolRuntime<C> {
        ToolRuntime::of_attempt(
            cx.run.clone(),
            cx.id.clone(),
            cx.name.clone(),
            attempt,
            self.events.is_active().then(|| Arc::clone(&self.events)),
            cx.redactor.clone(),
            cx.draw,
        )
    }

    /// The rest of an attempt that did not finish at once: its timeout, the
    /// run's cancellation, and a grace period after the token fires.
    async fn interruptible<F>(
        &self,
        run: &RunContext<C>,
        runtime: &ToolRuntime<C>,
        mut call: F,
        timeout: Duration,
    ) -> Result<ToolOutput, ToolError>
    where
        F: Future<Output = std::thread::Result<Result<ToolOutput, ToolError>>> + Unpin,
    {
        let interrupted = tokio::select! {
            biased;
            result = &mut call => {
                return settled(result);
            }
            _ = run.cancellation().cancelled() => ToolError::cancelled(),
            _ = tokio::time::sleep(timeout) => ToolError::timeout(timeout),
        };
        runtime.interrupt();
        // Give the tool a moment to see its token and stop; then drop it.
        let _ = tokio::time::timeout(self.config.cancel_grace, &mut call).await;
        Err(interrupted)
    }
}

/// Waits `delay` before the next attempt; false when the run is cancelled
/// first.
async fn back_off<C>(run: &RunContext<C>, delay: Duration) -> bool {
    tokio::select! {
        biased;
        _ = run.cancellation().cancelled() => false,
        _ = tokio::time::sleep(delay) => true,
    }
}
