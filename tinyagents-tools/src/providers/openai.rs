//! OpenAI Chat Completions and Responses: function declarations, tool calls
//! in, tool results out.
//!
//! Strict mode closes every object, lists every property in `required` (an
//! optional one becomes nullable), inlines a `$ref` that has sibling
//! keywords, keeps only the formats OpenAI supports and moves string and
//! object length bounds into the description. Both modes give every array an
//! `items` schema and state `strict` explicitly (Responses reads a missing
//! `strict` as `true`).
//!
//! What happens to the JSON Schema 2020-12 keywords of the canonical schema:
//!
//! - both modes drop `$schema`, `$id`, the root `title` and every
//!   `x-mcp-header` (an MCP transport annotation, nothing a model reads), and
//!   refuse `anyOf`/`oneOf`/`allOf` at the root: OpenAI wants a plain object
//!   there;
//! - without strict mode everything else is sent as written: `$defs`, `$ref`,
//!   `$anchor`, and `allOf`, `not` and `if`/`then`/`else` below the root;
//! - strict mode writes `oneOf` as `anyOf` and merges a one-member `allOf`
//!   (same meaning, in the subset it supports), and refuses a longer
//!   `allOf`, `not`, `if`/`then`/`else`, `dependentSchemas`,
//!   `dependentRequired`, `prefixItems`, `contains`, `propertyNames` and
//!   `unevaluatedItems` ([`ExportError::Unsupported`]): it supports none of
//!   them, and no rewrite keeps what they accept. Such a tool can still be
//!   sent without strict mode.

use serde_json::{Map, Value, json};

use super::refs::{self, InlineMode};
use super::results::{MAX_STRUCTURED_BYTES, result_text};
use super::transform::{self as t, Cx};
use super::{CallParseError, Declaration, ExportError, OpenAiOptions, Usage, read};
use crate::call::{RawArguments, ToolCall};
use crate::output::ToolMessage;

/// The string formats OpenAI strict mode accepts.
pub const OPENAI_FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// Bounds OpenAI strict mode does not support (moved into the description).
const STRICT_UNSUPPORTED_BOUNDS: &[&str] = &[
    "minLength",
    "maxLength",
    "minProperties",
    "maxProperties",
    "uniqueItems",
];

/// The `parameters` schema of a tool.
fn parameters(options: OpenAiOptions, cx: &Cx) -> Result<Value, ExportError> {
    let mut s = cx.model_schema();
    t::replace_boolean_schemas(&mut s, cx)?;
    if options.strict {
        t::normalize_combinators(&mut s, cx, false)?;
        t::refuse_keywords(&mut s, cx, t::STRICT_REFUSED)?;
        refs::inline_refs(&mut s, cx, InlineMode::WithSiblings)?;
        t::check_root(&s, cx)?;
        t::close_objects_strict(&mut s, cx)?;
        t::require_all_properties(&mut s);
        t::drop_null_defaults(&mut s);
        t::filter_formats(&mut s, OPENAI_FORMATS, &[]);
        t::bounds_to_description(&mut s, STRICT_UNSUPPORTED_BOUNDS);
        t::arrays_have_items(&mut s);
        t::require_types(&mut s, cx)?;
        super::limits::check_openai(&s, cx)?;
    } else {
        t::check_root(&s, cx)?;
        t::filter_formats(&mut s, OPENAI_FORMATS, &[]);
        t::arrays_have_items(&mut s);
    }
    t::ensure_root_required(&mut s);
    Ok(s)
}

/// `{name, description, parameters, strict}`: the function both APIs declare.
fn function(options: OpenAiOptions, cx: &Cx) -> Result<Map<String, Value>, ExportError> {
    let spec = cx.spec;
    let parameters = parameters(options, cx)?;
    let mut function = Map::new();
    function.insert("name".into(), spec.name.as_str().into());
    function.insert(
        "description".into(),
        super::description_with_examples(spec).into(),
    );
    function.insert("parameters".into(), parameters);
    function.insert("strict".into(), options.strict.into());
    Ok(function)
}

/// `{"type": "function", "function": {name, description, parameters, strict}}`.
pub(crate) fn chat_declaration(
    options: OpenAiOptions,
    cx: &Cx,
) -> Result<Declaration, ExportError> {
    let function = function(options, cx)?;
    Ok(Declaration::new(
        json!({"type": "function", "function": function}),
        Usage::default(),
    ))
}

