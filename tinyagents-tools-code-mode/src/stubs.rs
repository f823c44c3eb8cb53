//! Typed stubs: the TypeScript declarations of the tools a program may
//! call, written from their specs (names, parameter types from the input
//! schemas, return types from the output schemas, doc comments from the
//! descriptions).

use std::fmt::Write as _;

use serde_json::{Map, Value};

use tinyagents_tools::spec::ToolSpec;

/// The TypeScript declarations of `specs` as a program sees them: one
/// method of `tools` per tool, its argument object typed from the input
/// schema and its return type from the output schema (`unknown` without
/// one), with the tool's description as a doc comment above it and each
/// property's before it; then `ToolError`.
///
/// Compact, since the model reads them in every request: a tool's
/// signature is one line, object types are written inline.
///
/// ```
/// use serde_json::json;
/// use tinyagents_tools::{ToolSchema, ToolSpec};
/// use tinyagents_tools_code_mode::typescript_stubs;
///
/// let spec = ToolSpec::builder("get_price", "The price of an item, in cents.")
///     .input_schema(ToolSchema::from_value(json!({
///         "type": "object",
///         "properties": {"sku": {"type": "string", "description": "The item."}},
///         "required": ["sku"],
///         "additionalProperties": false
///     })))
///     .output_schema(ToolSchema::from_value(json!({"type": "integer"})))
///     .build()
///     .unwrap();
/// let stubs = typescript_stubs([&spec]);
/// assert!(stubs.contains("  /** The price of an item, in cents. */\n  get_price(args: { /** The item. */ sku: string }): number;\n"));
/// ```
pub fn typescript_stubs<'a>(specs: impl IntoIterator<Item = &'a ToolSpec>) -> String {
    let mut out = String::from("declare const tools: {\n");
    for spec in specs {
        let input = spec.input_schema.as_value();
        let defs = definitions(input);
        doc(&mut out, &spec.description, "  ");
        let args = ts_type(input, &defs, 1);
        let returns = spec.output_schema.as_ref().map_or_else(
            || String::from("unknown"),
            |o| ts_type(o.as_value(), &definitions(o.as_value()), 1),
        );
        let _ = writeln!(
            out,
            "  {}(args: {args}): {returns};",
            key(spec.name.as_str())
        );
    }
    out.push_str("};\n");
    out.push_str(TOOL_ERROR);
    out
}

/// What a refused or failed call throws.
const TOOL_ERROR: &str = "declare class ToolError extends Error { kind: string /* invalid_arguments, not_advertised, denied, timeout, tool, ... */; errorClass: \"retry\" | \"repair\" | \"fatal\"; tool: string; callId: string }\n";

/// The schema's `$defs` (or `definitions`), for `$ref`s to resolve against.
fn definitions(schema: &Value) -> Map<String, Value> {
    let mut defs = Map::new();
    for key in ["$defs", "definitions"] {
        if let Some(Value::Object(d)) = schema.get(key) {
            defs.extend(d.clone());
        }
    }
    defs
}

/// The deepest a type is written out; deeper (or recursive) parts are `unknown`.
const MAX_DEPTH: usize = 8;

/// The TypeScript type of `schema` at nesting `level`.
fn ts_type(schema: &Value, defs: &Map<String, Value>, level: usize) -> String {
    if level > MAX_DEPTH {
        return String::from("unknown");
    }
    let Value::Object(s) = schema else {
        return String::from(if schema == &Value::Bool(false) {
            "never"
        } else {
            "unknown"
        });
    };
    if let Some(Value::String(r)) = s.get("$ref") {
        // A definition is written out where it is used, without the
        // definition's own `$ref`s (a recursive type ends as `unknown`).
        let name = r.rsplit('/').next().unwrap_or_default();
        return match defs.get(name) {
            Some(d) => {
                let mut rest = defs.clone();
                rest.remove(name);
                ts_type(d, &rest, level)
            }
            None => String::from("unknown"),
        };
    }
    if let Some(Value::Array(values)) = s.get("enum") {
        return union(values.iter().map(literal));
    }
    if let Some(value) = s.get("const") {
        return literal(value);
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(options)) = s.get(key) {
            return union(options.iter().map(|o| ts_type(o, defs, level)));
        }
    }
    if let Some(Value::Array(all)) = s.get("allOf")
        && let [one] = all.as_slice()
    {
        return ts_type(one, defs, level);
    }
    match s.get("type") {
        Some(Value::Array(types)) => union(
            types
                .iter()
                .filter_map(Value::as_str)
                .map(|t| of_type(t, s, defs, level)),
        ),
        Some(Value::String(t)) => of_type(t, s, defs, level),
        _ if s.contains_key("properties") => of_type("object", s, defs, level),
        _ => String::from("unknown"),
    }
}

