//! Remote declarations and results in the runtime's own terms: an MCP tool
//! becomes a [`ToolSpec`], a `tools/call` result a [`ToolOutput`].

use rmcp::model::JsonObject;
use serde_json::Value;

use tinyagents_tools::output::{ContentBlock, ToolOutput};
use tinyagents_tools::providers::mcp::{WRAP_RESULT_KEYWORD, WRAPPED_RESULT_MEMBER};
use tinyagents_tools::spec::ToolSchema;
use tinyagents_tools::spec::{Effect, Idempotency, Reach, ToolSafety};
use tinyagents_tools::spec::{SpecError, ToolSpec};

use super::ImportOptions;

/// The safety a remote tool is given from its MCP annotations, conservative
/// where an annotation is absent: mutating (and destructive unless
/// `destructiveHint` is `false`, MCP's own default) without
/// `readOnlyHint: true`, networked without `openWorldHint: false`, not
/// idempotent without `idempotentHint: true`.
pub(super) fn safety_from(tool: &rmcp::model::Tool) -> ToolSafety {
    let hints = tool.annotations.as_ref();
    let read_only = hints.and_then(|h| h.read_only_hint) == Some(true);
    let destructive = hints.and_then(|h| h.destructive_hint) != Some(false);
    let idempotent = hints.and_then(|h| h.idempotent_hint) == Some(true);
    let local = hints.and_then(|h| h.open_world_hint) == Some(false);
    let effect = match (read_only, destructive) {
        (true, _) => Effect::ReadOnly,
        (false, true) => Effect::Destructive,
        (false, false) => Effect::Mutating,
    };
    ToolSafety::default()
        .effect(effect)
        .idempotency(if idempotent {
            Idempotency::Idempotent
        } else {
            Idempotency::NotIdempotent
        })
        .reach(if local {
            Reach::Local
        } else {
            Reach::Networked
        })
}

/// Whether `schema` already accepts `null`.
fn accepts_null(schema: &Value) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == "null",
        Some(Value::Array(types)) => types.iter().any(|t| t == "null"),
        _ => ["anyOf", "oneOf"].iter().any(|k| {
            schema
                .get(*k)
                .and_then(Value::as_array)
                .is_some_and(|alts| alts.iter().any(accepts_null))
        }),
    }
}

/// The local input schema of a remote tool, and the optional top-level
/// properties that were made nullable.
///
/// A provider's strict mode makes every property required and an optional
/// one nullable, so a model in strict mode sends `null` for an optional
/// argument it leaves out. Locally such a property also accepts `null`, and
/// the call leaves it out before sending ([`strip_nulls`]): the server sees
/// the argument absent, as its schema expects.
pub(super) fn local_input_schema(remote: &serde_json::Map<String, Value>) -> (Value, Vec<String>) {
    let mut schema = remote.clone();
    let required: Vec<String> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let mut nullable = Vec::new();
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        for (name, property) in properties.iter_mut() {
            if required.contains(name) || !property.is_object() || accepts_null(property) {
                continue;
            }
            let widened = match property.get("type") {
                Some(Value::String(t)) => {
                    let mut p = property.clone();
                    p["type"] = Value::Array(vec![Value::String(t.clone()), "null".into()]);
                    p
                }
                _ => serde_json::json!({"anyOf": [property.clone(), {"type": "null"}]}),
            };
            *property = widened;
            nullable.push(name.clone());
        }
    }
    (Value::Object(schema), nullable)
}

/// Leaves out the `nullable` arguments whose value is `null`.
pub(super) fn strip_nulls(arguments: &mut serde_json::Map<String, Value>, nullable: &[String]) {
    arguments.retain(|k, v| !(v.is_null() && nullable.iter().any(|n| n == k)));
}

