//! Raw parameter text typed by the tool's input schema.
//!
//! Formats that write each argument as raw text (Qwen3-Coder's
//! `<parameter=K>`, GLM's `<arg_value>`) carry no JSON types: `42` may be a
//! number or the string `"42"`. The tool's input schema decides:
//!
//! - a property whose schema allows `string` keeps the raw text as a string
//!   (`null` is read as JSON `null` when the schema also allows `null`);
//! - a property whose schema names other types only (`integer`, `object`,
//!   `array`, `boolean`, ...) is parsed as JSON; text that does not parse
//!   stays a string, and the executor's validation refuses it by name;
//!   Python's `True`, `False` and `None` (what Qwen3-Coder's chat template
//!   writes for a boolean or null argument, so what its models learn to
//!   write) are read as `true`, `false` and `null` where the schema allows
//!   that value ([`python_scalars`]);
//! - a property the schema says nothing about (an unknown tool, an unknown
//!   property, a schema without types) is parsed as JSON when its text is
//!   an object, an array, a number, `true`, `false` or `null`, and kept as
//!   a string otherwise. The executor then judges the call as any other:
//!   an unknown tool or property is refused, fail-closed.

use serde_json::Value;

/// The JSON value of `raw`, the text written for property `key` of a tool
/// whose input schema is `schema` (when the tool is known).
pub(crate) fn typed_value(schema: Option<&Value>, key: &str, raw: &str) -> Value {
    let property = schema.and_then(|root| {
        let props = field(resolve(root, root), "properties")?;
        Some(resolve(root, field(props, key)?))
    });
    let types = match (schema, property) {
        (Some(root), Some(p)) => types_of(root, p, 0),
        _ => Types::NONE,
    };
    if types.has(Types::STRING) {
        if types.has(Types::NULL) && raw.trim() == "null" {
            return Value::Null;
        }
        return Value::String(raw.to_owned());
    }
    let parsed = serde_json::from_str::<Value>(raw.trim()).ok();
    match parsed {
        Some(Value::String(_)) | None => {
            let python = match (schema, property) {
                (Some(root), Some(p)) => python_scalars(root, p),
                _ => Vec::new(),
            };
            match python
                .into_iter()
                .find(|(spelling, _)| *spelling == raw.trim())
            {
                Some((_, value)) => value,
                None => Value::String(raw.to_owned()),
            }
        }
        Some(value) => value,
    }
}

/// The Python spellings (`True`, `False`, `None`) a raw value of a
/// property whose schema is `property` (in the input schema `root`) is
/// read as, with the JSON value each stands for: those whose value the
/// schema allows, read from `type`, `enum`, `const`, local `$ref`s and
/// `anyOf`/`oneOf` (one alternative allows it) and `allOf` (each does).
/// None where the schema allows a string: the raw text is then the string.
/// The grammars offer the same spellings, so that they accept what the
/// reader reads.
pub(crate) fn python_scalars(root: &Value, property: &Value) -> Vec<(&'static str, Value)> {
    if types_of(root, property, 0).has(Types::STRING) {
        return Vec::new();
    }
    [
        ("True", Value::Bool(true)),
        ("False", Value::Bool(false)),
        ("None", Value::Null),
    ]
    .into_iter()
    .filter(|(_, value)| allows(root, property, value, 0))
    .collect()
}

/// Whether `schema` allows the scalar `value` (`true`, `false` or `null`),
/// judged by the keywords [`python_scalars`] reads; other keywords are
/// left to the executor's validation.
fn allows(root: &Value, schema: &Value, value: &Value, depth: usize) -> bool {
    if depth > 8 {
        return false;
    }
    let schema = resolve(root, schema);
    let Some(obj) = schema.as_object() else {
        return schema == &Value::Bool(true);
    };
    let type_name = if value.is_null() { "null" } else { "boolean" };
    let typed = match field(schema, "type") {
        Some(Value::String(t)) => t == type_name,
        Some(Value::Array(ts)) => ts.iter().any(|t| t == type_name),
        _ => true,
    };
    let listed = match (field(schema, "enum"), field(schema, "const")) {
        (Some(Value::Array(values)), _) => values.contains(value),
        (_, Some(constant)) => constant == value,
        _ => true,
    };
    let any_of = ["anyOf", "oneOf"]
        .iter()
        .all(|key| match field(schema, key) {
            Some(Value::Array(alternatives)) => alternatives
                .iter()
                .any(|alt| allows(root, alt, value, depth + 1)),
            _ => true,
        });
    let all_of = match field(schema, "allOf") {
        Some(Value::Array(parts)) => parts.iter().all(|p| allows(root, p, value, depth + 1)),
        _ => true,
    };
    let constrained = obj.keys().any(|k| {
        matches!(
            k.as_str(),
            "type" | "enum" | "const" | "anyOf" | "oneOf" | "allOf"
        )
    });
    constrained && typed && listed && any_of && all_of
}

