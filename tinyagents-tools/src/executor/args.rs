//! Step 2 of a call: parse the provider's arguments, bound them, and validate
//! them against the tool's compiled input schema.
//!
//! Rules, in order:
//! - text is measured before it is parsed, and its nesting depth is counted by
//!   a linear scan (no recursion), so hostile input stays bounded;
//! - an already parsed value is walked without recursion for the same
//!   bounds, and one that is refused is taken apart without recursion, so a
//!   value nested deeper than the stack allows is never dropped recursively;
//! - an empty (or whitespace) argument text, or a JSON `null`, counts as `{}`
//!   only for a read-only tool with no required argument; anything else that
//!   does not parse is refused, never replaced by `{}`;
//! - a number written with an exponent or a zero fraction (`5.0`) that is an
//!   exact integer is read as that integer, as JSON Schema reads it;
//! - a key that appears twice in one object is refused (a parser that kept
//!   the first and one that kept the last would disagree about the call);
//! - the root must be an object;
//! - a key equal to an injected parameter's name, or to a runtime id
//!   ([`RUNTIME_KEYS`]) the schema does not declare, is refused with its own
//!   message (the value is never shown);
//! - every schema problem is collected, and each message is built from the
//!   kind of problem, never by echoing a string the model sent; keys shown in
//!   messages are masked by the call's redactor before they are shortened.

use std::borrow::Cow;
use std::cell::RefCell;
use std::fmt;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use crate::call::RawArguments;
use crate::error::{ArgumentProblem, ErrorClass, ToolError};
use crate::policy::Redactor;
use crate::spec::ToolSpec;

/// Root keys naming values only the runtime supplies. A model that sends one
/// is trying to choose its own call or run id; it is refused unless the
/// tool's schema declares the key as an ordinary argument.
pub(crate) const RUNTIME_KEYS: &[&str] = &["call_id", "tool_call_id", "run_id", "thread_id"];

/// The most problems listed in one repair message; the rest are counted.
const MAX_PROBLEMS: usize = 20;
/// The longest key or option shown in a message, in characters.
const MAX_SHOWN: usize = 64;

/// Size and depth bounds for one call's arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ArgumentLimits {
    pub max_bytes: usize,
    pub max_depth: usize,
}

/// Parses, bounds and validates `raw` for the tool `spec`; `redactor` masks
/// secrets in the keys that messages show.
pub(crate) fn prepare(
    raw: RawArguments,
    spec: &ToolSpec,
    validator: &jsonschema::Validator,
    limits: ArgumentLimits,
    redactor: Option<&Redactor>,
) -> Result<Value, ToolError> {
    let value = match raw {
        RawArguments::Text(text) => parse_text(&text, spec, limits, redactor)?,
        RawArguments::Json(mut value) => {
            if let Err(e) = check_value_bounds(&value, limits) {
                dispose(value);
                return Err(e);
            }
            normalize_numbers(&mut value);
            value
        }
    };
    let value = match value {
        Value::Null if accepts_missing(spec) => Value::Object(Map::new()),
        Value::Null => return Err(missing_arguments()),
        other => other,
    };
    validate(&value, spec, validator, redactor)?;
    Ok(value)
}

/// A call's raw arguments until they are parsed: when the call is refused
/// first, an already parsed value in them is dropped by [`dispose`].
pub(crate) struct Pending(Option<RawArguments>);

impl Pending {
    pub(crate) fn new(raw: RawArguments) -> Self {
        Pending(Some(raw))
    }

    /// The arguments, taken out once.
    pub(crate) fn take(&mut self) -> RawArguments {
        self.0.take().unwrap_or(RawArguments::Json(Value::Null))
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if let Some(RawArguments::Json(value)) = self.0.take() {
            dispose(value);
        }
    }
}

/// The largest magnitude below which every integer is an exact `f64`.
const EXACT_INTEGERS: f64 = 9_007_199_254_740_992.0;

/// A JSON number read as a float. One with no fraction (`5.0`, `1e3`) is the
/// integer JSON Schema already takes it for, so it becomes that integer and
/// serde's integer types accept what validation accepted (they refuse every
/// float). Only magnitudes where integers are exact are changed.
fn float(v: f64) -> Value {
    if v.fract() == 0.0 && v.abs() < EXACT_INTEGERS {
        // In range and integral, so the conversion is exact.
        return Value::from(v as i64);
    }
    serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
}

