//! Steps 5 and 8 to 10 of a call: its events, the canonical
//! [`ToolMessage`] made from the tool's output (checked, redacted, bounded),
//! the artifact store for a large output, and the [`ToolResult`] that
//! answers the call, successful or not.

use std::borrow::Cow;
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

use serde_json::Value;

use super::CallCx;
use super::attempts::Ran;
use crate::error::panics::PanicMessage;
use crate::error::{ErrorClass, ErrorKind, ToolError};
use crate::events::{Digest, EventKind, ToolEvent, panic_data};
use crate::executor::{ToolExecutor, content};
use crate::output::{ArtifactRef, ContentBlock, ToolMessage, ToolResult};
use crate::registry::RegisteredTool;
use crate::tool::Shared;

/// Why a call ends without a success: the first refusal or failure of its
/// steps. Boxed: every step's `Result` carries room for it, and only a call
/// that stops pays for it.
pub(super) struct Stop(Box<Stopped>);

/// The parts of a [`Stop`].
struct Stopped {
    error: ToolError,
    /// [`EventKind::Rejected`] when the tool never ran, else
    /// [`EventKind::Failed`].
    event: EventKind,
    attempt: u32,
    /// The policy (middleware) that refused the call, if one did.
    policy: Option<Cow<'static, str>>,
    /// What the application keeps of an output that could not be stored.
    kept: Option<Box<Kept>>,
}

/// The structured value and the tool's own artifacts of an output that
/// could not be stored.
struct Kept {
    structured: Option<Value>,
    artifacts: Vec<ArtifactRef>,
}

impl Stop {
    /// A refusal before the tool ran.
    pub(super) fn rejected(error: ToolError) -> Self {
        Stop::new(error, EventKind::Rejected, 1, None)
    }

    /// A refusal by the `before_tool` hook of `policy`.
    pub(super) fn refused(error: ToolError, policy: Cow<'static, str>) -> Self {
        Stop::new(error, EventKind::Rejected, 1, Some(policy))
    }

    /// A failure after `attempt` attempts.
    pub(super) fn failed(error: ToolError, attempt: u32) -> Self {
        Stop::new(error, EventKind::Failed, attempt, None)
    }

    fn new(
        error: ToolError,
        event: EventKind,
        attempt: u32,
        policy: Option<Cow<'static, str>>,
    ) -> Self {
        Stop(Box::new(Stopped {
            error,
            event,
            attempt,
            policy,
            kept: None,
        }))
    }

    /// A panic in the steps themselves (a middleware's, or the executor's).
    pub(super) fn panicked() -> Self {
        Stop::failed(ToolError::panicked(), 1)
    }
}

/// A successful call's message, all but its id and name, and what the
/// application keeps beside it.
pub(super) struct Done {
    content: Vec<ContentBlock>,
    structured: Option<Value>,
    artifacts: Vec<ArtifactRef>,
    attempts: u32,
    /// The content is the structured value's compact JSON text, whole.
    json_copy: bool,
}

/// Step 8's message, with the full text still to store when the output was
/// over the artifact threshold.
pub(super) struct Formatted {
    pub(super) done: Done,
    pub(super) to_store: Option<Box<content::ToStore>>,
}

impl<S: Shared, C: Shared> ToolExecutor<S, C> {
    /// Step 5: the `tool.started` event, with the tool's resource bounds.
    #[inline]
    pub(super) fn emit_started(
        &self,
        cx: &CallCx<'_, C>,
        registered: &RegisteredTool<S, C>,
        arguments: &Value,
    ) {
        let bounds = registered.spec().bounds;
        self.emit(cx, EventKind::Started, 1, Some(arguments), |event| {
            event.bounds = (!bounds.is_unlimited()).then_some(bounds)
        });
    }