/// The member `key` of `schema` when it is an object. A schema object
/// holds few keywords (and a tool few properties), and every raw value
/// typed reads several of them: a small object is searched by comparing
/// its keys, which costs less than hashing `key` for each (the map's own
/// lookup serves a larger one).
fn field<'a>(schema: &'a Value, key: &str) -> Option<&'a Value> {
    let obj = schema.as_object()?;
    if obj.len() > SMALL_SCHEMA {
        return obj.get(key);
    }
    obj.iter().find_map(|(k, v)| (k == key).then_some(v))
}

/// The most members a schema object is searched by comparing keys
/// ([`field`]).
const SMALL_SCHEMA: usize = 8;

/// Follows a local `$ref` (`#/$defs/X`, `#/definitions/X`) once.
fn resolve<'a>(root: &'a Value, schema: &'a Value) -> &'a Value {
    match field(schema, "$ref").and_then(Value::as_str) {
        Some(pointer) => pointer
            .strip_prefix('#')
            .and_then(|p| root.pointer(p))
            .unwrap_or(schema),
        None => schema,
    }
}

/// A set of JSON type names, one bit each: what a schema allows, read
/// without building a list of names for every value typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Types(u8);

impl Types {
    const NONE: Types = Types(0);
    const STRING: Types = Types(1);
    const NULL: Types = Types(2);
    const OTHER: Types = Types(4);

    /// The type named `name` (`string`, `null`, or any other name).
    fn named(name: &str) -> Types {
        match name {
            "string" => Types::STRING,
            "null" => Types::NULL,
            _ => Types::OTHER,
        }
    }

    /// The type of the literal `value` (an `enum` or `const` member).
    fn of_literal(value: &Value) -> Types {
        match value {
            Value::String(_) => Types::STRING,
            Value::Null => Types::NULL,
            _ => Types::OTHER,
        }
    }

    fn has(self, t: Types) -> bool {
        self.0 & t.0 != 0
    }

    fn with(self, t: Types) -> Types {
        Types(self.0 | t.0)
    }
}

