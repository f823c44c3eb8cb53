use tinyagents_tools::journal::Journal;
use tinyagents_tools::policy::ConfirmationPolicy;
use tinyagents_tools::prelude::*;

/// Which note.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct DeleteArgs {
    /// The note's number.
    id: u32,
}

/// Delete a note for good.
#[tool(destructive, requires_confirmation, local)]
async fn delete_note(args: DeleteArgs) -> String {
    format!("note {} deleted", args.id)
}

/// One turn whose call waits for a person, the person's decision, and the
/// resume that runs the approved call. Returns what happened, line by line.
async fn durable(url: &str) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let journal = Journal::open(url).await?; // sqlite://PATH, postgres://..., memory:
    let mut registry = ToolRegistry::new();
    registry.register(DeleteNoteTool)?;
    let executor = ToolExecutor::builder(registry, ())
        .middleware(ConfirmationPolicy::deferred()) // a person decides, later
        .journal(journal.clone())
        .build()?;
    let run = RunContext::builder(()).run_id("run-1").build();
    let calls = vec![ToolCall::new("call-1", "delete_note", r#"{"id": 7}"#)];
    let mut said = Vec::new();
    for result in executor.execute_batch(&run, &Turn::new(1), calls).await {
        said.push(format!(
            "{}: {}",
            result.tool_call_id.as_str(),
            result.outcome()
        ));
        // Not run, not refused: it waits. Show the person what they approve.
        if let (Some(id), Some(request)) = (result.approval_id(), &result.pending) {
            said.push(format!(
                "asks to run {} with {}",
                request.tool, request.arguments
            ));
            // Minutes or days later, from any process: approve, deny or edit.
            journal.approve(&id).await?;
        }
    }
    // Runs exactly the approved calls, once; a second resume runs nothing.
    for result in executor.resume(&run).await? {
        said.push(format!(
            "{}: {} ({})",
            result.tool_call_id.as_str(),
            result.outcome(),
            result.text()
        ));
    }
    Ok(said)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    for line in durable("sqlite://notes.db").await? {
        println!("{line}");
    }
    Ok(())
}
