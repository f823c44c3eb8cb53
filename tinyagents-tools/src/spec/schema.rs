//! The JSON Schema wrapper every spec carries, and how input and output
//! schemas are made from Rust types.
//!
//! The canonical schema is JSON Schema 2020-12 as `schemars` writes it, with
//! one change for inputs: every object that lists `properties` and says
//! nothing about extra keys gets `additionalProperties: false`, so a key the
//! model invents (a forged hidden argument above all) is refused by
//! validation. Every other keyword stays as written, the applicators and
//! identifiers included (`allOf`, `anyOf`, `oneOf`, `not`,
//! `if`/`then`/`else`, `$defs`, `$ref`, `$anchor`, `$dynamicRef`, and
//! extensions such as `x-mcp-header`), and validation reads them all. Provider
//! exports transform this canonical form; they never change it.
//!
//! Validation uses one more step that the model never sees:
//! `registry::compile_schema` (feature `json-schema-full`) gives every
//! fixed-width integer format the `minimum`/`maximum` of its Rust type
//! ([`bound_integer_formats`]), so the
//! validator refuses what the deserializer would, without filling every
//! declaration with `(maximum: 4294967295)` noise.

use std::fmt;
use std::sync::Arc;

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// An immutable JSON Schema, cheap to clone.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ToolSchema(Arc<Value>);

impl ToolSchema {
    /// The schema of what `T` deserializes from, with every object closed.
    pub fn for_input<T: JsonSchema + ?Sized>() -> Self {
        let schema = SchemaSettings::draft2020_12()
            .for_deserialize()
            .into_generator()
            .into_root_schema_for::<T>();
        let mut value = schema.to_value();
        close_objects(&mut value);
        ToolSchema(Arc::new(value))
    }

    /// The schema of what `T` serializes to (objects are left open).
    pub fn for_output<T: JsonSchema + ?Sized>() -> Self {
        let schema = SchemaSettings::draft2020_12()
            .for_serialize()
            .into_generator()
            .into_root_schema_for::<T>();
        ToolSchema(Arc::new(schema.to_value()))
    }

    /// The input schema of a tool without arguments: a closed, empty object.
    pub fn empty_object() -> Self {
        ToolSchema(Arc::new(serde_json::json!({
            "type": "object",
            "properties": {},
            "additionalProperties": false
        })))
    }

    /// Wraps a schema written by hand, as given.
    pub fn from_value(value: Value) -> Self {
        ToolSchema(Arc::new(value))
    }

    /// The schema as JSON. A schema made from a type lists the properties
    /// of each object in the order its struct declares them (this crate
    /// turns serde_json's `preserve_order` on: the
    /// [providers guide](crate::guide::providers), "Property order").
    pub fn as_value(&self) -> &Value {
        &self.0
    }

    /// True when both handles share one schema value (a clone of a schema is
    /// the same schema; an equal schema built separately is not).
    pub fn ptr_eq(&self, other: &ToolSchema) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// True when the root says `"type": "object"`.
    pub fn is_object_root(&self) -> bool {
        match self.0.get("type") {
            Some(Value::String(t)) => t == "object",
            _ => false,
        }
    }

    /// The names of the root object's properties, in the order the schema
    /// lists them (declared order for a schema made from a type).
    pub fn property_names(&self) -> impl Iterator<Item = &str> {
        self.0
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|props| props.keys().map(String::as_str))
    }

    /// The root object's required property names.
    pub fn required(&self) -> impl Iterator<Item = &str> {
        self.0
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
    }

    /// True when the root object has no required property.
    pub fn has_required(&self) -> bool {
        self.required().next().is_some()
    }
}

impl fmt::Debug for ToolSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

/// Sets `additionalProperties: false` on every object schema that lists
/// `properties` and says nothing about extra keys, throughout the document
/// (definitions included).
///
/// Subschemas that only add conditions to a value other subschemas describe
/// are left as written, with everything under them: `allOf` members,
/// `if`/`then`/`else`, `not` and `dependentSchemas`. Their `properties` name
/// a few keys of a larger object, so closing them would refuse the others
/// (an `if` would never hold, an `allOf` member would refuse its siblings'
/// keys).
pub fn close_objects(schema: &mut Value) {
    let Value::Object(obj) = schema else { return };
    if obj.contains_key("properties")
        && !obj.contains_key("additionalProperties")
        && !obj.contains_key("unevaluatedProperties")
    {
        obj.insert("additionalProperties".to_owned(), Value::Bool(false));
    }
    for (key, child) in obj.iter_mut() {
        if CONDITIONS.contains(&key.as_str()) {
            continue;
        }
        match slot(key, child) {
            None => {}
            Some(Slot::One) => close_objects(child),
            Some(Slot::Array) => child
                .as_array_mut()
                .into_iter()
                .flatten()
                .for_each(close_objects),
            Some(Slot::Map) => child
                .as_object_mut()
                .into_iter()
                .flatten()
                .for_each(|(_, c)| close_objects(c)),
        }
    }
}

