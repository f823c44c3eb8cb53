//! Step 6: the tool's attempts (one, or several for a tool that may be
//! retried), each under its timeout, the run's cancellation and a panic
//! guard.

use crate::panics;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;

use futures_util::FutureExt;
use serde_json::Value;

use super::CallCx;
use crate::error::{ErrorKind, ToolError};
use crate::events::EventKind;
use crate::executor::ToolExecutor;
use crate::ids::{CallName, ToolCallId};
use crate::output::ToolOutput;
use crate::policy::Redactor;
use crate::registry::RegisteredTool;
use crate::runtime::{RunContext, ToolRuntime};

/// Whether a tool's calls may be retried: it is idempotent and its policy
/// allows more than one attempt.
pub(super) fn retries(spec: &crate::spec::ToolSpec) -> bool {
    spec.safety.idempotency.is_idempotent() && spec.retry.max_attempts > 1
}

/// Polls a tool's call once, inside `span` (a disabled span for a call
/// already inside the call's span): most tools finish on their first poll.
pub(super) fn first_poll<'f, F: Future + Unpin>(
    call: &'f mut F,
    span: &'f tracing::Span,
) -> impl Future<Output = Poll<F::Output>> + 'f {
    std::future::poll_fn(move |task| {
        let _in_span = span.enter();
        Poll::Ready(panics::quietly(|| Pin::new(&mut *call).poll(task)))
    })
}

/// A finished call's outcome, a panic in the tool being a `panicked` error.
pub(super) fn settled(
    result: std::thread::Result<Result<ToolOutput, ToolError>>,
) -> Result<ToolOutput, ToolError> {
    result.unwrap_or_else(|payload| Err(panics::panicked(&*payload)))
}

