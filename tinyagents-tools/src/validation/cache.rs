//! Compiled validators shared, within one registry, by schemas that differ
//! only in annotations.
//!
//! Two schemas that say the same thing about which values are valid and
//! differ only in `title`, `description`, `$comment`, `deprecated`,
//! `readOnly` or `writeOnly` (doc comments turned into schema text) compile
//! to validators that accept and refuse exactly the same values, with the
//! same error messages (annotations never appear in them). The registry
//! compiles the first such schema and hands the later ones the same
//! validator. A schema is compiled on its own, as before, whenever sharing
//! could change an answer: an annotation of the wrong type (the meta-schema
//! check must refuse it), or a reference other than `#` or `#/$defs/<name>`
//! (a pointer might reach into an annotation).

use std::sync::Arc;

use serde_json::{Map, Value};

use super::{SchemaError, compile_bounded};
use crate::fasthash::NameMap;
use crate::schema::{Slot as SubSchemas, slot as sub_schemas};

/// Whether an annotation's value has the type the meta-schema requires.
type WellTyped = fn(&Value) -> bool;

/// Annotation keywords left out of the key, with the JSON type their value
/// must have.
const ANNOTATIONS: &[(&str, WellTyped)] = &[
    ("title", Value::is_string),
    ("description", Value::is_string),
    ("$comment", Value::is_string),
    ("deprecated", Value::is_boolean),
    ("readOnly", Value::is_boolean),
    ("writeOnly", Value::is_boolean),
];

/// Validators compiled so far, by the canonical text of their schema with
/// annotations left out.
#[derive(Default, Clone)]
pub(crate) struct ValidatorCache {
    compiled: NameMap<Box<str>, Arc<jsonschema::Validator>>,
}

impl ValidatorCache {
    /// The validator of `bounded` (a schema already passed through
    /// `bounded_schema`): one compiled earlier for a schema with the same
    /// key, or a new one. Errors exactly when compiling `bounded` on its own
    /// errors.
    pub(crate) fn compile(
        &mut self,
        bounded: &Value,
    ) -> Result<Arc<jsonschema::Validator>, SchemaError> {
        let Some(key) = key_of(bounded) else {
            return compile_bounded(bounded).map(Arc::new);
        };
        if let Some(found) = self.compiled.get(key.as_str()) {
            return Ok(Arc::clone(found));
        }
        let compiled = Arc::new(compile_bounded(bounded)?);
        self.compiled
            .insert(key.into_boxed_str(), Arc::clone(&compiled));
        Ok(compiled)
    }
}

/// The key of `schema`: its canonical JSON text (keys sorted) without the
/// annotations of any schema object, or `None` when it must be compiled on
/// its own.
pub(crate) fn key_of(schema: &Value) -> Option<String> {
    let mut out = String::with_capacity(256);
    write_schema(&mut out, schema).then_some(out)
}

/// Writes a value in a schema position; `false` when the schema must not be
/// shared.
fn write_schema(out: &mut String, schema: &Value) -> bool {
    let Value::Object(obj) = schema else {
        write_data(out, schema);
        return true;
    };
    out.push('{');
    let mut first = true;
    for (key, value) in sorted(obj) {
        if let Some((_, well_typed)) = ANNOTATIONS.iter().find(|(k, _)| *k == key) {
            if !well_typed(value) {
                return false;
            }
            continue;
        }
        match key {
            "$ref" if !value.as_str().is_some_and(is_local_definition) => return false,
            "$dynamicRef" | "$recursiveRef" => return false,
            _ => {}
        }
        if !first {
            out.push(',');
        }
        first = false;
        write_string(out, key);
        out.push(':');
        let ok = match sub_schemas(key, value) {
            None => {
                write_data(out, value);
                true
            }
            Some(SubSchemas::One) => write_schema(out, value),
            Some(SubSchemas::Array) => {
                let items = value.as_array().map(Vec::as_slice).unwrap_or_default();
                out.push('[');
                let mut ok = true;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    ok &= write_schema(out, item);
                }
                out.push(']');
                ok
            }
            Some(SubSchemas::Map) => match value.as_object() {
                Some(map) => {
                    out.push('{');
                    let mut ok = true;
                    for (i, (name, item)) in sorted(map).enumerate() {
                        if i > 0 {
                            out.push(',');
                        }
                        write_string(out, name);
                        out.push(':');
                        ok &= write_schema(out, item);
                    }
                    out.push('}');
                    ok
                }
                None => {
                    write_data(out, value);
                    true
                }
            },
        };
        if !ok {
            return false;
        }
    }
    out.push('}');
    true
}

