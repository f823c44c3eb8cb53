//! Steps 4 and 7 of a call: the `before_tool` hooks (policies, approvers,
//! rewrites) and the `after_tool` hooks, around the tool's attempts.
//!
//! Time in `before_tool` hooks (an approver deciding, a rate limiter) is
//! the call's waiting time, not its own. A call a hook refuses gives back
//! the call-limit slots it was admitted with: it never reached its tool.

use std::any::TypeId;
use std::borrow::Cow;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, OnceLock};
use std::task::Poll;

use serde_json::Value;

use super::CallCx;
use super::answer::Stop;
use super::attempts::{Ran, first_poll};
use crate::error::{ErrorKind, ToolError};
use crate::events::Digest;
use crate::executor::{ToolExecutor, args};
use crate::middleware::{
    AfterToolCtx, Approvals, BeforeOutcome, BeforeToolCtx, CallView, Middleware, Probe,
};
use crate::output::ToolOutput;
use crate::registry::RegisteredTool;
use crate::runtime::Extensions;
use crate::runtime::{Turn, limits};
use crate::tool::Shared;

/// The `before_tool` hook, in [`MiddlewareSlot`]'s learned defaults.
const BEFORE: u8 = 1;
/// The `after_tool` hook.
const AFTER: u8 = 2;

/// A middleware as an executor holds it: the type it was added as, and
/// which of its hooks were seen to be the trait's defaults (the
/// [`Probe`] of a call said so), which its calls then skip.
pub(crate) struct MiddlewareSlot<S, C> {
    pub(crate) middleware: Arc<dyn Middleware<S, C>>,
    added_as: TypeId,
    /// [`BEFORE`] and [`AFTER`], once seen to be defaults.
    defaults: AtomicU8,
}

impl<S: Shared, C: Shared> MiddlewareSlot<S, C> {
    pub(crate) fn new<M: Middleware<S, C>>(middleware: M) -> Self {
        MiddlewareSlot {
            middleware: Arc::new(middleware),
            added_as: TypeId::of::<M>(),
            defaults: AtomicU8::new(0),
        }
    }

    /// True unless `hook` is known to be the trait's default.
    #[inline]
    fn calls(&self, hook: u8) -> bool {
        self.defaults.load(Ordering::Relaxed) & hook == 0
    }

    /// Keeps what `probe` saw of `hook`: a default is not called again.
    #[inline]
    fn learn(&self, hook: u8, probe: Probe) {
        if probe.default_ran {
            self.defaults.fetch_or(hook, Ordering::Relaxed);
        }
    }
}

/// A call as the `before_tool` hooks let it through (its arguments stay
/// with the steps, changed in place by a hook that changes them).
pub(super) struct Before {
    /// The output a hook answered with in place of the tool, if any.
    pub(super) answered: Option<Box<ToolOutput>>,
    /// How many hooks ran `before_tool`, so get `after_tool` (a hook that
    /// answers gets none).
    pub(super) entered: usize,
    extensions: Extensions,
}

impl<S: Shared, C: Shared> ToolExecutor<S, C> {
    /// Step 4: each `before_tool` hook in the order added may let the call
    /// through (with changed arguments, checked again), answer in place of
    /// the tool, or refuse it.
    ///
    /// The time a hook stays pending after its first poll (an approver
    /// deciding) is the call's waiting time; one that answers at once costs
    /// no clock read. Each hook's context lives in this future, which the
    /// call awaits in place: its only box is the hook's own.
    pub(super) async fn before_tool(
        &self,
        cx: &mut CallCx<'_, C>,
        turn: &Turn,
        registered: &RegisteredTool<S, C>,
        arguments: &mut Value,
    ) -> Result<Before, Stop> {
        let mut extensions = Extensions::new();
        // A journaled call's decision, shown to every hook.
        let journaled = cx.durable.as_ref().and_then(|d| d.journaled.clone());
        for (i, slot) in self.middleware.iter().enumerate() {
            if !slot.calls(BEFORE) {
                continue;
            }
            let mut ctx = BeforeToolCtx {
                call: self.call_view(cx, turn, registered),
                arguments: &mut *arguments,
                arguments_changed: false,
                extensions: &mut extensions,
                events: &self.events,
                approvals: Approvals {
                    journaled: journaled.as_deref(),
                    durable: cx.durable.is_some(),
                    decided: None,
                },
                draw: cx.draw.as_ref(),
                probe: Probe::new(slot.added_as),
            };
            let (outcome, waited) = {
                let mut hook = slot.middleware.before_tool(&mut ctx);
                // `if let`, not `match`: the first poll's `Pending` is gone
                // before the wait, so the future keeps no room for it.
                if let Poll::Ready(outcome) = first_poll(&mut hook).await {
                    (outcome, None)
                } else {
                    let since = tokio::time::Instant::now();
                    let outcome = hook.await;
                    (outcome, Some(since.elapsed()))
                }
            };
            slot.learn(BEFORE, ctx.probe);
            let changed = ctx.arguments_changed;
            if let (Some(decided), Some(durable)) =
                (ctx.approvals.decided.take(), cx.durable.as_deref_mut())
            {
                durable.decided = Some(*decided);
            }
            if let Some(waited) = waited {
                cx.waited += waited;
            }
            if !changed && matches!(outcome, Ok(BeforeOutcome::Continue)) {
                // Let through as it was: nothing to check again (and
                // nothing to drop: `Continue` owns nothing).
                std::mem::forget(outcome);
                continue;
            }
            let verdict = self.hook_verdict(
                cx,
                registered,
                &*slot.middleware,
                arguments,
                outcome,
                changed,
            );
            match verdict {
                Ok(None) => {}
                Ok(Some(output)) => {
                    return Ok(Before {
                        answered: Some(Box::new(output)),
                        entered: i,
                        extensions,
                    });
                }
                Err(refusal) => {
                    // The call never reaches its tool: its limit slots go back.
                    let name = registered.spec().name.as_str();
                    limits::release(turn.counter(), cx.run.call_counts(), name);
                    return Err(refusal);
                }
            }
        }
        Ok(Before {
            answered: None,
            entered: self.middleware.len(),
            extensions,
        })
    }