/// The local spec of a remote tool, or why it cannot have one.
pub(super) fn spec_from(
    tool: &rmcp::model::Tool,
    options: &ImportOptions,
) -> Result<ToolSpec, SpecError> {
    let local_name = format!("{}{}", options.prefix.as_deref().unwrap_or(""), tool.name);
    let description = tool
        .description
        .as_deref()
        .filter(|d| !d.trim().is_empty())
        .map(str::to_owned)
        .or_else(|| tool.title.clone().filter(|t| !t.trim().is_empty()))
        .unwrap_or_else(|| format!("The MCP tool `{}`.", super::bounded(&tool.name, 64)));
    let safety = safety_from(tool);
    let idempotent = safety.idempotency.is_idempotent();
    let mut builder = ToolSpec::builder(local_name, description)
        .input_schema(ToolSchema::from_value(
            local_input_schema(&tool.input_schema).0,
        ))
        .safety(safety)
        .tag("mcp");
    if let Some(title) = &tool.title {
        builder = builder.title(title.clone());
    }
    match tool.output_schema.as_deref() {
        // A wrapped result is answered unwrapped: the local tool declares
        // the value's own schema.
        Some(schema) if wraps_result(schema) => {
            if let Some(inner) = unwrapped_output_schema(schema) {
                builder = builder.output_schema(ToolSchema::from_value(inner));
            }
        }
        Some(schema) => {
            builder = builder.output_schema(ToolSchema::from_value(Value::Object(schema.clone())));
        }
        None => {}
    }
    if let Some(timeout) = options.timeout {
        builder = builder.timeout(timeout);
    }
    if let Some(retry) = &options.retry
        && idempotent
    {
        builder = builder.retry(retry.clone());
    }
    builder.build()
}

/// A remote content block as a local one; a block of a type this crate
/// does not know becomes a short text saying so.
pub(super) fn content_block(block: &rmcp::model::ContentBlock) -> ContentBlock {
    let value = serde_json::to_value(block).unwrap_or(Value::Null);
    let field = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
    let media = |fallback: &str| {
        (
            field(&value, "data").unwrap_or_default(),
            field(&value, "mimeType").unwrap_or_else(|| fallback.to_owned()),
        )
    };
    match value.get("type").and_then(Value::as_str) {
        Some("text") => ContentBlock::text(field(&value, "text").unwrap_or_default()),
        Some("image") => {
            let (data, mime_type) = media("image/png");
            ContentBlock::Image { data, mime_type }
        }
        Some("audio") => {
            let (data, mime_type) = media("application/octet-stream");
            ContentBlock::Audio { data, mime_type }
        }
        Some("resource_link") => ContentBlock::ResourceLink {
            uri: field(&value, "uri").unwrap_or_default(),
            name: field(&value, "name"),
            mime_type: field(&value, "mimeType"),
            description: field(&value, "description"),
        },
        Some("resource") => {
            let resource = value.get("resource").cloned().unwrap_or(Value::Null);
            let uri = field(&resource, "uri").unwrap_or_default();
            let mime_type = field(&resource, "mimeType");
            match (field(&resource, "text"), field(&resource, "blob")) {
                (Some(text), _) => ContentBlock::Resource {
                    uri,
                    mime_type,
                    text,
                },
                (None, blob) => ContentBlock::ResourceBlob {
                    uri,
                    mime_type,
                    blob: blob.unwrap_or_default(),
                },
            }
        }
        _ => ContentBlock::text("[content of an unknown type]"),
    }
}

/// True when `schema` is an `outputSchema` wrapped as FastMCP wraps a
/// value that is not an object (and as the project's own server does):
/// marked `"x-fastmcp-wrap-result": true`, with `result` its one
/// property. Such a tool's `structuredContent` is `{"result": value}`.
/// An unmarked schema is never unwrapped: without the mark, an object
/// whose one member is `result` is that object.
pub(super) fn wraps_result(schema: &JsonObject) -> bool {
    schema.get(WRAP_RESULT_KEYWORD) == Some(&Value::Bool(true))
        && schema
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|p| p.len() == 1 && p.contains_key(WRAPPED_RESULT_MEMBER))
}

