//! The `durable_approval` example's program (`examples/durable_approval.rs`
//! runs it; so does a test binary): an approval that waits for a person
//! across restarts, and a destructive tool whose side effect runs at most
//! once.
//!
//! ```sh
//! cargo run --features journal-sqlite --example durable_approval -- --journal sqlite://notes.db start
//! cargo run --features journal-sqlite --example durable_approval -- --journal sqlite://notes.db approve apr_...
//! cargo run --features journal-sqlite --example durable_approval -- --journal sqlite://notes.db resume
//! cargo run --features journal-sqlite --example durable_approval -- --journal sqlite://notes.db answers
//! ```
//!
//! A scripted model asks a notes service to list the notes (read-only) and
//! to delete one (destructive, needs approval, not idempotent). `start`
//! runs that turn and exits with the deletion pending; `approve` or `deny`
//! records a person's decision, from any process; `resume` runs every run
//! that has decided approvals; `answers` lists what the journal holds.
//!
//! Options, before the subcommand:
//! - `--journal URL`: `sqlite://PATH` (default `sqlite://durable_approval.db`)
//!   or `postgres://user@host:port/db`;
//! - `--ledger PATH`: the side effect (default `durable_ledger.txt`): each
//!   time the body of `delete_note` runs it appends one line, its call id.
//!
//! Each command prints one JSON object a line on stdout and exits 0; an
//! unknown or already decided approval prints `{"error"}` and exits 2; a
//! journal that cannot be opened exits 1.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};
use tinyagents_tools::approval::ApprovalDecision;
use tinyagents_tools::journal::{CallQuery, Journal, JournalError};
use tinyagents_tools::policy::ConfirmationPolicy;
use tinyagents_tools::prelude::*;

/// Where the destructive tool's side effect goes, and how long its body
/// takes after it.
struct Ledger {
    path: PathBuf,
    body: Duration,
}

/// Which note.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoteId {
    /// The note's number.
    id: u32,
}

/// Delete a note for good.
#[tool(destructive, requires_confirmation, local, timeout = "60s")]
async fn delete_note(
    args: NoteId,
    #[inject] ledger: Store<Ledger>,
    #[inject] call: ToolCallId,
) -> Result<String, ToolError> {
    // The side effect first: one line per body run, on disk before anything
    // else happens.
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&ledger.path)?;
    // The whole line in one write: `writeln!` writes each piece on its own,
    // and pieces from calls running at once would interleave.
    file.write_all(format!("{}\n", call.as_str()).as_bytes())?;
    file.sync_data()?;
    tokio::time::sleep(ledger.body).await;
    Ok(format!("note {} deleted", args.id))
}

/// List the notes.
#[tool(read_only, idempotent, local)]
async fn list_notes() -> Vec<String> {
    vec![
        "1: groceries".into(),
        "2: dentist".into(),
        "7: old draft".into(),
    ]
}

/// The scripted model's one turn: list the notes and delete note 7.
fn model_turn() -> Vec<ToolCall> {
    vec![
        ToolCall::new("call_list", "list_notes", json!({})),
        ToolCall::new("call_delete", "delete_note", json!({"id": 7})),
    ]
}

fn executor(journal: &Journal) -> ToolExecutor {
    let mut registry = ToolRegistry::new();
    registry.register(DeleteNoteTool).expect("a valid tool");
    registry.register(ListNotesTool).expect("a valid tool");
    ToolExecutor::builder(registry, ())
        .middleware(ConfirmationPolicy::deferred())
        .journal(journal.clone())
        .build()
        .expect("every declared safety item has its policy")
}

fn run(id: &str, ledger: Ledger) -> RunContext {
    RunContext::builder(()).run_id(id).store(ledger).build()
}

fn say(value: Value) {
    println!("{value}");
}

/// The options and the subcommand.
struct Args {
    journal: String,
    ledger: PathBuf,
    command: Vec<String>,
}

fn parse(mut words: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut args = Args {
        journal: "sqlite://durable_approval.db".to_owned(),
        ledger: PathBuf::from("durable_ledger.txt"),
        command: Vec::new(),
    };
    while let Some(word) = words.next() {
        match word.as_str() {
            "--journal" => args.journal = words.next().ok_or("--journal needs a URL")?,
            "--ledger" => args.ledger = words.next().ok_or("--ledger needs a path")?.into(),
            _ => {
                args.command.push(word);
                args.command.extend(words);
                break;
            }
        }
    }
    Ok(args)
}