    /// What the hooks' contexts show of the call.
    #[inline]
    fn call_view<'a>(
        &'a self,
        cx: &'a CallCx<'_, C>,
        turn: &'a Turn,
        registered: &'a RegisteredTool<S, C>,
    ) -> CallView<'a, S, C> {
        CallView {
            spec: registered.spec(),
            called_name: cx.name,
            call_id: cx.id,
            run: cx.run,
            turn,
            state: &*self.state,
        }
    }

    /// What a hook's outcome means for the call: go on (`None`; arguments
    /// it changed are bounded and validated again), the hook's output in
    /// place of the tool's, or a refusal naming the hook's policy.
    fn hook_verdict(
        &self,
        cx: &mut CallCx<'_, C>,
        registered: &RegisteredTool<S, C>,
        mw: &dyn Middleware<S, C>,
        arguments: &mut Value,
        outcome: Result<BeforeOutcome, ToolError>,
        changed: bool,
    ) -> Result<Option<ToolOutput>, Stop> {
        let own_policy = || Cow::Owned(mw.name().to_owned());
        if changed {
            if let Err(e) = args::check_value_bounds(arguments, self.config.argument_limits()) {
                // Over the limits: neither kept nor digested.
                args::dispose(std::mem::take(arguments));
                cx.args_hash = OnceLock::new();
                return Err(Stop::refused(e, own_policy()));
            }
            // The call's later events show the arguments as changed.
            cx.args_hash = match cx.args_hash.get() {
                Some(_) if !cx.lend => OnceLock::from(Digest::of_text(arguments)),
                _ => OnceLock::new(),
            };
        }
        match outcome {
            Ok(BeforeOutcome::Continue) if changed => {
                let (spec, input) = (registered.spec(), registered.input());
                if let Err(e) = args::validate(arguments, spec, input, cx.redactor.as_deref()) {
                    return Err(Stop::refused(e, own_policy()));
                }
                Ok(None)
            }
            Ok(BeforeOutcome::Continue) => Ok(None),
            Ok(BeforeOutcome::Respond(output)) => Ok(Some(output)),
            Ok(BeforeOutcome::Deny { policy, reason }) => Err(Stop::refused(
                ToolError::denied(policy.clone(), reason),
                policy,
            )),
            Ok(BeforeOutcome::AwaitApproval(mut request)) => {
                let Some(durable) = cx.durable.as_deref_mut() else {
                    let e = ToolError::denied(
                        own_policy(),
                        "the call needs an approval that was not given; it was not run",
                    );
                    return Err(Stop::refused(e, own_policy()));
                };
                // The approver is shown the arguments masked; the journal
                // keeps them whole to run the call once it is approved.
                if let Some(redactor) = &cx.redactor {
                    redactor.json(&mut request.arguments);
                }
                durable.pending = Some((request, arguments.clone()));
                Err(Stop::refused(
                    ToolError::journal_unavailable(),
                    own_policy(),
                ))
            }
            Err(e) => {
                let policy = match e.kind() {
                    ErrorKind::Denied { policy } => policy.clone(),
                    _ => own_policy(),
                };
                Err(Stop::refused(e, policy))
            }
        }
    }

    /// True when a middleware that let the call through `before_tool`
    /// has an `after_tool` to run (one not known to be the default).
    pub(super) fn has_after_tool(&self, before: &Before) -> bool {
        self.middleware[..before.entered]
            .iter()
            .any(|slot| slot.calls(AFTER))
    }

    /// Step 7: the `after_tool` hooks of the middleware that ran
    /// `before_tool`, in reverse order; they may change the outcome in
    /// `ran`, which the future keeps and gives back. (A call no hook saw
    /// has none to run.) Everything else it reads is borrowed, so that the
    /// future the call awaits in place stays small, and the call keeps no
    /// room for `ran` beside it.
    pub(super) fn after_tool<'a>(
        &'a self,
        cx: &'a CallCx<'_, C>,
        turn: &'a Turn,
        registered: &'a RegisteredTool<S, C>,
        before: &'a mut Before,
        arguments: &'a Value,
        mut ran: Ran,
    ) -> impl Future<Output = Ran> + Send + 'a {
        let call = self.call_view(cx, turn, registered);
        let entered = &self.middleware[..before.entered];
        // A block, not an `async fn`: what it borrows is kept once.
        async move {
            let mut after = AfterToolCtx {
                call,
                arguments,
                attempts: ran.attempts,
                outcome: &mut ran.outcome,
                extensions: &mut before.extensions,
                probe: Probe::new(TypeId::of::<()>()),
            };
            for slot in entered.iter().rev() {
                if !slot.calls(AFTER) {
                    continue;
                }
                after.probe = Probe::new(slot.added_as);
                slot.middleware.after_tool(&mut after).await;
                slot.learn(AFTER, after.probe);
            }
            ran
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicU32;

    use async_trait::async_trait;

    use super::*;
    use crate::call::ToolCall;
    use crate::executor::lifecycle::tests::Ping;
    use crate::middleware::BeforeResult;
    use crate::registry::ToolRegistry;
    use crate::runtime::RunContext;
    use crate::spec::{ToolSafety, ToolSpec};

    /// Writes neither hook.
    struct Neither;

    impl Middleware for Neither {
        fn name(&self) -> &str {
            "neither"
        }
    }

    /// Writes `before_tool` only, and counts its calls.
    #[derive(Default)]
    struct BeforeOnly(AtomicU32);

    #[async_trait]
    impl Middleware for BeforeOnly {
        fn name(&self) -> &str {
            "before_only"
        }

        async fn before_tool(&self, _: &mut BeforeToolCtx<'_>) -> BeforeResult {
            self.0.fetch_add(1, Ordering::Relaxed);
            Ok(BeforeOutcome::Continue)
        }
    }

    /// Runs `Neither`'s default hooks inside its own, and counts its own.
    #[derive(Default)]
    struct Around(AtomicU32, AtomicU32);

    #[async_trait]
    impl Middleware for Around {
        fn name(&self) -> &str {
            "around"
        }

        async fn before_tool(&self, ctx: &mut BeforeToolCtx<'_>) -> BeforeResult {
            self.0.fetch_add(1, Ordering::Relaxed);
            Neither.before_tool(ctx).await
        }

        async fn after_tool(&self, ctx: &mut AfterToolCtx<'_>) {
            Neither.after_tool(ctx).await;
            self.1.fetch_add(1, Ordering::Relaxed);
        }
    }

    #[tokio::test]
    async fn the_hooks_a_middleware_leaves_to_the_default_are_skipped_after_the_first_call() {
        let spec = ToolSpec::builder("ping", "Answer pong.")
            .safety(ToolSafety::pure())
            .build()
            .unwrap();
        let mut registry = ToolRegistry::new();
        registry.register(Ping(spec)).unwrap();
        let before_only = Arc::new(BeforeOnly::default());
        let around = Arc::new(Around::default());
        let executor = ToolExecutor::builder(registry, ())
            .middleware(Neither)
            .middleware(Arc::clone(&before_only))
            .middleware(Arc::clone(&around))
            .build()
            .unwrap();
        let learned = || {
            let bits = |i: usize| executor.middleware[i].defaults.load(Ordering::Relaxed);
            [bits(0), bits(1), bits(2)]
        };
        assert_eq!(learned(), [0, 0, 0], "nothing is known before a call");
        let run = RunContext::empty();
        for i in 1..=3 {
            let call = ToolCall::new(format!("c{i}"), "ping", "{}");
            let result = executor.execute(&run, &Turn::new(i), call).await;
            assert_eq!(result.text(), "pong");
            // Neither's two hooks, and the after_tool BeforeOnly does not
            // write; Around runs another's defaults, never its own.
            assert_eq!(learned(), [BEFORE | AFTER, AFTER, 0], "after call {i}");
        }
        assert_eq!(before_only.0.load(Ordering::Relaxed), 3);
        assert_eq!(around.0.load(Ordering::Relaxed), 3);
        assert_eq!(around.1.load(Ordering::Relaxed), 3);
    }
}
