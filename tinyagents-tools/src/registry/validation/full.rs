//! The full JSON Schema validator (`jsonschema`, feature
//! `json-schema-full`): every schema is compiled and checked by it, and its
//! errors are read as the crate's [`Problem`]s.

use std::borrow::Cow;

use jsonschema::error::{TypeKind, ValidationErrorKind as K};
use serde_json::Value;

use super::subset::{Problem, ProblemKind};
use super::{Kinds, SchemaError};

/// A schema compiled by `jsonschema` (JSON Schema 2020-12, formats checked,
/// no remote references).
pub(crate) struct Full(jsonschema::Validator);

impl Full {
    /// Compiles a schema already passed through [`super::bounded_schema`].
    pub(crate) fn compile(bounded: &Value) -> Result<Full, SchemaError> {
        jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .should_validate_formats(true)
            .build(bounded)
            .map(Full)
            .map_err(SchemaError::from_compiler)
    }

    /// The `jsonschema` validator itself.
    pub(crate) fn into_inner(self) -> jsonschema::Validator {
        self.0
    }

    /// Whether `value` satisfies the schema.
    pub(crate) fn is_valid(&self, value: &Value) -> bool {
        self.0.is_valid(value)
    }

    /// Every problem of `value`, in `jsonschema`'s order.
    pub(crate) fn problems<'v>(&self, value: &'v Value) -> Vec<Problem<'v>> {
        self.0
            .iter_errors(value)
            .map(|error| Problem {
                at: error.instance_path().as_str().to_owned(),
                kind: kind_of(error.kind()),
                text: Some(error.to_string()),
                instance: Cow::Owned(error.instance().clone().into_owned()),
            })
            .collect()
    }
}

fn kind_of(kind: &K) -> ProblemKind {
    use ProblemKind as P;
    match kind {
        K::AdditionalProperties { unexpected } | K::UnevaluatedProperties { unexpected } => {
            P::AdditionalProperties {
                unexpected: unexpected.clone(),
            }
        }
        K::Required { property } => P::Required {
            property: property.as_str().unwrap_or_default().to_owned(),
        },
        K::Type { kind } => P::Type {
            expected: match kind {
                TypeKind::Single(t) => Kinds::parse(t.as_str()).unwrap_or(0),
                TypeKind::Multiple(set) => set
                    .iter()
                    .map(|t| Kinds::parse(t.as_str()).unwrap_or(0))
                    .fold(0, |all, k| all | k),
            },
        },
        K::Enum { options } => P::Enum {
            options: Value::clone(options),
        },
        K::Constant { expected_value } => P::Constant {
            expected: Value::clone(expected_value),
        },
        K::Minimum { limit } => P::Minimum {
            limit: limit.clone(),
        },
        K::Maximum { limit } => P::Maximum {
            limit: limit.clone(),
        },
        K::ExclusiveMinimum { limit } => P::ExclusiveMinimum {
            limit: limit.clone(),
        },
        K::ExclusiveMaximum { limit } => P::ExclusiveMaximum {
            limit: limit.clone(),
        },
        K::MultipleOf { multiple_of } => P::MultipleOf {
            multiple_of: *multiple_of,
        },
        K::MinLength { limit } => P::MinLength { limit: *limit },
        K::MaxLength { limit } => P::MaxLength { limit: *limit },
        K::MinItems { limit } => P::MinItems { limit: *limit },
        K::MaxItems { limit } => P::MaxItems { limit: *limit },
        K::MinProperties { limit } => P::MinProperties { limit: *limit },
        K::MaxProperties { limit } => P::MaxProperties { limit: *limit },
        K::UniqueItems => P::UniqueItems,
        K::AnyOf { context } | K::OneOfNotValid { context } => P::NoShape {
            values: named_values(context),
        },
        K::OneOfMultipleValid { .. } => P::ManyShapes,
        K::FalseSchema => P::FalseSchema,
        K::Pattern { pattern } => P::Pattern {
            pattern: pattern.clone(),
        },
        K::Format { format } => P::Format {
            format: format.clone(),
        },
        K::Not { .. } => P::Not,
        K::Contains => P::Contains,
        other => P::Other {
            keyword: other.keyword().to_owned(),
        },
    }
}

/// The allowed values of a `oneOf`/`anyOf` whose every branch is a single
/// value (`const`, or an `enum` of values): each branch's failure names its
/// value. `None` when any branch is a shape.
fn named_values(context: &[Vec<jsonschema::ValidationError<'static>>]) -> Option<Vec<Value>> {
    let mut list = Vec::new();
    for branch in context {
        let values = branch.iter().find_map(|error| match error.kind() {
            K::Constant { expected_value } => Some(vec![Value::clone(expected_value)]),
            K::Enum { options } => options.as_array().cloned(),
            _ => None,
        })?;
        list.extend(values);
    }
    (!list.is_empty()).then_some(list)
}