/// Keywords whose subschemas apply to a value that other subschemas
/// describe: [`close_objects`] leaves them as written.
const CONDITIONS: &[&str] = &["allOf", "if", "then", "else", "not", "dependentSchemas"];

/// Adds the range of a fixed-width integer `format` (`uint8`, `int32`, ...,
/// as schemars writes them) as `minimum`/`maximum`, throughout the document,
/// so that validation refuses what the Rust integer type cannot hold (a
/// validator ignores these formats otherwise). Bounds already present and
/// tighter are kept.
pub fn bound_integer_formats(schema: &mut Value) {
    walk_schemas_mut(schema, &mut |obj| {
        let Some(Value::String(format)) = obj.get("format") else {
            return;
        };
        let (min, max): (Value, Value) = match format.as_str() {
            "int8" => (i8::MIN.into(), i8::MAX.into()),
            "int16" => (i16::MIN.into(), i16::MAX.into()),
            "int32" => (i32::MIN.into(), i32::MAX.into()),
            "int64" => (i64::MIN.into(), i64::MAX.into()),
            "uint8" => (0.into(), u8::MAX.into()),
            "uint16" => (0.into(), u16::MAX.into()),
            "uint32" => (0.into(), u32::MAX.into()),
            "uint64" => (0.into(), u64::MAX.into()),
            _ => return,
        };
        let tighter = |old: Option<&Value>, new: &Value, keep_old: fn(f64, f64) -> bool| match (
            old.and_then(Value::as_f64),
            new.as_f64(),
        ) {
            (Some(o), Some(n)) => keep_old(o, n),
            _ => false,
        };
        if !tighter(obj.get("minimum"), &min, |o, n| o >= n) {
            obj.insert("minimum".to_owned(), min);
        }
        if !tighter(obj.get("maximum"), &max, |o, n| o <= n) {
            obj.insert("maximum".to_owned(), max);
        }
    });
}

/// The `format` that marks a workspace path in an input schema.
pub const WORKSPACE_PATH_FORMAT: &str = "workspace-path";

/// True when some schema position in `schema` is a workspace path
/// (`"format": "workspace-path"`).
pub(crate) fn has_workspace_path(schema: &Value) -> bool {
    let mut found = false;
    walk_schemas(schema, &mut |_, obj| {
        found |= obj.get("format").and_then(Value::as_str) == Some(WORKSPACE_PATH_FORMAT);
    });
    found
}

/// Keywords whose value is one subschema.
pub(crate) const ONE_SCHEMA: &[&str] = &[
    "additionalProperties",
    "items",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "additionalItems",
];
/// Keywords whose value is an array of subschemas.
pub(crate) const SCHEMA_ARRAYS: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems"];
/// Keywords whose value maps names to subschemas.
pub(crate) const SCHEMA_MAPS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// Where a keyword's value holds subschemas.
#[derive(Clone, Copy)]
pub(crate) enum Slot {
    /// The value is one subschema.
    One,
    /// The value is an array of subschemas.
    Array,
    /// The value maps names to subschemas.
    Map,
}

/// The slot of keyword `key` whose value is `child`, or `None` for data
/// (`enum`, `const`, `default`, `examples`, ...) and annotations.
pub(crate) fn slot(key: &str, child: &Value) -> Option<Slot> {
    if key == "items" && child.is_array() {
        Some(Slot::Array)
    } else if ONE_SCHEMA.contains(&key) {
        Some(Slot::One)
    } else if SCHEMA_ARRAYS.contains(&key) {
        Some(Slot::Array)
    } else if SCHEMA_MAPS.contains(&key) {
        Some(Slot::Map)
    } else {
        None
    }
}

/// Calls `f` on every schema object in `schema`, parents before children,
/// following only schema positions (never `enum`, `const`, `default` or
/// `examples` data).
pub fn walk_schemas_mut(schema: &mut Value, f: &mut dyn FnMut(&mut Map<String, Value>)) {
    // The same walk as `walk_schemas_mut_at`, without building a pointer
    // per schema object.
    let Value::Object(obj) = schema else { return };
    f(obj);
    for (key, child) in obj.iter_mut() {
        match slot(key, child) {
            None => {}
            Some(Slot::One) => walk_schemas_mut(child, f),
            Some(Slot::Array) => {
                for c in child.as_array_mut().into_iter().flatten() {
                    walk_schemas_mut(c, f);
                }
            }
            Some(Slot::Map) => {
                for c in child.as_object_mut().into_iter().flatten().map(|(_, c)| c) {
                    walk_schemas_mut(c, f);
                }
            }
        }
    }
}

