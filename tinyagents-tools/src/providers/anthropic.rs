//! Anthropic Messages: tool declarations, `tool_use` blocks in, `tool_result`
//! blocks out.
//!
//! Without strict mode the canonical schema is sent almost as is (Anthropic
//! takes JSON Schema with `$defs`); `$schema` and the root title are dropped
//! and the root must be a plain object. Strict mode (opt-in) closes every
//! object, refuses open maps and recursion, keeps only supported formats and
//! moves numeric and length bounds (and `minItems` above 1) into the
//! description; the per-request limits on strict tools are checked when a
//! request's tools are assembled. A spec's examples of arguments are sent as
//! `input_examples` (a field of Anthropic's beta tool definition), its
//! description as written.
//!
//! What happens to the JSON Schema 2020-12 keywords of the canonical schema:
//! both modes drop `$schema`, `$id`, the root `title` and every
//! `x-mcp-header` (an MCP transport annotation, nothing a model reads), and
//! refuse `anyOf`/`oneOf`/`allOf` at the root (Anthropic answers 400).
//! Without strict mode the rest is sent as written: `$defs`, `$ref`,
//! `$anchor`, and `allOf`, `not` and `if`/`then`/`else` below the root.
//! Strict mode writes `oneOf` as `anyOf`, merges a one-member `allOf`, drops
//! definitions nothing uses, and refuses a longer `allOf`, `not`,
//! `if`/`then`/`else`, `dependentSchemas`, `dependentRequired`,
//! `prefixItems`, `contains`, `propertyNames` and `unevaluatedItems`
//! ([`ExportError::Unsupported`]), which strict tools cannot express.

use serde_json::{Value, json};

use super::refs;
use super::results::{MAX_STRUCTURED_BYTES, result_text};
use super::transform::{self as t, Cx};
use super::{AnthropicOptions, CallParseError, Declaration, ExportError, Usage, read};
use crate::call::{RawArguments, ToolCall};
use crate::output::{ContentBlock, ToolMessage};
use crate::spec::schema::walk_schemas_mut;

/// The string formats Anthropic strict mode accepts: OpenAI's
/// ([`OPENAI_FORMATS`](super::openai::OPENAI_FORMATS)) and `uri`.
pub const ANTHROPIC_FORMATS: &[&str] = &t::concat::<10>(super::openai::OPENAI_FORMATS, &["uri"]);

/// Bounds Anthropic strict mode does not support (moved into the description).
const STRICT_UNSUPPORTED_BOUNDS: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "maxItems",
    "minProperties",
    "maxProperties",
    "uniqueItems",
];

/// `{name, description, input_schema, strict?, input_examples?}`.
pub(crate) fn declaration(options: AnthropicOptions, cx: &Cx) -> Result<Declaration, ExportError> {
    let spec = cx.spec;
    let mut s = cx.model_schema();
    let mut usage = Usage::default();
    if options.strict {
        t::replace_boolean_schemas(&mut s, cx)?;
        t::normalize_combinators(&mut s, cx, false)?;
        t::refuse_keywords(&mut s, cx, t::STRICT_REFUSED)?;
        refs::refuse_recursion(&s, cx)?;
        refs::prune_unused_defs(&mut s);
        t::check_root(&s, cx)?;
        t::close_objects_strict(&mut s, cx)?;
        t::filter_formats(&mut s, ANTHROPIC_FORMATS, &[]);
        t::bounds_to_description(&mut s, STRICT_UNSUPPORTED_BOUNDS);
        walk_schemas_mut(&mut s, &mut |obj| {
            if obj
                .get("minItems")
                .and_then(Value::as_u64)
                .is_some_and(|n| n > 1)
            {
                let n = obj.remove("minItems").unwrap_or_default();
                t::add_note(obj, &[format!("minItems: {n}")]);
            }
        });
        usage = super::limits::usage(&s);
    } else {
        t::check_root(&s, cx)?;
    }
    let mut decl = json!({
        "name": spec.name.as_str(),
        "description": spec.description,
        "input_schema": s,
    });
    if options.strict {
        decl["strict"] = Value::Bool(true);
    }
    if !spec.examples.is_empty() {
        decl["input_examples"] = Value::Array(spec.examples.clone());
    }
    Ok(Declaration::new(decl, usage))
}

/// Reads the `tool_use` blocks of an assistant message.
///
/// Takes the message (its `content` array) or the content array itself;
/// other blocks are skipped. `input` is kept as the object sent.
pub fn parse_tool_uses(payload: &Value) -> Result<Vec<ToolCall>, CallParseError> {
    let (blocks, ptr) = match payload {
        Value::Object(obj) => (read::field(obj, "content", "")?, "/content"),
        other => (other, ""),
    };
    let Value::Array(blocks) = blocks else {
        // A plain string content holds no tool use.
        return match blocks {
            Value::String(_) => Ok(Vec::new()),
            _ => Err(CallParseError::WrongType {
                pointer: ptr.to_owned(),
                expected: "an array",
            }),
        };
    };
    read::typed_calls(blocks, ptr, "tool_use", "id", |obj, ptr| {
        let input = read::field(obj, "input", ptr)?;
        Ok(RawArguments::Json(read::arguments(
            input,
            &format!("{ptr}/input"),
        )?))
    })
}

/// The `tool_result` block answering a call: `{"type": "tool_result",
/// "tool_use_id", "content"}` plus `"is_error": true` for a failure. Text-only
/// content is sent as one string; images keep their own blocks.
pub fn tool_result_block(message: &ToolMessage) -> Value {
    let has_image = message
        .content
        .iter()
        .any(|b| matches!(b, ContentBlock::Image { .. }));
    let content = if has_image {
        Value::Array(
            message
                .content
                .iter()
                .map(|block| match block {
                    ContentBlock::Image { data, mime_type } => json!({
                        "type": "image",
                        "source": {"type": "base64", "media_type": mime_type, "data": data},
                    }),
                    other => json!({"type": "text", "text": other.to_text()}),
                })
                .collect(),
        )
    } else {
        Value::String(result_text(message, MAX_STRUCTURED_BYTES))
    };
    let mut block = json!({
        "type": "tool_result",
        "tool_use_id": message.tool_call_id.as_str(),
        "content": content,
    });
    if message.is_error {
        block["is_error"] = Value::Bool(true);
    }
    block
}

/// The user message carrying the results of one turn's calls, in order
/// (a slice of [`ToolResult`](crate::ToolResult)s or of [`ToolMessage`]s).
pub fn tool_results_message<M: AsRef<ToolMessage>>(results: &[M]) -> Value {
    json!({
        "role": "user",
        "content": results.iter().map(|r| tool_result_block(r.as_ref())).collect::<Vec<_>>(),
    })
}
