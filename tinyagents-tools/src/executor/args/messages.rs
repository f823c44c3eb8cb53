//! The model-facing wording of argument problems: built from the kind of
//! problem and the schema (public to the model), never by echoing a string
//! the model sent; keys are masked by the call's redactor before they are
//! shortened.

use std::borrow::Cow;

use serde_json::Value;

use crate::redact::Redactor;
use crate::registry::validation::ProblemKind;

/// The most problems listed in one repair message; the rest are counted.
pub(super) const MAX_PROBLEMS: usize = 20;
/// The longest key or option shown in a message, in characters.
const MAX_SHOWN: usize = 64;

/// The pointer to `key` under `parent`, the key masked by `redactor` (before
/// it is shortened, so a long secret is masked whole) and shortened.
pub(super) fn pointer_child(parent: &str, key: &str, redactor: Option<&Redactor>) -> String {
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

pub(super) fn type_phrase(value: &Value) -> &'static str {
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

pub(super) fn describe(kind: &ProblemKind, instance: &Value) -> String {
    use ProblemKind as K;
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
        K::Type { expected } => {
            let names = [
                "null", "boolean", "integer", "number", "string", "array", "object",
            ];
            let expected = names
                .iter()
                .enumerate()
                .filter(|(i, _)| expected & (1 << i) != 0)
                .map(|(_, name)| type_name_phrase(name))
                .collect::<Vec<_>>()
                .join(" or ");
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
        K::Constant { expected } => format!("must be {}", schema_literal(expected)),
        K::MaxLength { limit } => format!("is longer than {limit} characters"),
        K::MinLength { limit } => format!("is shorter than {limit} characters"),
        K::MaxItems { limit } => format!("has more than {limit} items"),
        K::MinItems { limit } => format!("has fewer than {limit} items"),
        K::MaxProperties { limit } => format!("has more than {limit} properties"),
        K::MinProperties { limit } => format!("has fewer than {limit} properties"),
        K::UniqueItems => "must not contain duplicate items".to_owned(),
        K::NoShape {
            values: Some(values),
        } => {
            let list: Vec<String> = values
                .iter()
                .take(MAX_PROBLEMS)
                .map(schema_literal)
                .collect();
            format!("must be one of: {}", list.join(", "))
        }
        K::NoShape { values: None } => "does not match any of the allowed shapes".to_owned(),
        K::ManyShapes => "matches more than one of the allowed shapes".to_owned(),
        K::FalseSchema => "is not allowed here".to_owned(),
        K::TooDeep => "nests deeper than the schema allows".to_owned(),
        // Reported apart by the caller.
        K::Required { .. } => "is required".to_owned(),
        K::AdditionalProperties { .. } => "is not an accepted argument".to_owned(),
        #[cfg(feature = "json-schema-full")]
        K::Pattern { pattern } => format!("does not match the pattern `{}`", shorten(pattern)),
        K::Format { format } => format!("is not a valid {format}"),
        #[cfg(feature = "json-schema-full")]
        K::Not => "has a shape that is not allowed here".to_owned(),
        #[cfg(feature = "json-schema-full")]
        K::Contains => "contains no item of the required shape".to_owned(),
        #[cfg(feature = "json-schema-full")]
        K::Other { keyword } => format!("is invalid (`{keyword}`)"),
    }
}
