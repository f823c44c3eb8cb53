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
    /// The schema uses a JSON Schema keyword outside the subset the
    /// built-in validator checks (a build without the `json-schema-full`
    /// feature refuses it rather than accept values unchecked).
    #[error(
        "uses `{keyword}` (at `{pointer}`), which the built-in validator does not check; enable the `json-schema-full` feature of tinyagents-tools to validate it"
    )]
    Unsupported {
        /// The keyword.
        keyword: String,
        /// Where in the schema it is (a JSON pointer).
        pointer: String,
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
    #[cfg(feature = "json-schema-full")]
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
