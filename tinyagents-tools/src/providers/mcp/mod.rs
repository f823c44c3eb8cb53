//! MCP (spec 2025-11-25): tool definitions for `tools/list`, `tools/call`
//! params in, `CallToolResult` out.
//!
//! The input schema keeps its JSON Schema 2020-12 form, `$schema` included
//! (MCP's default dialect since 2025-11-25, and clients may check it), minus
//! the root title and `$id`. Every other keyword is sent as the spec holds
//! it (SEP-1613, SEP-2106): `$defs`, `$ref`, `$anchor`, `$dynamicRef`,
//! `allOf`/`anyOf`/`oneOf` (at the root too), `not`, `if`/`then`/`else` and
//! `x-mcp-header` ([`MCP_HEADER_KEYWORD`], checked as clients check it; see
//! `headers`). MCP asks only that the root be `"type": "object"`. A tool
//! without arguments is `{"type": "object", "additionalProperties": false}`.
//! The output schema is sent when its root is an object, as MCP requires.
//! An output that is not an object (a list, a number, a string, an enum,
//! an `Option`) is wrapped in one: see [`wraps_result`].
//! Annotations come from the tool's safety metadata and are always stated,
//! since MCP's defaults are the opposite of cautious (`destructiveHint` and
//! `openWorldHint` default to true).

use serde_json::{Map, Value, json};

use super::results::{MAX_STRUCTURED_BYTES, bounded_json, json_text_is, structured_within};
use super::transform::{self as t, Cx};
use super::{CallParseError, Declaration, ExportError, Usage, read};
use crate::call::{RawArguments, ToolCall};
use crate::ids::ToolCallId;
use crate::output::{ContentBlock, ToolMessage};
use crate::spec::{Effect, Reach, ToolSchema, ToolSpec};

mod headers;
pub use headers::{MCP_HEADER_KEYWORD, header_params};

/// The `_meta` key under which an MCP tool declaration carries the tool's
/// resource bounds (`max_memory` bytes, `max_cpu_ms`, `fuel`), when it
/// declares any.
pub const BOUNDS_META_KEY: &str = "dev.tinyagents/bounds";

/// The keyword, `true`, of an output schema that wraps a value that is
/// not an object in the one member [`WRAPPED_RESULT_MEMBER`]: FastMCP's
/// mark, from which its clients know to unwrap `structuredContent`.
pub const WRAP_RESULT_KEYWORD: &str = "x-fastmcp-wrap-result";

/// The one member of a wrapped output schema, and of the
/// `structuredContent` that matches it: `{"result": value}`.
pub const WRAPPED_RESULT_MEMBER: &str = "result";

/// True when `spec`'s output is not an object, so that MCP, whose
/// `outputSchema` and `structuredContent` must be objects, gets it wrapped:
/// the declaration's `outputSchema` is
/// `{"type": "object", "properties": {"result": SCHEMA}, "required":
/// ["result"], "x-fastmcp-wrap-result": true}` (the schema's `$defs` moved
/// to the root, where its references find them), and a result's
/// `structuredContent` is `{"result": value}` ([`call_tool_result_for`]).
///
/// It holds for an output schema whose root is not `"type": "object"`
/// (`Vec<T>`, `u32`, `String`, an enum, `Option<T>`), and not for a schema
/// that accepts any value (a tool returning `serde_json::Value`): such a
/// tool declares no `outputSchema`, and an object it returns is sent as it
/// is. Only MCP wraps: the canonical message, in-process results and the
/// other providers keep the bare value.
pub fn wraps_result(spec: &ToolSpec) -> bool {
    spec.output_schema.as_ref().is_some_and(wraps)
}

/// See [`wraps_result`].
fn wraps(schema: &ToolSchema) -> bool {
    if schema.is_object_root() {
        return false;
    }
    match schema.as_value() {
        Value::Bool(_) => false,
        Value::Object(obj) => obj.keys().any(|key| {
            !matches!(
                key.as_str(),
                "$schema" | "$id" | "title" | "description" | "$comment"
            )
        }),
        _ => false,
    }
}

