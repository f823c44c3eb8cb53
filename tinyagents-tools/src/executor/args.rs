//! Step 2 of a call: parse the provider's arguments, bound them, and validate
//! them against the tool's compiled input schema.
//!
//! Rules, in order:
//! - text is measured before it is parsed, and its nesting depth is counted by
//!   a linear scan (no recursion), so hostile input stays bounded;
//! - an empty (or whitespace) argument text, or a JSON `null`, counts as `{}`
//!   only for a read-only tool with no required argument; anything else that
//!   does not parse is refused, never replaced by `{}`;
//! - the root must be an object;
//! - a key equal to an injected parameter's name is refused with its own
//!   message (the value is never shown);
//! - every schema problem is collected, and each message is built from the
//!   kind of problem, never by echoing a string the model sent.

use std::borrow::Cow;

use jsonschema::error::{TypeKind, ValidationErrorKind};
use serde_json::{Map, Value};

use crate::call::RawArguments;
use crate::error::{ArgumentProblem, ErrorClass, ToolError};
use crate::spec::ToolSpec;

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

/// Parses, bounds and validates `raw` for the tool `spec`.
pub(crate) fn prepare(
    raw: RawArguments,
    spec: &ToolSpec,
    validator: &jsonschema::Validator,
    limits: ArgumentLimits,
) -> Result<Value, ToolError> {
    let value = match raw {
        RawArguments::Text(text) => parse_text(&text, spec, limits)?,
        RawArguments::Json(value) => {
            check_value_bounds(&value, limits)?;
            value
        }
    };
    let value = match value {
        Value::Null if accepts_missing(spec) => Value::Object(Map::new()),
        Value::Null => return Err(missing_arguments()),
        other => other,
    };
    validate(&value, spec, validator)?;
    Ok(value)
}

/// Validates an already parsed argument value (also used again after a
/// middleware rewrote the arguments).
pub(crate) fn validate(
    value: &Value,
    spec: &ToolSpec,
    validator: &jsonschema::Validator,
) -> Result<(), ToolError> {
    let Value::Object(map) = value else {
        return Err(ToolError::invalid_arguments(vec![ArgumentProblem::new(
            "",
            format!(
                "must be a JSON object of named arguments, not {}",
                type_phrase(value)
            ),
        )]));
    };
    let forged_any = map
        .keys()
        .any(|key| spec.injected.iter().any(|arg| arg.name == *key));
    // The common case: nothing forged and the schema holds; no error list.
    if !forged_any && validator.is_valid(value) {
        return Ok(());
    }
    let mut problems = Vec::new();
    let forged: Vec<&str> = map
        .keys()
        .map(String::as_str)
        .filter(|key| spec.injected.iter().any(|arg| arg.name == *key))
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

fn parse_text(text: &str, spec: &ToolSpec, limits: ArgumentLimits) -> Result<Value, ToolError> {
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
    serde_json::from_str(text).map_err(|e| {
        use serde_json::error::Category;
        let what = match e.classify() {
            Category::Eof => "the text ends before the JSON value is complete".to_owned(),
            Category::Syntax => format!("syntax error at line {}, column {}", e.line(), e.column()),
            Category::Data | Category::Io => "the text is not a JSON value".to_owned(),
        };
        ToolError::invalid_arguments(vec![ArgumentProblem::new(
            "",
            format!("are not valid JSON ({what}); send one JSON object"),
        )])
    })
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
fn check_value_bounds(value: &Value, limits: ArgumentLimits) -> Result<(), ToolError> {
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

fn pointer_child(parent: &str, key: &str) -> String {
    let shown = shorten(key);
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