impl<S, C> ToolExecutor<S, C>
where
    S: Send + Sync + 'static,
    C: Send + Sync + 'static,
{
    /// Runs the tool, retrying when its policy and idempotency allow.
    /// The arguments come back when `keep` is set (for `after_tool`).
    pub(super) async fn attempts(
        &self,
        cx: &CallCx<'_, C>,
        registered: &RegisteredTool<S, C>,
        arguments: Value,
        keep: bool,
    ) -> (Result<ToolOutput, ToolError>, u32, Option<Value>) {
        if retries(registered.spec()) {
            return Box::pin(self.retrying(cx, registered, arguments, keep)).await;
        }
        // One attempt: the tool takes the arguments unless `keep` asks for
        // them back.
        let (this_attempt, kept) = if keep {
            (arguments.clone(), Some(arguments))
        } else {
            (arguments, None)
        };
        (self.attempt(cx, registered, this_attempt, 1).await, 1, kept)
    }

    /// The attempts of a tool that may be retried.
    pub(super) async fn retrying(
        &self,
        cx: &CallCx<'_, C>,
        registered: &RegisteredTool<S, C>,
        arguments: Value,
        keep: bool,
    ) -> (Result<ToolOutput, ToolError>, u32, Option<Value>) {
        let policy = &registered.spec().retry;
        let mut arguments = Some(arguments);
        let mut attempt = 1;
        loop {
            if attempt > 1 {
                // The span opens with `attempt = 1`.
                tracing::Span::current().record("attempt", attempt);
            }
            let may_retry = attempt < policy.max_attempts;
            let this_attempt = match (may_retry || keep, &mut arguments) {
                (true, Some(args)) => args.clone(),
                (_, slot) => slot.take().unwrap_or(Value::Null),
            };
            let error = match self.attempt(cx, registered, this_attempt, attempt).await {
                Ok(output) => return (Ok(output), attempt, arguments),
                Err(e) => e,
            };
            let retry = may_retry
                && policy.retries_class(error.class())
                && !matches!(error.kind(), ErrorKind::Cancelled | ErrorKind::Panicked)
                && !cx.run.cancellation().is_cancelled();
            if !retry {
                return (Err(error), attempt, arguments);
            }
            self.emit(cx, EventKind::Retrying, attempt, |event| {
                event.error_class = Some(error.class());
                event.error_kind = Some(error.kind().as_str());
            });
            tokio::select! {
                biased;
                _ = cx.run.cancellation().cancelled() => {
                    return (Err(ToolError::cancelled()), attempt, arguments);
                }
                _ = tokio::time::sleep(policy.delay(attempt + 1)) => {}
            }
            attempt += 1;
        }
    }

    /// One attempt: the tool's future under its timeout, the run's
    /// cancellation and a panic guard.
    pub(super) async fn attempt(
        &self,
        cx: &CallCx<'_, C>,
        registered: &RegisteredTool<S, C>,
        arguments: Value,
        attempt: u32,
    ) -> Result<ToolOutput, ToolError> {
        // A middleware may have waited (for an approver) past the run's
        // cancellation: the tool never starts in a cancelled run.
        if cx.run.cancellation().is_cancelled() {
            return Err(ToolError::cancelled());
        }
        let runtime = self.runtime_for(cx, attempt);
        let arguments = match self.call_now(registered, &runtime, arguments) {
            Ok(outcome) => return outcome,
            Err(arguments) => arguments,
        };
        let mut call = AssertUnwindSafe(registered.tool().call(&self.state, &runtime, arguments))
            .catch_unwind();
        // Most tools finish on their first poll: no timer is armed for them.
        if let Poll::Ready(result) = first_poll(&mut call, &tracing::Span::none()).await {
            return settled(result);
        }
        let timeout = self.timeout(registered);
        Box::pin(self.interruptible(cx.run, &runtime, call, timeout)).await
    }

    /// The call run at once, when the tool never waits
    /// ([`Tool::never_waits`](crate::Tool::never_waits)); otherwise the
    /// arguments back. A panic in the tool is the call's `panicked` error.
    pub(super) fn call_now(
        &self,
        registered: &RegisteredTool<S, C>,
        runtime: &ToolRuntime<C>,
        arguments: Value,
    ) -> Result<Result<ToolOutput, ToolError>, Value> {
        let tool = registered.tool();
        if !tool.never_waits() {
            return Err(arguments);
        }
        Ok(std::panic::catch_unwind(AssertUnwindSafe(|| {
            panics::quietly(|| tool.call_now(&self.state, runtime, arguments))
        }))
        .unwrap_or_else(|payload| Err(panics::panicked(&*payload))))
    }

    /// The tool's timeout, or the executor's default.
    pub(super) fn timeout(&self, registered: &RegisteredTool<S, C>) -> std::time::Duration {
        registered
            .spec()
            .timeout
            .unwrap_or(self.config.default_timeout)
    }

    /// The [`ToolRuntime`] of one attempt (of several, or with middleware):
    /// it gets copies of the call's id and name.
    pub(super) fn runtime_for(&self, cx: &CallCx<'_, C>, attempt: u32) -> ToolRuntime<C> {
        self.runtime_with(cx.run, cx.id.clone(), cx.name.clone(), cx.redactor.as_ref())
            .with_attempt(attempt)
    }

    /// A [`ToolRuntime`] for the call `id` of `name` (as called) in `run`.
    pub(super) fn runtime_with(
        &self,
        run: &RunContext<C>,
        id: ToolCallId,
        name: CallName,
        redactor: Option<&Arc<Redactor>>,
    ) -> ToolRuntime<C> {
        let mut runtime = ToolRuntime::new(run.clone(), id, name);
        if self.events.is_active() {
            runtime = runtime.with_events(Arc::clone(&self.events));
        }
        if let Some(redactor) = redactor {
            runtime = runtime.with_redactor(Arc::clone(redactor));
        }
        runtime
    }

    /// The rest of an attempt that did not finish at once: its timeout, the
    /// run's cancellation, and a grace period after the token fires.
    pub(super) async fn interruptible<F>(
        &self,
        run: &RunContext<C>,
        runtime: &ToolRuntime<C>,
        mut call: F,
        timeout: std::time::Duration,
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
