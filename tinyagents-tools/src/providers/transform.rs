//! Schema rewrites shared by the provider exports. Each pass works on a copy
//! of the canonical schema, in place, and either succeeds or names the tool
//! and the JSON pointer it could not handle.

use serde_json::{Map, Value, json};

use super::{ExportError, Provider};
use crate::spec::ToolSpec;
use crate::spec::schema::{
    ONE_SCHEMA, SCHEMA_ARRAYS, SCHEMA_MAPS, escape_pointer, walk_schemas_mut, walk_schemas_mut_at,
};

/// One export: the spec being exported and the provider it is for.
pub(crate) struct Cx<'a> {
    pub spec: &'a ToolSpec,
    pub provider: Provider,
}

impl Cx<'_> {
    pub fn tool(&self) -> String {
        self.spec.name.as_str().to_owned()
    }

    /// The copy of the input schema a model-facing export rewrites: without
    /// its root meta ([`strip_root_meta`]) or `x-mcp-header` annotations (HTTP
    /// header hints for MCP clients, which mean nothing to a model).
    pub fn model_schema(&self) -> Value {
        let mut schema = self.spec.input_schema.as_value().clone();
        strip_root_meta(&mut schema);
        walk_schemas_mut(&mut schema, &mut |obj| {
            obj.remove(crate::providers::mcp::MCP_HEADER_KEYWORD);
        });
        schema
    }
}

/// A rewrite of one schema object that may fail.
pub(crate) type Visit<'f> =
    dyn FnMut(&str, &mut Map<String, Value>) -> Result<(), ExportError> + 'f;

/// Runs `f` over every schema object with its pointer, stopping at the first
/// error.
pub(crate) fn try_walk(schema: &mut Value, f: &mut Visit<'_>) -> Result<(), ExportError> {
    let mut first = None;
    walk_schemas_mut_at(schema, &mut |ptr, obj| {
        if first.is_none()
            && let Err(e) = f(ptr, obj)
        {
            first = Some(e);
        }
    });
    first.map_or(Ok(()), Err)
}

/// Calls `f` on each direct subschema of `obj` (of any JSON type) with its
/// pointer suffix (`/properties/x`, `/anyOf/0`, `/items`).
pub(crate) fn for_each_child_mut(
    obj: &mut Map<String, Value>,
    f: &mut dyn FnMut(String, &mut Value) -> Result<(), ExportError>,
) -> Result<(), ExportError> {
    for (key, child) in obj.iter_mut() {
        let k = key.as_str();
        let base = format!("/{}", escape_pointer(k));
        if ONE_SCHEMA.contains(&k) && !(k == "items" && child.is_array()) {
            f(base, child)?;
        } else if SCHEMA_ARRAYS.contains(&k) || (k == "items" && child.is_array()) {
            for (i, c) in child.as_array_mut().into_iter().flatten().enumerate() {
                f(format!("{base}/{i}"), c)?;
            }
        } else if SCHEMA_MAPS.contains(&k) {
            for (name, c) in child.as_object_mut().into_iter().flatten() {
                f(format!("{base}/{}", escape_pointer(name)), c)?;
            }
        }
    }
    Ok(())
}

/// The direct subschemas of `obj` with their pointer suffixes, read-only.
pub(crate) fn children(obj: &Map<String, Value>) -> Vec<(String, &Value)> {
    let mut out = Vec::new();
    for (key, child) in obj {
        let k = key.as_str();
        let base = format!("/{}", escape_pointer(k));
        if ONE_SCHEMA.contains(&k) && !(k == "items" && child.is_array()) {
            out.push((base, child));
        } else if SCHEMA_ARRAYS.contains(&k) || (k == "items" && child.is_array()) {
            for (i, c) in child.as_array().into_iter().flatten().enumerate() {
                out.push((format!("{base}/{i}"), c));
            }
        } else if SCHEMA_MAPS.contains(&k) {
            for (name, c) in child.as_object().into_iter().flatten() {
                out.push((format!("{base}/{}", escape_pointer(name)), c));
            }
        }
    }
    out
}

/// Removes `$schema`, `$id` and the root `title` (the type's Rust name).
pub(crate) fn strip_root_meta(schema: &mut Value) {
    if let Value::Object(obj) = schema {
        obj.remove("$schema");
        obj.remove("$id");
        obj.remove("title");
    }
}

