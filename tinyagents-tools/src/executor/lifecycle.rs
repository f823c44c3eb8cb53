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
use crate::output::{ToolOutput, ToolResult};
use crate::policy::Redactor;
use crate::registry::RegisteredTool;
use crate::runtime::{RunContext, ToolRuntime};
use crate::safety::RedactionPolicy;

/// What one call knows about itself while it goes through the steps.
struct CallCx<'a, C> {
    run: &'a RunContext<C>,
    id: &'a ToolCallId,
    name: &'a str,
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
    pub(crate) async fn execute_in(
        &self,
        run: &RunContext<C>,
        turn: &Turn,
        call: ToolCall,
        batch: Option<&RwLock<()>>,
    ) -> ToolResult {
        let received = Instant::now();
        let mut call = call;
        // Built once per call: it masks the called name here and serves the
        // steps until the tool (and its own policy) is known.
        let redactor = redactor_for(None, run);
        if let Some(redactor) = &redactor
            && let Cow::Owned(masked) = redactor.text(&call.name)
        {
            call.name = masked;
        }
        let span = tracing::info_span!(
            "tool.call",
            tool = %call.name,
            call_id = %call.id,
            attempt = tracing::field::Empty,
        );
        let ToolCall {
            id,
            name,
            arguments,
        } = call;
        let steps = self.steps(run, turn, &id, &name, arguments, batch, received, redactor);
        match AssertUnwindSafe(steps)
            .catch_unwind()
            .instrument(span)
            .await
        {
            Ok(mut result) => {
                if result.name.is_empty() {
                    // The steps leave a successful result's name for us to
                    // move in, saving a copy.
                    result.name = name;
                }
                result
            }
            Err(_) => {
                let cx = CallCx {
                    run,
                    id: &id,
                    name: &name,
                    received,
                    args_hash: None,
                    redactor: None,
                };
                self.fail(&cx, ToolError::panicked(), 1, EventKind::Failed, None)
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    async fn steps(
        &self,
        run: &RunContext<C>,
        turn: &Turn,
        id: &ToolCallId,
        name: &str,
        arguments: crate::call::RawArguments,
        batch: Option<&RwLock<()>>,
        received: Instant,
        redactor: Option<Arc<Redactor>>,
    ) -> ToolResult {
        // Refused before parsing, the arguments are still dropped without
        // recursion.
        let mut arguments = args::Pending::new(arguments);
        let mut cx = CallCx {
            run,
            id,
            name,
            received,
            args_hash: None,
            redactor,
        };
        if run.cancellation().is_cancelled() {
            return self.reject(&cx, ToolError::cancelled(), None);
        }
        let Some(registered) = self.registry.resolve(name) else {
            return self.reject(&cx, ToolError::unknown_tool(name), None);
        };
        let spec = registered.spec();
        let policy = &spec.safety.redaction;
        // A tool with the default policy keeps the redactor already built.
        if *policy != RedactionPolicy::default() {
            cx.redactor = redactor_for(Some(policy), run);
        }
        if !turn.advertises(spec.name.as_str()) {
            return self.reject(&cx, ToolError::not_advertised(spec.name.as_str()), None);
        }
        let parsed = args::prepare(
            arguments.take(),
            spec,
            registered.validator(),
            self.config.argument_limits(),
            cx.redactor.as_deref(),
        );
        let mut arguments = match parsed {
            Ok(value) => value,
            Err(e) => return self.reject(&cx, e, None),
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
            return self.reject(&cx, e, None);
        }
        let needs_permits = batch.is_some() || self.tool_permits[registered.index()].is_some();
        let _permits = if needs_permits {
            let waiting = Box::pin(async {
                tokio::select! {
                    biased;
                    _ = run.cancellation().cancelled() => None,
                    permits = self.acquire(registered, batch) => Some(permits),
                }
            });
            match waiting.await {
                Some(permits) => permits,
                None => return self.reject(&cx, ToolError::cancelled(), None),
            }
        } else {
            Permits::default()
        };

        self.emit(&cx, EventKind::Started, 1, |_| {});

        let mut extensions = Extensions::new();
        let mut answered = None;
        let mut entered = self.middleware.len();
        for (i, mw) in self.middleware.iter().enumerate() {
            let mut ctx = BeforeToolCtx {
                spec,
                called_name: name,
                call_id: id,
                run,
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
                return self.reject(&cx, e, Some(policy));
            }
            match outcome {
                Ok(BeforeOutcome::Continue) => {
                    if changed {
                        if let Err(e) = args::validate(
                            &arguments,
                            spec,
                            registered.validator(),
                            cx.redactor.as_deref(),
                        ) {
                            let policy = Cow::Owned(mw.name().to_owned());
                            return self.reject(&cx, e, Some(policy));
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
                    return self.reject(&cx, e, Some(policy));
                }
                Err(e) => {
                    let policy = match e.kind() {
                        ErrorKind::Denied { policy } => policy.clone(),
                        _ => Cow::Owned(mw.name().to_owned()),
                    };
                    return self.reject(&cx, e, Some(policy));
                }
            }
        }

        // Middleware that gets `after_tool` needs the arguments afterwards;
        // otherwise the last attempt takes them without a copy.
        let keep = entered > 0;
        let (outcome, attempts, kept) = match answered {
            Some(output) => (Ok(output), 0, Some(arguments)),
            None => self.attempts(&cx, registered, arguments, keep).await,
        };
        let arguments = kept.unwrap_or(Value::Null);

        let mut after = AfterToolCtx {
            spec,
            called_name: name,
            call_id: id,
            run,
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
        let outcome = after.outcome;
        self.finish(&cx, outcome, attempts.max(1)).await
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
        let spec = registered.spec();
        let policy = &spec.retry;
        let idempotent = spec.safety.idempotency.is_idempotent();
        let mut arguments = Some(arguments);
        let mut attempt = 1;
        loop {
            tracing::Span::current().record("attempt", attempt);
            let may_retry = idempotent && attempt < policy.max_attempts;
            let this_attempt = match (may_retry || keep, &mut arguments) {
                (true, Some(args)) => args.clone(),
                (_, slot) => slot.take().unwrap_or(Value::Null),
            };
            let error = match self.attempt(cx, registered, this_attempt, attempt).await {
                Ok(output) => return (Ok(output), attempt, arguments),
                Err(e) => e,
            };
            let retry = idempotent
                && attempt < policy.max_attempts
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
        let spec = registered.spec();
        let timeout = spec.timeout.unwrap_or(self.config.default_timeout);
        let tool: Arc<str> = if cx.name == spec.name.as_str() {
            Arc::clone(spec.name.shared())
        } else {
            Arc::from(cx.name)
        };
        let mut runtime =
            ToolRuntime::new(cx.run.clone(), cx.id.clone(), tool).with_attempt(attempt);
        if self.events.is_active() {
            runtime = runtime.with_events(Arc::clone(&self.events));
        }
        if let Some(redactor) = &cx.redactor {
            runtime = runtime.with_redactor(Arc::clone(redactor));
        }
        let mut call = AssertUnwindSafe(registered.tool().call(&self.state, &runtime, arguments))
            .catch_unwind();
        // Most tools finish on their first poll: no timer is armed for them.
        if let Poll::Ready(result) =
            std::future::poll_fn(|task| Poll::Ready(Pin::new(&mut call).poll(task))).await
        {
            return result.unwrap_or_else(|_| Err(ToolError::panicked()));
        }
        Box::pin(self.interruptible(cx, &runtime, call, timeout)).await
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

    /// Steps 8 to 10: content, artifacts, the final event.
    async fn finish(
        &self,
        cx: &CallCx<'_, C>,
        outcome: Result<ToolOutput, ToolError>,
        attempt: u32,
    ) -> ToolResult {
        let mut output = match outcome {
            Ok(output) => output,
            Err(e) => return self.fail(cx, e, attempt, EventKind::Failed, None),
        };
        if let Some(redactor) = &cx.redactor {
            redact_output(redactor, &mut output);
        }
        let store = self.artifacts.as_deref();
        let blocks = std::mem::take(&mut output.content);
        let limits = self.config.content_limits();
        match content::format(blocks, output.structured.as_ref(), limits, store).await {
            Ok(formatted) => {
                let mut artifacts = output.artifacts;
                artifacts.extend(formatted.stored);
                let result = ToolResult {
                    tool_call_id: cx.id.clone(),
                    // Filled by `execute_in`, which owns the called name.
                    name: String::new(),
                    content: formatted.content,
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
                result
            }
            Err(store_error) => {
                let e = ToolError::artifact_failed().with_source(store_error);
                let mut result = self.fail(cx, e, attempt, EventKind::Failed, None);
                result.structured = output.structured;
                result.artifacts = output.artifacts;
                result
            }
        }
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
        let result = ToolResult::from_error(cx.id.clone(), cx.name, error, cx.received.elapsed());
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
            cx.name,
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
    use crate::output::ContentBlock;
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
