//! [`ReplayCache`]: recorded results answer repeated calls, but only for tools
//! whose determinism allows it.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::ids::RunId;
use crate::redact::Redactor;
use crate::tool::Shared;

use async_trait::async_trait;

use crate::hash::canonical_hash;
use crate::middleware::{AfterToolCtx, BeforeOutcome, BeforeResult, BeforeToolCtx, Middleware};
use crate::output::ToolOutput;
use crate::runtime::CallDraw;
use crate::spec::{Determinism, ToolSpec, setters};
use crate::util::sync::lock;

/// The key of a recorded result: the run (`None` for a cache shared by every
/// run), the tool, the canonical hash of the arguments and, for a tool
/// deterministic given what its call is given, the call's draw. Kept in the
/// call's scratch space between `before_tool` and `after_tool`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct ReplayKey {
    run: Option<RunId>,
    tool: String,
    arguments: String,
    draw: Option<CallDraw>,
}

/// Which calls may share a recorded result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum ReplayScope {
    /// Only calls of the same run (the default): one run's result is never
    /// served to another.
    #[default]
    Run,
    /// Every run served by the cache (an evaluation replaying a recorded
    /// session, a cache of pure computations): the application chose to let
    /// one run's recorded result answer another run's call.
    AllRuns,
}

/// Middleware that records the output of deterministic tools and answers a
/// later call with the same tool and arguments from the record, without
/// running the tool.
///
/// A tool's declared [`Determinism`] decides: `Deterministic` tools are
/// replayed; `GivenInjected` tools that take their call's time, random
/// values or ids (an injected `Clock`, `Random` or `Ids`) are replayed for
/// a call given the same draw ([`CallDraw`]: the same call delivered again
/// in a run with the same seed and time, or resumed from a journal, which
/// keeps the draw), and every `GivenInjected` tool, whatever its call is
/// given, when the application says injected time and randomness are fixed
/// ([`ReplayCache::assume_fixed_inputs`], as in a test or an evaluation
/// replay); `NonDeterministic` tools (the default) always run.
///
/// A record is keyed by the run, the tool and the canonical arguments, so a
/// result is replayed only within the run that recorded it, unless the
/// application widens the scope to every run ([`ReplayScope::AllRuns`]).
/// What is recorded is the output as the model saw it: masked by the tool's
/// redaction policy and the recording run's secrets, so a replay never
/// carries a secret, even to a run that does not know it.
#[derive(Debug, Default)]
pub struct ReplayCache {
    fixed_inputs: bool,
    scope: ReplayScope,
    records: Mutex<HashMap<ReplayKey, ToolOutput>>,
}

impl ReplayCache {
    /// An empty cache.
    pub fn new() -> Self {
        ReplayCache::default()
    }

    setters! {
        /// Also replays tools that are deterministic given injected time or
        /// randomness.
        assume_fixed_inputs(fixed: bool) => fixed_inputs = fixed;
        /// Which calls may share a recorded result ([`ReplayScope::Run`] unless
        /// changed).
        scope(scope: ReplayScope) => scope = scope;
    }

    /// True when `spec`'s results may be replayed under this cache.
    pub fn replays(&self, spec: &ToolSpec) -> bool {
        match spec.safety.determinism {
            Determinism::Deterministic => true,
            Determinism::GivenInjected => self.fixed_inputs || spec.takes_draw(),
            Determinism::NonDeterministic => false,
        }
    }

    /// The draw a record of this call is kept under: the call's, for a tool
    /// deterministic only given it (unless the application says it is
    /// fixed).
    fn keyed_draw(&self, spec: &ToolSpec, draw: Option<CallDraw>) -> Option<CallDraw> {
        let given = spec.safety.determinism == Determinism::GivenInjected;
        draw.filter(|_| given && !self.fixed_inputs)
    }

    /// The number of recorded results.
    pub fn len(&self) -> usize {
        lock(&self.records).len()
    }

    /// True when nothing is recorded.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[async_trait]
impl<S: Shared, C: Shared> Middleware<S, C> for ReplayCache {
    fn name(&self) -> &str {
        "replay_cache"
    }

    async fn before_tool(&self, ctx: &mut BeforeToolCtx<'_, S, C>) -> BeforeResult {
        if !self.replays(ctx.spec()) {
            return Ok(BeforeOutcome::Continue);
        }
        let key = ReplayKey {
            run: match self.scope {
                ReplayScope::Run => Some(ctx.run().run_id().clone()),
                ReplayScope::AllRuns => None,
            },
            tool: ctx.spec().name.as_str().to_owned(),
            arguments: canonical_hash(ctx.arguments()),
            draw: self.keyed_draw(ctx.spec(), ctx.draw()),
        };
        let recorded = lock(&self.records).get(&key).cloned();
        if let Some(output) = recorded {
            return Ok(BeforeOutcome::Respond(output));
        }
        ctx.extensions().insert(key);
        Ok(BeforeOutcome::Continue)
    }

    async fn after_tool(&self, ctx: &mut AfterToolCtx<'_, S, C>) {
        let Some(key) = ctx.extensions().get::<ReplayKey>() else {
            return;
        };
        let key = ReplayKey::clone(&key);
        if let Ok(output) = ctx.outcome() {
            let mut output = output.clone();
            let redactor = Redactor::for_policy_forms(
                &ctx.spec().safety.redaction,
                ctx.run().secrets().redaction_forms(),
            );
            redactor.output(&mut output);
            lock(&self.records).insert(key, output);
        }
    }
}
