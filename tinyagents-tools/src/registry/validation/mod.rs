//! A registered tool's compiled input check: the general validator, and, for
//! the common flat shape of a tool's arguments, a direct check that gives the
//! same answer without the general machinery.
//!
//! The general validator is the build's choice. With the `json-schema-full`
//! feature it is `jsonschema`, which checks every keyword of JSON Schema
//! 2020-12 (formats included). Without it, it is the crate's own validator of
//! the subset `schemars` derives for tool arguments ([`subset`]): a schema
//! that uses a keyword outside that subset is refused at registration with
//! [`SchemaError::Unsupported`], naming the keyword and the feature. It
//! checks the formats `schemars` writes for dates, times, UUIDs and IP
//! addresses as `jsonschema` does, and refuses a schema with any other
//! format `jsonschema` would check (`email`, `uri`, ...), so the two builds
//! never answer differently. Both report [`Problem`]s, which the executor
//! words for the model the same way.
//!
//! Most tools take a flat object of scalars: `{"type": "object",
//! "properties": {...}, "required": [...], "additionalProperties": false}`,
//! where each property only says its type, maybe its integer range (the
//! registry adds the range of fixed-width integer formats), a string length
//! or a list of allowed strings. [`FlatSchema`] is compiled from such a schema
//! and answers "is this value valid?" in one pass over the value's keys, with
//! no hashing. Any keyword outside that list, anywhere in the schema, leaves
//! the flat check out and every value goes to the general validator.
//!
//! The flat check only decides validity: the list of problems in an error
//! is always built by the general validator (and the two are checked against
//! each other by a differential property test below).

use std::cmp::Ordering;
use std::sync::Arc;

use serde_json::{Map, Number, Value};

use crate::util::names::same_name;

mod error;
pub use error::SchemaError;

/// The JSON Schema dialect the registry compiles for; a `$schema` naming any
/// other dialect leaves the flat check out.
const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// Keywords that never change whether a value is valid.
const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
];

/// Compiles a schema the way the registry does: JSON Schema 2020-12, formats
/// checked, no remote references, and fixed-width integer formats bounded to
/// their Rust range ([`crate::spec::schema::bound_integer_formats`]) so validation
/// agrees with the deserializer.
#[cfg(feature = "json-schema-full")]
pub fn compile_schema(schema: &serde_json::Value) -> Result<jsonschema::Validator, SchemaError> {
    General::compile(&bounded_schema(schema)).map(General::into_inner)
}

/// `schema` with the ranges of its fixed-width integer formats added.
pub(crate) fn bounded_schema(schema: &serde_json::Value) -> serde_json::Value {
    let mut bounded = schema.clone();
    crate::spec::schema::bound_integer_formats(&mut bounded);
    bounded
}

/// Compiles a schema already passed through [`bounded_schema`] with this
/// build's general validator.
pub(crate) fn compile_bounded(bounded: &serde_json::Value) -> Result<General, SchemaError> {
    General::compile(bounded)
}

/// The input check of one registered tool.
pub(crate) struct InputValidator {
    checks: Arc<Compiled>,
}

impl InputValidator {
    /// Compiles `schema` as [`compile_schema`] does, plus its flat
    /// check when the schema has the flat shape.
    #[cfg(test)]
    pub(crate) fn compile(schema: &Value) -> Result<Self, SchemaError> {
        Self::compile_with(schema, &mut ValidatorCache::default())
    }

    /// [`compile`](Self::compile), sharing the validator of an earlier
    /// schema of `cache` that differs only in annotations.
    pub(crate) fn compile_with(
        schema: &Value,
        cache: &mut ValidatorCache,
    ) -> Result<Self, SchemaError> {
        Ok(InputValidator {
            checks: cache.compile(schema)?,
        })
    }

    /// Whether `value` satisfies the schema; always the same answer as
    /// `self.full().is_valid(value)`.
    #[cfg(test)]
    pub(crate) fn is_valid(&self, value: &Value) -> bool {
        self.is_valid_where(value, |_| true)
    }