/// True when the schema says `type: object` (alone or in a type array).
pub(crate) fn is_object_type(obj: &Map<String, Value>) -> bool {
    match obj.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
        _ => obj.contains_key("properties"),
    }
}

/// The root must be an object schema without a combinator.
pub(crate) fn check_root(schema: &Value, cx: &Cx) -> Result<(), ExportError> {
    if let Value::Object(obj) = schema
        && let Some(keyword) = ["anyOf", "oneOf", "allOf"]
            .into_iter()
            .find(|k| obj.contains_key(*k))
    {
        return Err(ExportError::RootCombinator {
            tool: cx.tool(),
            provider: cx.provider,
            keyword: keyword.to_owned(),
        });
    }
    check_object_root(schema, cx)
}

/// The root must say `"type": "object"` (other keywords beside it, combinators
/// included, are the provider's to judge).
pub(crate) fn check_object_root(schema: &Value, cx: &Cx) -> Result<(), ExportError> {
    if schema.get("type") != Some(&json!("object")) {
        return Err(ExportError::RootNotObject {
            tool: cx.tool(),
            provider: cx.provider,
        });
    }
    Ok(())
}

/// Replaces the `true` subschema by `{}`; refuses the `false` subschema,
/// except as `additionalProperties`/`unevaluatedProperties`/`items`, where it
/// means "nothing more".
pub(crate) fn replace_boolean_schemas(schema: &mut Value, cx: &Cx) -> Result<(), ExportError> {
    try_walk(schema, &mut |ptr, obj| {
        for_each_child_mut(obj, &mut |suffix, child| {
            let Value::Bool(b) = child else { return Ok(()) };
            let closing = ["/additionalProperties", "/unevaluatedProperties", "/items"]
                .contains(&suffix.as_str());
            if *b {
                *child = json!({});
            } else if !closing {
                return Err(ExportError::FalseSchema {
                    tool: cx.tool(),
                    provider: cx.provider,
                    pointer: format!("{ptr}{suffix}"),
                });
            }
            Ok(())
        })
    })
}

/// `oneOf` becomes `anyOf`; a single-element `allOf` is merged into its
/// schema. A longer `allOf` is refused unless `keep_all_of`.
pub(crate) fn normalize_combinators(
    schema: &mut Value,
    cx: &Cx,
    keep_all_of: bool,
) -> Result<(), ExportError> {
    try_walk(schema, &mut |ptr, obj| {
        if let Some(one_of) = obj.remove("oneOf") {
            if obj.contains_key("anyOf") {
                return Err(unsupported(cx, ptr, "oneOf"));
            }
            obj.insert("anyOf".into(), one_of);
        }
        if let Some(Value::Array(all_of)) = obj.get("allOf") {
            if all_of.len() == 1 && all_of[0].is_object() {
                let Some(Value::Array(mut all_of)) = obj.remove("allOf") else {
                    unreachable!("checked above")
                };
                if let Value::Object(inner) = all_of.remove(0) {
                    merge_under(obj, inner);
                }
            } else if !keep_all_of {
                return Err(unsupported(cx, ptr, "allOf"));
            }
        }
        Ok(())
    })
}

/// Adds `inner`'s keys to `obj` where `obj` has none of its own.
pub(crate) fn merge_under(obj: &mut Map<String, Value>, inner: Map<String, Value>) {
    for (k, v) in inner {
        obj.entry(k).or_insert(v);
    }
}

/// An `Unsupported` error.
pub(crate) fn unsupported(cx: &Cx, ptr: &str, keyword: &str) -> ExportError {
    ExportError::Unsupported {
        tool: cx.tool(),
        provider: cx.provider,
        pointer: ptr.to_owned(),
        keyword: keyword.to_owned(),
    }
}

/// Refuses any of `keywords` wherever it appears.
pub(crate) fn refuse_keywords(
    schema: &mut Value,
    cx: &Cx,
    keywords: &[&str],
) -> Result<(), ExportError> {
    try_walk(
        schema,
        &mut |ptr, obj| match keywords.iter().find(|k| obj.contains_key(**k)) {
            Some(k) => Err(unsupported(cx, ptr, k)),
            None => Ok(()),
        },
    )
}

