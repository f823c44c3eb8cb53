//! Why a declaration could not be exported, and why a provider payload could
//! not be read as tool calls.

use std::fmt;

use super::Provider;
use super::names::ProviderNameError;

/// A provider limit on schema size or on a request's tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Limit {
    /// Object properties in one schema, counted over the whole document.
    Properties,
    /// Nesting depth of objects.
    Depth,
    /// Enum values in one schema, counted over the whole document.
    EnumValues,
    /// Characters of property names and string enum values in one schema.
    SchemaChars,
    /// Tools in one request.
    ToolsPerRequest,
    /// Strict tools in one request.
    StrictTools,
    /// Optional parameters over the strict tools of one request.
    OptionalParameters,
    /// Union-typed parameters over the strict tools of one request.
    UnionParameters,
    /// Characters of a tool's description.
    DescriptionChars,
}

impl Limit {
    /// A short lowercase name of the limit.
    pub fn as_str(self) -> &'static str {
        match self {
            Limit::Properties => "properties",
            Limit::Depth => "nesting depth",
            Limit::EnumValues => "enum values",
            Limit::SchemaChars => "characters of names and enum values",
            Limit::ToolsPerRequest => "tools per request",
            Limit::StrictTools => "strict tools per request",
            Limit::OptionalParameters => "optional parameters of strict tools per request",
            Limit::UnionParameters => "union-typed parameters of strict tools per request",
            Limit::DescriptionChars => "characters of a tool description",
        }
    }
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which rule of SEP-2243 an `x-mcp-header` annotation breaks.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum McpHeaderProblem {
    /// The value is not a non-empty HTTP token (RFC 9110: ASCII letters,
    /// digits and ``!#$%&'*+-.^_`|~``).
    NotAToken,
    /// It annotates something other than a property of the root object
    /// (only top-level arguments are mirrored into headers).
    NotARootProperty,
    /// The property's `type` is not `"string"`, `"integer"` or `"boolean"`.
    NotPrimitive,
    /// Another property already names this header (names ignore case).
    Duplicate {
        /// The property that names it first.
        property: String,
    },
}

impl fmt::Display for McpHeaderProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            McpHeaderProblem::NotAToken => f.write_str(
                "must be a non-empty HTTP token (ASCII letters, digits and !#$%&'*+-.^_`|~)",
            ),
            McpHeaderProblem::NotARootProperty => f.write_str(
                "must annotate a property of the root object (only top-level arguments become headers)",
            ),
            McpHeaderProblem::NotPrimitive => f.write_str(
                "must annotate a property whose `type` is \"string\", \"integer\" or \"boolean\"",
            ),
            McpHeaderProblem::Duplicate { property } => write!(
                f,
                "names the same header as property `{property}` (header names ignore case)"
            ),
        }
    }
}