    /// Step 8: a successful output, checked against the tool's output
    /// schema (a mismatch is the call's failure), redacted, and made into
    /// the message's bounded content; a structured value with no content
    /// gets a JSON text copy ([`content`]).
    #[inline]
    pub(super) fn format_message(
        &self,
        cx: &CallCx<'_, C>,
        registered: &RegisteredTool<S, C>,
        ran: Ran,
    ) -> Result<Formatted, Stop> {
        let attempts = ran.attempts.max(1);
        let checked = ran
            .outcome
            .and_then(|output| registered.check_output(&output).map(|()| output));
        let mut output = checked.map_err(|e| Stop::failed(e, attempts))?;
        if let Some(redactor) = &cx.redactor {
            redactor.output(&mut output);
        }
        let blocks = std::mem::take(&mut output.content);
        let limits = self.config.content_limits();
        let has_store = self.artifacts.is_some();
        let (content, json_copy, to_store) =
            match content::format(blocks, output.structured.as_ref(), limits, has_store) {
                content::Shaped::Ready { content, json_copy } => (content, json_copy, None),
                content::Shaped::ToStore(pending) => (Vec::new(), false, Some(pending)),
            };
        let done = Done {
            content,
            structured: output.structured,
            artifacts: output.artifacts,
            attempts,
            json_copy,
        };
        Ok(Formatted { done, to_store })
    }

    /// Step 9: an output over the artifact threshold goes to the artifact
    /// store whole, and the message shows its preview and key; a store that
    /// fails fails the call (the structured value and the tool's own
    /// artifacts stay with the result).
    pub(super) async fn store_artifacts(
        &self,
        mut done: Done,
        to_store: content::ToStore,
    ) -> Result<Done, Stop> {
        // `format_message` only leaves text to store when there is a store.
        let Some(store) = self.artifacts.as_deref() else {
            return Err(Stop::failed(ToolError::artifact_failed(), done.attempts));
        };
        match to_store.put(store).await {
            Ok((content, artifact)) => {
                done.content = content;
                done.artifacts.push(artifact);
                Ok(done)
            }
            Err(store_error) => {
                let e = ToolError::artifact_failed().with_source(store_error);
                let kept = Kept {
                    structured: done.structured,
                    artifacts: done.artifacts,
                };
                let mut stop = Stop::failed(e, done.attempts);
                stop.0.kept = Some(Box::new(kept));
                Err(stop)
            }
        }
    }

    /// Step 10: the call's result and its final event, `tool.completed`
    /// or, for a call that stopped, `tool.rejected` or `tool.failed`
    /// (`arguments` are the call's parsed arguments, if they are still
    /// there).
    #[inline]
    pub(super) fn answer(
        &self,
        cx: &mut CallCx<'_, C>,
        outcome: Result<Done, Stop>,
        arguments: &Value,
    ) -> ToolResult {
        match outcome {
            Ok(done) => self.completed(cx, done, arguments),
            Err(stop) => self.fail(cx, stop, arguments),
        }
    }

    /// A successful call's result, and its `tool.completed` event.
    fn completed(&self, cx: &mut CallCx<'_, C>, done: Done, arguments: &Value) -> ToolResult {
        let message = ToolMessage {
            tool_call_id: cx.id.clone(),
            name: cx.name.clone(),
            content: done.content,
            structured: done.structured,
            is_error: false,
        };
        if self.config.trace_content && !cx.span.is_disabled() {
            // Already redacted and bounded: what the model will see.
            let text = match &message.structured {
                Some(value) => value.to_string(),
                None => serde_json::to_string(&message.content).unwrap_or_default(),
            };
            cx.span.record("gen_ai.tool.call.result", text.as_str());
        }
        // One reading of the clock for the event and the result.
        let since = cx.since_received();
        let elapsed = since.saturating_sub(cx.waited);
        let result_hash = OnceLock::new();
        let at = (done.attempts, since);
        self.emit_at(cx, EventKind::Completed, at, Some(arguments), |event| {
            let json_copy = done.json_copy;
            event.result_hash = Some(Digest::of_borrowed_message(
                &message,
                json_copy,
                &result_hash,
            ));
            if !done.artifacts.is_empty() {
                event.artifact_keys = done.artifacts.iter().map(|a| a.key.clone()).collect();
            }
        });
        ToolResult {
            message,
            artifacts: done.artifacts,
            error: None,
            provider_metadata: None,
            elapsed,
            waited: cx.waited,
            pending: None,
        }
    }

