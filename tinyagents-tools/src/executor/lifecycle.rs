//! One call's steps, from the provider's call to its [`ToolResult`].

use std::borrow::Cow;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Instant;

use futures_util::FutureExt;
use serde_json::Value;
use tokio::sync::{OwnedSemaphorePermit, RwLock, RwLockReadGuard, RwLockWriteGuard};
use tracing::Instrument;

use crate::call::ToolCall;
use crate::error::{ErrorClass, ErrorKind, ToolError};
use crate::events::{EventKind, ToolEvent};
use crate::executor::{ToolExecutor, Turn, args, canonical_hash, content, limits};
use crate::extensions::Extensions;
use crate::ids::ToolCallId;
use crate::middleware::{AfterToolCtx, BeforeOutcome, BeforeToolCtx};
use crate::output::{ArtifactRef, ContentBlock, ToolOutput, ToolResult};
use crate::policy::Redactor;
use crate::registry::RegisteredTool;
use crate::runtime::{RunContext, ToolRuntime};
use crate::safety::RedactionPolicy;

/// What one call knows about itself while it goes through the steps.
struct CallCx<'a, C> {
    run: &'a RunContext<C>,
    id: &'a ToolCallId,
    /// The called name (masked); a successful result takes it.
    name: String,
    received: Instant,
    args_hash: Option<String>,
    /// Masks secrets and the tool's patterns in what the call shows; `None`
    /// when there is nothing to mask.
    redactor: Option<Arc<Redactor>>,
}

/// The redactor for a tool's policy (or the default policy, before the tool
/// is known) in `run`; `None` when it would mask nothing.
fn redactor_for<C>(policy: Option<&RedactionPolicy>, run: &RunContext<C>) -> Option<Arc<Redactor>> {
    let secrets = run.secrets().redaction_values();
    let masks_secrets = policy.is_none_or(|p| p.secrets) && !secrets.is_empty();
    let has_own = policy.is_some_and(|p| !p.patterns.is_empty() || !p.fields.is_empty());
    if !masks_secrets && !has_own {
        return None;
    }
    let default = RedactionPolicy::default();
    let redactor = Redactor::for_policy(policy.unwrap_or(&default), secrets);
    (!redactor.is_noop()).then(|| Arc::new(redactor))
}

/// How [`ToolExecutor::finish`] left a call.
enum Finished {
    /// Answered.
    Done(ToolResult),
    /// The output still has to go to the artifact store.
    Store(ToolOutput, content::ToStore),
}

/// Whether a tool's calls may be retried: it is idempotent and its policy
/// allows more than one attempt.
fn retries(spec: &crate::spec::ToolSpec) -> bool {
    spec.safety.idempotency.is_idempotent() && spec.retry.max_attempts > 1
}

/// Runs a step under the call's span; a panic comes back as `Err`.
fn guard<T>(span: &tracing::Span, step: impl FnOnce() -> T) -> std::thread::Result<T> {
    std::panic::catch_unwind(AssertUnwindSafe(|| span.in_scope(step)))
}

