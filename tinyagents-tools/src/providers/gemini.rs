//! Google Gemini: function declarations (`parameters` or
//! `parametersJsonSchema`), `functionCall` parts in, `functionResponse` parts
//! out.
//!
//! `parameters` takes an OpenAPI 3.0 subset, so that export inlines every
//! reference (refusing recursion), writes `Option<T>` as `nullable: true`,
//! turns `const` into a one-value enum, keeps only string enums, drops
//! `additionalProperties` (refusing maps, which it cannot express), nested
//! titles and unknown keywords, and moves unsupported bounds and formats into
//! the description. `parametersJsonSchema` takes JSON Schema with `$defs`. A
//! tool without arguments has no parameter field at all.
//!
//! What happens to the JSON Schema 2020-12 keywords of the canonical schema:
//! both modes drop `$schema`, `$id`, the root `title` and every
//! `x-mcp-header` (an MCP transport annotation, nothing a model reads), write
//! `oneOf` as `anyOf` and merge a one-member `allOf`. `parameters` also
//! inlines `$ref`s (so `$defs` and their `$anchor`s go) and refuses a longer
//! `allOf`, `not`, `if`/`then`/`else` and the other keywords it has no form
//! for ([`ExportError::Unsupported`]); it refuses `anyOf`/`oneOf`/`allOf` at
//! the root. `parametersJsonSchema` keeps `$defs`, `$ref`, `$anchor`,
//! `allOf`, `not` and `if`/`then`/`else` as written, below a root that must
//! be a plain object.

use serde_json::{Map, Value, json};

use super::refs::{self, InlineMode};
use super::results::{MAX_STRUCTURED_BYTES, result_text, structured_within};
use super::transform::{self as t, Cx};
use super::{CallParseError, Declaration, ExportError, GeminiMode, GeminiOptions, Usage, read};
use crate::call::{RawArguments, ToolCall};
use crate::output::ToolMessage;
use crate::spec::schema::walk_schemas_mut;

/// Keywords `parameters` accepts.
const ALLOWED: &[&str] = &[
    "type",
    "format",
    "description",
    "nullable",
    "enum",
    "items",
    "properties",
    "required",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "pattern",
    "minimum",
    "maximum",
    "anyOf",
    "default",
];
/// Constraints `parameters` lacks, kept as words in the description.
const NOTED: &[&str] = &[
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "uniqueItems",
    "minProperties",
    "maxProperties",
];
/// Keywords whose meaning cannot be kept: those no strict mode supports,
/// and the open-map keywords (`parameters` has no form for a map).
const REFUSED: &[&str] = &t::concat::<12>(
    t::STRICT_REFUSED,
    &["patternProperties", "unevaluatedProperties"],
);

/// The prefix of the call ids made for calls that came without one.
pub const SYNTHETIC_ID_PREFIX: &str = "gemini-call-";

/// `{name, description, parameters | parametersJsonSchema}`.
pub(crate) fn declaration(options: GeminiOptions, cx: &Cx) -> Result<Declaration, ExportError> {
    let spec = cx.spec;
    let mut s = cx.model_schema();
    t::replace_boolean_schemas(&mut s, cx)?;
    let field = match options.mode {
        GeminiMode::Parameters => {
            parameters(&mut s, cx)?;
            "parameters"
        }
        GeminiMode::ParametersJsonSchema => {
            t::normalize_combinators(&mut s, cx, true)?;
            t::check_root(&s, cx)?;
            "parametersJsonSchema"
        }
    };
    let mut decl = json!({
        "name": spec.name.as_str(),
        "description": super::description_with_examples(spec),
    });
    let empty = s
        .get("properties")
        .and_then(Value::as_object)
        .is_none_or(Map::is_empty);
    if !empty {
        decl[field] = s;
    }
    Ok(Declaration::new(decl, Usage::default()))
}

