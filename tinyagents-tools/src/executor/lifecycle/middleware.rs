//! Steps 5 to 7 when the executor has middleware: `before_tool` hooks, the
//! tool, `after_tool` hooks.
//!
//! Time in `before_tool` hooks (an approver deciding, a rate limiter) is
//! the call's waiting time, not its own. A call a hook refuses gives back
//! the call-limit slots it was admitted with: it never reached its tool.

use std::borrow::Cow;
use std::task::Poll;

use serde_json::Value;

use super::CallCx;
use super::attempts::first_poll;
use crate::error::{ErrorKind, ToolError};
use crate::executor::{ToolExecutor, Turn, args, canonical_hash, limits};
use crate::extensions::Extensions;
use crate::middleware::{AfterToolCtx, BeforeOutcome, BeforeToolCtx};
use crate::output::{ToolOutput, ToolResult};
use crate::registry::RegisteredTool;

impl<S, C> ToolExecutor<S, C>
where
    S: Send + Sync + 'static,
    C: Send + Sync + 'static,
{
    /// Steps 5 to 7 for an executor with middleware: `before_tool` hooks
    /// (which may change the arguments, answer, or refuse), the tool, and
    /// `after_tool` hooks. A refusal comes back as `Err`, already answered
    /// (boxed: refusals are rare, and the `Ok` side stays small to move).
    pub(super) async fn with_middleware(
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
                call_id: &cx.id,
                run: cx.run,
                turn,
                state: &*self.state,
                arguments,
                arguments_changed: false,
                extensions: &mut extensions,
                events: &self.events,
            };
            // Waiting is the time the hook stays pending after its first
            // poll (an approver deciding); one that answers at once costs no
            // clock read.
            let outcome = {
                let mut hook = mw.before_tool(&mut ctx);
                match first_poll(&mut hook, &tracing::Span::none()).await {
                    Poll::Ready(outcome) => outcome,
                    Poll::Pending => {
                        let since = tokio::time::Instant::now();
                        let outcome = hook.await;
                        cx.waited += since.elapsed();
                        outcome
                    }
                }
            };
            let changed = ctx.arguments_changed;
            arguments = ctx.arguments;
            if changed
                && let Err(e) = args::check_value_bounds(&arguments, self.config.argument_limits())
            {
                args::dispose(arguments);
                let policy = Cow::Owned(mw.name().to_owned());
                return Err(self.refused(cx, turn, registered, e, policy));
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
                            return Err(self.refused(cx, turn, registered, e, policy));
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
                    return Err(self.refused(cx, turn, registered, e, policy));
                }
                Err(e) => {
                    let policy = match e.kind() {
                        ErrorKind::Denied { policy } => policy.clone(),
                        _ => Cow::Owned(mw.name().to_owned()),
                    };
                    return Err(self.refused(cx, turn, registered, e, policy));
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
            call_id: &cx.id,
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

    /// A refusal by a `before_tool` hook: the call's limit slots are given
    /// back, and it is answered.
    fn refused(
        &self,
        cx: &CallCx<'_, C>,
        turn: &Turn,
        registered: &RegisteredTool<S, C>,
        error: ToolError,
        policy: Cow<'static, str>,
    ) -> Box<ToolResult> {
        let name = registered.spec().name.as_str();
        limits::release(turn.counter(), cx.run.call_counts(), name);
        Box::new(self.reject(cx, error, Some(policy)))
    }
}
