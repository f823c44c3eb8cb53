//! Steps 4 and 7 of a call: the `before_tool` hooks (policies, approvers,
//! rewrites) and the `after_tool` hooks, around the tool's attempts.
//!
//! Time in `before_tool` hooks (an approver deciding, a rate limiter) is
//! the call's waiting time, not its own. A call a hook refuses gives back
//! the call-limit slots it was admitted with: it never reached its tool.

use std::borrow::Cow;
use std::sync::OnceLock;
use std::task::Poll;

use serde_json::Value;

use super::CallCx;
use super::answer::Stop;
use super::attempts::{Ran, first_poll};
use crate::error::{ErrorKind, ToolError};
use crate::events::Digest;
use crate::executor::{ToolExecutor, args};
use crate::middleware::{
    AfterToolCtx, Approvals, BeforeOutcome, BeforeToolCtx, CallView, Middleware,
};
use crate::output::ToolOutput;
use crate::registry::RegisteredTool;
use crate::runtime::Extensions;
use crate::runtime::{Turn, limits};
use crate::tool::Shared;

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
        for (i, mw) in self.middleware.iter().enumerate() {
            let mut ctx = BeforeToolCtx {
                call: self.call_view(cx, turn, registered),
                arguments: &mut *arguments,
                arguments_changed: false,
                extensions: &mut extensions,
                events: &self.events,
                approvals: Approvals {
                    journaled: journaled.as_ref(),
                    durable: cx.durable.is_some(),
                    decided: None,
                },
                draw: cx.draw,
            };
            let (outcome, waited) = {
                let mut hook = mw.before_tool(&mut ctx);
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
            let changed = ctx.arguments_changed;
            if let (Some(decided), Some(durable)) =
                (ctx.approvals.decided.take(), cx.durable.as_deref_mut())
            {
                durable.decided = Some(decided);
            }
            if let Some(waited) = waited {
                cx.waited += waited;
            }
            let verdict = self.hook_verdict(cx, registered, &**mw, arguments, outcome, changed);
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
            called_name: &cx.name,
            call_id: &cx.id,
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

    /// Step 7: the `after_tool` hooks of the middleware that ran
    /// `before_tool`, in reverse order; they may change the outcome in
    /// `ran`. (A call no hook saw has none to run.) Everything it reads is
    /// borrowed, so that the future the call awaits in place stays small.
    pub(super) async fn after_tool(
        &self,
        cx: &CallCx<'_, C>,
        turn: &Turn,
        registered: &RegisteredTool<S, C>,
        before: &mut Before,
        arguments: &Value,
        ran: &mut Ran,
    ) {
        let mut after = AfterToolCtx {
            call: self.call_view(cx, turn, registered),
            arguments,
            attempts: ran.attempts,
            outcome: &mut ran.outcome,
            extensions: &mut before.extensions,
        };
        for mw in self.middleware[..before.entered].iter().rev() {
            mw.after_tool(&mut after).await;
        }
    }
}