/// Applies [`float`] to every float in `value`, without recursion.
fn normalize_numbers(value: &mut Value) {
    // The common shape, a flat object, needs no work stack.
    if let Value::Object(map) = value
        && map.values().all(|v| !v.is_array() && !v.is_object())
    {
        for v in map.values_mut() {
            if let Value::Number(n) = v
                && let Some(f) = n.as_f64().filter(|_| n.is_f64())
            {
                *v = float(f);
            }
        }
        return;
    }
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Array(items) => stack.extend(items.iter_mut()),
            Value::Object(map) => stack.extend(map.values_mut()),
            Value::Number(n) if n.is_f64() => {
                if let Some(f) = n.as_f64() {
                    *v = float(f);
                }
            }
            _ => {}
        }
    }
}

/// Drops `value` without recursion, however deeply it nests (the default
/// drop of a [`Value`] recurses once per level).
pub(crate) fn dispose(value: Value) {
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        match v {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

/// Validates an already parsed argument value (also used again after a
/// middleware rewrote the arguments).
pub(crate) fn validate(
    value: &Value,
    spec: &ToolSpec,
    validator: &jsonschema::Validator,
    redactor: Option<&Redactor>,
) -> Result<(), ToolError> {
    let pointer_child = |parent: &str, key: &str| pointer_child(parent, key, redactor);
    let Value::Object(map) = value else {
        return Err(ToolError::invalid_arguments(vec![ArgumentProblem::new(
            "",
            format!(
                "must be a JSON object of named arguments, not {}",
                type_phrase(value)
            ),
        )]));
    };
    let forged_any = map.keys().any(|key| is_forged(key, spec));
    // The common case: nothing forged and the schema holds; no error list.
    if !forged_any && validator.is_valid(value) {
        return Ok(());
    }
    let mut problems = Vec::new();
    let forged: Vec<&str> = map
        .keys()
        .map(String::as_str)
        .filter(|key| is_forged(key, spec))
        .collect();
    for key in &forged {
        problems.push(ArgumentProblem::new(
            pointer_child("", key),
            "is supplied by the runtime and cannot be passed as an argument",
        ));
    }
    for error in validator.iter_errors(value) {
        let at = error.instance_path().as_str().to_owned();
        match error.kind() {
            ValidationErrorKind::AdditionalProperties { unexpected }
            | ValidationErrorKind::UnevaluatedProperties { unexpected } => {
                for key in unexpected {
                    if at.is_empty() && forged.contains(&key.as_str()) {
                        continue;
                    }
                    problems.push(ArgumentProblem::new(
                        pointer_child(&at, key),
                        "is not an accepted argument",
                    ));
                }
            }
            ValidationErrorKind::Required { property } => {
                let name = property.as_str().unwrap_or_default();
                problems.push(ArgumentProblem::new(
                    pointer_child(&at, name),
                    "is required",
                ));
            }
            kind => problems.push(ArgumentProblem::new(at, describe(kind, error.instance()))),
        }
    }
    if problems.is_empty() {
        return Ok(());
    }
    if problems.len() > MAX_PROBLEMS {
        let more = problems.len() - MAX_PROBLEMS;
        problems.truncate(MAX_PROBLEMS);
        problems.push(ArgumentProblem::new(
            "",
            format!("{more} more problems not listed"),
        ));
    }
    Err(ToolError::invalid_arguments(problems))
}

/// True when a root key names a value only the runtime supplies: an
/// injected parameter, or a runtime id the schema does not declare.
fn is_forged(key: &str, spec: &ToolSpec) -> bool {
    spec.injected.iter().any(|arg| arg.name == key)
        || (RUNTIME_KEYS.contains(&key) && !spec.input_schema.property_names().any(|p| p == key))
}

fn parse_text(
    text: &str,
    spec: &ToolSpec,
    limits: ArgumentLimits,
    redactor: Option<&Redactor>,
) -> Result<Value, ToolError> {
    if text.len() > limits.max_bytes {
        return Err(too_large(text.len(), limits.max_bytes));
    }
    if text.trim().is_empty() {
        return if accepts_missing(spec) {
            Ok(Value::Object(Map::new()))
        } else {
            Err(missing_arguments())
        };
    }
    if let Some(depth) = text_depth_over(text, limits.max_depth) {
        return Err(too_deep(depth, limits.max_depth));
    }
    let duplicate = RefCell::new(None);
    let mut de = serde_json::Deserializer::from_str(text);
    let parsed = StrictValue(&duplicate)
        .deserialize(&mut de)
        .and_then(|value| de.end().map(|()| value));
    parsed.map_err(|e| {
        if let Some(mut path) = duplicate.into_inner() {
            return duplicate_key(&mut path, redactor);
        }
        use serde_json::error::Category;
        let what = match e.classify() {
            Category::Eof => "the text ends before the JSON value is complete".to_owned(),
            Category::Syntax if is_number_out_of_range(&e) => format!(
                "a number at line {}, column {} is out of range",
                e.line(),
                e.column()
            ),
            Category::Syntax => format!("syntax error at line {}, column {}", e.line(), e.column()),
            Category::Data | Category::Io => "the text is not a JSON value".to_owned(),
        };
        ToolError::invalid_arguments(vec![ArgumentProblem::new(
            "",
            format!("are not valid JSON ({what}); send one JSON object"),
        )])
    })
}

/// True for serde_json's "number out of range" (a literal such as `1e400`
/// that no `f64` holds); its message names no input.
fn is_number_out_of_range(e: &serde_json::Error) -> bool {
    e.to_string().starts_with("number out of range")
}

/// The refusal of a key sent twice; `path` holds the pointer's segments
/// innermost first, the repeated key at index 0.
fn duplicate_key(path: &mut [String], redactor: Option<&Redactor>) -> ToolError {
    path.reverse();
    let at = path
        .iter()
        .fold(String::new(), |at, seg| pointer_child(&at, seg, redactor));
    ToolError::invalid_arguments(vec![ArgumentProblem::new(
        at,
        "appears more than once in the same object; send each argument once",
    )])
}

/// A JSON [`Value`] deserializer that refuses a key repeated within one
/// object (serde_json's own keeps the last silently). On that refusal the
/// cell holds the path to the key, innermost segment first.
#[derive(Clone, Copy)]
struct StrictValue<'a>(&'a RefCell<Option<Vec<String>>>);

impl StrictValue<'_> {
    /// Adds the segment of the enclosing array or object to the recorded
    /// path of a duplicate found inside it.
    fn note(&self, segment: impl FnOnce() -> String) {
        if let Some(path) = self.0.borrow_mut().as_mut() {
            path.push(segment());
        }
    }
}

