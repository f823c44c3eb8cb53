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

use super::{FlatSchema, General, SchemaError, bounded_schema, compile_bounded};
use crate::spec::schema::{Slot as SubSchemas, slot as sub_schemas};
use crate::util::fasthash::NameMap;

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

/// The checks compiled for one schema: the full validator and, when the
/// schema has the flat shape, the direct check.
pub(super) struct Compiled {
    /// The general validator of the bounded schema.
    pub(super) full: General,
    /// The flat check of the bounded schema, when it has that shape.
    pub(super) flat: Option<FlatSchema>,
}

impl Compiled {
    /// Whether `value` satisfies the schema (by the flat check when there
    /// is one), and every root key the schema does not declare passes
    /// `undeclared` too.
    #[inline]
    pub(super) fn is_valid_where(&self, value: &Value, undeclared: impl Fn(&str) -> bool) -> bool {
        match &self.flat {
            Some(flat) => flat.is_valid(value, undeclared),
            None => {
                self.full.is_valid(value)
                    && value
                        .as_object()
                        .is_none_or(|map| map.keys().all(|key| undeclared(key)))
            }
        }
    }

    /// Bounds `schema`'s integer formats and compiles both checks.
    fn new(schema: &Value) -> Result<Self, SchemaError> {
        let bounded = bounded_schema(schema);
        Ok(Compiled {
            full: compile_bounded(&bounded)?,
            flat: FlatSchema::compile(&bounded),
        })
    }
}

/// Checks compiled so far, by the canonical text of their schema with
/// annotations left out.
#[derive(Default, Clone)]
pub(crate) struct ValidatorCache {
    compiled: NameMap<Box<str>, Arc<Compiled>>,
    /// The key being written (kept to reuse its buffer).
    key: String,
}

impl ValidatorCache {
    /// The checks of `schema` (integer formats bounded as
    /// [`bounded_schema`] does): the ones compiled earlier for a schema with
    /// the same key, or new ones. Errors exactly when compiling `schema` on
    /// its own errors. The key is written from `schema` itself: two schemas
    /// equal but for annotations stay so once bounded, so a hit needs no
    /// bounded copy.
    pub(super) fn compile(&mut self, schema: &Value) -> Result<Arc<Compiled>, SchemaError> {
        self.key.clear();
        if !write_schema(&mut self.key, schema) {
            return Compiled::new(schema).map(Arc::new);
        }
        if let Some(found) = self.compiled.get(self.key.as_str()) {
            return Ok(Arc::clone(found));
        }
        let compiled = Arc::new(Compiled::new(schema)?);
        self.compiled
            .insert(self.key.as_str().into(), Arc::clone(&compiled));
        Ok(compiled)
    }
}

/// The key of `schema`: its canonical JSON text (keys sorted) without the
/// annotations of any schema object, or `None` when it must be compiled on
/// its own.
#[cfg(test)]
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

/// Objects with at most this many entries are sorted on the stack.
const SORTED_ON_STACK: usize = 16;

/// A filler for the unused slots of the stack buffer.
static NULL: Value = Value::Null;

/// The entries of `obj` by key, in byte order (sorted without allocating
/// for objects of up to [`SORTED_ON_STACK`] entries).
fn sorted(obj: &Map<String, Value>) -> impl Iterator<Item = (&str, &Value)> {
    let len = obj.len();
    let mut small = [("", &NULL); SORTED_ON_STACK];
    let mut large = Vec::new();
    let entries: &mut [(&str, &Value)] = if len <= SORTED_ON_STACK {
        for (slot, (k, v)) in small.iter_mut().zip(obj) {
            *slot = (k.as_str(), v);
        }
        &mut small[..len]
    } else {
        large.extend(obj.iter().map(|(k, v)| (k.as_str(), v)));
        &mut large
    };
    if !entries.is_sorted_by(|a, b| a.0 <= b.0) {
        entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
    }
    let on_stack = if len <= SORTED_ON_STACK { len } else { 0 };
    small.into_iter().take(on_stack).chain(large)
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
    fn a_shared_check_keeps_the_integer_format_bounds_of_its_schema() {
        let mut cache = ValidatorCache::default();
        let schema = |doc: &str| {
            json!({"type": "object", "description": doc, "required": ["n"],
                "properties": {"n": {"type": "integer", "format": "uint8"}}})
        };
        let first = cache.compile(&schema("first")).unwrap();
        let second = cache.compile(&schema("second")).unwrap();
        assert!(Arc::ptr_eq(&first, &second));
        assert!(second.flat.is_some(), "the flat check is shared too");
        for (value, valid) in [(json!({"n": 255}), true), (json!({"n": 256}), false)] {
            assert_eq!(second.full.is_valid(&value), valid, "{value}");
            let flat = second.flat.as_ref().unwrap();
            assert_eq!(flat.is_valid(&value, |_| true), valid, "{value}");
        }
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
            assert_eq!(b.full.is_valid(&value), fresh.is_valid(&value), "{value}");
        }
    }
}
