//! [`RegistryError`]: why a tool, an alias or a toolset was refused.

use crate::ids::NameError;
use crate::registry::validation::SchemaError;

/// Why a tool or alias was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// A name or alias breaks the naming rule.
    #[error("invalid name `{name}`: {reason}")]
    InvalidName {
        /// The name given.
        name: String,
        /// The rule it breaks.
        reason: NameError,
    },
    /// A tool or alias of that name is already registered.
    #[error("a tool named `{name}` is already registered; registration never replaces a tool")]
    Duplicate {
        /// The name.
        name: String,
    },
    /// The input schema's root is not `"type": "object"`.
    #[error(
        "tool `{tool}`: the input schema's root must be `\"type\": \"object\"` (providers take an object of named arguments)"
    )]
    SchemaRootNotObject {
        /// The tool.
        tool: String,
    },
    /// The input schema has a property named like an injected parameter.
    #[error(
        "tool `{tool}`: the input schema exposes `{argument}`, which is an injected parameter; hidden values must not be model-visible"
    )]
    SchemaExposesInjected {
        /// The tool.
        tool: String,
        /// The injected parameter.
        argument: String,
    },
    /// The output schema could not be compiled into a validator.
    #[error("tool `{tool}`: the output schema is {problem}")]
    InvalidOutputSchema {
        /// The tool.
        tool: String,
        /// What the schema compiler found.
        #[source]
        problem: SchemaError,
    },
    /// The input schema could not be compiled into a validator.
    #[error("tool `{tool}`: the input schema is {problem}")]
    InvalidSchema {
        /// The tool.
        tool: String,
        /// What the schema compiler found.
        #[source]
        problem: SchemaError,
    },
    /// The tool declares `workspace`, but no argument is a workspace path,
    /// so there is nothing the workspace policy could confine.
    #[error(
        "tool `{tool}` declares `workspace`, but none of its arguments is a `WorkspacePath` (`\"format\": \"workspace-path\"`): type the path arguments as `WorkspacePath`, or drop `workspace`"
    )]
    WorkspaceWithoutPath {
        /// The tool.
        tool: String,
    },
    /// The tool's redaction policy turns secret masking off without the
    /// tool's explicit opt-in ([`ToolSafety::unredacted_secrets`](crate::ToolSafety::unredacted_secrets)).
    #[error(
        "tool `{tool}` turns secret redaction off; a secret in its output would reach the model unmasked. Keep `secrets` on, or opt in explicitly with `ToolSafety::allow_unredacted_secrets(true)`"
    )]
    UnredactedSecrets {
        /// The tool.
        tool: String,
    },
    /// Two tools claim the same name after composition (a merge, a prefix
    /// or a rename); both origins are named.
    #[error(
        "the tool name `{name}` is claimed twice: by {first} and by {second}; prefix, rename or filter one of them"
    )]
    Collision {
        /// The name claimed twice.
        name: String,
        /// Where the tool already holding the name comes from.
        first: String,
        /// Where the second tool comes from.
        second: String,
    },
    /// An example of arguments does not match the tool's input schema.
    #[error(
        "tool `{tool}`: example {example} does not match the input schema at `{field}`: {problem}"
    )]
    InvalidExample {
        /// The tool.
        tool: String,
        /// Which example, counting from 1 in declaration order.
        example: usize,
        /// The field that fails (`city`, `stops[1].name`; `arguments` for
        /// the object itself).
        field: String,
        /// What is wrong with it.
        problem: String,
    },
    /// A toolset rename names a tool the toolset does not hold.
    #[error("cannot rename `{tool}` in toolset `{toolset}`: no such tool")]
    NotInToolset {
        /// The toolset.
        toolset: String,
        /// The missing tool.
        tool: String,
    },
    /// An alias names a tool that is not registered.
    #[error("cannot alias `{alias}` to `{tool}`: no such tool")]
    UnknownTool {
        /// The alias.
        alias: String,
        /// The missing tool.
        tool: String,
    },
}

impl RegistryError {
    /// A short stable identifier of the rule that was broken.
    pub fn rule(&self) -> &'static str {
        match self {
            RegistryError::InvalidName { reason, .. } => reason.rule(),
            RegistryError::Duplicate { .. } => "duplicate",
            RegistryError::SchemaRootNotObject { .. } => "schema_root_not_object",
            RegistryError::SchemaExposesInjected { .. } => "schema_exposes_injected",
            RegistryError::InvalidSchema { .. } => "invalid_schema",
            RegistryError::InvalidOutputSchema { .. } => "invalid_output_schema",
            RegistryError::UnknownTool { .. } => "unknown_tool",
            RegistryError::Collision { .. } => "collision",
            RegistryError::NotInToolset { .. } => "not_in_toolset",
            RegistryError::WorkspaceWithoutPath { .. } => "workspace_without_path",
            RegistryError::UnredactedSecrets { .. } => "unredacted_secrets",
            RegistryError::InvalidExample { .. } => "invalid_example",
        }
    }
}
