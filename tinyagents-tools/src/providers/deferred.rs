//! Deferred tools for the providers that search tools themselves: OpenAI
//! Responses (a `{"type": "tool_search"}` tool) and Anthropic (its BM25 tool
//! search tool). A deferred declaration carries `defer_loading: true`: the
//! model sees its name and description, and its schema is loaded when the
//! provider's search finds it, without touching the cached prefix. Other
//! providers get the built-in `search_tools` tool
//! ([`ToolSearch`](crate::tool::ToolSearch)).

use serde_json::{Value, json};

use super::{ExportTarget, ExportedTools};

/// The request's `tools` value with the tools named in `deferred` marked
/// `defer_loading: true` and the provider's tool search tool appended;
/// `None` for a provider without a tool search of its own (use
/// [`ToolSearch`](crate::tool::ToolSearch) there). The order of the
/// declarations is the export's.
pub fn request_tools_deferred<'a>(
    exported: &ExportedTools,
    deferred: impl IntoIterator<Item = &'a str>,
) -> Option<Value> {
    let search = match exported.target {
        ExportTarget::OpenAiResponses(_) => json!({"type": "tool_search"}),
        ExportTarget::Anthropic(_) => {
            json!({"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"})
        }
        _ => return None,
    };
    let deferred: Vec<&str> = deferred.into_iter().collect();
    let mut tools: Vec<Value> = exported
        .declarations
        .iter()
        .map(|decl| {
            let mut json = decl.json().clone();
            let name = json.get("name").and_then(Value::as_str).unwrap_or_default();
            if deferred.contains(&name)
                && let Value::Object(obj) = &mut json
            {
                obj.insert("defer_loading".into(), Value::Bool(true));
            }
            json
        })
        .collect();
    tools.push(search);
    Some(Value::Array(tools))
}
