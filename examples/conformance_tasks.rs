//! The fixtures of the official MCP conformance suite's `tasks-*` scenarios
//! (the tasks extension, SEP-2663), written with `#[tool]` as a user
//! would: one plain tool, and tools that run as MCP tasks when the client
//! declared the extension.
//!
//! - [`greet`]: a plain call, never a task;
//! - [`slow_compute`]: a task (optional) that works `seconds` seconds, and
//!   stops at once when cancelled;
//! - [`failing_job`]: a task (required) whose tool fails after about a
//!   second: the task completes with `isError`;
//! - [`protocol_error_job`]: a task whose body panics: the task fails;
//! - [`confirm_delete`]: a task that asks its client one question;
//! - [`multi_input`]: a task that asks two questions at once;
//! - [`test_tool_with_task`]: asks a name in input rounds, then escalates
//!   to a task that greets it.

use std::time::Duration;

use serde_json::{Value, json};
use tinyagents_tools::prelude::*;
use tinyagents_tools::{RegistryError, tool};
use tinyagents_tools_mcp::{ElicitAction, Elicitation, McpPeer, McpPeerError};

/// What a tool that talks to its client answers: text, or why it failed.
type Reply = Result<String, ToolError>;

/// No arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// Who to greet.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GreetArgs {
    /// The name to greet.
    pub name: String,
}

/// Greets someone by name (a plain call: never a task).
#[tool(read_only, idempotent, local)]
pub async fn greet(args: GreetArgs) -> String {
    format!("Hello, {}!", args.name)
}

/// How long to work, and a label for the result.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SlowArgs {
    /// Seconds of work (0 to 3600).
    #[schemars(range(max = 3600))]
    pub seconds: u64,
    /// A label echoed in the result.
    #[serde(default)]
    pub label: Option<String>,
}

/// Works for `seconds` seconds, then reports; stops at once when
/// cancelled.
#[tool(read_only, idempotent, local, task = "optional", timeout = "2h")]
pub async fn slow_compute(args: SlowArgs, #[inject] cancel: CancellationToken) -> Reply {
    tokio::select! {
        () = tokio::time::sleep(Duration::from_secs(args.seconds)) => {}
        () = cancel.cancelled() => return Err(ToolError::cancelled()),
    }
    let label = args.label.as_deref().unwrap_or("job");
    Ok(format!("computed {label} in {} s", args.seconds))
}

/// Works for about a second, then fails (a tool error, not a protocol
/// error).
#[tool(read_only, idempotent, local, task = "required")]
pub async fn failing_job(_args: NoArgs) -> Reply {
    tokio::time::sleep(Duration::from_secs(1)).await;
    Err(ToolError::fatal("the job failed: its input is missing"))
}

/// Panics: the task fails with a JSON-RPC error.
#[tool(read_only, idempotent, local, task = "optional")]
pub async fn protocol_error_job(_args: NoArgs) -> Reply {
    tokio::time::sleep(Duration::from_millis(100)).await;
    panic!("protocol_error_job always panics");
}

/// The file to delete.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteArgs {
    /// The file's name.
    pub filename: String,
}

/// Asks the user to confirm, then deletes a file (pretends to).
#[tool(destructive, local, task = "optional")]
pub async fn confirm_delete(args: DeleteArgs, #[inject] client: McpPeer) -> Reply {
    let message = format!("Delete {}?", args.filename);
    let answer = client
        .elicit_as("confirm", &message, one_field("confirm", "boolean"))
        .await?;
    if answer.action == ElicitAction::Accept && field(&answer, "confirm") == "true" {
        Ok(format!("Deleted {}", args.filename))
    } else {
        Ok(format!("Kept {}", args.filename))
    }
}

/// Asks the user two questions at once, then reports both answers.
#[tool(read_only, local, task = "optional")]
pub async fn multi_input(_args: NoArgs, #[inject] client: McpPeer) -> Reply {
    let (name, confirm) = tokio::join!(
        client.elicit_as("name", "What is your name?", one_field("name", "string")),
        client.elicit_as("confirm", "Go ahead?", one_field("confirm", "boolean")),
    );
    let (name, confirm) = (name?, confirm?);
    Ok(format!(
        "name: {}, confirmed: {}",
        field(&name, "name"),
        field(&confirm, "confirm")
    ))
}

/// Asks the user's name in input rounds, then goes on as a task that
/// greets them.
#[tool(read_only, local, task = "required", escalates)]
pub async fn test_tool_with_task(_args: NoArgs, #[inject] client: McpPeer) -> Reply {
    let answer = ask_user_name(&client).await?;
    client.escalate().await?;
    tokio::time::sleep(Duration::from_millis(200)).await;
    Ok(format!("Hello, {}!", field(&answer, "name")))
}

/// Asks the user's name in an input round keyed `user_name`; the answer
/// holds it as the field `name` (the conformance server's tools ask it too).
pub async fn ask_user_name(client: &McpPeer) -> Result<Elicitation, McpPeerError> {
    client
        .elicit_as(
            "user_name",
            "What is your name?",
            one_field("name", "string"),
        )
        .await
}

/// A form of one required field `name` of JSON type `kind`.
fn one_field(name: &str, kind: &str) -> Value {
    json!({
        "type": "object",
        "properties": { name: {"type": kind} },
        "required": [name],
    })
}

/// The answered field `name` as text (`null` when it was not given).
fn field(answer: &Elicitation, name: &str) -> String {
    match answer.content.as_ref().and_then(|c| c.get(name)) {
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
        None => "null".to_owned(),
    }
}

/// Registers every fixture.
pub fn register(registry: &mut ToolRegistry) -> Result<(), RegistryError> {
    registry
        .register(GreetTool)?
        .register(SlowComputeTool)?
        .register(FailingJobTool)?
        .register(ProtocolErrorJobTool)?
        .register(ConfirmDeleteTool)?
        .register(MultiInputTool)?
        .register(TestToolWithTaskTool)?;
    Ok(())
}