impl<'de> DeserializeSeed<'de> for StrictValue<'_> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for StrictValue<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(float(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        self.deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        loop {
            match seq.next_element_seed(self) {
                Ok(Some(item)) => items.push(item),
                Ok(None) => return Ok(Value::Array(items)),
                Err(e) => {
                    let index = items.len();
                    dispose(Value::Array(items));
                    self.note(|| index.to_string());
                    return Err(e);
                }
            }
        }
    }
    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut map = Map::new();
        while let Some(key) = access.next_key::<String>()? {
            if map.contains_key(&key) {
                *self.0.borrow_mut() = Some(vec![key]);
                dispose(Value::Object(map));
                return Err(de::Error::custom("a key appears twice in one object"));
            }
            match access.next_value_seed(self) {
                Ok(value) => {
                    map.insert(key, value);
                }
                Err(e) => {
                    dispose(Value::Object(map));
                    self.note(|| key);
                    return Err(e);
                }
            }
        }
        Ok(Value::Object(map))
    }
}

/// True when a missing argument object may stand for `{}`: the tool only
/// reads and requires nothing.
fn accepts_missing(spec: &ToolSpec) -> bool {
    spec.safety.is_read_only() && !spec.input_schema.has_required()
}

fn missing_arguments() -> ToolError {
    ToolError::invalid_arguments(vec![ArgumentProblem::new(
        "",
        "are missing; send a JSON object with the tool's arguments",
    )])
}

fn too_large(len: usize, max: usize) -> ToolError {
    ToolError::limit_exceeded(
        ErrorClass::Repair,
        "argument_size",
        format!("the arguments are {len} bytes; the limit is {max} bytes"),
    )
}

