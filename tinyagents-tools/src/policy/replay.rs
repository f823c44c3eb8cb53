//! [`ReplayCache`]: recorded results answer repeated calls, but only for tools
//! whose determinism allows it.

use std::collections::HashMap;
use std::sync::Mutex;

use async_trait::async_trait;

use crate::error::ToolError;
use crate::executor::canonical_hash;
use crate::middleware::{AfterToolCtx, BeforeOutcome, BeforeToolCtx, Middleware};
use crate::output::ToolOutput;
use crate::safety::Determinism;
use crate::spec::ToolSpec;

/// The key of a recorded result, kept in the call's scratch space between
/// `before_tool` and `after_tool`.
#[derive(Clone)]
struct ReplayKey(String, String);

/// Middleware that records the output of deterministic tools and answers a
/// later call with the same tool and arguments from the record, without
/// running the tool.
///
/// A tool's declared [`Determinism`] decides: `Deterministic` tools are
/// replayed; `GivenInjected` tools only when the application says injected
/// time and randomness are fixed ([`ReplayCache::assume_fixed_inputs`], as
/// in a test or an evaluation replay); `NonDeterministic` tools (the
/// default) always run.
#[derive(Debug, Default)]
pub struct ReplayCache {
    fixed_inputs: bool,
    records: Mutex<HashMap<(String, String), ToolOutput>>,
}

impl ReplayCache {
    /// An empty cache.
    pub fn new() -> Self {
        ReplayCache::default()
    }

    /// Also replays tools that are deterministic given injected time or
    /// randomness.
    pub fn assume_fixed_inputs(mut self, fixed: bool) -> Self {
        self.fixed_inputs = fixed;
        self
    }

    /// True when `spec`'s results may be replayed under this cache.
    pub fn replays(&self, spec: &ToolSpec) -> bool {
        match spec.safety.determinism {
            Determinism::Deterministic => true,
            Determinism::GivenInjected => self.fixed_inputs,
            Determinism::NonDeterministic => false,
        }
    }

    /// The number of recorded results.
    pub fn len(&self) -> usize {
        self.records.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// True when nothing is recorded.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[async_trait]
impl<S, C> Middleware<S, C> for ReplayCache
where
    S: Send + Sync + 'static,
    C: Send + Sync + 'static,
{
    fn name(&self) -> &str {
        "replay_cache"
    }

    async fn before_tool(
        &self,
        ctx: &mut BeforeToolCtx<'_, S, C>,
    ) -> Result<BeforeOutcome, ToolError> {
        if !self.replays(ctx.spec()) {
            return Ok(BeforeOutcome::Continue);
        }
        let key = (
            ctx.spec().name.as_str().to_owned(),
            canonical_hash(ctx.arguments()),
        );
        let recorded = self
            .records
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
            .cloned();
        if let Some(output) = recorded {
            return Ok(BeforeOutcome::Respond(output));
        }
        ctx.extensions().insert(ReplayKey(key.0, key.1));
        Ok(BeforeOutcome::Continue)
    }

    async fn after_tool(&self, ctx: &mut AfterToolCtx<'_, S, C>) {
        let Some(key) = ctx.extensions().get::<ReplayKey>() else {
            return;
        };
        if let Ok(output) = ctx.outcome() {
            self.records
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert((key.0.clone(), key.1.clone()), output.clone());
        }
    }
}
