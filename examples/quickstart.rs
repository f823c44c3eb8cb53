//! The main job: four realistic tools, their declarations for OpenAI and
//! Anthropic, and one scripted model turn through the executor, printed step
//! by step so a person can follow every decision.
//!
//! ```sh
//! cargo run --example quickstart
//! ```
//!
//! No network and no setup: the "model" is a recorded OpenAI-shaped response
//! whose tool calls include good ones, a bad argument, a forged hidden key,
//! an unknown tool, a path that escapes the workspace, and a call that needs
//! approval.

use std::sync::Arc;

use serde_json::{Value, json};
use tinyagents_tools::approval::ApprovalRequest;
use tinyagents_tools::events::{Delivery, EventKind, EventSubscriber, ToolEvent};
use tinyagents_tools::policy::{ConfirmationPolicy, WorkspacePolicy};
use tinyagents_tools::providers::{
    AnthropicOptions, ExportTarget, OpenAiOptions, export_declarations, openai,
};
use tinyagents_tools::{ToolExecutor, Turn};
use tinyagents_tools_examples::{ApproveAndReport, NoteBook, quickstart_registry, quickstart_run};

/// Stands in for a person asked to approve a call: prints the request (the
/// approver then approves it).
fn print_approval(request: &ApprovalRequest) {
    println!(
        "   ? approval asked for `{}` {} (fingerprint {}…): approved",
        request.tool,
        request.arguments,
        &request.fingerprint[..12]
    );
}

/// Prints every lifecycle event on one line.
struct PrintEvents;

impl EventSubscriber for PrintEvents {
    fn on_event(&self, e: &ToolEvent) {
        let mut line = format!("   {:<15} {:<8} {}", e.kind.as_str(), e.call_id, e.tool);
        if let (Some(class), Some(kind)) = (e.error_class, e.error_kind) {
            line.push_str(&format!("  [{class}: {kind}]"));
        }
        if let Some(policy) = &e.policy {
            line.push_str(&format!("  by {policy}"));
        }
        if e.kind == EventKind::Completed
            && let Some(hash) = &e.result_hash
        {
            line.push_str(&format!("  result sha256 {}…", &hash[..12]));
        }
        println!("{line}");
    }

    fn delivery(&self) -> Delivery {
        Delivery::Inline
    }
}

/// The model's recorded answer: a Chat Completions message with tool calls,
/// shaped exactly as OpenAI documents it (arguments are JSON strings).
fn scripted_model_turn() -> Value {
    let call = |id: &str, name: &str, args: Value| json!({"id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}});
    json!({
        "role": "assistant",
        "content": null,
        "tool_calls": [
            call("call_1", "search_docs", json!({"query": "retries and timeouts", "limit": 2})),
            call("call_2", "calculate", json!({"a": 1.5, "op": "multiply", "b": 4})),
            call("call_3", "search_docs", json!({"query": "tools", "limit": 500})),
            call("call_4", "search_docs", json!({"query": "tools", "index": "forged-index"})),
            call("call_5", "delete_everything", json!({})),
            call("call_6", "read_file", json!({"path": "notes.md"})),
            call("call_7", "read_file", json!({"path": "../../etc/passwd"})),
            call("call_8", "write_note", json!({"title": "Groceries", "body": "eggs, rice, tea"})),
            {"id": "call_9", "type": "function", "function": {"name": "calculate", "arguments": "{\"a\": 1, \"op\": "}}
        ]
    })
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let workspace =
        std::env::temp_dir().join(format!("tinyagents-quickstart-{}", std::process::id()));
    std::fs::create_dir_all(&workspace)?;
    std::fs::write(
        workspace.join("notes.md"),
        "# Notes\nShip the quickstart.\n",
    )?;

    let registry = quickstart_registry()?;
    println!("== 1. Four tools, each declared once with #[tool]");
    for spec in registry.specs() {
        let s = &spec.safety;
        let hidden: Vec<&str> = spec.injected.iter().map(|i| i.name.as_str()).collect();
        println!(
            "   {:<12} effect={:?} idempotent={} reach={:?} confirm={} workspace={} hidden={:?}",
            spec.name,
            s.effect,
            s.idempotency.is_idempotent(),
            s.reach,
            s.requires_confirmation,
            s.workspace,
            hidden
        );
    }

    println!("\n== 2. What the model is shown");
    let openai_tools = export_declarations(
        ExportTarget::OpenAiChat(OpenAiOptions { strict: true }),
        registry.specs(),
    );
    println!("-- OpenAI Chat Completions (strict):");
    println!("{}", serde_json::to_string_pretty(&openai_tools.to_json())?);
    let anthropic_tools = export_declarations(
        ExportTarget::Anthropic(AnthropicOptions::default()),
        registry.specs(),
    );
    println!("-- Anthropic Messages:");
    println!(
        "{}",
        serde_json::to_string_pretty(&anthropic_tools.to_json())?
    );
    for error in openai_tools.errors.iter().chain(&anthropic_tools.errors) {
        println!("   left out: {error}");
    }

    println!("\n== 3. The model answers with nine tool calls (OpenAI shape)");
    let message = scripted_model_turn();
    let calls = openai::parse_chat_tool_calls(&message)?;
    for c in &calls {
        println!("   {:<8} {:<18} {:?}", c.id, c.name, c.arguments);
    }

    println!("\n== 4. The executor checks and runs each call (events as they happen)");
    let notebook = Arc::new(NoteBook::default());
    let run = quickstart_run(&workspace, Arc::clone(&notebook));
    let executor = ToolExecutor::builder(registry, ())
        .middleware(WorkspacePolicy)
        .middleware(ConfirmationPolicy::new(ApproveAndReport(print_approval)))
        .subscribe(PrintEvents)
        .configure(|c| c.max_concurrency = std::num::NonZeroUsize::MIN)
        .build()?;
    let results = executor.execute_batch(&run, &Turn::new(1), calls).await;

    println!("\n== 5. What goes back to the model: one `role: tool` message per call id");
    for r in &results {
        let msg = openai::chat_tool_message(r);
        let verdict = match &r.error {
            None => "ok".to_owned(),
            Some(e) => format!("{} / {}", e.class(), e.kind().as_str()),
        };
        println!("   {} [{verdict}]", msg);
    }

    let answered: Vec<&str> = results.iter().map(|r| r.tool_call_id.as_str()).collect();
    let failed = results.iter().filter(|r| r.is_error).count();
    println!("\n== Summary");
    println!(
        "   {} calls, {} answered in order ({}), {} ok, {} refused or failed",
        9,
        results.len(),
        answered.join(", "),
        results.len() - failed,
        failed
    );
    println!("   notebook now holds {} note(s)", notebook.notes().len());
    std::fs::remove_dir_all(&workspace)?;
    Ok(())
}