/// Rewrites a schema into the `parameters` subset.
fn parameters(s: &mut Value, cx: &Cx) -> Result<(), ExportError> {
    t::normalize_combinators(s, cx, false)?;
    t::refuse_keywords(s, cx, REFUSED)?;
    refs::inline_refs(s, cx, InlineMode::All)?;
    t::check_root(s, cx)?;
    walk_schemas_mut(s, &mut const_to_enum);
    t::try_walk(s, &mut |ptr, obj| {
        match obj.remove("additionalProperties") {
            None | Some(Value::Bool(false)) => {}
            Some(_) => {
                return Err(ExportError::OpenMap {
                    tool: cx.tool(),
                    provider: cx.provider,
                    pointer: ptr.to_owned(),
                });
            }
        }
        nullable(obj);
        collapse_string_enums(obj);
        string_enums_only(obj);
        Ok(())
    })?;
    t::drop_null_defaults(s);
    t::filter_formats(
        s,
        &["date-time", "enum"],
        &["int32", "int64", "float", "double"],
    );
    walk_schemas_mut(s, &mut |obj| {
        let notes: Vec<String> = NOTED
            .iter()
            .filter_map(|k| obj.remove(*k).map(|v| format!("{k}: {v}")))
            .collect();
        t::add_note(obj, &notes);
        obj.retain(|k, _| ALLOWED.contains(&k.as_str()));
    });
    t::arrays_have_items(s);
    t::require_types(s, cx)?;
    t::try_walk(s, &mut |ptr, obj| {
        if !t::is_object_type(obj) {
            return Ok(());
        }
        let props = obj.get("properties").and_then(Value::as_object);
        if props.is_none_or(Map::is_empty) && !ptr.is_empty() {
            return Err(ExportError::EmptyObject {
                tool: cx.tool(),
                provider: cx.provider,
                pointer: ptr.to_owned(),
            });
        }
        for name in props.into_iter().flat_map(Map::keys) {
            if !valid_property_name(name) {
                return Err(ExportError::PropertyName {
                    tool: cx.tool(),
                    provider: cx.provider,
                    pointer: ptr.to_owned(),
                    name: name.clone(),
                });
            }
        }
        Ok(())
    })
}