/// The object schema that wraps `schema` in [`WRAPPED_RESULT_MEMBER`].
fn wrapped_output_schema(schema: &ToolSchema) -> Value {
    let mut inner = schema.as_value().clone();
    t::strip_root_meta(&mut inner);
    let defs = inner.as_object_mut().and_then(|obj| obj.remove("$defs"));
    let mut wrapper = json!({
        "type": "object",
        "properties": { WRAPPED_RESULT_MEMBER: inner },
        "required": [WRAPPED_RESULT_MEMBER],
        WRAP_RESULT_KEYWORD: true,
    });
    if let Some(defs) = defs {
        wrapper["$defs"] = defs;
    }
    wrapper
}

/// The MCP `Tool` object.
pub(crate) fn declaration(cx: &Cx) -> Result<Declaration, ExportError> {
    let spec = cx.spec;
    let mut input = spec.input_schema.as_value().clone();
    let dialect = input.get("$schema").cloned();
    t::strip_root_meta(&mut input);
    if let (Some(dialect), Value::Object(obj)) = (dialect, &mut input) {
        obj.insert("$schema".into(), dialect);
    }
    t::check_object_root(&input, cx)?;
    headers::check(&input, cx)?;
    if let Value::Object(obj) = &mut input
        && obj
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(Map::is_empty)
    {
        obj.remove("properties");
        obj.remove("required");
        obj.insert("additionalProperties".into(), Value::Bool(false));
    }
    let safety = &spec.safety;
    let mut annotations = json!({
        "readOnlyHint": safety.effect == Effect::ReadOnly,
        "destructiveHint": safety.effect == Effect::Destructive,
        "idempotentHint": safety.idempotency.is_idempotent(),
        "openWorldHint": safety.reach == Reach::Networked,
    });
    let mut tool = json!({
        "name": spec.name.as_str(),
        "description": super::description_with_examples(spec),
        "inputSchema": input,
    });
    if let Some(title) = &spec.title {
        tool["title"] = json!(title);
        annotations["title"] = json!(title);
    }
    match &spec.output_schema {
        Some(output) if output.is_object_root() => {
            let mut output = output.as_value().clone();
            t::strip_root_meta(&mut output);
            tool["outputSchema"] = output;
        }
        Some(output) if wraps(output) => tool["outputSchema"] = wrapped_output_schema(output),
        _ => {}
    }
    tool["annotations"] = annotations;
    if !spec.bounds.is_unlimited() {
        // MCP has no field for resource bounds: they travel in `_meta`
        // under this project's reverse-DNS key, as the spec allows.
        tool["_meta"] = json!({ BOUNDS_META_KEY: spec.bounds });
    }
    Ok(Declaration::new(tool, Usage::default()))
}

/// Reads `tools/call` params (`{"name", "arguments"?}`) into a call whose id
/// is the JSON-RPC request's id. Missing arguments read as `{}` (MCP makes
/// them optional).
pub fn parse_call_tool_params(
    request_id: impl Into<ToolCallId>,
    params: &Value,
) -> Result<ToolCall, CallParseError> {
    let obj = read::object(params, "")?;
    let name = read::string(obj, "name", "")?;
    let arguments = match obj.get("arguments") {
        None | Some(Value::Null) => json!({}),
        Some(value) => read::arguments(value, "/arguments")?,
    };
    Ok(ToolCall::new(
        request_id,
        name,
        RawArguments::Json(arguments),
    ))
}

/// Reads a whole JSON-RPC `tools/call` request; the call id is the request
/// id (a number is written in decimal).
pub fn parse_call_tool_request(request: &Value) -> Result<ToolCall, CallParseError> {
    let obj = read::object(request, "")?;
    let method = read::string(obj, "method", "")?;
    if method != "tools/call" {
        return Err(CallParseError::WrongMethod {
            method: method.to_owned(),
        });
    }
    let id = match read::field(obj, "id", "")? {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => {
            return Err(CallParseError::WrongType {
                pointer: "/id".into(),
                expected: "a string or a number",
            });
        }
    };
    let params = read::field(obj, "params", "")?;
    parse_call_tool_params(id, params).map_err(|e| match e {
        CallParseError::Missing { pointer } => CallParseError::Missing {
            pointer: format!("/params{pointer}"),
        },
        CallParseError::WrongType { pointer, expected } => CallParseError::WrongType {
            pointer: format!("/params{pointer}"),
            expected,
        },
        other => other,
    })
}