/// [`guard`] for a step that waits.
fn guarded<F: Future>(
    span: &tracing::Span,
    step: F,
) -> impl Future<Output = std::thread::Result<F::Output>> {
    AssertUnwindSafe(step)
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

impl<S, C> ToolExecutor<S, C>
where
    S: Send + Sync + 'static,
    C: Send + Sync + 'static,
{
    /// Runs one call; `batch` is the batch's exclusion lock for `sequential`
    /// tools. A panic anywhere in the steps still answers the call.
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
        }: ToolCall,
        batch: Option<&RwLock<()>>,
    ) -> ToolResult {
        // Large values are never bound to a name that outlives an `await`
        // when they are only passed on (`ran`, `finished` below are
        // temporaries): a named one keeps its room in the future.
        let received = Instant::now();
        // Built once per call: it masks the called name here and serves the
        // steps until the tool (and its own policy) is known.
        let redactor = redactor_for(None, run);
        if let Some(redactor) = &redactor
            && let Cow::Owned(masked) = redactor.text(&name)
        {
            name = masked;
        }
        let span = tracing::info_span!(
            "tool.call",
            tool = %name,
            call_id = %id,
            attempt = 1u32,
        );
        let mut cx = CallCx {
            run,
            id: &id,
            name,
            received,
            args_hash: None,
            redactor,
        };

        // Steps 1 to 3.
        let (registered, arguments) = match guard(&span, || self.admit(&mut cx, turn, arguments)) {
            Ok(Ok(admitted)) => admitted,
            Ok(Err(refused)) => return *refused,
            Err(_) => return self.panicked(&cx),
        };
        let needs_permits = batch.is_some() || self.tool_permits[registered.index()].is_some();
        let _permits = if needs_permits {
            match guarded(&span, Box::pin(self.permits(run, registered, batch))).await {
                Ok(Some(permits)) => permits,
                Ok(None) => return self.reject(&cx, ToolError::cancelled(), None),
                Err(_) => return self.panicked(&cx),
            }
        } else {
            Permits::default()
        };

        // Steps 4 to 7.
        if guard(&span, || self.emit(&cx, EventKind::Started, 1, |_| {})).is_err() {
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
            // The one attempt of a tool that is not retried, in line: its
            // runtime and the tool's (boxed) future are all this call keeps
            // while it waits, and a tool that finishes on its first poll
            // arms no timer.
            let Ok(runtime) = guard(&span, || self.runtime_for(&cx, registered, 1)) else {
                return self.panicked(&cx);
            };
            let tool = registered.tool();
            let started = guard(&span, || tool.call(&self.state, &runtime, arguments));
            let Ok(call) = started else {
                return self.panicked(&cx);
            };
            let mut call = AssertUnwindSafe(call).catch_unwind();
            let first = std::future::poll_fn(|task| {
                let _in_span = span.enter();
                Poll::Ready(Pin::new(&mut call).poll(task))
            })
            .await;
            match first {
                Poll::Ready(result) => Ok(Ok((
                    result.unwrap_or_else(|_| Err(ToolError::panicked())),
                    1,
                ))),
                Poll::Pending => {
                    let timeout = self.timeout(registered);
                    let rest = self.interruptible(&cx, &runtime, call, timeout);
                    guarded(&span, Box::pin(rest))
                        .await
                        .map(|outcome| Ok((outcome, 1)))
                }
            }
        } {
            Ok(Ok(done)) => done,
            Ok(Err(refused)) => return *refused,
            Err(_) => return self.panicked(&cx),
        };

        // Steps 8 to 10.
        let attempts = attempts.max(1);
        let storing = match guard(&span, || self.finish(&mut cx, outcome, attempts)) {
            Ok(Finished::Done(result)) => return result,
            Ok(Finished::Store(output, pending)) => {
                Box::pin(self.store_output(&mut cx, output, pending, attempts))
            }
            Err(_) => return self.panicked(&cx),
        };
        match guarded(&span, storing).await {
            Ok(result) => result,
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
            return Err(Box::new(self.reject(
                cx,
                ToolError::unknown_tool(&cx.name),
                None,
            )));
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

    /// Steps 5 to 7 for an executor with middleware: `before_tool` hooks
    /// (which may change the arguments, answer, or refuse), the tool, and
    /// `after_tool` hooks. A refusal comes back as `Err`, already answered
    /// (boxed: refusals are rare, and the `Ok` side stays small to move).
    async fn with_middleware(
        &self,
        cx: &mut CallCx<'_, C>,
        turn: &Turn,
        registered: &RegisteredTool<S, C>,
        mut arguments: Value,
    ) -> Result<(Result<ToolOutput, ToolError>, u32), Box<ToolResult>> {
        let spec = registered.spec();
        let mut extensions = Extensions::new();
        let mut answered = None;
        let mut entered = self.middleware.len();
        for (i, mw) in self.middleware.iter().enumerate() {
            let mut ctx = BeforeToolCtx {
                spec,
                called_name: &cx.name,
                call_id: cx.id,
                run: cx.run,
                turn,
                state: &*self.state,
                arguments,
                arguments_changed: false,
                extensions: &mut extensions,
            };
            let outcome = mw.before_tool(&mut ctx).await;
            let changed = ctx.arguments_changed;
            arguments = ctx.arguments;
            if changed
                && let Err(e) = args::check_value_bounds(&arguments, self.config.argument_limits())
            {
                args::dispose(arguments);
                let policy = Cow::Owned(mw.name().to_owned());
                return Err(Box::new(self.reject(cx, e, Some(policy))));
            }
            match outcome {
                Ok(BeforeOutcome::Continue) => {
                    if changed {
                        if let Err(e) = args::validate(
                            &arguments,
                            spec,
                            registered.input(),
                            cx.redactor.as_deref(),
                        ) {
                            let policy = Cow::Owned(mw.name().to_owned());
                            return Err(Box::new(self.reject(cx, e, Some(policy))));
                        }
                        if self.events.is_active() {
                            cx.args_hash = Some(canonical_hash(&arguments));
                        }
                    }
                }
                Ok(BeforeOutcome::Respond(output)) => {
                    answered = Some(output);
                    entered = i;
                    break;
                }
                Ok(BeforeOutcome::Deny { policy, reason }) => {
                    let e = ToolError::denied(policy.clone(), reason);
                    return Err(Box::new(self.reject(cx, e, Some(policy))));
                }
                Err(e) => {
                    let policy = match e.kind() {
                        ErrorKind::Denied { policy } => policy.clone(),
                        _ => Cow::Owned(mw.name().to_owned()),
                    };
                    return Err(Box::new(self.reject(cx, e, Some(policy))));
                }
            }
        }

        // Middleware that gets `after_tool` needs the arguments afterwards;
        // otherwise the last attempt takes them without a copy.
        let keep = entered > 0;
        let (outcome, attempts, kept) = match answered {
            Some(output) => (Ok(output), 0, Some(arguments)),
            None => self.attempts(cx, registered, arguments, keep).await,
        };
        let arguments = kept.unwrap_or(Value::Null);

        let mut after = AfterToolCtx {
            spec,
            called_name: &cx.name,
            call_id: cx.id,
            run: cx.run,
            turn,
            state: &*self.state,
            arguments: &arguments,
            attempts,
            outcome,
            extensions: &mut extensions,
        };
        for mw in self.middleware[..entered].iter().rev() {
            mw.after_tool(&mut after).await;
        }
        Ok((after.outcome, attempts))
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

    /// Runs the tool, retrying when its policy and idempotency allow.
    /// The arguments come back when `keep` is set (for `after_tool`).
    async fn attempts(
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
    async fn retrying(
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
    async fn attempt(
        &self,
        cx: &CallCx<'_, C>,
        registered: &RegisteredTool<S, C>,
        arguments: Value,
        attempt: u32,
    ) -> Result<ToolOutput, ToolError> {
        let runtime = self.runtime_for(cx, registered, attempt);
        let mut call = AssertUnwindSafe(registered.tool().call(&self.state, &runtime, arguments))
            .catch_unwind();
        // Most tools finish on their first poll: no timer is armed for them.
        if let Poll::Ready(result) =
            std::future::poll_fn(|task| Poll::Ready(Pin::new(&mut call).poll(task))).await
        {
            return result.unwrap_or_else(|_| Err(ToolError::panicked()));
        }
        let timeout = self.timeout(registered);
        Box::pin(self.interruptible(cx, &runtime, call, timeout)).await
    }

    /// The tool's timeout, or the executor's default.
    fn timeout(&self, registered: &RegisteredTool<S, C>) -> std::time::Duration {
        registered
            .spec()
            .timeout
            .unwrap_or(self.config.default_timeout)
    }

    /// The [`ToolRuntime`] of one attempt.
    fn runtime_for(
        &self,
        cx: &CallCx<'_, C>,
        registered: &RegisteredTool<S, C>,
        attempt: u32,
    ) -> ToolRuntime<C> {
        let spec = registered.spec();
        let tool: Arc<str> = if cx.name == spec.name.as_str() {
            Arc::clone(spec.name.shared())
        } else {
            Arc::from(cx.name.as_str())
        };
        let mut runtime =
            ToolRuntime::new(cx.run.clone(), cx.id.clone(), tool).with_attempt(attempt);
        if self.events.is_active() {
            runtime = runtime.with_events(Arc::clone(&self.events));
        }
        if let Some(redactor) = &cx.redactor {
            runtime = runtime.with_redactor(Arc::clone(redactor));
        }
        runtime
    }

    /// The rest of an attempt that did not finish at once: its timeout, the
    /// run's cancellation, and a grace period after the token fires.
    async fn interruptible<F>(
        &self,
        cx: &CallCx<'_, C>,
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
                return result.unwrap_or_else(|_| Err(ToolError::panicked()));
            }
            _ = cx.run.cancellation().cancelled() => ToolError::cancelled(),
            _ = tokio::time::sleep(timeout) => ToolError::timeout(timeout),
        };
        runtime.interrupt();
        // Give the tool a moment to see its token and stop; then drop it.
        let _ = tokio::time::timeout(self.config.cancel_grace, &mut call).await;
        Err(interrupted)
    }

    /// Steps 8 to 10: content, the final event; an output bound for the
    /// artifact store comes back as [`Finished::Store`] (see
    /// [`store_output`](Self::store_output)).
    fn finish(
        &self,
        cx: &mut CallCx<'_, C>,
        outcome: Result<ToolOutput, ToolError>,
        attempt: u32,
    ) -> Finished {
        let mut output = match outcome {
            Ok(output) => output,
            Err(e) => return Finished::Done(self.fail(cx, e, attempt, EventKind::Failed, None)),
        };
        if let Some(redactor) = &cx.redactor {
            redact_output(redactor, &mut output);
        }
        let blocks = std::mem::take(&mut output.content);
        let limits = self.config.content_limits();
        let has_store = self.artifacts.is_some();
        match content::format(blocks, output.structured.as_ref(), limits, has_store) {
            content::Shaped::Ready(content) => {
                Finished::Done(self.completed(cx, output, content, None, attempt))
            }
            content::Shaped::ToStore(pending) => Finished::Store(output, pending),
        }
    }

    /// The end of a call whose output goes to the artifact store.
    async fn store_output(
        &self,
        cx: &mut CallCx<'_, C>,
        output: ToolOutput,
        pending: content::ToStore,
        attempt: u32,
    ) -> ToolResult {
        let Some(store) = self.artifacts.as_deref() else {
            // `finish` only hands over an output when there is a store.
            let e = ToolError::artifact_failed();
            return self.fail(cx, e, attempt, EventKind::Failed, None);
        };
        match pending.put(store).await {
            Ok((content, artifact)) => self.completed(cx, output, content, Some(artifact), attempt),
            Err(store_error) => {
                let e = ToolError::artifact_failed().with_source(store_error);
                let mut result = self.fail(cx, e, attempt, EventKind::Failed, None);
                result.structured = output.structured;
                result.artifacts = output.artifacts;
                result
            }
        }
    }

    /// A successful result, and its `tool.completed` event.
    fn completed(
        &self,
        cx: &mut CallCx<'_, C>,
        output: ToolOutput,
        content: Vec<ContentBlock>,
        stored: Option<ArtifactRef>,
        attempt: u32,
    ) -> ToolResult {
        let mut artifacts = output.artifacts;
        artifacts.extend(stored);
        let result = ToolResult {
            tool_call_id: cx.id.clone(),
            // Taken from the call below, after the event that shows it.
            name: String::new(),
            content,
            structured: output.structured,
            artifacts,
            is_error: false,
            error: None,
            provider_metadata: None,
            elapsed: cx.received.elapsed(),
        };
        self.emit(cx, EventKind::Completed, attempt, |event| {
            event.result_hash = Some(result_hash(&result));
            event.artifact_keys = result.artifacts.iter().map(|a| a.key.clone()).collect();
        });
        let mut result = result;
        result.name = std::mem::take(&mut cx.name);
        result
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
        policy: Option<Cow<'static, str>>,
    ) -> ToolResult {
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
        tracing::debug!(
            error_class = %error.class(),
            error_kind = error.kind().as_str(),
            "{}",
            kind.as_str()
        );
        let result = ToolResult::from_error(cx.id.clone(), &*cx.name, error, cx.received.elapsed());
        self.emit(cx, kind, attempt, |event| {
            let error = result.error.as_ref();
            event.error_class = error.map(ToolError::class);
            event.error_kind = error.map(|e| e.kind().as_str());
            event.policy = policy;
            event.result_hash = Some(result_hash(&result));
        });
        result
    }

    /// Emits an event for the call, built only when someone listens.
    fn emit(
        &self,
        cx: &CallCx<'_, C>,
        kind: EventKind,
        attempt: u32,
        fill: impl FnOnce(&mut ToolEvent),
    ) {
        if !self.events.is_active() {
            return;
        }
        let mut event = ToolEvent::new(
            kind,
            cx.run.run_id().clone(),
            cx.run.thread_id().clone(),
            cx.id.clone(),
            &cx.name,
            attempt,
        );
        event.elapsed = Some(cx.received.elapsed());
        event.args_hash = cx.args_hash.clone();
        fill(&mut event);
        self.events.emit(event);
    }
}

/// Masks every model-facing part of an output: text, JSON blocks, links and
/// the structured value (which MCP and others show to the model too).
fn redact_output(redactor: &Redactor, output: &mut ToolOutput) {
    for block in &mut output.content {
        match block {
            ContentBlock::Text { text } => {
                if let Cow::Owned(masked) = redactor.text(text) {
                    *text = masked;
                }
            }
            ContentBlock::Json { value } => redactor.json(value),
            ContentBlock::ResourceLink {
                uri,
                name,
                description,
                ..
            } => {
                for field in [Some(uri), name.as_mut(), description.as_mut()]
                    .into_iter()
                    .flatten()
                {
                    if let Cow::Owned(masked) = redactor.text(field) {
                        *field = masked;
                    }
                }
            }
            ContentBlock::Image { .. } => {}
        }
    }
    if let Some(value) = &mut output.structured {
        redactor.json(value);
    }
}

/// The digest of what a result says: its structured value when it has one,
/// otherwise its model-facing content.
fn result_hash(result: &ToolResult) -> String {
    match &result.structured {
        Some(value) => canonical_hash(value),
        None => canonical_hash(&serde_json::to_value(&result.content).unwrap_or(Value::Null)),
    }
}