    /// [`is_valid`](Self::is_valid), and every root key the schema does not
    /// declare passes `undeclared` too (a declared key is never forged, so
    /// the flat check asks only about the others).
    #[inline]
    pub(crate) fn is_valid_where(&self, value: &Value, undeclared: impl Fn(&str) -> bool) -> bool {
        self.checks.is_valid_where(value, undeclared)
    }

    /// Every problem of `value` (for the list of problems in an error).
    pub(crate) fn problems<'v>(&self, value: &'v Value) -> Vec<Problem<'v>> {
        self.checks.full.problems(value)
    }

    /// The general validator, for tests that compare it with the flat check.
    #[cfg(test)]
    pub(crate) fn full(&self) -> &General {
        &self.checks.full
    }

    /// Whether the flat check is in use.
    #[cfg(test)]
    pub(crate) fn is_flat(&self) -> bool {
        self.checks.flat.is_some()
    }
}

/// A schema of a flat object whose properties are checked directly.
#[derive(Debug)]
struct FlatSchema {
    /// Declared properties, in the schema's order (the order a struct
    /// declares its fields in, which callers mostly send them in).
    properties: Box<[(Box<str>, Leaf)]>,
    /// Positions in `properties`, sorted by name (for a binary search when
    /// there are many).
    by_name: Box<[u8]>,
    /// Per property (same order): whether it is required.
    required: u64,
    /// Required names that are not declared properties: each must still be
    /// present.
    required_undeclared: Box<[Box<str>]>,
    /// Whether undeclared keys are allowed (`additionalProperties` absent or
    /// `true`).
    open: bool,
}

/// What one property's schema asks of its value.
#[derive(Debug)]
struct Leaf {
    /// Allowed JSON types (bits of [`Kinds`]); all when `type` is absent.
    kinds: u8,
    minimum: Option<i128>,
    maximum: Option<i128>,
    exclusive_minimum: Option<i128>,
    exclusive_maximum: Option<i128>,
    /// The four bounds folded into one inclusive range, for integer values
    /// (the common case: one comparison each way).
    integers: (i128, i128),
    /// What an `i64` value needs, folded when compiled: `None` when no
    /// `i64` is valid (the kinds allow no number, `enum` or `const` asks for
    /// a string, or the range holds no `i64`), else `integers` within the
    /// `i64` range.
    i64s: Option<(i64, i64)>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    /// `enum` (or `const`) of strings: the value must be one of them.
    one_of: Option<Box<[Box<str>]>>,
}

impl Default for Leaf {
    /// No keyword: any value.
    fn default() -> Self {
        Leaf {
            kinds: Kinds::ALL,
            minimum: None,
            maximum: None,
            exclusive_minimum: None,
            exclusive_maximum: None,
            integers: (i128::MIN, i128::MAX),
            i64s: Some((i64::MIN, i64::MAX)),
            min_length: None,
            max_length: None,
            one_of: None,
        }
    }
}

/// Bits of the JSON types a [`Leaf`] allows.
struct Kinds;

impl Kinds {
    const NULL: u8 = 1;
    const BOOLEAN: u8 = 2;
    const INTEGER: u8 = 4;
    const NUMBER: u8 = 8;
    const STRING: u8 = 16;
    const ARRAY: u8 = 32;
    const OBJECT: u8 = 64;
    const ALL: u8 = 127;

    /// The names of the types in `kinds`, as `"a", "b"`.
    fn names(kinds: u8) -> String {
        let all = [
            "null", "boolean", "integer", "number", "string", "array", "object",
        ];
        let names: Vec<String> = all
            .iter()
            .enumerate()
            .filter(|(i, _)| kinds & (1 << i) != 0)
            .map(|(_, name)| format!("\"{name}\""))
            .collect();
        names.join(", ")
    }

    fn parse(name: &str) -> Option<u8> {
        Some(match name {
            "null" => Kinds::NULL,
            "boolean" => Kinds::BOOLEAN,
            "integer" => Kinds::INTEGER,
            "number" => Kinds::NUMBER,
            "string" => Kinds::STRING,
            "array" => Kinds::ARRAY,
            "object" => Kinds::OBJECT,
            _ => return None,
        })
    }
}