/// `[A-Za-z_][A-Za-z0-9_]*`.
fn valid_property_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `const: v` becomes `enum: [v]` (with the value's type when none is given).
fn const_to_enum(obj: &mut Map<String, Value>) {
    let Some(value) = obj.remove("const") else {
        return;
    };
    if !obj.contains_key("type") {
        let ty = match &value {
            Value::String(_) => "string",
            Value::Bool(_) => "boolean",
            Value::Number(n) if n.is_f64() => "number",
            Value::Number(_) => "integer",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
            Value::Null => "null",
        };
        obj.insert("type".into(), json!(ty));
    }
    obj.insert("enum".into(), json!([value]));
}

/// Type arrays and `null` branches become `nullable: true`.
fn nullable(obj: &mut Map<String, Value>) {
    let mut is_nullable = false;
    if let Some(Value::Array(types)) = obj.get("type") {
        let rest: Vec<Value> = types.iter().filter(|t| *t != "null").cloned().collect();
        is_nullable = rest.len() < types.len();
        match rest.len() {
            0 => {}
            1 => {
                obj.insert("type".into(), rest[0].clone());
            }
            _ => {
                obj.remove("type");
                let branches = rest.into_iter().map(|t| json!({"type": t})).collect();
                obj.insert("anyOf".into(), Value::Array(branches));
            }
        }
    }
    if let Some(Value::Array(branches)) = obj.get_mut("anyOf") {
        let before = branches.len();
        branches.retain(|b| b.get("type") != Some(&json!("null")));
        is_nullable |= branches.len() < before;
        if branches.len() == 1
            && let Some(Value::Array(mut branches)) = obj.remove("anyOf")
            && let Value::Object(inner) = branches.remove(0)
        {
            t::merge_under(obj, inner);
        }
    }
    if let Some(Value::Array(values)) = obj.get_mut("enum")
        && values.contains(&Value::Null)
    {
        values.retain(|v| !v.is_null());
        is_nullable = true;
    }
    if is_nullable {
        obj.insert("nullable".into(), Value::Bool(true));
    }
}

/// An `anyOf` whose branches are all one-string enums (a Rust unit enum)
/// becomes one string enum; each value's description is kept in the parent's.
fn collapse_string_enums(obj: &mut Map<String, Value>) {
    let Some(Value::Array(branches)) = obj.get("anyOf") else {
        return;
    };
    let mut values = Vec::new();
    let mut notes = Vec::new();
    for branch in branches {
        let only_string = branch.as_object().is_some_and(|b| {
            b.keys()
                .all(|k| ["type", "enum", "description"].contains(&k.as_str()))
        }) && branch.get("type") == Some(&json!("string"));
        let Some(Value::Array(vs)) = branch.get("enum").filter(|_| only_string) else {
            return;
        };
        if !vs.iter().all(Value::is_string) {
            return;
        }
        if let Some(d) = branch.get("description").and_then(Value::as_str) {
            let names: Vec<&str> = vs.iter().filter_map(Value::as_str).collect();
            notes.push(format!("{}: {}", names.join("/"), d.trim_end_matches('.')));
        }
        values.extend(vs.iter().cloned());
    }
    obj.remove("anyOf");
    obj.insert("type".into(), json!("string"));
    obj.insert("enum".into(), Value::Array(values));
    if !notes.is_empty() {
        t::add_note(obj, &[notes.join("; ")]);
    }
}

/// A non-string enum moves into the description (`parameters` takes string
/// enums only).
fn string_enums_only(obj: &mut Map<String, Value>) {
    let Some(Value::Array(values)) = obj.get("enum") else {
        return;
    };
    if values.iter().all(Value::is_string) {
        return;
    }
    let listed: Vec<String> = values.iter().map(Value::to_string).collect();
    obj.remove("enum");
    t::add_note(obj, &[format!("one of: {}", listed.join(", "))]);
}

/// Reads the `functionCall` parts of a reply.
///
/// Takes a `GenerateContentResponse` (first candidate), a `Content` (its
/// `parts`) or the parts array, and the index of the turn it answers (the
/// [`Turn::index`](crate::Turn::index) the calls will run in). A call without
/// an `id` gets one from the turn, its position among the calls and its
/// name: `gemini-call-<turn>-<index>-<name>`, so ids never repeat across the
/// turns of a run (and approvals, replays and results keyed by call id never
/// mix two calls). Missing `args` (a call without arguments) reads as `{}`;
/// `args` nested deeper than
/// [`MAX_CALL_ARGUMENT_DEPTH`](crate::providers::MAX_CALL_ARGUMENT_DEPTH) are
/// refused. A part's `thoughtSignature` is kept on its call
/// ([`ToolCall::thought_signature`]) for [`function_call_part`] to write
/// back.
pub fn parse_function_calls(payload: &Value, turn: u32) -> Result<Vec<ToolCall>, CallParseError> {
    let (parts, ptr) = match payload {
        Value::Object(obj) if obj.contains_key("candidates") => {
            let ptr = "/candidates/0/content/parts";
            let parts = payload
                .pointer(ptr)
                .ok_or_else(|| CallParseError::Missing {
                    pointer: ptr.into(),
                })?;
            (parts, ptr)
        }
        Value::Object(obj) => (read::field(obj, "parts", "")?, "/parts"),
        other => (other, ""),
    };
    let mut calls = Vec::new();
    for (i, part) in read::array(parts, ptr)?.iter().enumerate() {
        let ptr = format!("{ptr}/{i}");
        let Some(call) = read::object(part, &ptr)?.get("functionCall") else {
            continue;
        };
        // Gemini signs a part, not the call inside it.
        let signature = match part.get("thoughtSignature") {
            None | Some(Value::Null) => None,
            Some(Value::String(signature)) => Some(Box::<str>::from(signature.as_str())),
            Some(_) => {
                return Err(CallParseError::WrongType {
                    pointer: format!("{ptr}/thoughtSignature"),
                    expected: "a string",
                });
            }
        };
        let ptr = format!("{ptr}/functionCall");
        let call = read::object(call, &ptr)?;
        let name = read::string(call, "name", &ptr)?;
        let id = match call.get("id") {
            Some(Value::String(id)) => id.clone(),
            _ => format!("{SYNTHETIC_ID_PREFIX}{turn}-{}-{name}", calls.len()),
        };
        let args = match call.get("args") {
            Some(args) => read::arguments(args, &format!("{ptr}/args"))?,
            None => json!({}),
        };
        let mut parsed = ToolCall::new(id, name, RawArguments::Json(args));
        parsed.thought_signature = signature;
        calls.push(parsed);
    }
    Ok(calls)
}

/// The model's `functionCall` part for `call`, as it goes back into the
/// conversation's history: `{"functionCall": {"name", "args", "id"?},
/// "thoughtSignature"?}`. The call's `thoughtSignature` is written back
/// exactly as [`parse_function_calls`] read it (Gemini refuses a turn whose
/// function calls lost their signatures); an id made up by
/// [`parse_function_calls`] is left out, as Gemini never sent it. Arguments
/// still as text are written parsed when they are JSON, as a string
/// otherwise.
pub fn function_call_part(call: &ToolCall) -> Value {
    let args = match &call.arguments {
        RawArguments::Json(value) => value.clone(),
        RawArguments::Text(text) => {
            serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.clone()))
        }
    };
    let mut function_call = json!({"name": call.name.as_str(), "args": args});
    let id = call.id.as_str();
    if !id.starts_with(SYNTHETIC_ID_PREFIX) {
        function_call["id"] = json!(id);
    }
    let mut part = json!({ "functionCall": function_call });
    if let Some(signature) = &call.thought_signature {
        part["thoughtSignature"] = json!(&**signature);
    }
    part
}

