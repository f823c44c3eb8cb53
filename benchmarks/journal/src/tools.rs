//! The tools timed, their executors and their calls.

use serde_json::json;
use tinyagents_tools::journal::Journal;
use tinyagents_tools::prelude::*;

/// Which note.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Note {
    /// The note's number.
    pub n: u32,
}

/// Record a note: a side effect, neither read-only nor idempotent (a
/// journaled call writes `received`, `started` and its answer).
#[tool(local)]
pub async fn record_note(args: Note) -> String {
    format!("note {} recorded", args.n)
}

/// Read a note: read-only and idempotent (no `started` write).
#[tool(read_only, idempotent, local)]
pub async fn read_note(args: Note) -> String {
    format!("note {} read", args.n)
}

/// The name of the non-idempotent tool.
pub const WRITES: &str = "record_note";
/// The name of the read-only tool.
pub const READS: &str = "read_note";

/// An executor of both tools, keeping its calls in `journal` when given.
pub fn executor(journal: Option<Journal>) -> ToolExecutor {
    let mut registry = ToolRegistry::new();
    registry.register(RecordNoteTool).expect("a valid tool");
    registry.register(ReadNoteTool).expect("a valid tool");
    let builder = ToolExecutor::builder(registry, ());
    let builder = match journal {
        Some(journal) => builder.journal(journal),
        None => builder,
    };
    builder.build().expect("no safety item needs a policy")
}

/// A run with id `id`.
pub fn run(id: &str) -> RunContext {
    RunContext::builder(()).run_id(id).build()
}

/// `calls` calls of `tool` in batches of `size` (turn `i + 1` for batch
/// `i`, call ids `c0`.. within a turn).
pub fn batches(tool: &str, calls: usize, size: usize) -> Vec<Vec<ToolCall>> {
    (0..calls / size)
        .map(|b| {
            (0..size)
                .map(|i| ToolCall::new(format!("c{i}"), tool, json!({ "n": b * size + i })))
                .collect()
        })
        .collect()
}

/// Runs `batches` through `exec` in run `run`, one turn per batch (a lone
/// `execute` for batches of one); the first failed call, if any.
pub async fn run_batches(
    exec: &ToolExecutor,
    run: &RunContext,
    batches: Vec<Vec<ToolCall>>,
) -> Result<(), String> {
    let mut failed = None;
    for (b, mut calls) in batches.into_iter().enumerate() {
        let turn = Turn::new(b as u32 + 1);
        if calls.len() == 1 {
            let result = exec.execute(run, &turn, calls.remove(0)).await;
            if result.message.is_error && failed.is_none() {
                failed = Some(result.text());
            }
        } else {
            for result in exec.execute_batch(run, &turn, calls).await {
                if result.message.is_error && failed.is_none() {
                    failed = Some(result.text());
                }
            }
        }
    }
    match failed {
        None => Ok(()),
        Some(text) => Err(format!("a call failed: {text}")),
    }
}