impl FlatSchema {
    /// The flat check of `schema`, or `None` when any part of it is outside
    /// what the flat check understands.
    fn compile(schema: &Value) -> Option<FlatSchema> {
        let root = schema.as_object()?;
        let defs = match root.get("$defs") {
            Some(defs) => Some(defs.as_object()?),
            None => None,
        };
        let mut properties: Vec<(Box<str>, Leaf)> = Vec::new();
        let mut required_names: Vec<&str> = Vec::new();
        let mut open = true;
        let mut typed_object = false;
        for (keyword, value) in root {
            match keyword.as_str() {
                "$schema" if value.as_str() == Some(DRAFT_2020_12) => {}
                "type" => {
                    typed_object = value.as_str() == Some("object");
                    if !typed_object {
                        return None;
                    }
                }
                "properties" => {
                    for (name, schema) in value.as_object()? {
                        properties.push((name.as_str().into(), Leaf::compile(schema, defs)?));
                    }
                }
                "required" => {
                    for name in value.as_array()? {
                        required_names.push(name.as_str()?);
                    }
                }
                "additionalProperties" => open = value.as_bool()?,
                // Definitions only matter where a property refers to one.
                "$defs" => {}
                other if ANNOTATIONS.contains(&other) => {}
                _ => return None,
            }
        }
        if !typed_object || properties.len() > 64 {
            return None;
        }
        let mut by_name: Vec<u8> = (0..properties.len() as u8).collect();
        by_name.sort_by(|&a, &b| properties[a as usize].0.cmp(&properties[b as usize].0));
        required_names.sort_unstable();
        required_names.dedup();
        let mut required = 0u64;
        let mut required_undeclared = Vec::new();
        for name in required_names {
            match properties.iter().position(|(p, _)| **p == *name) {
                Some(i) => required |= 1 << i,
                None => required_undeclared.push(name.into()),
            }
        }
        Some(FlatSchema {
            properties: properties.into(),
            by_name: by_name.into(),
            required,
            required_undeclared: required_undeclared.into(),
            open,
        })
    }

    fn is_valid(&self, value: &Value, undeclared: impl Fn(&str) -> bool) -> bool {
        let Value::Object(map) = value else {
            return false;
        };
        let mut seen = 0u64;
        // Where the next key is looked for first: after the last one found
        // (keys mostly come in the schema's order).
        let mut next = 0;
        for (key, value) in map {
            match self.property(key, next) {
                Some((i, leaf)) => {
                    if !leaf.is_valid(value) {
                        return false;
                    }
                    seen |= 1 << i;
                    next = i + 1;
                }
                None if self.open && undeclared(key) => {}
                None => return false,
            }
        }
        // Every required bit is a declared property's, set when it is seen.
        seen & self.required == self.required
            && self
                .required_undeclared
                .iter()
                .all(|n| map.contains_key(&**n))
    }

    /// The declared property `key` and its position, looked for at `hint`
    /// first.
    #[inline]
    fn property(&self, key: &str, hint: usize) -> Option<(usize, &Leaf)> {
        let props = &self.properties;
        if let Some((name, leaf)) = props.get(hint)
            && same_name(name, key)
        {
            return Some((hint, leaf));
        }
        self.search(key)
    }

    /// [`property`](Self::property) when `key` is not at the hint: looked
    /// for among all (out of line, the rare case).
    #[inline(never)]
    fn search(&self, key: &str) -> Option<(usize, &Leaf)> {
        let props = &self.properties;
        let i = if props.len() <= 8 {
            props.iter().position(|(name, _)| same_name(name, key))?
        } else {
            let found = self
                .by_name
                .binary_search_by(|&i| (*props[i as usize].0).cmp(key))
                .ok()?;
            self.by_name[found] as usize
        };
        Some((i, &props[i].1))
    }
}

