//! Size limits on one schema (OpenAI strict), on a tool's description and
//! on a request's tools, and the counts per-request limits need (Anthropic
//! strict).

use std::collections::HashSet;

use serde_json::Value;

use super::refs::{is_defs, resolve};
use super::transform::{Cx, children, is_object_type};
use super::{ExportError, Limit, Provider, Usage};
use crate::spec::ToolSpec;
use crate::spec::schema::walk_schemas;

/// OpenAI strict: properties in one schema.
pub(crate) const OPENAI_MAX_PROPERTIES: usize = 5000;
/// OpenAI strict: object nesting depth.
pub(crate) const OPENAI_MAX_DEPTH: usize = 10;
/// OpenAI strict: enum values in one schema.
pub(crate) const OPENAI_MAX_ENUM_VALUES: usize = 1000;
/// OpenAI strict: characters of property names and string enum values.
pub(crate) const OPENAI_MAX_CHARS: usize = 120_000;

/// OpenAI Chat Completions: characters of a function's `description` (the
/// API answers `string_above_max_length` for `tools[i].function.description`
/// past 1,024).
pub(crate) const OPENAI_CHAT_MAX_DESCRIPTION: usize = 1024;
/// OpenAI Chat Completions: tools in one request.
pub(crate) const OPENAI_CHAT_MAX_TOOLS: usize = 128;
/// Gemini: function declarations in one request (the `Tool.functionDeclarations`
/// reference: "Maximum 128 function declarations can be provided").
pub(crate) const GEMINI_MAX_TOOLS: usize = 128;

/// The most tools one request of `provider` takes, when it has a limit.
pub(crate) fn max_tools(provider: Provider) -> Option<usize> {
    match provider {
        Provider::OpenAiChat => Some(OPENAI_CHAT_MAX_TOOLS),
        Provider::Gemini => Some(GEMINI_MAX_TOOLS),
        _ => None,
    }
}

/// Checks the length of a tool's description against the provider's limit.
pub(crate) fn check_description(spec: &ToolSpec, provider: Provider) -> Result<(), ExportError> {
    let max = match provider {
        Provider::OpenAiChat => OPENAI_CHAT_MAX_DESCRIPTION,
        _ => return Ok(()),
    };
    // Counted in characters, as the API counts; bytes bound them first.
    if spec.description.len() > max && spec.description.chars().count() > max {
        return Err(ExportError::LimitExceeded {
            tool: spec.name.to_string(),
            provider,
            pointer: "/description".to_owned(),
            limit: Limit::DescriptionChars,
            max,
        });
    }
    Ok(())
}

/// Checks OpenAI's strict-mode size limits.
pub(crate) fn check_openai(schema: &Value, cx: &Cx) -> Result<(), ExportError> {
    let exceeded = |pointer: &str, limit, max| ExportError::LimitExceeded {
        tool: cx.tool(),
        provider: cx.provider,
        pointer: pointer.to_owned(),
        limit,
        max,
    };
    let (mut properties, mut enums, mut chars) = (0usize, 0usize, 0usize);
    let mut first = None;
    walk_schemas(schema, &mut |ptr, obj| {
        if first.is_some() {
            return;
        }
        if let Some(Value::Object(props)) = obj.get("properties") {
            properties += props.len();
            chars += props.keys().map(String::len).sum::<usize>();
        }
        let values = obj
            .get("enum")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let constant = obj.get("const").into_iter();
        for value in values.iter().chain(constant) {
            enums += 1;
            chars += value.as_str().map_or(0, str::len);
        }
        first = if properties > OPENAI_MAX_PROPERTIES {
            Some(exceeded(ptr, Limit::Properties, OPENAI_MAX_PROPERTIES))
        } else if enums > OPENAI_MAX_ENUM_VALUES {
            Some(exceeded(ptr, Limit::EnumValues, OPENAI_MAX_ENUM_VALUES))
        } else if chars > OPENAI_MAX_CHARS {
            Some(exceeded(ptr, Limit::SchemaChars, OPENAI_MAX_CHARS))
        } else {
            None
        };
    });
    if let Some(e) = first {
        return Err(e);
    }
    depth(schema, schema, "", 0, &mut Vec::new())
        .map_err(|ptr| exceeded(&ptr, Limit::Depth, OPENAI_MAX_DEPTH))
}

/// Walks object nesting (following references, but not around a cycle) and
/// returns the pointer of the first object nested deeper than the limit.
fn depth(
    node: &Value,
    root: &Value,
    ptr: &str,
    level: usize,
    stack: &mut Vec<String>,
) -> Result<(), String> {
    let Value::Object(obj) = node else {
        return Ok(());
    };
    let level = if is_object_type(obj) {
        level + 1
    } else {
        level
    };
    if level > OPENAI_MAX_DEPTH {
        return Err(ptr.to_owned());
    }
    if let Some(Value::String(reference)) = obj.get("$ref")
        && !stack.contains(reference)
        && let Some(target) = resolve(root, reference)
    {
        stack.push(reference.clone());
        depth(target, root, ptr, level, stack)?;
        stack.pop();
    }
    for (suffix, child) in children(obj) {
        if !is_defs(&suffix) {
            depth(child, root, &format!("{ptr}{suffix}"), level, stack)?;
        }
    }
    Ok(())
}

/// Counts optional and union-typed properties over the whole schema.
pub(crate) fn usage(schema: &Value) -> Usage {
    let mut usage = Usage::default();
    walk_schemas(schema, &mut |_, obj| {
        let Some(Value::Object(props)) = obj.get("properties") else {
            return;
        };
        let required: HashSet<&str> = obj
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        for (name, prop) in props {
            if !required.contains(name.as_str()) {
                usage.optional_params += 1;
            }
            let union = prop.get("anyOf").is_some()
                || prop.get("oneOf").is_some()
                || prop
                    .get("type")
                    .and_then(Value::as_array)
                    .is_some_and(|ts| ts.len() > 1);
            if union {
                usage.union_params += 1;
            }
        }
    });
    usage
}