/// The schema of the value a wrapped `outputSchema` ([`wraps_result`])
/// carries in its `result` member, with the wrapper's `$defs` moved into
/// it, where its references (`#/$defs/...`) find them; `None` when that
/// member accepts any value (`true` or `{}`: nothing to declare).
pub(super) fn unwrapped_output_schema(schema: &JsonObject) -> Option<Value> {
    let mut inner = schema
        .get("properties")?
        .get(WRAPPED_RESULT_MEMBER)?
        .clone();
    let object = inner.as_object_mut()?;
    if object.is_empty() {
        return None;
    }
    if let Some(Value::Object(defs)) = schema.get("$defs") {
        let into = object
            .entry("$defs")
            .or_insert_with(|| Value::Object(JsonObject::new()));
        if let Value::Object(into) = into {
            for (name, def) in defs {
                into.entry(name.clone()).or_insert_with(|| def.clone());
            }
        }
    }
    Some(inner)
}

/// A successful remote result as the tool's output; with `wrapped` (the
/// tool's `outputSchema` [wraps](wraps_result) its value), the value in
/// `structuredContent`'s `result` member, unwrapped.
pub(super) fn output_from(result: &rmcp::model::CallToolResult, wrapped: bool) -> ToolOutput {
    let mut output = ToolOutput::empty();
    for block in &result.content {
        output = output.with_block(content_block(block));
    }
    output.structured = match (&result.structured_content, wrapped) {
        (Some(Value::Object(object)), true) => object.get(WRAPPED_RESULT_MEMBER).cloned(),
        (structured, _) => structured.clone(),
    };
    output
}

/// The text of a result's content, for an `isError` result's message.
pub(super) fn result_text(result: &rmcp::model::CallToolResult) -> String {
    result
        .content
        .iter()
        .map(|b| content_block(b).to_text())
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn remote(annotations: Value) -> rmcp::model::Tool {
        serde_json::from_value(json!({
            "name": "t",
            "inputSchema": {"type": "object"},
            "annotations": annotations,
        }))
        .unwrap()
    }

    #[test]
    fn a_tool_without_hints_is_destructive_networked_and_not_idempotent() {
        let safety = safety_from(&remote(json!({})));
        assert_eq!(safety.effect, Effect::Destructive);
        assert_eq!(safety.reach, Reach::Networked);
        assert_eq!(safety.idempotency, Idempotency::NotIdempotent);
    }

    #[test]
    fn declared_hints_give_read_only_local_idempotent_safety() {
        let safety = safety_from(&remote(json!({
            "readOnlyHint": true, "openWorldHint": false, "idempotentHint": true
        })));
        assert_eq!(safety.effect, Effect::ReadOnly);
        assert_eq!(safety.reach, Reach::Local);
        assert_eq!(safety.idempotency, Idempotency::Idempotent);
        let mutating = safety_from(&remote(json!({"destructiveHint": false})));
        assert_eq!(mutating.effect, Effect::Mutating);
    }

    #[test]
    fn optional_properties_accept_null_locally_and_nulls_are_left_out_when_sent() {
        let remote = json!({
            "type": "object",
            "properties": {
                "text": {"type": "string"},
                "times": {"type": "integer", "default": 1},
                "mode": {"enum": ["a", "b"]},
                "note": {"type": ["string", "null"]}
            },
            "required": ["text"]
        });
        let (local, nullable) = local_input_schema(remote.as_object().unwrap());
        let mut sorted = nullable.clone();
        sorted.sort();
        assert_eq!(sorted, ["mode", "times"]);
        assert_eq!(
            local["properties"]["times"]["type"],
            json!(["integer", "null"])
        );
        assert_eq!(local["properties"]["text"], json!({"type": "string"}));
        assert_eq!(local["properties"]["note"], remote["properties"]["note"]);
        let validator = jsonschema::validator_for(&local).unwrap();
        let mut args = json!({"text": "hi", "times": null, "mode": null, "note": null});
        assert!(validator.is_valid(&args));
        strip_nulls(args.as_object_mut().unwrap(), &nullable);
        assert_eq!(args, json!({"text": "hi", "note": null}));
    }

    #[test]
    fn retries_are_given_only_to_tools_the_remote_calls_idempotent() {
        let options = ImportOptions::new().retry(tinyagents_tools::RetryPolicy::attempts(
            3,
            std::time::Duration::from_millis(1),
        ));
        let plain = spec_from(&remote(json!({})), &options).unwrap();
        assert!(!plain.retry.retries());
        let idem = spec_from(&remote(json!({"idempotentHint": true})), &options).unwrap();
        assert!(idem.retry.retries());
    }
}