/// `a` followed by `b`, for lists of keywords or formats built from another
/// at compile time; `N` must be their total length.
pub(crate) const fn concat<const N: usize>(
    a: &[&'static str],
    b: &[&'static str],
) -> [&'static str; N] {
    assert!(a.len() + b.len() == N, "N must be the total length");
    let mut out = [""; N];
    let mut i = 0;
    while i < N {
        out[i] = if i < a.len() { a[i] } else { b[i - a.len()] };
        i += 1;
    }
    out
}

/// Keywords no strict mode supports and that cannot be rewritten.
pub(crate) const STRICT_REFUSED: &[&str] = &[
    "not",
    "if",
    "then",
    "else",
    "dependentSchemas",
    "dependentRequired",
    "prefixItems",
    "contains",
    "propertyNames",
    "unevaluatedItems",
];

/// Closes every object (`additionalProperties: false`) and refuses open maps
/// and free-form objects.
pub(crate) fn close_objects_strict(schema: &mut Value, cx: &Cx) -> Result<(), ExportError> {
    try_walk(schema, &mut |ptr, obj| {
        if !is_object_type(obj) {
            return Ok(());
        }
        let open = match obj.get("additionalProperties") {
            Some(Value::Bool(false)) => false,
            Some(_) => true,
            None => !obj.contains_key("properties"),
        };
        if open
            || obj.contains_key("patternProperties")
            || obj.contains_key("unevaluatedProperties")
        {
            return Err(ExportError::OpenMap {
                tool: cx.tool(),
                provider: cx.provider,
                pointer: ptr.to_owned(),
            });
        }
        obj.insert("additionalProperties".into(), Value::Bool(false));
        obj.entry("properties").or_insert_with(|| json!({}));
        Ok(())
    })
}

/// Lists every property in `required` (sorted by name); a property that was optional becomes
/// nullable, so leaving it out is written as `null`.
pub(crate) fn require_all_properties(schema: &mut Value) {
    walk_schemas_mut(schema, &mut |obj| {
        let required: Vec<String> = match obj.get("required") {
            Some(Value::Array(r)) => r
                .iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect(),
            _ => Vec::new(),
        };
        let Some(Value::Object(props)) = obj.get_mut("properties") else {
            return;
        };
        for (name, prop) in props.iter_mut() {
            if !required.contains(name) {
                make_nullable(prop);
            }
        }
        // Sorted by name: the list reads the same whichever properties
        // were optional.
        let mut names: Vec<&String> = props.keys().collect();
        names.sort();
        let all: Vec<Value> = names
            .into_iter()
            .map(|k| Value::String(k.clone()))
            .collect();
        obj.insert("required".into(), Value::Array(all));
    });
}

/// True when the schema already accepts `null`.
pub(crate) fn accepts_null(schema: &Value) -> bool {
    let Value::Object(obj) = schema else {
        return schema == &Value::Bool(true);
    };
    if let Some(t) = obj.get("type") {
        return t == "null"
            || t.as_array()
                .is_some_and(|ts| ts.iter().any(|t| t == "null"));
    }
    if let Some(Value::Array(branches)) = obj.get("anyOf") {
        return branches.iter().any(accepts_null);
    }
    if let Some(Value::Array(values)) = obj.get("enum") {
        return values.contains(&Value::Null);
    }
    if let Some(c) = obj.get("const") {
        return c.is_null();
    }
    !obj.contains_key("$ref")
}

/// Makes `schema` accept `null` too.
pub(crate) fn make_nullable(schema: &mut Value) {
    if accepts_null(schema) {
        return;
    }
    let Value::Object(obj) = schema else { return };
    if let Some(t) = obj.get_mut("type") {
        match t {
            Value::String(s) => *t = json!([s.clone(), "null"]),
            Value::Array(ts) => ts.push(json!("null")),
            _ => {}
        }
        if let Some(Value::Array(values)) = obj.get_mut("enum") {
            values.push(Value::Null);
        }
        return;
    }
    if let Some(Value::Array(branches)) = obj.get_mut("anyOf") {
        branches.push(json!({"type": "null"}));
        return;
    }
    // A bare `$ref`, `enum` or `const`: wrap it, keeping the annotations outside.
    let mut inner = std::mem::take(obj);
    let mut outer = Map::new();
    for key in ["description", "title", "default"] {
        if let Some(v) = inner.remove(key) {
            outer.insert(key.into(), v);
        }
    }
    outer.insert(
        "anyOf".into(),
        json!([Value::Object(inner), {"type": "null"}]),
    );
    *obj = outer;
}

/// Drops `default: null`.
pub(crate) fn drop_null_defaults(schema: &mut Value) {
    walk_schemas_mut(schema, &mut |obj| {
        if obj.get("default") == Some(&Value::Null) {
            obj.remove("default");
        }
    });
}

/// Numeric formats schemars writes (`int32`, `uint8`, `double`, ...).
fn is_numeric_format(format: &str) -> bool {
    matches!(
        format,
        "int"
            | "uint"
            | "float"
            | "double"
            | "int8"
            | "int16"
            | "int32"
            | "int64"
            | "int128"
            | "uint8"
            | "uint16"
            | "uint32"
            | "uint64"
            | "uint128"
    )
}

/// Keeps only the allowed formats. A numeric format not in `numeric` is
/// dropped (the type and bounds already say it); another format not in
/// `strings` moves into the description.
pub(crate) fn filter_formats(schema: &mut Value, strings: &[&str], numeric: &[&str]) {
    walk_schemas_mut(schema, &mut |obj| {
        let Some(Value::String(format)) = obj.get("format") else {
            return;
        };
        let format = format.clone();
        if is_numeric_format(&format) {
            if !numeric.contains(&format.as_str()) {
                obj.remove("format");
            }
        } else if !strings.contains(&format.as_str()) {
            obj.remove("format");
            add_note(obj, &[format!("format: {format}")]);
        }
    });
}

/// Moves the given keywords into the description, as `(key: value, ...)`.
pub(crate) fn bounds_to_description(schema: &mut Value, keys: &[&str]) {
    walk_schemas_mut(schema, &mut |obj| {
        let notes: Vec<String> = keys
            .iter()
            .filter_map(|k| obj.remove(*k).map(|v| format!("{k}: {v}")))
            .collect();
        add_note(obj, &notes);
    });
}

/// Appends notes to a schema's description.
pub(crate) fn add_note(obj: &mut Map<String, Value>, notes: &[String]) {
    if notes.is_empty() {
        return;
    }
    let note = format!("({})", notes.join(", "));
    let text = match obj.get("description").and_then(Value::as_str) {
        Some(d) if !d.is_empty() => format!("{d} {note}"),
        _ => note,
    };
    obj.insert("description".into(), Value::String(text));
}

/// Gives every array schema an `items` (any value when it had none).
pub(crate) fn arrays_have_items(schema: &mut Value) {
    walk_schemas_mut(schema, &mut |obj| {
        let is_array = match obj.get("type") {
            Some(Value::String(t)) => t == "array",
            Some(Value::Array(ts)) => ts.iter().any(|t| t == "array"),
            _ => false,
        };
        if is_array && !obj.contains_key("items") {
            obj.insert("items".into(), json!({}));
        }
    });
}

/// Refuses subschemas that accept any value (no `type`, `anyOf`, `$ref`,
/// `enum` or `const`).
pub(crate) fn require_types(schema: &mut Value, cx: &Cx) -> Result<(), ExportError> {
    try_walk(schema, &mut |ptr, obj| {
        for_each_child_mut(obj, &mut |suffix, child| {
            if suffix == "/additionalProperties" || suffix.starts_with("/$defs") {
                return Ok(());
            }
            let typed = child.as_object().is_some_and(|c| {
                ["type", "anyOf", "$ref", "enum", "const"]
                    .iter()
                    .any(|k| c.contains_key(*k))
            });
            if typed {
                Ok(())
            } else {
                Err(ExportError::Untyped {
                    tool: cx.tool(),
                    provider: cx.provider,
                    pointer: format!("{ptr}{suffix}"),
                })
            }
        })
    })
}

/// Adds `required: []` to an object root without properties' requirements.
pub(crate) fn ensure_root_required(schema: &mut Value) {
    if let Value::Object(obj) = schema
        && obj.contains_key("properties")
    {
        obj.entry("required").or_insert_with(|| json!([]));
    }
}
