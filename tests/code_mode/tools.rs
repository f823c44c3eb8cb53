//! The tools of the code-mode tests: a read-only `lookup` with an output
//! schema, `tag` (a side effect on a ledger, neither read-only nor
//! idempotent), `delete_item` (needs approval), `secret_note` (with a
//! hidden store), and `flaky` (fails once, retried only when idempotent).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use tinyagents_tools::code_mode::{CodeMode, SandboxLimits};
use tinyagents_tools::journal::Journal;
use tinyagents_tools::policy::ConfirmationPolicy;
use tinyagents_tools::prelude::*;
use tinyagents_tools::testkit::EventRecorder;

/// What the side-effecting tools did, one line per body run.
#[derive(Default)]
pub struct Ledger(Mutex<Vec<String>>);

impl Ledger {
    pub fn lines(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }

    fn push(&self, line: String) {
        self.0.lock().unwrap().push(line);
    }
}

/// Which item.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ItemId {
    /// The item's number, from 1 to 1000.
    #[schemars(range(min = 1, max = 1000))]
    pub id: u32,
}

/// An item of the catalog.
#[derive(Serialize, JsonSchema)]
pub struct Item {
    /// Its name.
    pub name: String,
    /// Its price in cents.
    pub price: u32,
}

/// Look up an item of the catalog.
#[tool(read_only, idempotent, local)]
pub async fn lookup(args: ItemId) -> Item {
    Item {
        name: format!("item-{}", args.id),
        price: args.id * 10,
    }
}

/// What to tag.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TagArgs {
    /// The item's name.
    pub name: String,
}

/// Tag an item: a side effect.
#[tool(local)]
pub async fn tag(
    args: TagArgs,
    #[inject] ledger: Store<Ledger>,
    #[inject] call: ToolCallId,
) -> String {
    ledger.push(format!("tag {} {}", args.name, call.as_str()));
    format!("#{}", args.name)
}

/// Delete an item for good.
#[tool(destructive, requires_confirmation, local)]
pub async fn delete_item(
    args: ItemId,
    #[inject] ledger: Store<Ledger>,
    #[inject] call: ToolCallId,
) -> String {
    ledger.push(format!("delete {} {}", args.id, call.as_str()));
    format!("item {} deleted", args.id)
}

/// How many times `flaky` ran.
#[derive(Default)]
pub struct Attempts(pub AtomicU32);

/// Answer `ok`, failing (transiently) on its first attempt.
#[tool(read_only, idempotent, local, retry(max_attempts = 3, backoff = "1ms"))]
pub async fn flaky(#[inject] attempts: Store<Attempts>) -> Result<String, ToolError> {
    if attempts.0.fetch_add(1, Ordering::SeqCst) == 0 {
        return Err(ToolError::retry("a transient failure"));
    }
    Ok("ok".to_owned())
}

/// How many times `flaky_effect` ran.
#[derive(Default)]
pub struct EffectAttempts(pub AtomicU32);

/// Answer `ok`, failing (transiently) on its first attempt; a side effect.
#[tool(local)]
pub async fn flaky_effect(#[inject] attempts: Store<EffectAttempts>) -> Result<String, ToolError> {
    if attempts.0.fetch_add(1, Ordering::SeqCst) == 0 {
        return Err(ToolError::retry("a transient failure"));
    }
    Ok("ok".to_owned())
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
    pub effect_attempts: Arc<EffectAttempts>,
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
        .subscribe_arc(recorder.clone());
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
        effect_attempts: Arc::new(EffectAttempts::default()),
    }
}

/// The setup with default limits and every tool offered, unjournaled.
pub fn setup() -> Setup {
    setup_with(SandboxLimits::default(), None, None)
}

impl Setup {
    /// A run with id `run` holding the ledger and the attempt counter.
    pub fn run(&self, run: &str) -> RunContext {
        RunContext::builder(())
            .run_id(run)
            .store_arc(self.ledger.clone())
            .store_arc(self.attempts.clone())
            .store_arc(self.effect_attempts.clone())
            .build()
    }
}