/// The TypeScript type of JSON Schema type `t` in `s`.
fn of_type(t: &str, s: &Map<String, Value>, defs: &Map<String, Value>, level: usize) -> String {
    match t {
        "string" => String::from("string"),
        "integer" | "number" => String::from("number"),
        "boolean" => String::from("boolean"),
        "null" => String::from("null"),
        "array" => match s.get("items") {
            Some(items) => {
                let inner = ts_type(items, defs, level);
                if is_union(&inner) {
                    format!("({inner})[]")
                } else {
                    format!("{inner}[]")
                }
            }
            None => String::from("unknown[]"),
        },
        "object" => object(s, defs, level),
        _ => String::from("unknown"),
    }
}

/// An object type, inline: its properties (optional unless required),
/// each after its description; extra keys as an index signature when
/// allowed.
fn object(s: &Map<String, Value>, defs: &Map<String, Value>, level: usize) -> String {
    let required: Vec<&str> = s
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let properties = s.get("properties").and_then(Value::as_object);
    let extra = match s.get("additionalProperties") {
        Some(Value::Bool(false)) => None,
        Some(schema @ Value::Object(_)) => Some(ts_type(schema, defs, level + 1)),
        _ if properties.is_some_and(|p| !p.is_empty()) => None,
        _ => Some(String::from("unknown")),
    };
    let Some(properties) = properties.filter(|p| !p.is_empty()) else {
        return extra.map_or_else(|| String::from("{}"), |t| format!("Record<string, {t}>"));
    };
    let mut members = Vec::with_capacity(properties.len() + 1);
    for (name, schema) in properties {
        let mut member = String::new();
        if let Some(d) = schema.get("description").and_then(Value::as_str) {
            inline_doc(&mut member, d);
        }
        let optional = if required.contains(&name.as_str()) {
            ""
        } else {
            "?"
        };
        let _ = write!(
            member,
            "{}{optional}: {}",
            key(name),
            ts_type(schema, defs, level + 1)
        );
        members.push(member);
    }
    if let Some(t) = extra {
        members.push(format!("[key: string]: {t}"));
    }
    format!("{{ {} }}", members.join("; "))
}

/// Whether `t` is a union at its top level (not inside an object type or a
/// string literal), so that `[]` after it needs parentheses.
fn is_union(t: &str) -> bool {
    let (mut depth, mut quoted, mut escaped) = (0usize, false, false);
    for c in t.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            _ if quoted => {}
            '{' | '(' | '<' | '[' => depth += 1,
            '}' | ')' | '>' | ']' => depth = depth.saturating_sub(1),
            '|' if depth == 0 => return true,
            _ => {}
        }
    }
    false
}

/// Types joined by `|`, each once.
fn union(types: impl Iterator<Item = String>) -> String {
    let mut seen: Vec<String> = Vec::new();
    for t in types {
        if !seen.contains(&t) {
            seen.push(t);
        }
    }
    if seen.is_empty() {
        String::from("never")
    } else {
        seen.join(" | ")
    }
}

/// A JSON value as a TypeScript literal type.
fn literal(value: &Value) -> String {
    match value {
        Value::String(_) | Value::Number(_) | Value::Bool(_) | Value::Null => value.to_string(),
        _ => String::from("unknown"),
    }
}

/// A property or method name: bare when it is an identifier, quoted otherwise.
fn key(name: &str) -> String {
    let identifier = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$');
    if identifier {
        name.to_owned()
    } else {
        Value::String(name.to_owned()).to_string()
    }
}

/// A `/** ... */` comment of `text` on its own line(s) at `indent` (`*/` in
/// the text defused).
fn doc(out: &mut String, text: &str, indent: &str) {
    let text = text.trim().replace("*/", "*\\/");
    if text.is_empty() {
        return;
    }
    if !text.contains('\n') {
        let _ = writeln!(out, "{indent}/** {text} */");
        return;
    }
    let _ = writeln!(out, "{indent}/**");
    for line in text.lines() {
        let line = format!("{indent} * {line}");
        let _ = writeln!(out, "{}", line.trim_end());
    }
    let _ = writeln!(out, "{indent} */");
}

/// A `/** ... */` comment of `text` before a property, on the same line
/// (`*/` in the text defused; its lines, if several, kept).
fn inline_doc(out: &mut String, text: &str) {
    let text = text.trim().replace("*/", "*\\/");
    if !text.is_empty() {
        let _ = write!(out, "/** {text} */ ");
    }
}