impl Leaf {
    /// `defs` are the root's `$defs`, for a property that is only a
    /// `$ref` to one (as schemars writes an enum); a definition that refers
    /// on again is left to the general validator.
    fn compile(schema: &Value, defs: Option<&Map<String, Value>>) -> Option<Leaf> {
        if let Some(target) = schema.get("$ref") {
            let name = target.as_str()?.strip_prefix("#/$defs/")?;
            if name.contains(['~', '%', '/']) {
                return None;
            }
            let rest_is_annotation = schema
                .as_object()?
                .keys()
                .all(|k| k == "$ref" || ANNOTATIONS.contains(&k.as_str()));
            let target = defs?.get(name)?;
            if !rest_is_annotation || target.get("$ref").is_some() {
                return None;
            }
            return Leaf::compile(target, None);
        }
        let schema = match schema {
            Value::Bool(true) => {
                return Some(Leaf::default());
            }
            other => other.as_object()?,
        };
        let mut leaf = Leaf::default();
        let mut has_format = false;
        for (keyword, value) in schema {
            match keyword.as_str() {
                "type" => {
                    leaf.kinds = match value {
                        Value::String(name) => Kinds::parse(name)?,
                        Value::Array(names) if !names.is_empty() => {
                            let mut kinds = 0;
                            for name in names {
                                kinds |= Kinds::parse(name.as_str()?)?;
                            }
                            kinds
                        }
                        _ => return None,
                    };
                }
                "minimum" => leaf.minimum = Some(integer_bound(value)?),
                "maximum" => leaf.maximum = Some(integer_bound(value)?),
                "exclusiveMinimum" => leaf.exclusive_minimum = Some(integer_bound(value)?),
                "exclusiveMaximum" => leaf.exclusive_maximum = Some(integer_bound(value)?),
                "minLength" => leaf.min_length = Some(value.as_u64()?),
                "maxLength" => leaf.max_length = Some(value.as_u64()?),
                "enum" => {
                    let mut allowed = Vec::new();
                    for item in value.as_array()? {
                        allowed.push(item.as_str()?.into());
                    }
                    if allowed.is_empty() {
                        return None;
                    }
                    leaf.one_of = Some(allowed.into());
                }
                "const" => leaf.one_of = Some(Box::new([value.as_str()?.into()])),
                // Formats only ever judge strings.
                "format" => has_format = true,
                other if ANNOTATIONS.contains(&other) => {}
                _ => return None,
            }
        }
        if has_format && leaf.kinds & Kinds::STRING != 0 {
            return None;
        }
        // Bounds are within ±2^64 (`integer_bound`): no overflow at ±1.
        let low = [leaf.minimum, leaf.exclusive_minimum.map(|b| b + 1)];
        let high = [leaf.maximum, leaf.exclusive_maximum.map(|b| b - 1)];
        leaf.integers = (
            low.into_iter().flatten().max().unwrap_or(i128::MIN),
            high.into_iter().flatten().min().unwrap_or(i128::MAX),
        );
        leaf.i64s = leaf.i64_range();
        Some(leaf)
    }

    #[inline]
    fn is_valid(&self, value: &Value) -> bool {
        // The common case, an integer, in one range check, in line; every
        // other value out of line.
        if let Value::Number(n) = value
            && let Some(i) = n.as_i64()
        {
            return self.i64s.is_some_and(|(low, high)| low <= i && i <= high);
        }
        self.is_valid_other(value)
    }

    /// The range of `i64` values this leaf accepts ([`Leaf::i64s`]).
    fn i64_range(&self) -> Option<(i64, i64)> {
        if self.kinds & (Kinds::NUMBER | Kinds::INTEGER) == 0 || self.one_of.is_some() {
            return None;
        }
        let (low, high) = self.integers;
        let low = low.max(i128::from(i64::MIN));
        let high = high.min(i128::from(i64::MAX));
        // An empty range (no `i64` in it) accepts none.
        (low <= high).then_some((low as i64, high as i64))
    }

