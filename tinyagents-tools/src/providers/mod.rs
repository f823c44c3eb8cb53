//! Provider formats: one [`ToolSpec`] exported to OpenAI (Chat Completions and
//! Responses), Anthropic Messages, Google Gemini and MCP, and their tool calls
//! and results read and written.
//!
//! An export never changes the canonical schema: it copies it and applies the
//! provider's rules (closing objects, making optional fields nullable,
//! inlining references, moving unsupported formats and bounds into the
//! description, ...). A schema the provider cannot take gives a typed
//! [`ExportError`] naming the tool and the JSON pointer; nothing is sent for
//! that tool. [`ExportCache`] keeps each result per tool, provider and
//! options, so a turn that re-exports hundreds of tools does no schema work.
//!
//! ```
//! use tinyagents_tools::ToolSpec;
//! use tinyagents_tools::providers::{Provider, export_declarations};
//!
//! let spec = ToolSpec::builder("ping", "Check the service is up.").build().unwrap();
//! let out = export_declarations(Provider::OpenAiChat.default_target(), [&spec]);
//! assert!(out.errors.is_empty());
//! assert_eq!(out.to_json()[0]["function"]["name"], "ping");
//! ```

pub mod anthropic;
mod cache;
mod choice;
mod deferred;
mod error;
mod examples;
pub mod gemini;
mod limits;
pub mod mcp;
mod names;
pub mod openai;
pub(crate) mod read;
mod refs;
mod results;
mod transform;

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use serde::{Serialize, Serializer};
use serde_json::{Value, json};

use crate::spec::ToolSpec;

pub use cache::{CacheStats, ExportCache};
pub use choice::{AllowedMode, allowed_tools_choice};
pub use deferred::request_tools_deferred;
pub use error::{CallParseError, ExportError, Limit, McpHeaderProblem};
pub use examples::{EXAMPLES_HEADING, description_with_examples};
pub use names::{
    NameMapError, ProviderNameError, ToolNameMap, check_provider_name, provider_alias,
};
pub use results::MAX_STRUCTURED_BYTES;

/// A provider format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Provider {
    /// OpenAI Chat Completions (`tools[].function`).
    OpenAiChat,
    /// OpenAI Responses (flat function tools).
    OpenAiResponses,
    /// Anthropic Messages.
    Anthropic,
    /// Google Gemini (`functionDeclarations`).
    Gemini,
    /// Model Context Protocol (`tools/list`).
    Mcp,
}

impl Provider {
    /// Every provider, in a fixed order.
    pub const ALL: [Provider; 5] = [
        Provider::OpenAiChat,
        Provider::OpenAiResponses,
        Provider::Anthropic,
        Provider::Gemini,
        Provider::Mcp,
    ];

    /// The provider's command-line name: `openai-chat`, `openai-responses`,
    /// `anthropic`, `gemini` or `mcp`.
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::OpenAiChat => "openai-chat",
            Provider::OpenAiResponses => "openai-responses",
            Provider::Anthropic => "anthropic",
            Provider::Gemini => "gemini",
            Provider::Mcp => "mcp",
        }
    }

    /// The provider with its default options: OpenAI strict, Anthropic not
    /// strict and without cache marker, Gemini `parameters`.
    pub fn default_target(self) -> ExportTarget {
        match self {
            Provider::OpenAiChat => ExportTarget::OpenAiChat(OpenAiOptions::default()),
            Provider::OpenAiResponses => ExportTarget::OpenAiResponses(OpenAiOptions::default()),
            Provider::Anthropic => ExportTarget::Anthropic(AnthropicOptions::default()),
            Provider::Gemini => ExportTarget::Gemini(GeminiOptions::default()),
            Provider::Mcp => ExportTarget::Mcp,
        }
    }
}

impl fmt::Display for Provider {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A provider name that is not one of [`Provider::as_str`]'s.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown provider `{0}`: expected openai-chat, openai-responses, anthropic, gemini or mcp")]
pub struct UnknownProvider(pub String);

impl FromStr for Provider {
    type Err = UnknownProvider;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Provider::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| UnknownProvider(s.to_owned()))
    }
}

/// Why [`model_facing_schema`] could not inline a schema's references.
#[cfg(feature = "stream")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum InlineError {
    /// A reference leads back into itself.
    Recursion { pointer: String, reference: String },
    /// A reference points nowhere.
    Unresolved { pointer: String, reference: String },
}