/// `{"type": "function", name, description, parameters, strict}`.
pub(crate) fn responses_declaration(
    options: OpenAiOptions,
    cx: &Cx,
) -> Result<Declaration, ExportError> {
    let mut declaration = Map::new();
    declaration.insert("type".into(), "function".into());
    declaration.extend(function(options, cx)?);
    Ok(Declaration::new(
        Value::Object(declaration),
        Usage::default(),
    ))
}

/// Reads the tool calls of a Chat Completions reply.
///
/// Takes the whole response (`choices[0].message`), the assistant message, or
/// its `tool_calls` array. Arguments stay as the JSON *text* OpenAI sent
/// ([`RawArguments::Text`]), so a malformed string reaches the executor as
/// such; missing arguments are kept as empty text, never as `{}`.
pub fn parse_chat_tool_calls(payload: &Value) -> Result<Vec<ToolCall>, CallParseError> {
    let (calls, ptr) = match payload {
        Value::Array(_) => (payload, String::new()),
        Value::Object(obj) if obj.contains_key("choices") => {
            let message =
                payload
                    .pointer("/choices/0/message")
                    .ok_or_else(|| CallParseError::Missing {
                        pointer: "/choices/0/message".into(),
                    })?;
            match message.get("tool_calls") {
                None | Some(Value::Null) => return Ok(Vec::new()),
                Some(calls) => (calls, "/choices/0/message/tool_calls".to_owned()),
            }
        }
        Value::Object(obj) => match obj.get("tool_calls") {
            None | Some(Value::Null) => return Ok(Vec::new()),
            Some(calls) => (calls, "/tool_calls".to_owned()),
        },
        _ => {
            return Err(CallParseError::WrongType {
                pointer: String::new(),
                expected: "an object or an array",
            });
        }
    };
    read::array(calls, &ptr)?
        .iter()
        .enumerate()
        .map(|(i, call)| {
            let ptr = format!("{ptr}/{i}");
            let obj = read::object(call, &ptr)?;
            if let Some(kind) = obj.get("type")
                && kind != "function"
            {
                return Err(CallParseError::WrongType {
                    pointer: format!("{ptr}/type"),
                    expected: "\"function\"",
                });
            }
            let id = read::string(obj, "id", &ptr)?;
            let fptr = format!("{ptr}/function");
            let function = read::object(read::field(obj, "function", &ptr)?, &fptr)?;
            let name = read::string(function, "name", &fptr)?;
            let arguments = arguments(function.get("arguments"), &fptr)?;
            Ok(ToolCall::new(id, name, arguments))
        })
        .collect()
}

/// OpenAI arguments: text kept as text, an object (some compatible servers)
/// kept as JSON (refused when nested too deep), anything missing kept as
/// empty text.
fn arguments(value: Option<&Value>, ptr: &str) -> Result<RawArguments, CallParseError> {
    Ok(match value {
        Some(Value::String(text)) => RawArguments::Text(text.clone()),
        None | Some(Value::Null) => RawArguments::Text(String::new()),
        Some(other) => RawArguments::Json(read::arguments(other, &format!("{ptr}/arguments"))?),
    })
}

/// Reads the `function_call` items of a Responses reply.
///
/// Takes the whole response (its `output` array) or the array itself; other
/// items (messages, reasoning) are skipped. The call's id is its `call_id`.
pub fn parse_responses_function_calls(payload: &Value) -> Result<Vec<ToolCall>, CallParseError> {
    let (items, ptr) = match payload {
        Value::Object(obj) => (read::field(obj, "output", "")?, "/output"),
        other => (other, ""),
    };
    let items = read::array(items, ptr)?;
    read::typed_calls(items, ptr, "function_call", "call_id", |obj, ptr| {
        arguments(obj.get("arguments"), ptr)
    })
}

/// The Chat Completions message answering a call:
/// `{"role": "tool", "tool_call_id", "content"}`.
pub fn chat_tool_message(message: &ToolMessage) -> Value {
    json!({
        "role": "tool",
        "tool_call_id": message.tool_call_id.as_str(),
        "content": result_text(message, MAX_STRUCTURED_BYTES),
    })
}

/// The Responses input item answering a call:
/// `{"type": "function_call_output", "call_id", "output"}`.
pub fn responses_function_call_output(message: &ToolMessage) -> Value {
    json!({
        "type": "function_call_output",
        "call_id": message.tool_call_id.as_str(),
        "output": result_text(message, MAX_STRUCTURED_BYTES),
    })
}
