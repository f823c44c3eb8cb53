//! The tools of the journal tests: a notes service with a destructive
//! `delete_note` that needs approval and appends to a ledger each time its
//! body runs, a read-only `list_notes`, and `bump`, a non-idempotent tool
//! that needs no approval.

use std::sync::Arc;
use std::time::Duration;

use tinyagents_tools::journal::Journal;
use tinyagents_tools::policy::ConfirmationPolicy;
use tinyagents_tools::prelude::*;

pub use crate::ledger::{CallLedger, Ledger};

/// Which note.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoteId {
    /// The note's number.
    pub id: u32,
}

/// Delete a note for good.
#[tool(destructive, requires_confirmation, local)]
pub async fn delete_note(args: NoteId, #[inject] ledger: CallLedger) -> String {
    ledger.record(format_args!("delete {}", args.id));
    format!("note {} deleted", args.id)
}

/// List the notes.
#[tool(read_only, idempotent, local)]
pub async fn list_notes(#[inject] ledger: Store<Ledger>) -> String {
    ledger.push("list".to_owned());
    "notes: 1, 2, 3".to_owned()
}

/// How far to bump.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Bump {
    /// The step.
    pub by: u32,
    /// How long the body takes, in ms.
    #[serde(default)]
    pub ms: u64,
}

/// Bump the counter: a side effect with no approval.
#[tool(local, timeout = "5s")]
pub async fn bump(args: Bump, #[inject] ledger: CallLedger) -> String {
    ledger.record(format_args!("bump {}", args.by));
    if args.ms > 0 {
        tokio::time::sleep(Duration::from_millis(args.ms)).await;
    }
    format!("bumped by {}", args.by)
}

/// Draw a ticket: its time, a random number and a ticket id, all from what
/// the call is given. Each body run records them in the ledger.
#[tool(deterministic_given_injected, requires_confirmation, local)]
pub async fn draw_ticket(
    #[inject] clock: Clock,
    #[inject] mut rng: Random,
    #[inject] mut ids: Ids,
    #[inject] ledger: CallLedger,
) -> String {
    let ticket = format!(
        "{} at {} with {}",
        ids.next("ticket"),
        clock.unix_ms(),
        rng.below(1_000_000)
    );
    ledger.record(format_args!("ticket {ticket}"));
    ticket
}

/// Whether `roll` holds its answer until its run is cancelled (as a
/// process that stops mid-call).
pub struct Hold(pub bool);

/// Roll a die, from what the call is given: a tool that may simply run
/// again (idempotent). Each body run records its roll in the ledger, then
/// answers, or with [`Hold`] waits until its run is cancelled.
#[tool(deterministic_given_injected, idempotent, local)]
pub async fn roll(
    #[inject] clock: Clock,
    #[inject] mut rng: Random,
    #[inject] ledger: CallLedger,
    #[inject] hold: Store<Hold>,
) -> String {
    let roll = format!("{} at {}", rng.below(6) + 1, clock.unix_ms());
    ledger.record(format_args!("roll {roll}"));
    if hold.0 {
        std::future::pending::<()>().await;
    }
    roll
}

/// The registry of the notes service.
pub fn registry() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    registry.register(DeleteNoteTool).unwrap();
    registry.register(ListNotesTool).unwrap();
    registry.register(BumpTool).unwrap();
    registry.register(DrawTicketTool).unwrap();
    registry.register(RollTool).unwrap();
    registry
}

/// An executor over `journal` whose approvals wait in the journal.
pub fn executor(journal: &Journal) -> ToolExecutor {
    ToolExecutor::builder(registry(), ())
        .middleware(ConfirmationPolicy::deferred())
        .journal(journal.clone())
        .build()
        .unwrap()
}

/// A run with id `run` writing to `ledger`.
pub fn run(run: &str, ledger: &Arc<Ledger>) -> RunContext {
    RunContext::builder(())
        .run_id(run)
        .store_arc(ledger.clone())
        .build()
}