/// Why one tool's declaration cannot be sent to a provider.
///
/// Every variant names the tool and the provider; schema problems also give a
/// JSON pointer into the input schema as the export saw it (`""` is the root;
/// inside an inlined definition the path runs through the place that uses it).
/// An export that fails sends nothing for that tool: it never sends a schema
/// the provider would refuse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ExportError {
    /// The tool name breaks the provider's name rule.
    #[error("tool `{tool}`: {provider} refuses the name: {reason}")]
    InvalidName {
        /// The tool.
        tool: String,
        /// The provider.
        provider: Provider,
        /// The rule it breaks.
        reason: ProviderNameError,
    },
    /// The input schema's root is not `"type": "object"`.
    #[error("tool `{tool}`: {provider} needs an object at the root of the input schema")]
    RootNotObject {
        /// The tool.
        tool: String,
        /// The provider.
        provider: Provider,
    },
    /// The input schema's root is a combinator (`anyOf`, `oneOf`, `allOf`).
    #[error(
        "tool `{tool}`: {provider} refuses `{keyword}` at the root of the input schema; use a struct with named fields"
    )]
    RootCombinator {
        /// The tool.
        tool: String,
        /// The provider.
        provider: Provider,
        /// The combinator.
        keyword: String,
    },
    /// A map or free-form object where the provider needs closed objects.
    #[error(
        "tool `{tool}`: {provider} cannot take the open map at `{pointer}` (it needs every property named in advance); use a Vec of key/value structs"
    )]
    OpenMap {
        /// The tool.
        tool: String,
        /// The provider.
        provider: Provider,
        /// Where the map is.
        pointer: String,
    },
    /// A recursive type where the provider needs a finite schema.
    #[error(
        "tool `{tool}`: {provider} cannot take the recursive reference `{reference}` at `{pointer}`"
    )]
    Recursion {
        /// The tool.
        tool: String,
        /// The provider.
        provider: Provider,
        /// Where the reference is.
        pointer: String,
        /// The reference that leads back into itself.
        reference: String,
    },
    /// A `$ref` that does not resolve inside the schema.
    #[error("tool `{tool}`: the reference `{reference}` at `{pointer}` does not resolve")]
    UnresolvedRef {
        /// The tool.
        tool: String,
        /// The provider.
        provider: Provider,
        /// Where the reference is.
        pointer: String,
        /// The reference.
        reference: String,
    },
    /// A keyword the provider refuses and that cannot be rewritten without
    /// changing what the schema accepts.
    #[error("tool `{tool}`: {provider} does not support `{keyword}` (at `{pointer}`)")]
    Unsupported {
        /// The tool.
        tool: String,
        /// The provider.
        provider: Provider,
        /// Where the keyword is.
        pointer: String,
        /// The keyword.
        keyword: String,
    },
    /// A schema without a type (any JSON value) where the provider needs one.
    #[error(
        "tool `{tool}`: {provider} needs a type for the schema at `{pointer}` (it accepts any value)"
    )]
    Untyped {
        /// The tool.
        tool: String,
        /// The provider.
        provider: Provider,
        /// Where the schema is.
        pointer: String,
    },
    /// The `false` schema (nothing is valid) in a place the provider cannot
    /// express it.
    #[error("tool `{tool}`: {provider} cannot express the `false` schema at `{pointer}`")]
    FalseSchema {
        /// The tool.
        tool: String,
        /// The provider.
        provider: Provider,
        /// Where it is.
        pointer: String,
    },
    /// A nested object without properties, which the provider refuses.
    #[error("tool `{tool}`: {provider} refuses the object without properties at `{pointer}`")]
    EmptyObject {
        /// The tool.
        tool: String,
        /// The provider.
        provider: Provider,
        /// Where it is.
        pointer: String,
    },
    /// A property name the provider refuses.
    #[error("tool `{tool}`: {provider} refuses the property name `{name}` at `{pointer}`")]
    PropertyName {
        /// The tool.
        tool: String,
        /// The provider.
        provider: Provider,
        /// The object that holds the property.
        pointer: String,
        /// The property name.
        name: String,
    },
    /// The schema exceeds one of the provider's size limits.
    #[error("tool `{tool}`: the schema exceeds {provider}'s limit of {max} {limit} at `{pointer}`")]
    LimitExceeded {
        /// The tool.
        tool: String,
        /// The provider.
        provider: Provider,
        /// Where the count first went over the limit.
        pointer: String,
        /// Which limit.
        limit: Limit,
        /// The limit.
        max: usize,
    },
    /// An `x-mcp-header` annotation that MCP clients refuse (SEP-2243): they
    /// leave such a tool out of their list.
    #[error("tool `{tool}`: the `x-mcp-header` at `{pointer}` {problem}")]
    McpHeader {
        /// The tool.
        tool: String,
        /// The provider.
        provider: Provider,
        /// The schema that carries the annotation.
        pointer: String,
        /// The rule it breaks.
        problem: McpHeaderProblem,
    },
    /// Adding this tool to the request would exceed a per-request limit; the
    /// tool is left out of the request.
    #[error("tool `{tool}` left out: the request would exceed {provider}'s limit of {max} {limit}")]
    RequestLimit {
        /// The tool left out.
        tool: String,
        /// The provider.
        provider: Provider,
        /// Which limit.
        limit: Limit,
        /// The limit.
        max: usize,
    },
}