/// The JSON types a schema allows, read from `type`, `enum`/`const` and
/// the alternatives of `anyOf`/`oneOf`/`allOf`.
fn types_of(root: &Value, schema: &Value, depth: usize) -> Types {
    if depth > 8 {
        return Types::NONE;
    }
    let schema = resolve(root, schema);
    let Some(obj) = schema.as_object() else {
        return Types::NONE;
    };
    // One pass over the keywords: the types are a union, in any order.
    let mut types = Types::NONE;
    for (keyword, value) in obj {
        match (keyword.as_str(), value) {
            ("type", Value::String(t)) => types = types.with(Types::named(t)),
            ("type", Value::Array(ts)) => {
                for t in ts.iter().filter_map(Value::as_str) {
                    types = types.with(Types::named(t));
                }
            }
            ("enum", Value::Array(values)) => {
                for v in values {
                    types = types.with(Types::of_literal(v));
                }
            }
            ("const", value) => types = types.with(Types::of_literal(value)),
            ("anyOf" | "oneOf" | "allOf", Value::Array(alternatives)) => {
                for alt in alternatives {
                    types = types.with(types_of(root, alt, depth + 1));
                }
            }
            _ => {}
        }
    }
    types
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_schema_decides_whether_raw_text_is_a_string_or_json() {
        let schema = json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "count": {"type": "integer"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "note": {"type": ["string", "null"]},
                "mode": {"$ref": "#/$defs/Mode"},
                "either": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
            },
            "$defs": {"Mode": {"enum": ["fast", "slow"]}}
        });
        let s = Some(&schema);
        assert_eq!(typed_value(s, "path", "42"), json!("42"));
        assert_eq!(typed_value(s, "path", " spaced \n"), json!(" spaced \n"));
        assert_eq!(typed_value(s, "count", "42"), json!(42));
        assert_eq!(typed_value(s, "count", "forty"), json!("forty"));
        assert_eq!(typed_value(s, "tags", "[\"a\", \"b\"]"), json!(["a", "b"]));
        assert_eq!(typed_value(s, "note", "null"), json!(null));
        assert_eq!(typed_value(s, "note", "true"), json!("true"));
        assert_eq!(typed_value(s, "mode", "fast"), json!("fast"));
        assert_eq!(typed_value(s, "either", "7"), json!(7));
        // Unknown to the schema: JSON when it reads as a non-string value.
        assert_eq!(typed_value(s, "other", "{\"a\": 1}"), json!({"a": 1}));
        assert_eq!(typed_value(s, "other", "\"quoted\""), json!("\"quoted\""));
        assert_eq!(typed_value(None, "x", "plain words"), json!("plain words"));
    }

    #[test]
    fn keywords_are_read_in_small_and_large_schema_objects_alike() {
        // More members than are searched by comparing keys: the map's own
        // lookup reads them, with the same result.
        let large = json!({
            "title": "Count", "description": "How many.", "examples": [1, 2],
            "default": 1, "minimum": 0, "maximum": 9, "multipleOf": 1,
            "deprecated": false, "type": "integer"
        });
        let schema = json!({
            "type": "object", "title": "T", "description": "D", "required": [],
            "additionalProperties": false, "examples": [], "default": {},
            "deprecated": false, "$comment": "nine members",
            "properties": {
                "count": large,
                "label": {"description": "A label.", "type": "string"},
                "flag": {"anyOf": [{"type": "boolean"}], "description": "On?"},
            }
        });
        let s = Some(&schema);
        assert_eq!(typed_value(s, "count", "42"), json!(42));
        assert_eq!(typed_value(s, "label", "42"), json!("42"));
        assert_eq!(typed_value(s, "flag", "True"), json!(true));
        assert_eq!(typed_value(s, "count", "True"), json!("True"));
    }

    #[test]
    fn python_s_true_false_and_none_are_read_where_the_schema_allows_the_value() {
        let schema = json!({
            "type": "object",
            "properties": {
                "flag": {"type": "boolean"},
                "maybe": {"type": ["boolean", "null"]},
                "on": {"const": true},
                "count": {"type": "integer"},
                "label": {"type": ["string", "null"]},
                "either": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
                "mode": {"$ref": "#/$defs/Flag"},
                "nested": {"type": "object"},
            },
            "$defs": {"Flag": {"enum": [false, null]}}
        });
        let s = Some(&schema);
        assert_eq!(typed_value(s, "flag", "True"), json!(true));
        assert_eq!(typed_value(s, "flag", "\nFalse\n"), json!(false));
        assert_eq!(typed_value(s, "flag", "true"), json!(true));
        // Only the exact spellings Python writes.
        assert_eq!(typed_value(s, "flag", "TRUE"), json!("TRUE"));
        assert_eq!(typed_value(s, "flag", "None"), json!("None"));
        assert_eq!(typed_value(s, "maybe", "None"), json!(null));
        assert_eq!(typed_value(s, "on", "True"), json!(true));
        assert_eq!(typed_value(s, "on", "False"), json!("False"));
        // Not a boolean: the text stays a string, which the executor refuses.
        assert_eq!(typed_value(s, "count", "True"), json!("True"));
        // A string is allowed: the text is the string.
        assert_eq!(typed_value(s, "label", "None"), json!("None"));
        assert_eq!(typed_value(s, "either", "None"), json!(null));
        assert_eq!(typed_value(s, "either", "True"), json!("True"));
        assert_eq!(typed_value(s, "mode", "False"), json!(false));
        assert_eq!(typed_value(s, "mode", "None"), json!(null));
        assert_eq!(typed_value(s, "mode", "True"), json!("True"));
        assert_eq!(typed_value(s, "nested", "None"), json!("None"));
        // Unknown to the schema: no Python reading.
        assert_eq!(typed_value(s, "other", "True"), json!("True"));
        assert_eq!(typed_value(None, "x", "None"), json!("None"));
    }
}