/// The model's `Content` carrying one turn's calls, in order, each with its
/// own signature ([`function_call_part`]): for parallel calls Gemini signs
/// the first part only, and the parts go back as they came.
pub fn function_calls_content(calls: &[ToolCall]) -> Value {
    json!({
        "role": "model",
        "parts": calls.iter().map(function_call_part).collect::<Vec<_>>(),
    })
}

/// The `functionResponse` part answering a call:
/// `{"functionResponse": {"name", "response": {"output": ..} | {"error": ..}}}`,
/// with the call's `id` unless it was made up by [`parse_function_calls`].
///
/// `output` is the structured value when its JSON is at most
/// [`MAX_STRUCTURED_BYTES`]; otherwise it is the result's content as text
/// (the executor's preview and artifact reference for a large output), so
/// the part stays as bounded as the canonical tool message.
pub fn function_response_part(message: &ToolMessage) -> Value {
    function_response_part_bounded(message, MAX_STRUCTURED_BYTES)
}

/// [`function_response_part`] with `max_structured_bytes` in place of
/// [`MAX_STRUCTURED_BYTES`].
pub fn function_response_part_bounded(message: &ToolMessage, max_structured_bytes: usize) -> Value {
    let response = if message.is_error {
        json!({"error": result_text(message, max_structured_bytes)})
    } else {
        match structured_within(message, max_structured_bytes) {
            Some(value) => json!({"output": value}),
            None => json!({"output": result_text(message, max_structured_bytes)}),
        }
    };
    let mut part = json!({"name": message.name, "response": response});
    let id = message.tool_call_id.as_str();
    if !id.starts_with(SYNTHETIC_ID_PREFIX) {
        part["id"] = json!(id);
    }
    json!({ "functionResponse": part })
}

/// The `Content` carrying the responses of one turn's calls, in order (a
/// slice of [`ToolResult`](crate::ToolResult)s or of [`ToolMessage`]s).
pub fn function_responses_content<M: AsRef<ToolMessage>>(results: &[M]) -> Value {
    json!({
        "role": "user",
        "parts": results
            .iter()
            .map(|r| function_response_part(r.as_ref()))
            .collect::<Vec<_>>(),
    })
}
