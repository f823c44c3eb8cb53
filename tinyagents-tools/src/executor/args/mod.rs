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
//!
//! The parts: [`bounds`] (size, numbers and disposal, all without
//! recursion; the depth scan is the crate's shared one), [`strict`] (the JSON reader that refuses repeated keys) and
//! [`messages`] (the model-facing wording of every problem).

mod bounds;
mod messages;
mod strict;

use std::cell::RefCell;

use serde::de::DeserializeSeed;
use serde_json::{Map, Value};

use crate::call::RawArguments;
use crate::error::{ArgumentProblem, ErrorClass, ToolError};
use crate::redact::Redactor;
use crate::registry::validation::{InputValidator, ProblemKind};
use crate::spec::ToolSpec;

use crate::util::json_depth::depth_over;
use bounds::bound_and_normalize;
pub(crate) use bounds::{check_value_bounds, dispose};
use messages::{MAX_PROBLEMS, describe, pointer_child, type_phrase};
use strict::StrictValue;

/// Root keys naming values only the runtime supplies. A model that sends one
/// is trying to choose its own call or run id; it is refused unless the
/// tool's schema declares the key as an ordinary argument.
pub(crate) const RUNTIME_KEYS: &[&str] = &["call_id", "tool_call_id", "run_id", "thread_id"];

/// Size and depth bounds for one call's arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ArgumentLimits {
    pub max_bytes: usize,
    pub max_depth: usize,
}

/// Parses, bounds and validates the raw arguments `pending` holds for the
/// tool `spec`, in place: on success it holds them parsed (and they are
/// returned); on a refusal it holds none (`null`). `redactor` masks
/// secrets in the keys that messages show.
pub(crate) fn prepare<'p>(
    pending: &'p mut Pending,
    spec: &ToolSpec,
    validator: &InputValidator,
    limits: ArgumentLimits,
    redactor: Option<&Redactor>,
) -> Result<&'p mut Value, ToolError> {
    if let Err(e) = prepare_in_place(pending, spec, validator, limits, redactor) {
        pending.forget();
        return Err(e);
    }
    pending.parsed = true;
    match &mut pending.arguments {
        RawArguments::Json(value) => Ok(value),
        RawArguments::Text(_) => unreachable!("parsed text is kept as its value"),
    }
}

/// [`prepare`]'s steps; on an error the caller forgets what `pending`
/// holds.
fn prepare_in_place(
    pending: &mut Pending,
    spec: &ToolSpec,
    validator: &InputValidator,
    limits: ArgumentLimits,
    redactor: Option<&Redactor>,
) -> Result<(), ToolError> {
    let value = match &mut pending.arguments {
        RawArguments::Text(text) => {
            let value = parse_text(text, spec, limits, redactor)?;
            pending.arguments = RawArguments::Json(value);
            match &mut pending.arguments {
                RawArguments::Json(value) => value,
                RawArguments::Text(_) => unreachable!("just set"),
            }
        }
        RawArguments::Json(value) => {
            bound_and_normalize(value, limits)?;
            value
        }
    };
    if value.is_null() {
        if !accepts_missing(spec) {
            return Err(missing_arguments());
        }
        *value = Value::Object(Map::new());
    }
    validate(value, spec, validator, redactor)
}

/// A call's arguments: raw until they are parsed, then parsed in their
/// place (a value given parsed is checked where it is, never moved). When
/// the call is refused first, a value that may be nested too deeply to drop
/// recursively is taken apart by [`dispose`].
pub(crate) struct Pending {
    arguments: RawArguments,
    /// `arguments` are parsed and checked (then they are always `Json`).
    parsed: bool,
}

/// The parsed arguments of a call whose arguments were not parsed.
static NULL: Value = Value::Null;

impl Pending {
    pub(crate) fn new(raw: RawArguments) -> Self {
        Pending {
            arguments: raw,
            parsed: false,
        }
    }

    /// Drops the arguments, parsed or not (without recursion when they
    /// were never bounded): the call keeps none.
    fn forget(&mut self) {
        let raw = std::mem::replace(&mut self.arguments, RawArguments::Json(Value::Null));
        if let RawArguments::Json(value) = raw {
            dispose(value);
        }
        self.parsed = false;
    }

    /// The parsed arguments, as the steps left them; `null` before they
    /// are parsed or after a refusal.
    pub(crate) fn parsed(&self) -> &Value {
        match &self.arguments {
            RawArguments::Json(value) if self.parsed => value,
            _ => &NULL,
        }
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if !self.parsed
            && let RawArguments::Json(value) = &mut self.arguments
        {
            dispose(std::mem::take(value));
        }
    }
}

/// Validates an already parsed argument value (also used again after a
/// middleware rewrote the arguments).
pub(crate) fn validate(
    value: &Value,
    spec: &ToolSpec,
    validator: &InputValidator,
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
    // The common case: nothing forged and the schema holds; no error list.
    // (A key the schema declares is never forged: registration refuses a
    // schema that declares an injected name, and a runtime id counts only
    // when undeclared.)
    if validator.is_valid_where(value, |key| !is_forged(key, spec)) {
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
    for problem in validator.problems(value) {
        let at = problem.at;
        match problem.kind {
            ProblemKind::AdditionalProperties { unexpected } => {
                for key in &unexpected {
                    if at.is_empty() && forged.contains(&key.as_str()) {
                        continue;
                    }
                    problems.push(ArgumentProblem::new(
                        pointer_child(&at, key),
                        "is not an accepted argument",
                    ));
                }
            }
            ProblemKind::Required { property } => {
                problems.push(ArgumentProblem::new(
                    pointer_child(&at, &property),
                    "is required",
                ));
            }
            kind => problems.push(ArgumentProblem::new(at, describe(&kind, &problem.instance))),
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
    if let Some(depth) = depth_over(text.as_bytes(), limits.max_depth) {
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

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use crate::spec::ToolSchema;

    #[test]
    fn a_date_time_argument_is_refused_with_the_same_words_in_every_build() {
        let spec = crate::ToolSpec::builder("remind", "Sets a reminder.")
            .input_schema(ToolSchema::from_value(json!({"type": "object",
                "properties": {"at": {"type": "string", "format": "date-time"},
                               "id": {"type": "string", "format": "uuid"}},
                "required": ["at"], "additionalProperties": false})))
            .build()
            .unwrap();
        let validator = super::InputValidator::compile(spec.input_schema.as_value()).unwrap();
        let validate = |value: Value| super::validate(&value, &spec, &validator, None);
        validate(json!({"at": "2026-12-02T09:30:00+01:00"})).unwrap();
        let err = validate(json!({"at": "next tuesday", "id": "550e8400"})).unwrap_err();
        let problems: Vec<String> = err.problems().iter().map(ToString::to_string).collect();
        assert_eq!(
            problems,
            [
                "`at`: is not a valid date-time",
                "`id`: is not a valid uuid"
            ],
            "{err}"
        );
    }
}