/// The input schema as a model-facing export starts from (no root meta,
/// no MCP header annotations) with every `$ref` inlined: what the grammar
/// builders of [`crate::stream::grammar`] take.
#[cfg(feature = "stream")]
pub(crate) fn model_facing_schema(spec: &ToolSpec) -> Result<Value, InlineError> {
    let cx = transform::Cx {
        spec,
        provider: Provider::Mcp,
    };
    let mut schema = cx.model_schema();
    refs::inline_refs(&mut schema, &cx, refs::InlineMode::All).map_err(|e| match e {
        ExportError::Recursion {
            pointer, reference, ..
        } => InlineError::Recursion { pointer, reference },
        ExportError::UnresolvedRef {
            pointer, reference, ..
        } => InlineError::Unresolved { pointer, reference },
        other => InlineError::Unresolved {
            pointer: other.pointer().unwrap_or_default().to_owned(),
            reference: String::new(),
        },
    })?;
    Ok(schema)
}

/// Options of the OpenAI exports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OpenAiOptions {
    /// Strict mode (structured outputs): closed, fully required objects. On by
    /// default. Strict is not compatible with parallel tool calls.
    pub strict: bool,
}

impl Default for OpenAiOptions {
    fn default() -> Self {
        OpenAiOptions { strict: true }
    }
}

/// Options of the Anthropic export.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct AnthropicOptions {
    /// Strict tool use (opt-in): closed objects, no recursion, no bounds.
    pub strict: bool,
    /// Put `cache_control: {"type": "ephemeral"}` on the last tool of a
    /// request, which caches every tool declaration before it.
    pub cache_last: bool,
}

/// Which Gemini field carries the schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum GeminiMode {
    /// `parameters`: the OpenAPI 3.0 subset (references inlined, recursion
    /// refused).
    #[default]
    Parameters,
    /// `parametersJsonSchema`: JSON Schema with `$ref`/`$defs`.
    ParametersJsonSchema,
}

/// Options of the Gemini export.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct GeminiOptions {
    /// Which field carries the schema.
    pub mode: GeminiMode,
}

/// A provider with its options: what one export produces. Equal targets give
/// equal exports, so a target is part of the cache key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExportTarget {
    /// OpenAI Chat Completions.
    OpenAiChat(OpenAiOptions),
    /// OpenAI Responses.
    OpenAiResponses(OpenAiOptions),
    /// Anthropic Messages.
    Anthropic(AnthropicOptions),
    /// Google Gemini.
    Gemini(GeminiOptions),
    /// MCP.
    Mcp,
}

impl ExportTarget {
    /// The provider.
    pub fn provider(self) -> Provider {
        match self {
            ExportTarget::OpenAiChat(_) => Provider::OpenAiChat,
            ExportTarget::OpenAiResponses(_) => Provider::OpenAiResponses,
            ExportTarget::Anthropic(_) => Provider::Anthropic,
            ExportTarget::Gemini(_) => Provider::Gemini,
            ExportTarget::Mcp => Provider::Mcp,
        }
    }

    /// The target with only the options that shape one tool's declaration
    /// (per-request options such as Anthropic's cache marker cleared).
    pub(crate) fn per_tool(self) -> ExportTarget {
        match self {
            ExportTarget::Anthropic(o) => ExportTarget::Anthropic(AnthropicOptions {
                cache_last: false,
                ..o
            }),
            other => other,
        }
    }
}

/// Counts a per-request limit needs, taken once at export.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Usage {
    pub optional_params: usize,
    pub union_params: usize,
}

/// One tool's declaration in a provider's format.
///
/// Serializes as the declaration JSON itself.
#[derive(Debug, Clone, PartialEq)]
pub struct Declaration {
    json: Value,
    usage: Usage,
}

impl Declaration {
    pub(crate) fn new(json: Value, usage: Usage) -> Self {
        Declaration { json, usage }
    }

    /// The declaration JSON.
    pub fn json(&self) -> &Value {
        &self.json
    }

    /// The declaration JSON, owned.
    pub fn into_json(self) -> Value {
        self.json
    }
}

impl Serialize for Declaration {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.json.serialize(serializer)
    }
}

/// Exports one tool's declaration, without caching.
pub fn export_tool(spec: &ToolSpec, target: ExportTarget) -> Result<Declaration, ExportError> {
    let provider = target.provider();
    check_provider_name(provider, spec.name.as_str()).map_err(|reason| {
        ExportError::InvalidName {
            tool: spec.name.to_string(),
            provider,
            reason,
        }
    })?;
    limits::check_description(spec, provider)?;
    let cx = transform::Cx { spec, provider };
    match target {
        ExportTarget::OpenAiChat(o) => openai::chat_declaration(o, &cx),
        ExportTarget::OpenAiResponses(o) => openai::responses_declaration(o, &cx),
        ExportTarget::Anthropic(o) => anthropic::declaration(o, &cx),
        ExportTarget::Gemini(o) => gemini::declaration(o, &cx),
        ExportTarget::Mcp => mcp::declaration(&cx),
    }
}

