//! The process the journal's crash test kills: it runs a batch of calls to
//! a non-idempotent tool whose side effect appends a line to a ledger file,
//! with pauses around each step so a kill can land anywhere; a fresh one
//! resumes the runs, or delivers their calls again as a model would.
//!
//! ```text
//! journal-worker URL LEDGER work RUN CALLS PAUSE_MS
//! journal-worker URL LEDGER resume
//! journal-worker URL LEDGER redeliver RUN CALLS
//! ```
//!
//! Each answered call prints `{"run", "call_id", "outcome"}` on stdout.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::json;
use tinyagents_tools::journal::Journal;
use tinyagents_tools::prelude::*;
use tinyagents_tools_tests::Pause;

/// The side effect's file and the pause around each step.
struct Ledger {
    path: PathBuf,
    pause: Duration,
}

/// Which entry to append.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Entry {
    /// The entry's number.
    n: u32,
}

/// Append an entry to the ledger: a side effect that must not run twice.
#[tool(local, timeout = "30s")]
async fn append(
    args: Entry,
    #[inject] ledger: Store<Ledger>,
    #[inject] run: RunId,
    #[inject] call: ToolCallId,
) -> Result<String, ToolError> {
    tokio::time::sleep(ledger.pause / 2).await;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&ledger.path)?;
    // One write of the whole line: `writeln!` on a file writes each piece
    // on its own, and pieces of lines appended at once by other calls (or
    // other processes) would interleave.
    let line = format!("{} {}\n", run.as_str(), call.as_str());
    file.write_all(line.as_bytes())?;
    file.sync_data()?;
    tokio::time::sleep(ledger.pause / 2).await;
    Ok(format!("entry {} appended", args.n))
}

fn calls(n: u32) -> Vec<ToolCall> {
    (0..n)
        .map(|i| ToolCall::new(format!("call-{i}"), "append", json!({"n": i})))
        .collect()
}

fn say(run: &str, result: &ToolResult) {
    println!(
        "{}",
        json!({"run": run, "call_id": result.tool_call_id.as_str(), "outcome": result.outcome()})
    );
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (url, ledger) = (&args[0], PathBuf::from(&args[1]));
    let journal = Journal::open(url).await.unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(1)
    });
    let pause = match args[2].as_str() {
        "work" => Duration::from_millis(args[5].parse().expect("PAUSE_MS")),
        _ => Duration::ZERO,
    };
    let mut registry = ToolRegistry::new();
    registry.register(AppendTool).expect("a valid tool");
    let executor = ToolExecutor::builder(registry, ())
        // A pause before the write-ahead record and after the body, so a
        // kill can land between the steps.
        .middleware(Pause::around(pause / 3))
        .configure(|c| c.max_concurrency = std::num::NonZeroUsize::new(4).expect("4"))
        .journal(journal.clone())
        .build()
        .expect("an executor");
    let run_of = |id: &str| {
        RunContext::builder(())
            .run_id(id)
            .store(Ledger {
                path: ledger.clone(),
                pause,
            })
            .build()
    };
    match args[2].as_str() {
        "work" | "redeliver" => {
            let (run, n) = (&args[3], args[4].parse().expect("CALLS"));
            let results = executor
                .execute_batch(&run_of(run), &Turn::new(1), calls(n))
                .await;
            for result in &results {
                say(run, result);
            }
        }
        "resume" => {
            for run in journal.runs_to_resume().await.expect("the journal") {
                let results = executor
                    .resume(&run_of(run.as_str()))
                    .await
                    .expect("resumed");
                for result in &results {
                    say(run.as_str(), result);
                }
            }
        }
        other => panic!("unknown command {other}"),
    }
}