/// `#` or `#/$defs/<name>` (`definitions` too), `<name>` holding no `/` or
/// `~`.
fn is_local_definition(reference: &str) -> bool {
    if reference == "#" {
        return true;
    }
    let name = reference
        .strip_prefix("#/$defs/")
        .or_else(|| reference.strip_prefix("#/definitions/"));
    name.is_some_and(|n| !n.is_empty() && !n.contains(['/', '~']))
}

/// The entries of `obj` by key, in byte order.
fn sorted(obj: &Map<String, Value>) -> impl Iterator<Item = (&str, &Value)> {
    let mut entries: Vec<(&str, &Value)> = obj.iter().map(|(k, v)| (k.as_str(), v)).collect();
    if !entries.is_sorted_by(|a, b| a.0 <= b.0) {
        entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
    }
    entries.into_iter()
}

/// A data value (`enum`, `const`, `default`, ...) in canonical form.
fn write_data(out: &mut String, value: &Value) {
    use std::fmt::Write as _;
    match value {
        Value::String(s) => write_string(out, s),
        Value::Number(n) => {
            let _ = write!(out, "{n}");
        }
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Null => out.push_str("null"),
        nested => out.push_str(&crate::hash::canonical_json(nested)),
    }
}

/// `s` as a JSON string.
fn write_string(out: &mut String, s: &str) {
    if s.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\') {
        out.push_str(&Value::from(s).to_string());
    } else {
        out.push('"');
        out.push_str(s);
        out.push('"');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn schemas_that_differ_only_in_annotations_share_a_key() {
        let a = json!({"type": "object", "description": "A.", "properties": {
            "x": {"type": "integer", "title": "X", "description": "the x"}}});
        let b = json!({"properties": {"x": {"description": "other", "type": "integer"}},
            "type": "object", "$comment": "b"});
        assert_eq!(key_of(&a), key_of(&b));
        assert!(key_of(&a).is_some());
    }

    #[test]
    fn a_property_named_like_an_annotation_is_part_of_the_key() {
        let with = json!({"type": "object", "properties": {"title": {"type": "string"}}});
        let without = json!({"type": "object", "properties": {}});
        assert_ne!(key_of(&with), key_of(&without));
    }

    #[test]
    fn the_key_is_the_canonical_text_without_annotations() {
        let schema = json!({"type": "object", "title": "T", "required": ["q\"x"],
            "properties": {"q\"x": {"type": "number", "maximum": 1.5, "default": null,
            "enum": [[2, 1], {"b": true, "a": false}]}}});
        assert_eq!(
            key_of(&schema).unwrap(),
            r#"{"properties":{"q\"x":{"default":null,"enum":[[2,1],{"a":false,"b":true}],"maximum":1.5,"type":"number"}},"required":["q\"x"],"type":"object"}"#
        );
    }

    #[test]
    fn data_values_are_never_stripped() {
        let a = json!({"enum": [{"description": "a"}]});
        let b = json!({"enum": [{"description": "b"}]});
        assert_ne!(key_of(&a), key_of(&b));
        let a = json!({"type": "string", "default": "a"});
        let b = json!({"type": "string", "default": "b"});
        assert_ne!(key_of(&a), key_of(&b));
    }

    #[test]
    fn a_badly_typed_annotation_or_a_deep_reference_is_never_shared() {
        assert_eq!(key_of(&json!({"type": "string", "description": 5})), None);
        assert_eq!(key_of(&json!({"$ref": "#/properties/a/description"})), None);
        assert!(key_of(&json!({"$ref": "#/$defs/Inner", "$defs": {"Inner": {}}})).is_some());
    }

    #[test]
    fn a_badly_typed_annotation_is_still_refused_after_a_good_twin_was_cached() {
        let mut cache = ValidatorCache::default();
        let good = json!({"type": "object", "description": "fine"});
        let bad = json!({"type": "object", "description": 5});
        assert!(cache.compile(&good).is_ok());
        assert!(cache.compile(&bad).is_err());
    }

    #[test]
    fn a_shared_validator_answers_as_a_fresh_one() {
        let mut cache = ValidatorCache::default();
        let first = json!({"type": "object", "description": "first",
            "properties": {"n": {"type": "integer", "maximum": 3}}, "required": ["n"]});
        let second = json!({"type": "object", "description": "second",
            "properties": {"n": {"type": "integer", "maximum": 3}}, "required": ["n"]});
        let a = cache.compile(&first).unwrap();
        let b = cache.compile(&second).unwrap();
        assert!(
            Arc::ptr_eq(&a, &b),
            "the second schema reuses the first's validator"
        );
        let fresh = compile_bounded(&second).unwrap();
        for value in [
            json!({"n": 1}),
            json!({"n": 4}),
            json!({}),
            json!({"n": "x"}),
        ] {
            assert_eq!(b.is_valid(&value), fresh.is_valid(&value), "{value}");
        }
    }
}