fn too_deep(depth: usize, max: usize) -> ToolError {
    ToolError::limit_exceeded(
        ErrorClass::Repair,
        "argument_depth",
        format!("the arguments nest deeper than {max} levels (found at least {depth})"),
    )
}

/// Scans JSON text once and returns the depth reached when it passes `max`.
fn text_depth_over(text: &str, max: usize) -> Option<usize> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for b in text.bytes() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return Some(depth);
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// Walks an already parsed value without recursion, checking depth and an
/// estimate of its encoded size.
pub(crate) fn check_value_bounds(value: &Value, limits: ArgumentLimits) -> Result<(), ToolError> {
    // The common shape, a flat object of scalars, needs no work stack.
    if let Value::Object(map) = value
        && limits.max_depth >= 1
        && map.values().all(|v| !v.is_array() && !v.is_object())
    {
        let size = map.iter().fold(2, |size, (k, v)| {
            size + k.len() + 4 + v.as_str().map_or(8, |s| s.len() + 2)
        });
        if size > limits.max_bytes {
            return Err(too_large(size, limits.max_bytes));
        }
        return Ok(());
    }
    let mut stack: Vec<(&Value, usize)> = vec![(value, 1)];
    let mut size = 0usize;
    while let Some((v, depth)) = stack.pop() {
        match v {
            Value::Array(items) => {
                if depth > limits.max_depth {
                    return Err(too_deep(depth, limits.max_depth));
                }
                size += 2 + items.len();
                stack.extend(items.iter().map(|i| (i, depth + 1)));
            }
            Value::Object(map) => {
                if depth > limits.max_depth {
                    return Err(too_deep(depth, limits.max_depth));
                }
                size += 2;
                for (k, item) in map {
                    size += k.len() + 4;
                    stack.push((item, depth + 1));
                }
            }
            Value::String(s) => size += s.len() + 2,
            _ => size += 8,
        }
        if size > limits.max_bytes {
            return Err(too_large(size, limits.max_bytes));
        }
    }
    Ok(())
}

/// The pointer to `key` under `parent`, the key masked by `redactor` (before
/// it is shortened, so a long secret is masked whole) and shortened.
fn pointer_child(parent: &str, key: &str, redactor: Option<&Redactor>) -> String {
    let masked = match redactor {
        Some(r) => r.text(key),
        None => Cow::Borrowed(key),
    };
    let shown = shorten(&masked);
    format!("{parent}/{}", shown.replace('~', "~0").replace('/', "~1"))
}

fn shorten(text: &str) -> Cow<'_, str> {
    if text.chars().count() <= MAX_SHOWN {
        Cow::Borrowed(text)
    } else {
        let mut s: String = text.chars().take(MAX_SHOWN).collect();
        s.push('…');
        Cow::Owned(s)
    }
}

