//! The tools of the code-mode tests: the example catalog's read-only
//! `lookup` (with an output schema), `tag` (a side effect on a ledger,
//! neither read-only nor idempotent), `delete_item` (needs approval), and
//! `flaky` and `flaky_effect` (each fails once; retried only when
//! idempotent).

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::catalog::{ItemId, LookupTool};
use tinyagents_tools::journal::Journal;
use tinyagents_tools::policy::ConfirmationPolicy;
use tinyagents_tools::prelude::*;
use tinyagents_tools::testkit::EventRecorder;
use tinyagents_tools_code_mode::{CodeMode, SandboxLimits};

use crate::ledger::{CallLedger, Ledger};

/// What to tag.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TagArgs {
    /// The item's name.
    pub name: String,
}

/// Tag an item: a side effect.
#[tool(local)]
pub async fn tag(args: TagArgs, #[inject] ledger: CallLedger) -> String {
    ledger.record(format_args!("tag {}", args.name));
    format!("#{}", args.name)
}

/// Delete an item for good.
#[tool(destructive, requires_confirmation, local)]
pub async fn delete_item(args: ItemId, #[inject] ledger: CallLedger) -> String {
    ledger.record(format_args!("delete {}", args.id));
    format!("item {} deleted", args.id)
}

/// How many times `flaky` and `flaky_effect` ran.
#[derive(Default)]
pub struct Attempts {
    /// Runs of `flaky`.
    pub flaky: AtomicU32,
    /// Runs of `flaky_effect`.
    pub flaky_effect: AtomicU32,
}

/// Answers `ok`, failing (transiently) on the first of the `attempts`.
fn fail_first(attempts: &AtomicU32) -> Result<String, ToolError> {
    if attempts.fetch_add(1, Ordering::SeqCst) == 0 {
        return Err(ToolError::retry("a transient failure"));
    }
    Ok("ok".to_owned())
}

/// Answer `ok`, failing (transiently) on its first attempt.
#[tool(read_only, idempotent, local, retry(max_attempts = 3, backoff = "1ms"))]
pub async fn flaky(#[inject] attempts: Store<Attempts>) -> Result<String, ToolError> {
    fail_first(&attempts.flaky)
}

/// Answer `ok`, failing (transiently) on its first attempt; a side effect.
#[tool(local)]
pub async fn flaky_effect(#[inject] attempts: Store<Attempts>) -> Result<String, ToolError> {
    fail_first(&attempts.flaky_effect)
}

/// The registry of every test tool.
pub fn registry() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    registry.register(LookupTool).unwrap();
    registry.register(TagTool).unwrap();
    registry.register(DeleteItemTool).unwrap();
    registry.register(FlakyTool).unwrap();
    registry.register(FlakyEffectTool).unwrap();
    registry
}

/// The two executors of code mode: the inner one runs the tools, the
/// model-facing one offers `run_code` alone.
pub struct Setup {
    pub inner: Arc<ToolExecutor>,
    pub outer: ToolExecutor,
    pub recorder: Arc<EventRecorder>,
    pub ledger: Arc<Ledger>,
    pub attempts: Arc<Attempts>,
}

/// The setup with `limits`, offering `offered` (every tool when `None`),
/// the inner executor journaled in `journal` when given.
pub fn setup_with(
    limits: SandboxLimits,
    offered: Option<&[&str]>,
    journal: Option<&Journal>,
) -> Setup {
    let recorder = EventRecorder::new();
    let mut inner = ToolExecutor::builder(registry(), ())
        .middleware(ConfirmationPolicy::deferred())
        .subscribe(recorder.clone());
    if let Some(journal) = journal {
        inner = inner.journal(journal.clone());
    }
    let inner = Arc::new(inner.build().unwrap());
    let mut mode = CodeMode::new(Arc::clone(&inner)).limits(limits);
    if let Some(names) = offered {
        mode = mode.offering(names.iter().copied());
    }
    let mut model_facing = ToolRegistry::new();
    model_facing.register(mode.tool()).unwrap();
    let outer = ToolExecutor::builder(model_facing, ()).build().unwrap();
    Setup {
        inner,
        outer,
        recorder,
        ledger: Arc::new(Ledger::default()),
        attempts: Arc::new(Attempts::default()),
    }
}

/// The setup with default limits and every tool offered, unjournaled.
pub fn setup() -> Setup {
    setup_with(SandboxLimits::default(), None, None)
}

impl Setup {
    /// A run with id `run` holding the ledger and the attempt counters.
    pub fn run(&self, run: &str) -> RunContext {
        RunContext::builder(())
            .run_id(run)
            .store_arc(self.ledger.clone())
            .store_arc(self.attempts.clone())
            .build()
    }
}
