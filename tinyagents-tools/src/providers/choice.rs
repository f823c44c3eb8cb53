//! Cache-friendly tool selection: the request keeps the full, stable list of
//! declarations (so the provider's prompt cache holds turn after turn) and
//! the turn's subset goes in the request's tool choice.
//!
//! | provider | field | value |
//! | --- | --- | --- |
//! | OpenAI Chat Completions | `tool_choice` | `{"type": "allowed_tools", "allowed_tools": {"mode", "tools": [{"type": "function", "function": {"name"}}]}}` |
//! | OpenAI Responses | `tool_choice` | `{"type": "allowed_tools", "mode", "tools": [{"type": "function", "name"}]}` |
//! | Gemini | `toolConfig` | `{"functionCallingConfig": {"mode": "VALIDATED" \| "ANY", "allowedFunctionNames"}}` (the names are only taken with these two modes) |
//! | Anthropic, MCP | none | Anthropic's `tool_choice` names one tool or none; its cache-friendly way to narrow is `defer_loading` with tool search. The subset is then enforced by the executor alone. |
//!
//! Whatever the provider, the executor still refuses a call outside the
//! subset when the turn advertises it ([`Turn::advertising`](crate::Turn::advertising)).

use serde_json::{Value, json};

use super::ExportTarget;

/// Whether the model may answer in text or must call one of the allowed
/// tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum AllowedMode {
    /// The model may call an allowed tool or answer in text (OpenAI `auto`,
    /// Gemini `VALIDATED`).
    #[default]
    Auto,
    /// The model must call one of the allowed tools (OpenAI `required`,
    /// Gemini `ANY`).
    Required,
}

/// The tool-choice value restricting a turn to `allowed` (tool names as
/// exported) while the request's `tools` stay the full list; `None` for a
/// provider without such a field (Anthropic, MCP): see the module's table.
/// The names keep the order given.
///
/// ```
/// use tinyagents_tools::providers::{AllowedMode, Provider, allowed_tools_choice};
///
/// let choice = allowed_tools_choice(Provider::Gemini.default_target(), ["get_weather"], AllowedMode::Required);
/// assert_eq!(choice.unwrap()["functionCallingConfig"]["mode"], "ANY");
/// ```
pub fn allowed_tools_choice<'a>(
    target: ExportTarget,
    allowed: impl IntoIterator<Item = &'a str>,
    mode: AllowedMode,
) -> Option<Value> {
    let openai_mode = match mode {
        AllowedMode::Auto => "auto",
        AllowedMode::Required => "required",
    };
    let names = allowed.into_iter();
    match target {
        ExportTarget::OpenAiChat(_) => {
            let tools: Vec<Value> = names
                .map(|name| json!({"type": "function", "function": {"name": name}}))
                .collect();
            Some(json!({
                "type": "allowed_tools",
                "allowed_tools": {"mode": openai_mode, "tools": tools},
            }))
        }
        ExportTarget::OpenAiResponses(_) => {
            let tools: Vec<Value> = names
                .map(|name| json!({"type": "function", "name": name}))
                .collect();
            Some(json!({"type": "allowed_tools", "mode": openai_mode, "tools": tools}))
        }
        ExportTarget::Gemini(_) => {
            let gemini_mode = match mode {
                AllowedMode::Auto => "VALIDATED",
                AllowedMode::Required => "ANY",
            };
            let names: Vec<&str> = names.collect();
            Some(json!({
                "functionCallingConfig": {"mode": gemini_mode, "allowedFunctionNames": names},
            }))
        }
        ExportTarget::Anthropic(_) | ExportTarget::Mcp => None,
    }
}