/// Calls `f` on every schema object in `schema` with the JSON pointer of
/// each, parents before children. `f` may rewrite the object it is given; the
/// walk then descends into the rewritten children.
pub fn walk_schemas_mut_at(schema: &mut Value, f: &mut dyn FnMut(&str, &mut Map<String, Value>)) {
    fn go(v: &mut Value, ptr: &mut String, f: &mut dyn FnMut(&str, &mut Map<String, Value>)) {
        let Value::Object(obj) = v else { return };
        f(ptr, obj);
        for (key, child) in obj.iter_mut() {
            let Some(slot) = slot(key, child) else {
                continue;
            };
            let base = ptr.len();
            ptr.push('/');
            ptr.push_str(&escape_pointer(key));
            match slot {
                Slot::One => go(child, ptr, f),
                Slot::Array => {
                    for (i, c) in child.as_array_mut().into_iter().flatten().enumerate() {
                        let b = ptr.len();
                        ptr.push_str(&format!("/{i}"));
                        go(c, ptr, f);
                        ptr.truncate(b);
                    }
                }
                Slot::Map => {
                    for (name, c) in child.as_object_mut().into_iter().flatten() {
                        let b = ptr.len();
                        ptr.push('/');
                        ptr.push_str(&escape_pointer(name));
                        go(c, ptr, f);
                        ptr.truncate(b);
                    }
                }
            }
            ptr.truncate(base);
        }
    }
    go(schema, &mut String::new(), f)
}

/// Calls `f` on every schema object in `schema` (read-only), with the JSON
/// pointer of each, parents first.
pub fn walk_schemas(schema: &Value, f: &mut dyn FnMut(&str, &Map<String, Value>)) {
    fn go(v: &Value, ptr: &mut String, f: &mut dyn FnMut(&str, &Map<String, Value>)) {
        let Value::Object(obj) = v else { return };
        f(ptr, obj);
        for (key, child) in obj {
            let Some(slot) = slot(key, child) else {
                continue;
            };
            let base = ptr.len();
            ptr.push('/');
            ptr.push_str(&escape_pointer(key));
            let children: Vec<(String, &Value)> = match slot {
                Slot::One => vec![(String::new(), child)],
                Slot::Array => child
                    .as_array()
                    .into_iter()
                    .flatten()
                    .enumerate()
                    .map(|(i, c)| (format!("/{i}"), c))
                    .collect(),
                Slot::Map => child
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(n, c)| (format!("/{}", escape_pointer(n)), c))
                    .collect(),
            };
            for (segment, c) in children {
                let b = ptr.len();
                ptr.push_str(&segment);
                go(c, ptr, f);
                ptr.truncate(b);
            }
            ptr.truncate(base);
        }
    }
    go(schema, &mut String::new(), f)
}

/// Escapes one JSON pointer segment (`~` as `~0`, `/` as `~1`).
pub fn escape_pointer(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn integer_formats_become_bounds_unless_tighter_ones_exist() {
        let mut s = json!({
            "type": "object",
            "properties": {
                "a": {"type": "integer", "format": "uint8", "minimum": 0},
                "b": {"type": "integer", "format": "int32", "minimum": 1, "maximum": 50},
                "c": {"type": "number", "format": "double"}
            }
        });
        bound_integer_formats(&mut s);
        assert_eq!(s["properties"]["a"]["maximum"], json!(255));
        assert_eq!(s["properties"]["b"]["minimum"], json!(1));
        assert_eq!(s["properties"]["b"]["maximum"], json!(50));
        assert_eq!(
            s["properties"]["c"],
            json!({"type": "number", "format": "double"})
        );
    }

    #[test]
    fn closing_leaves_conditions_as_written() {
        let conditions = json!({
            "allOf": [{"properties": {"a": {"properties": {"x": {}}}}}],
            "if": {"properties": {"a": {"const": 1}}},
            "then": {"properties": {"b": {"type": "object", "properties": {}}}},
            "else": {"properties": {}},
            "not": {"properties": {}},
            "dependentSchemas": {"a": {"properties": {}}}
        });
        let mut s = conditions.clone();
        s["type"] = json!("object");
        s["properties"] = json!({"a": {}, "b": {}});
        close_objects(&mut s);
        assert_eq!(s["additionalProperties"], json!(false));
        for (key, value) in conditions.as_object().unwrap() {
            assert_eq!(&s[key], value, "{key}");
        }
    }

    #[test]
    fn closing_skips_data_and_open_maps() {
        let mut s = json!({
            "type": "object",
            "properties": {"a": {"type": "object", "properties": {}}},
            "default": {"properties": {}},
            "$defs": {"M": {"type": "object", "additionalProperties": {"type": "string"}}}
        });
        close_objects(&mut s);
        assert_eq!(s["additionalProperties"], json!(false));
        assert_eq!(s["properties"]["a"]["additionalProperties"], json!(false));
        assert_eq!(s["default"], json!({"properties": {}}));
        assert_eq!(
            s["$defs"]["M"]["additionalProperties"],
            json!({"type": "string"})
        );
    }
}