/// One content block in MCP form (`{"type": "text", "text"}`, `image`,
/// `audio`, `resource`, `resource_link`); a JSON block is a text block of
/// its compact JSON.
pub fn content_block(block: &ContentBlock) -> Value {
    match block {
        ContentBlock::Text { text } => json!({"type": "text", "text": text}),
        ContentBlock::Json { value } => json!({"type": "text", "text": value.to_string()}),
        ContentBlock::Image { data, mime_type } => {
            json!({"type": "image", "data": data, "mimeType": mime_type})
        }
        ContentBlock::Audio { data, mime_type } => {
            json!({"type": "audio", "data": data, "mimeType": mime_type})
        }
        ContentBlock::Resource {
            uri,
            mime_type,
            text,
        } => embedded(uri, mime_type.as_deref(), "text", text),
        ContentBlock::ResourceBlob {
            uri,
            mime_type,
            blob,
        } => embedded(uri, mime_type.as_deref(), "blob", blob),
        ContentBlock::ResourceLink {
            uri,
            name,
            mime_type,
            description,
        } => {
            let mut link = json!({
                "type": "resource_link",
                "uri": uri,
                "name": name.as_deref().unwrap_or(uri),
            });
            if let Some(m) = mime_type {
                link["mimeType"] = json!(m);
            }
            if let Some(d) = description {
                link["description"] = json!(d);
            }
            link
        }
    }
}

/// An embedded resource block: `{"type": "resource", "resource": {"uri",
/// "mimeType"?, key: contents}}`.
fn embedded(uri: &str, mime_type: Option<&str>, key: &str, contents: &str) -> Value {
    let mut resource = json!({"uri": uri, key: contents});
    if let Some(m) = mime_type {
        resource["mimeType"] = json!(m);
    }
    json!({"type": "resource", "resource": resource})
}

/// The `CallToolResult`: `{"content": [..], "structuredContent"?, "isError"}`.
///
/// A structured object is sent as `structuredContent` and, for clients that
/// read only text, as a text block holding the same JSON (added unless the
/// content already has it). A structured value that is not an object has no
/// `structuredContent` (MCP requires an object) and is sent as text; a
/// tool whose declaration wraps its output sends it wrapped
/// ([`call_tool_result_for`]).
///
/// Both happen only when the value's JSON is at most
/// [`MAX_STRUCTURED_BYTES`]: a larger value is left out, and the content
/// (the executor's bounded preview and artifact reference) is all the
/// client gets, as bounded as the canonical tool message. A tool that
/// declares an output schema and returns more than that sends no
/// `structuredContent` (raise the limit with
/// [`call_tool_result_bounded`], or `McpServerBuilder::max_structured_bytes`).
pub fn call_tool_result(message: &ToolMessage) -> Value {
    call_tool_result_bounded(message, MAX_STRUCTURED_BYTES)
}

/// [`call_tool_result`] with `max_structured_bytes` in place of
/// [`MAX_STRUCTURED_BYTES`].
pub fn call_tool_result_bounded(message: &ToolMessage, max_structured_bytes: usize) -> Value {
    write_result(result_parts(message, max_structured_bytes, false))
}

/// The `CallToolResult` of a call to `spec`'s tool, as its MCP declaration
/// announces it: [`call_tool_result_bounded`], with the structured value
/// sent as `{"result": value}` when the tool's output is wrapped
/// ([`wraps_result`]). A successful result of such a tool always has
/// `structuredContent` when its value is within the bound (`{"result":
/// null}` for an output that is `null`), as MCP asks of a tool that
/// declares an output schema.
pub fn call_tool_result_for(
    spec: &ToolSpec,
    message: &ToolMessage,
    max_structured_bytes: usize,
) -> Value {
    write_result(result_parts(
        message,
        max_structured_bytes,
        wraps_result(spec),
    ))
}