/// Runs the command line `words` (the options, then the subcommand) and
/// returns the exit code: 0, 1 when the journal cannot be opened, 2 for a
/// decision on an unknown or decided approval, or a usage error.
pub fn cli(words: impl Iterator<Item = String>) -> u8 {
    match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime.block_on(main(words)),
        Err(e) => {
            say(json!({"error": e.to_string()}));
            1
        }
    }
}

async fn main(words: impl Iterator<Item = String>) -> u8 {
    let args = match parse(words) {
        Ok(args) => args,
        Err(e) => {
            say(json!({"error": e}));
            return 2;
        }
    };
    let journal = match Journal::open(&args.journal).await {
        Ok(journal) => journal,
        Err(e) => {
            say(json!({"error": e.to_string()}));
            return 1;
        }
    };
    let command: Vec<&str> = args.command.iter().map(String::as_str).collect();
    let done = match command.as_slice() {
        ["start"] => start(&journal, args.ledger).await,
        ["approve", id] => decide(&journal, id, ApprovalDecision::Approve).await,
        ["deny", id, reason @ ..] => {
            let reason = reason.join(" ");
            decide(&journal, id, ApprovalDecision::Reject { reason }).await
        }
        ["resume", rest @ ..] => match body_ms(rest) {
            Ok(ms) => resume(&journal, args.ledger, ms).await,
            Err(e) => Err(e),
        },
        ["answers"] => answers(&journal).await,
        _ => Err(Failure::Usage(
            "usage: durable_approval [--journal URL] [--ledger PATH] start | approve ID | deny ID REASON | resume [--body-ms N] | answers"
                .to_owned(),
        )),
    };
    match done {
        Ok(()) => 0,
        Err(Failure::Usage(e)) => {
            say(json!({"error": e}));
            2
        }
        Err(Failure::Journal(e)) => {
            say(json!({"error": e.to_string(), "kind": e.kind()}));
            match e {
                JournalError::UnknownApproval { .. }
                | JournalError::AlreadyDecided { .. }
                | JournalError::Expired { .. }
                | JournalError::WrongState { .. } => 2,
                _ => 1,
            }
        }
    }
}

enum Failure {
    Usage(String),
    Journal(JournalError),
}

impl From<JournalError> for Failure {
    fn from(e: JournalError) -> Self {
        Failure::Journal(e)
    }
}

fn body_ms(rest: &[&str]) -> Result<u64, Failure> {
    match rest {
        [] => Ok(0),
        ["--body-ms", n] => n
            .parse()
            .map_err(|_| Failure::Usage(format!("--body-ms takes milliseconds, not {n:?}"))),
        _ => Err(Failure::Usage("usage: resume [--body-ms N]".to_owned())),
    }
}

/// One turn of the scripted model, in a new run.
async fn start(journal: &Journal, ledger: PathBuf) -> Result<(), Failure> {
    let id = format!(
        "run-{}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    );
    let ledger = Ledger {
        path: ledger,
        body: Duration::ZERO,
    };
    let results = executor(journal)
        .execute_batch(&run(&id, ledger), &Turn::new(1), model_turn())
        .await;
    for result in results {
        let mut line = json!({
            "run_id": id,
            "call_id": result.tool_call_id.as_str(),
            "outcome": result.outcome(),
        });
        if let Some(approval) = result.approval_id() {
            line["approval_id"] = json!(approval);
        }
        say(line);
    }
    Ok(())
}

async fn decide(journal: &Journal, id: &str, decision: ApprovalDecision) -> Result<(), Failure> {
    let name = match &decision {
        ApprovalDecision::Approve => "approve",
        _ => "deny",
    };
    journal.decide(id, decision).await?;
    say(json!({"approval_id": id, "decision": name}));
    Ok(())
}

/// Resumes every run that has something to answer.
async fn resume(journal: &Journal, ledger: PathBuf, body_ms: u64) -> Result<(), Failure> {
    let exec = executor(journal);
    for run_id in journal.runs_to_resume().await? {
        let ledger = Ledger {
            path: ledger.clone(),
            body: Duration::from_millis(body_ms),
        };
        for result in exec.resume(&run(run_id.as_str(), ledger)).await? {
            say(json!({
                "run_id": run_id.as_str(),
                "call_id": result.tool_call_id.as_str(),
                "outcome": result.outcome(),
                "text": result.text(),
            }));
        }
    }
    Ok(())
}

async fn answers(journal: &Journal) -> Result<(), Failure> {
    for record in journal.calls(&CallQuery::all()).await? {
        say(json!({
            "run_id": record.key.run_id.as_str(),
            "call_id": record.key.call_id.as_str(),
            "state": record.state.as_str(),
            "outcome": record.answer.as_ref().map(|a| a.outcome.as_str()),
        }));
    }
    Ok(())
}