    /// A stopped call's result, and its event.
    ///
    /// Once the run is cancelled, a call still without an answer is
    /// answered `cancelled`, whatever step it was in and whatever the tool
    /// said on seeing its token (a panic stays `panicked`; both are fatal).
    /// Without [`repair_allowed`](crate::ExecutorConfig::repair_allowed), a
    /// repairable error is fatal. The message is masked; a tool's panic
    /// message goes to the event, masked, and stays with the error only
    /// masked.
    fn fail(&self, cx: &mut CallCx<'_, C>, stop: Stop, arguments: &Value) -> ToolResult {
        let Stopped {
            error,
            event: kind,
            attempt,
            mut policy,
            kept,
        } = *stop.0;
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
        let since = cx.since_received();
        let elapsed = since.saturating_sub(cx.waited);
        let mut result = ToolResult::from_error(cx.id.clone(), cx.name.clone(), error, elapsed);
        result.waited = cx.waited;
        if cx.durable.as_ref().is_some_and(|d| d.answered_elsewhere()) {
            // It waits for approval, or the journal answers it: the
            // journaled wrapper makes its result and says so.
            return result;
        }
        let result_hash = OnceLock::new();
        self.emit_at(cx, kind, (attempt, since), Some(arguments), |event| {
            if let Some(error) = &result.error {
                event.error_class = Some(error.class());
                event.error_kind = Some(error.kind().as_str());
            }
            event.policy = policy;
            let message = &result.message;
            event.result_hash = Some(Digest::of_borrowed_message(message, false, &result_hash));
            event.data = panic.as_deref().map(panic_data);
        });
        if let Some(kept) = kept {
            result.message.structured = kept.structured;
            result.artifacts = kept.artifacts;
        }
        result
    }

    /// Emits a lifecycle event for the call, made only when a subscriber
    /// accepts its kind; `arguments` are the call's arguments where the
    /// event is made, if the step has them, and `fill` sets what the step
    /// adds to it.
    pub(super) fn emit<'a>(
        &self,
        cx: &'a CallCx<'_, C>,
        kind: EventKind,
        attempt: u32,
        arguments: Option<&'a Value>,
        fill: impl FnOnce(&mut ToolEvent<'a>),
    ) {
        if self.events.wants(kind) {
            let at = (attempt, cx.since_received());
            self.emit_at(cx, kind, at, arguments, fill);
        }
    }

    /// [`emit`](Self::emit) of the call's `attempt`, `since` the call was
    /// received (a reading of the call clock already made): the event's
    /// own time and its timestamp are counted from it. The event borrows
    /// the call's parts; it is lent to in-line subscribers where it is
    /// made, and kept ([`ToolEvent::into_owned`]) only for a queued
    /// subscriber.
    #[inline]
    fn emit_at<'a>(
        &self,
        cx: &'a CallCx<'_, C>,
        kind: EventKind,
        (attempt, since): (u32, Duration),
        arguments: Option<&'a Value>,
        fill: impl FnOnce(&mut ToolEvent<'a>),
    ) {
        if !self.events.wants(kind) {
            return;
        }
        let ids = (cx.run.run_id(), cx.run.thread_id(), cx.id);
        // `wall` is set whenever a subscriber listens.
        let timestamp = cx.wall.map_or_else(SystemTime::now, |wall| wall + since);
        let times = (since.saturating_sub(cx.waited), cx.waited);
        let args_hash = if cx.lend {
            // Arguments a step disposed of (or never parsed) are `null`.
            arguments
                .filter(|a| !a.is_null())
                .map(|a| Digest::of_borrowed(a, &cx.args_hash))
        } else {
            cx.args_hash.get().cloned()
        };
        let mut event =
            ToolEvent::of_call(kind, ids, cx.name, attempt, timestamp, times, args_hash);
        fill(&mut event);
        if self.events.queues(kind) {
            // A queued subscriber keeps a copy: the event is moved into it.
            self.events.emit(event);
        } else {
            self.events.emit_in_line(&event);
        }
    }
}