impl ExportError {
    /// The tool the error is about.
    pub fn tool(&self) -> &str {
        match self {
            ExportError::InvalidName { tool, .. }
            | ExportError::RootNotObject { tool, .. }
            | ExportError::RootCombinator { tool, .. }
            | ExportError::OpenMap { tool, .. }
            | ExportError::Recursion { tool, .. }
            | ExportError::UnresolvedRef { tool, .. }
            | ExportError::Unsupported { tool, .. }
            | ExportError::Untyped { tool, .. }
            | ExportError::FalseSchema { tool, .. }
            | ExportError::EmptyObject { tool, .. }
            | ExportError::PropertyName { tool, .. }
            | ExportError::LimitExceeded { tool, .. }
            | ExportError::McpHeader { tool, .. }
            | ExportError::RequestLimit { tool, .. } => tool,
        }
    }

    /// The JSON pointer into the input schema, for errors about one place in
    /// it (`Some("")` is the root).
    pub fn pointer(&self) -> Option<&str> {
        match self {
            ExportError::RootNotObject { .. } | ExportError::RootCombinator { .. } => Some(""),
            ExportError::OpenMap { pointer, .. }
            | ExportError::Recursion { pointer, .. }
            | ExportError::UnresolvedRef { pointer, .. }
            | ExportError::Unsupported { pointer, .. }
            | ExportError::Untyped { pointer, .. }
            | ExportError::FalseSchema { pointer, .. }
            | ExportError::EmptyObject { pointer, .. }
            | ExportError::PropertyName { pointer, .. }
            | ExportError::LimitExceeded { pointer, .. }
            | ExportError::McpHeader { pointer, .. } => Some(pointer),
            ExportError::InvalidName { .. } | ExportError::RequestLimit { .. } => None,
        }
    }

    /// A short stable identifier of the rule that was broken.
    pub fn rule(&self) -> &'static str {
        match self {
            ExportError::InvalidName { .. } => "invalid_name",
            ExportError::RootNotObject { .. } => "root_not_object",
            ExportError::RootCombinator { .. } => "root_combinator",
            ExportError::OpenMap { .. } => "open_map",
            ExportError::Recursion { .. } => "recursion",
            ExportError::UnresolvedRef { .. } => "unresolved_ref",
            ExportError::Unsupported { .. } => "unsupported",
            ExportError::Untyped { .. } => "untyped",
            ExportError::FalseSchema { .. } => "false_schema",
            ExportError::EmptyObject { .. } => "empty_object",
            ExportError::PropertyName { .. } => "property_name",
            ExportError::LimitExceeded { .. } => "limit_exceeded",
            ExportError::McpHeader { .. } => "mcp_header",
            ExportError::RequestLimit { .. } => "request_limit",
        }
    }
}

/// Why a provider payload could not be read as tool calls.
///
/// Pointers locate the offending value inside the payload that was passed in.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CallParseError {
    /// A required field is missing.
    #[error("`{pointer}` is missing")]
    Missing {
        /// Where the field should be.
        pointer: String,
    },
    /// A field has the wrong JSON type.
    #[error("`{pointer}` must be {expected}")]
    WrongType {
        /// Where the field is.
        pointer: String,
        /// What it must be.
        expected: &'static str,
    },
    /// A JSON-RPC request for another method than `tools/call`.
    #[error("expected a `tools/call` request, got `{method}`")]
    WrongMethod {
        /// The method found.
        method: String,
    },
    /// A call's arguments nest deeper than
    /// [`MAX_CALL_ARGUMENT_DEPTH`](crate::providers::MAX_CALL_ARGUMENT_DEPTH)
    /// levels; they are refused before anything copies or walks them
    /// recursively.
    #[error("`{pointer}` nests deeper than {max} levels")]
    TooDeep {
        /// Where the arguments are.
        pointer: String,
        /// The limit.
        max: usize,
    },
}
