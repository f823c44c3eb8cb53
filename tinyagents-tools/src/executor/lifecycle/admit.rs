//! Steps 1 to 3 of a call: the tool it names, its arguments, and its place
//! under the call limits and concurrency permits. A refusal here means the
//! tool never ran.

use std::pin::pin;
use std::sync::{Arc, OnceLock};
use std::task::Poll;

use serde_json::Value;
use tokio::sync::{OwnedSemaphorePermit, RwLock, RwLockReadGuard, RwLockWriteGuard};

use super::answer::Stop;
use super::attempts::first_poll;
use super::{CallCx, redactor_for};
use crate::error::ToolError;
use crate::events::Digest;
use crate::executor::batch::Place;
use crate::executor::{ToolExecutor, args};
use crate::registry::RegisteredTool;
use crate::runtime::{Turn, limits};
use crate::tool::Shared;

/// Permits a call holds while it runs.
#[derive(Default)]
pub(super) struct Permits<'b> {
    _shared: Option<RwLockReadGuard<'b, ()>>,
    _exclusive: Option<RwLockWriteGuard<'b, ()>>,
    _tool: Option<OwnedSemaphorePermit>,
}

impl<S: Shared, C: Shared> ToolExecutor<S, C> {
    /// Step 1: the run is live, the tool exists (canonical name or alias)
    /// and was advertised this turn; its own redaction policy applies from
    /// here on.
    #[inline]
    pub(super) fn resolve_tool<'r>(
        &'r self,
        cx: &mut CallCx<'_, C>,
        turn: &Turn,
    ) -> Result<&'r RegisteredTool<S, C>, Stop> {
        if cx.run.cancellation().is_cancelled() {
            return Err(Stop::rejected(ToolError::cancelled()));
        }
        let Some(registered) = self.registry.resolve(cx.name) else {
            let close = self.registry.closest_name(cx.name, |n| turn.advertises(n));
            let e = ToolError::unknown_tool_suggesting(cx.name, close);
            return Err(Stop::rejected(e));
        };
        let spec = registered.spec();
        let policy = &spec.safety.redaction;
        // A tool with the default policy keeps the redactor already built.
        if !policy.is_default() {
            cx.redactor = redactor_for(Some(policy), cx.run);
        }
        if !turn.advertises(spec.name.as_str()) {
            let e = ToolError::not_advertised(spec.name.as_str());
            return Err(Stop::rejected(e));
        }
        Ok(registered)
    }

    /// Step 2: the arguments parse, stay within the size and depth limits,
    /// carry no forged key and validate against the compiled input schema
    /// (rules in [`args`]).
    #[inline]
    pub(super) fn parse_arguments<'p>(
        &self,
        cx: &mut CallCx<'_, C>,
        registered: &RegisteredTool<S, C>,
        pending: &'p mut args::Pending,
    ) -> Result<&'p mut Value, Stop> {
        let arguments = args::prepare(
            pending,
            registered.spec(),
            registered.input(),
            self.config.argument_limits(),
            cx.redactor.as_deref(),
        )
        .map_err(Stop::rejected)?;
        if self.events.wants_digests() {
            if self.events.queued_wants_digests() || registered.tool().__inline().is_none() {
                // A queued subscriber's events, or a tool that takes the
                // arguments: the digest keeps their canonical text (smaller
                // and cheaper to write than a copy of them).
                cx.args_hash = OnceLock::from(Digest::of_text(arguments));
            } else {
                // Only in-line subscribers: the tool reads the arguments
                // borrowed and the events digest them if asked to.
                cx.lend = true;
            }
        }
        if !cx.span.is_disabled() {
            self.describe_span(cx, registered, arguments);
        }
        Ok(arguments)
    }

    /// Step 3: the call limits admit the call, and a tool that takes its
    /// call's time and randomness is given them: the draw its journal
    /// record keeps, or one drawn from the run now.
    #[inline]
    pub(super) fn admit(
        &self,
        cx: &mut CallCx<'_, C>,
        turn: &Turn,
        registered: &RegisteredTool<S, C>,
    ) -> Result<(), Stop> {
        let name = registered.spec().name.as_str();
        let counts = cx.run.call_counts();
        limits::admit(&self.config.limits, turn.counter(), counts, name).map_err(Stop::rejected)?;
        if registered.takes_draw() {
            let kept = cx.durable.as_deref().and_then(|d| d.stored.record.draw);
            cx.draw = Some(kept.unwrap_or_else(|| cx.run.draw(turn.index(), cx.id)));
        }
        Ok(())
    }

    /// Step 3, on: whether the call has permits to wait for (the batch's
    /// lock, the tool's `max_concurrency`).
    #[inline]
    pub(super) fn has_permits(
        &self,
        registered: &RegisteredTool<S, C>,
        batch: Option<Place<'_>>,
    ) -> bool {
        batch.is_some() || self.tool_permits[registered.index()].is_some()
    }

    /// Step 3's wait for the call's permits. The time is the call's
    /// waiting time (the clock is read only when the permits are not free
    /// at once); a call cancelled while it waits is refused and gives its
    /// limit slots back.
    pub(super) async fn wait_for_permits<'b>(
        &self,
        cx: &mut CallCx<'_, C>,
        turn: &Turn,
        registered: &RegisteredTool<S, C>,
        batch: Option<Place<'b>>,
    ) -> Result<Permits<'b>, Stop> {
        let (run, lock) = (cx.run, batch.map(|place| place.lock));
        let mut permits = pin!(async {
            tokio::select! {
                biased;
                _ = run.cancellation().cancelled() => None,
                permits = self.acquire(registered, lock) => Some(permits),
            }
        });
        let permits = match first_poll(&mut permits).await {
            Poll::Ready(permits) => permits,
            Poll::Pending => {
                let since = tokio::time::Instant::now();
                let permits = permits.await;
                cx.waited += since.elapsed();
                permits
            }
        };
        permits.ok_or_else(|| {
            let name = registered.spec().name.as_str();
            limits::release(turn.counter(), run.call_counts(), name);
            Stop::rejected(ToolError::cancelled())
        })
    }

    /// The batch's lock (exclusive for a `sequential` tool) and the tool's
    /// own semaphore permit.
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
}
