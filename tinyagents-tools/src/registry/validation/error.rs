//! [`SchemaError`]: why a schema did not compile into a validator.

/// Why a schema did not compile into a validator.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SchemaError {
    /// A `$ref` that cannot be resolved inside the schema itself (remote
    /// references are never fetched).
    #[error("not valid JSON Schema: unresolvable reference: {message}")]
    Reference {
        /// The resolver's message.
        message: String,
    },
    /// The schema breaks the JSON Schema 2020-12 meta-schema at `pointer`
    /// (a JSON pointer into the schema; empty for its root).
    #[error("not valid JSON Schema at `{pointer}`: {message}")]
    Invalid {
        /// Where in the schema the problem is.
        pointer: String,
        /// The compiler's message.
        message: String,
    },
}

impl SchemaError {
    pub(crate) fn from_compiler(error: jsonschema::ValidationError<'_>) -> Self {
        match error.kind() {
            jsonschema::error::ValidationErrorKind::Referencing(reference) => {
                SchemaError::Reference {
                    message: reference.to_string(),
                }
            }
            _ => SchemaError::Invalid {
                pointer: error.instance_path().to_string(),
                message: error.to_string(),
            },
        }
    }
}