fn type_phrase(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "an integer",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn type_name_phrase(name: &str) -> String {
    match name {
        "integer" | "array" | "object" => format!("an {name}"),
        "null" => "null".to_owned(),
        other => format!("a {other}"),
    }
}

/// The value as shown in a message: numbers only (never strings).
fn shown_number(instance: &Value) -> Option<String> {
    instance.as_number().map(ToString::to_string)
}

/// A short rendering of schema data (enum options, consts): the schema is
/// public to the model, so showing it echoes nothing the model sent.
fn schema_literal(value: &Value) -> String {
    shorten(&value.to_string()).into_owned()
}

fn describe(kind: &ValidationErrorKind, instance: &Value) -> String {
    use ValidationErrorKind as K;
    let with_value = |template: &str, limit: &Value| match shown_number(instance) {
        Some(n) => format!("{n} {template} {limit}"),
        None => format!("must not be {template} {limit}"),
    };
    match kind {
        K::Maximum { limit } => with_value("is greater than the maximum", limit),
        K::Minimum { limit } => with_value("is less than the minimum", limit),
        K::ExclusiveMaximum { limit } => format!("must be less than {limit}"),
        K::ExclusiveMinimum { limit } => format!("must be greater than {limit}"),
        K::MultipleOf { multiple_of } => format!("must be a multiple of {multiple_of}"),
        K::Type { kind } => {
            let expected = match kind {
                TypeKind::Single(t) => type_name_phrase(t.as_str()),
                TypeKind::Multiple(set) => set
                    .iter()
                    .map(|t| type_name_phrase(t.as_str()))
                    .collect::<Vec<_>>()
                    .join(" or "),
            };
            format!("must be {expected}, not {}", type_phrase(instance))
        }
        K::Enum { options } => {
            let list: Vec<String> = options
                .as_array()
                .into_iter()
                .flatten()
                .take(MAX_PROBLEMS)
                .map(schema_literal)
                .collect();
            format!("must be one of: {}", list.join(", "))
        }
        K::Constant { expected_value } => format!("must be {}", schema_literal(expected_value)),
        K::MaxLength { limit } => format!("is longer than {limit} characters"),
        K::MinLength { limit } => format!("is shorter than {limit} characters"),
        K::Pattern { pattern } => format!("does not match the pattern `{}`", shorten(pattern)),
        K::Format { format } => format!("is not a valid {format}"),
        K::MaxItems { limit } => format!("has more than {limit} items"),
        K::MinItems { limit } => format!("has fewer than {limit} items"),
        K::MaxProperties { limit } => format!("has more than {limit} properties"),
        K::MinProperties { limit } => format!("has fewer than {limit} properties"),
        K::UniqueItems => "must not contain duplicate items".to_owned(),
        K::AnyOf { .. } | K::OneOfNotValid { .. } => {
            "does not match any of the allowed shapes".to_owned()
        }
        K::OneOfMultipleValid { .. } => "matches more than one of the allowed shapes".to_owned(),
        K::FalseSchema => "is not allowed here".to_owned(),
        K::Not { .. } => "has a shape that is not allowed here".to_owned(),
        K::Contains => "contains no item of the required shape".to_owned(),
        other => format!("is invalid (`{}`)", other.keyword()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_scan_ignores_brackets_inside_strings() {
        assert_eq!(text_depth_over(r#"{"a": "[[[[[[["}"#, 2), None);
        assert_eq!(text_depth_over(r#"{"a": "\"[[[", "b": [[1]]}"#, 2), Some(3));
    }

    fn parse(text: &str) -> Result<Value, Vec<String>> {
        let duplicate = RefCell::new(None);
        let mut de = serde_json::Deserializer::from_str(text);
        StrictValue(&duplicate).deserialize(&mut de).map_err(|_| {
            let mut path = duplicate.into_inner().unwrap_or_default();
            path.reverse();
            path
        })
    }

    #[test]
    fn a_repeated_key_is_found_with_its_path_at_any_depth() {
        assert_eq!(parse(r#"{"a": 1, "a": 2}"#), Err(vec!["a".to_owned()]));
        assert_eq!(
            parse(r#"{"x": [0, {"b": {"c": 1, "c": 1}}]}"#),
            Err(vec!["x", "1", "b", "c"]
                .into_iter()
                .map(String::from)
                .collect())
        );
        assert_eq!(
            parse(r#"{"a": {"a": 1}, "b": [{"a": 1}]}"#).unwrap(),
            serde_json::json!({"a": {"a": 1}, "b": [{"a": 1}]})
        );
    }

    #[test]
    fn integral_floats_become_integers_only_where_integers_are_exact() {
        assert_eq!(
            parse("[5.0, 1e3, -0.0, 2.5, 1e300]").unwrap(),
            serde_json::json!([5, 1000, 0, 2.5, 1e300])
        );
        let mut v = serde_json::json!({"a": [5.0, {"b": -7.0}], "c": 9007199254740992.0});
        normalize_numbers(&mut v);
        assert_eq!(
            v,
            serde_json::json!({"a": [5, {"b": -7}], "c": 9007199254740992.0})
        );
        assert!(v["c"].is_f64());
    }

    #[test]
    fn deep_values_are_refused_without_recursion() {
        let mut v = Value::Null;
        for _ in 0..10_000 {
            v = Value::Array(vec![v]);
        }
        let limits = ArgumentLimits {
            max_bytes: 1 << 20,
            max_depth: 64,
        };
        let err = check_value_bounds(&v, limits).unwrap_err();
        assert_eq!(err.kind().as_str(), "limit_exceeded");
        // Take the value apart iteratively so dropping it cannot recurse deeply.
        while let Value::Array(mut items) = v {
            v = items.pop().unwrap_or(Value::Null);
        }
    }
}