    /// [`is_valid`](Self::is_valid) of a value that is not an `i64`.
    #[inline(never)]
    fn is_valid_other(&self, value: &Value) -> bool {
        match value {
            Value::Null => self.kinds & Kinds::NULL != 0 && self.one_of.is_none(),
            Value::Bool(_) => self.kinds & Kinds::BOOLEAN != 0 && self.one_of.is_none(),
            Value::Number(n) => {
                let kind_ok = self.kinds & Kinds::NUMBER != 0
                    || (self.kinds & Kinds::INTEGER != 0 && is_integer(n));
                kind_ok && self.one_of.is_none() && self.number_in_range(n)
            }
            Value::String(s) => {
                self.kinds & Kinds::STRING != 0
                    && self.length_ok(s)
                    && self
                        .one_of
                        .as_ref()
                        .is_none_or(|allowed| allowed.iter().any(|a| **a == **s))
            }
            Value::Array(_) => self.kinds & Kinds::ARRAY != 0 && self.one_of.is_none(),
            Value::Object(_) => self.kinds & Kinds::OBJECT != 0 && self.one_of.is_none(),
        }
    }

    fn number_in_range(&self, n: &Number) -> bool {
        let integer = match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => Some(i128::from(i)),
            (None, Some(u)) => Some(i128::from(u)),
            (None, None) => None,
        };
        if let Some(i) = integer {
            let (low, high) = self.integers;
            return low <= i && i <= high;
        }
        let holds =
            |bound: Option<i128>, ok: fn(Ordering) -> bool| bound.is_none_or(|b| ok(compare(n, b)));
        holds(self.minimum, Ordering::is_ge)
            && holds(self.maximum, Ordering::is_le)
            && holds(self.exclusive_minimum, Ordering::is_gt)
            && holds(self.exclusive_maximum, Ordering::is_lt)
    }

    fn length_ok(&self, s: &str) -> bool {
        if self.min_length.is_none() && self.max_length.is_none() {
            return true;
        }
        // JSON Schema counts code points.
        let len = s.chars().count() as u64;
        self.min_length.is_none_or(|min| len >= min) && self.max_length.is_none_or(|max| len <= max)
    }
}

/// A numeric bound the flat check compares exactly: an integer (any `i64`
/// or `u64`). A fractional bound leaves the flat check out.
fn integer_bound(value: &Value) -> Option<i128> {
    let n = value.as_number()?;
    n.as_i64()
        .map(i128::from)
        .or_else(|| n.as_u64().map(i128::from))
}

/// JSON Schema's "integer": any number with no fractional part (`5.0` and
/// `1e20` included).
fn is_integer(n: &Number) -> bool {
    n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
}

/// Compares a JSON number with an integer bound exactly (no rounding of
/// either side).
fn compare(n: &Number, bound: i128) -> Ordering {
    if let Some(i) = n.as_i64() {
        return i128::from(i).cmp(&bound);
    }
    if let Some(u) = n.as_u64() {
        return i128::from(u).cmp(&bound);
    }
    let f = n.as_f64().unwrap_or(0.0);
    // Bounds are within ±2^64; a float beyond ±2^65 is past every bound.
    const LIMIT: f64 = 36_893_488_147_419_103_232.0; // 2^65
    if f >= LIMIT {
        return Ordering::Greater;
    }
    if f <= -LIMIT {
        return Ordering::Less;
    }
    let whole = f.trunc();
    // Exact: |whole| < 2^65 fits i128, and a float's integer part is exact.
    match (whole as i128).cmp(&bound) {
        Ordering::Equal => f.partial_cmp(&whole).unwrap_or(Ordering::Equal),
        other => other,
    }
}

mod cache;
#[cfg(feature = "json-schema-full")]
mod full;
mod output;
// With `json-schema-full`, `jsonschema` checks every schema and the subset
// validator is only compared with it in tests.
#[cfg_attr(all(feature = "json-schema-full", not(test)), allow(dead_code))]
mod subset;
use cache::Compiled;
pub(crate) use cache::ValidatorCache;
/// This build's validator of whole schemas.
#[cfg(feature = "json-schema-full")]
pub(crate) use full::Full as General;
pub(crate) use output::OutputValidator;
#[cfg(not(feature = "json-schema-full"))]
pub(crate) use subset::Subset as General;
pub(crate) use subset::{Problem, ProblemKind};

#[cfg(test)]
mod tests;
