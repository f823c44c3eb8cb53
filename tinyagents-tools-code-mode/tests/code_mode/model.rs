//! A scripted model speaking OpenAI Chat Completions: each turn it reads
//! the declared tools and the last tool messages, and answers with the
//! next scripted reply. The loop around it is the application's: export,
//! parse the calls, execute them, send the answers back.

use serde_json::{Value, json};
use tinyagents_tools::providers::openai::{chat_tool_message, parse_chat_tool_calls};
use tinyagents_tools::providers::{ExportTarget, OpenAiOptions, export_declarations};
use tinyagents_tools::{ErrorClass, RunContext, ToolExecutor, ToolResult, Turn};
use tinyagents_tools_code_mode::ProgramError;

/// A reply of the model that calls `run_code` once with `code`, as call `id`.
pub fn run_code_reply(id: &str, code: &str) -> Value {
    json!({"choices": [{"message": {"role": "assistant", "tool_calls": [{
        "id": id,
        "type": "function",
        "function": {"name": "run_code", "arguments": json!({"code": code}).to_string()}
    }]}}]})
}

/// What one turn of the loop saw and answered.
pub struct TurnLog {
    /// The `tools` value the model was sent.
    #[allow(dead_code)]
    pub declared: Value,
    /// The answers to the model's calls.
    pub results: Vec<ToolResult>,
    /// The tool messages sent back to the model.
    pub messages: Vec<Value>,
}

/// Runs one model turn: declares the executor's tools, takes the
/// scripted `reply`, runs its calls and answers them.
pub async fn turn(executor: &ToolExecutor, run: &RunContext, index: u32, reply: &Value) -> TurnLog {
    let target = ExportTarget::OpenAiChat(OpenAiOptions::default());
    let declared = export_declarations(target, executor.registry().specs()).request_tools();
    let calls = parse_chat_tool_calls(reply).expect("the scripted reply parses");
    let names: Vec<String> = executor.registry().names().map(str::to_owned).collect();
    let results = executor
        .execute_batch(run, &Turn::new(index).advertising(names), calls)
        .await;
    let messages = results
        .iter()
        .map(|r| chat_tool_message(&r.message))
        .collect();
    TurnLog {
        declared,
        results,
        messages,
    }
}

/// The program's answer: the `result` of a `run_code` call that returned.
pub fn program_result(result: &ToolResult) -> Value {
    assert_eq!(result.outcome(), "ok", "{}", result.text());
    result
        .message
        .structured
        .as_ref()
        .expect("a structured answer")["result"]
        .clone()
}

/// The answer to a reply that calls `run_code` once with `code` (as call
/// `c1`, in turn 1).
pub async fn answer(executor: &ToolExecutor, run: &RunContext, code: &str) -> ToolResult {
    let mut log = turn(executor, run, 1, &run_code_reply("c1", code)).await;
    log.results.remove(0)
}

/// Checks that `result` failed with `outcome`, a repair error whose text
/// contains `text`.
pub fn assert_repair_error(result: &ToolResult, outcome: &str, text: &str) {
    assert_eq!(result.outcome(), outcome, "{}", result.text());
    assert_eq!(result.error.as_ref().unwrap().class(), ErrorClass::Repair);
    assert!(
        result.text().contains(text),
        "expected {text:?} in: {}",
        result.text()
    );
}

/// The [`ProgramError`] a failed `run_code` call carries as its source.
pub fn program_error(result: &ToolResult) -> ProgramError {
    let error = result.error.as_ref().expect("the call failed");
    std::error::Error::source(error)
        .and_then(|s| s.downcast_ref::<ProgramError>())
        .unwrap_or_else(|| panic!("no ProgramError behind {error:?}"))
        .clone()
}