/// The declarations of one request's tools, and the tools left out.
#[derive(Debug, Clone)]
pub struct ExportedTools {
    /// The target they were exported for.
    pub target: ExportTarget,
    /// The declarations, in the order the specs were given (tools that failed
    /// left out).
    pub declarations: Vec<Arc<Declaration>>,
    /// Why each left-out tool was left out.
    pub errors: Vec<ExportError>,
    /// The request's `tools` value as JSON text, written on first use.
    text: std::sync::OnceLock<Arc<str>>,
}

impl ExportedTools {
    /// The request's `tools` value ([`request_tools`](Self::request_tools))
    /// as JSON text, written once and shared: a toolset kept by
    /// [`ExportCache::export_registry`] costs nothing to send again.
    pub fn request_tools_text(&self) -> Arc<str> {
        Arc::clone(
            self.text
                .get_or_init(|| Arc::from(self.request_tools().to_string())),
        )
    }

    /// The declarations as one JSON array.
    pub fn to_json(&self) -> Value {
        Value::Array(self.declarations.iter().map(|d| d.json.clone()).collect())
    }

    /// The value of the request's `tools` field: the array of declarations,
    /// or for Gemini `[{"functionDeclarations": [...]}]`.
    pub fn request_tools(&self) -> Value {
        match self.target {
            ExportTarget::Gemini(_) => json!([{ "functionDeclarations": self.to_json() }]),
            _ => self.to_json(),
        }
    }
}

/// Exports the declarations of `specs` for one request, without caching (see
/// [`ExportCache::export_declarations`] for the cached form).
///
/// A tool that cannot be exported, or that would break a per-request limit,
/// is left out and reported in [`ExportedTools::errors`].
pub fn export_declarations<'a>(
    target: ExportTarget,
    specs: impl IntoIterator<Item = &'a ToolSpec>,
) -> ExportedTools {
    let per_tool = target.per_tool();
    assemble(
        target,
        specs
            .into_iter()
            .map(|spec| (spec, export_tool(spec, per_tool).map(Arc::new))),
    )
}

/// Anthropic's per-request limits for strict tools.
const ANTHROPIC_MAX_STRICT_TOOLS: usize = 20;
const ANTHROPIC_MAX_OPTIONAL: usize = 24;
const ANTHROPIC_MAX_UNION: usize = 16;

/// Applies the per-request rules to per-tool results.
pub(crate) fn assemble<'a>(
    target: ExportTarget,
    results: impl Iterator<Item = (&'a ToolSpec, Result<Arc<Declaration>, ExportError>)>,
) -> ExportedTools {
    let provider = target.provider();
    let mut out = ExportedTools {
        target,
        declarations: Vec::new(),
        errors: Vec::new(),
        text: std::sync::OnceLock::new(),
    };
    let mut usage = Usage::default();
    for (spec, result) in results {
        let decl = match result {
            Ok(decl) => decl,
            Err(e) => {
                out.errors.push(e);
                continue;
            }
        };
        let refuse = |limit, max| ExportError::RequestLimit {
            tool: spec.name.to_string(),
            provider,
            limit,
            max,
        };
        let n = out.declarations.len() + 1;
        if let Some(max) = limits::max_tools(provider).filter(|max| n > *max) {
            out.errors.push(refuse(Limit::ToolsPerRequest, max));
            continue;
        }
        match target {
            ExportTarget::Anthropic(o) if o.strict => {
                let optional = usage.optional_params + decl.usage.optional_params;
                let union = usage.union_params + decl.usage.union_params;
                let problem = if n > ANTHROPIC_MAX_STRICT_TOOLS {
                    Some((Limit::StrictTools, ANTHROPIC_MAX_STRICT_TOOLS))
                } else if optional > ANTHROPIC_MAX_OPTIONAL {
                    Some((Limit::OptionalParameters, ANTHROPIC_MAX_OPTIONAL))
                } else if union > ANTHROPIC_MAX_UNION {
                    Some((Limit::UnionParameters, ANTHROPIC_MAX_UNION))
                } else {
                    None
                };
                if let Some((limit, max)) = problem {
                    out.errors.push(refuse(limit, max));
                    continue;
                }
                usage.optional_params = optional;
                usage.union_params = union;
            }
            _ => {}
        }
        out.declarations.push(decl);
    }
    if let ExportTarget::Anthropic(o) = target
        && o.cache_last
        && let Some(last) = out.declarations.last_mut()
    {
        let mut marked = Declaration::clone(last);
        if let Value::Object(obj) = &mut marked.json {
            obj.insert("cache_control".into(), json!({"type": "ephemeral"}));
        }
        *last = Arc::new(marked);
    }
    out
}

/// The deepest nesting of arrays and objects the call parsers copy out of a
/// payload as a call's arguments (far above the executor's own default of
/// 64, which then applies). The check is a loop, not recursion, so a value
/// built in memory to any depth is refused with
/// [`CallParseError::TooDeep`] instead of overflowing the stack.
pub const MAX_CALL_ARGUMENT_DEPTH: usize = 128;