/// The JSON of a `CallToolResult` made of `parts`.
fn write_result(parts: ResultParts<'_>) -> Value {
    let content = parts
        .content
        .iter()
        .map(|block| match block {
            ResultBlock::Block(block) => content_block(block),
            ResultBlock::Text(text) => json!({"type": "text", "text": text}),
        })
        .collect();
    let mut out = Map::new();
    match (parts.structured, parts.wrapped) {
        (Some(value), false) => {
            out.insert("structuredContent".into(), value.clone());
        }
        (Some(value), true) => {
            out.insert(
                "structuredContent".into(),
                json!({ WRAPPED_RESULT_MEMBER: value }),
            );
        }
        (None, _) => {}
    }
    out.insert("content".into(), Value::Array(content));
    out.insert("isError".into(), Value::Bool(parts.is_error));
    Value::Object(out)
}

/// One entry of a `CallToolResult`'s content ([`ResultParts::content`]).
#[derive(Debug, Clone, PartialEq)]
pub enum ResultBlock<'a> {
    /// A content block of the tool message.
    Block(&'a ContentBlock),
    /// A text block the result adds: the structured value as JSON.
    Text(String),
}

/// What a `CallToolResult` holds, before it is written as JSON or as
/// another library's type: the rules of [`call_tool_result`] in one place.
/// An MCP library's own result type built from these parts says exactly
/// what [`call_tool_result_bounded`] writes.
#[derive(Debug, Clone, PartialEq)]
pub struct ResultParts<'a> {
    /// The content blocks, in order: the message's own blocks, then at
    /// most one [`ResultBlock::Text`] the result adds.
    pub content: Vec<ResultBlock<'a>>,
    /// `structuredContent`: the structured value when it is an object
    /// within the bound; any value within the bound when
    /// [`wrapped`](Self::wrapped).
    pub structured: Option<&'a Value>,
    /// True when `structuredContent` is `{"result": structured}` (the
    /// tool's output is wrapped: [`wraps_result`]).
    pub wrapped: bool,
    /// `isError`.
    pub is_error: bool,
}

/// The parts of `message`'s `CallToolResult` with structured values of at
/// most `max_structured_bytes` (see [`call_tool_result`]); `wrap`: the
/// tool's output is wrapped ([`wraps_result`]), so any structured value
/// within the bound is sent, as `{"result": value}`
/// ([`call_tool_result_for`]).
pub fn result_parts(
    message: &ToolMessage,
    max_structured_bytes: usize,
    wrap: bool,
) -> ResultParts<'_> {
    let mut content: Vec<ResultBlock<'_>> =
        message.content.iter().map(ResultBlock::Block).collect();
    let mut structured = None;
    // The common case: a text block is the value's JSON (the executor's
    // copy). Then the value is within the limit exactly when that text is,
    // and no text is written again.
    let copy = message.structured.as_ref().and_then(|value| {
        message.content.iter().find_map(|block| match block {
            ContentBlock::Text { text } if json_text_is(value, text) => Some(text.len()),
            _ => None,
        })
    });
    let within = match copy {
        Some(len) => message
            .structured
            .as_ref()
            .filter(|_| len <= max_structured_bytes),
        None => structured_within(message, max_structured_bytes),
    };
    if content.is_empty() && within.is_none() {
        if let Some(value) = &message.structured {
            content.push(ResultBlock::Text(bounded_json(value, max_structured_bytes)));
        }
    } else if let Some(value) = within {
        if copy.is_none() && (value.is_object() || content.is_empty()) {
            let text = value.to_string();
            let copied = message
                .content
                .iter()
                .any(|block| block_text(block).as_deref() == Some(text.as_str()));
            if !copied {
                content.push(ResultBlock::Text(text));
            }
        }
        if value.is_object() || wrap {
            structured = Some(value);
        }
    }
    if wrap && !message.is_error && message.content.is_empty() && message.structured.is_none() {
        // An output of `null` (the executor's empty output): its value.
        static NULL: Value = Value::Null;
        structured = Some(&NULL);
    }
    ResultParts {
        content,
        structured,
        wrapped: wrap,
        is_error: message.is_error,
    }
}

/// The text of a block that MCP sends as a text block.
fn block_text(block: &ContentBlock) -> Option<std::borrow::Cow<'_, str>> {
    match block {
        ContentBlock::Text { text } => Some(text.as_str().into()),
        ContentBlock::Json { value } => Some(value.to_string().into()),
        _ => None,
    }
}
