//! Grammars that make invalid calls impossible: for a turn's tools and a
//! [`TextFormat`], what constrained-decoding engines take, so that a model
//! served raw can only write calls the [`TextReader`](super::text::TextReader)
//! reads as valid calls of those tools.
//!
//! | kind | for | what it is |
//! |---|---|---|
//! | [`xgrammar_structural_tag`] | xgrammar, vLLM, SGLang | `{"type": "structural_tag", "format": {...}}`: free text, `triggered_tags` for the calls, `json_schema` for their arguments |
//! | [`lark`] | llguidance (llama.cpp's `%llguidance`, vLLM, SGLang) | a Lark grammar: lazy free text, `%json {...}` per tool's input schema |
//! | [`gbnf`] | llama.cpp | a GBNF grammar with its lazy-grammar triggers and preserved tokens |
//! | [`required_schema`] | any JSON-schema engine | the plain array of calls vLLM constrains `tool_choice: "required"` to |
//!
//! Every grammar is built from the same description the reader reads (the
//! format's markers, its call body and joins). The project's tests check
//! each against the reader with llguidance's matcher over a byte-level
//! token environment, for every built-in format and a tag pair:
//!
//! | kind | how the tests judge it |
//! |---|---|
//! | [`lark`] | llguidance compiles it directly |
//! | [`gbnf`] | translated node for node into llguidance Lark (one lexeme per character); the lazy grammar applied from the trigger that fires first, as llama.cpp does; random sentences expanded from its rules |
//! | [`xgrammar_structural_tag`] | its JSON against a schema of xgrammar's documented format objects and golden files; its meaning by translating each format object into llguidance Lark |
//! | [`required_schema`] | the `jsonschema` crate and llguidance's `%json` |
//!
//! The cases: the calls the reader reads for the tools (each alone and
//! three in parallel, bare, after free text, followed by text, after
//! reasoning) are accepted; arguments the schema refuses (a wrong type,
//! a missing required property, an extra key of a closed object, a value
//! outside its `enum`, an array item of the wrong type, an unknown tool)
//! are refused; outputs written by random walks over the grammar read
//! back as valid calls.
//!
//! What the grammars allow, for every format:
//!
//! - **free text where the reader shows it**: text before, between and
//!   after calls, reasoning (`<think>`...), with no call markup outside a
//!   call; where a format reads a bare call at the output start (Llama 3.x
//!   JSON, a pythonic list), output that begins like one must be one;
//! - **only the turn's tools**, each with its arguments valid against its
//!   input schema, written in the schema's property order (required
//!   properties present, optional ones optional, no others);
//! - **several calls** where the format has several (parallel calls).
//!
//! What no grammar can promise: a model-written call id (Kimi's index,
//! Mistral's `id`) that repeats an earlier one is refused by the reader as
//! [`CallProblem::ReusedId`](crate::stream::CallProblem::ReusedId), fail
//! closed; a raw XML-parameter value that is itself JSON (Qwen3-Coder,
//! GLM) must not hold its format's end marker inside a string; and
//! `%json` and xgrammar's `json_schema` leave JSON numbers unbounded, so a
//! number beyond `f64` (`1e400`) can be written and is then refused as
//! malformed arguments, fail closed (the GBNF grammar bounds numbers).
//! xgrammar's `excludes` of free text hold anywhere in the text, so where
//! a format's calls are joined by a separator without an end marker
//! (Llama 3.x JSON's `;`) free text after the calls may not hold it.
//!
//! A schema an engine cannot express is a [`GrammarError`] naming the tool
//! and the JSON pointer, never a grammar that silently accepts more: GBNF
//! and the Python literals of pythonic calls are converted here (see
//! [`gbnf`] for the subset), while `%json` and xgrammar's `json_schema`
//! take the schema as it is (with `$ref`s inlined), and those engines
//! judge it when they compile it.
//!
//! ```
//! use serde_json::json;
//! use tinyagents_tools::stream::grammar::{self, Grammar};
//! use tinyagents_tools::stream::text::TextFormat;
//! use tinyagents_tools::{ToolSchema, ToolSpec};
//!
//! let weather = ToolSpec::builder("get_weather", "Weather for a city")
//!     .input_schema(ToolSchema::from_value(json!({
//!         "type": "object",
//!         "properties": {"city": {"type": "string"}},
//!         "required": ["city"],
//!         "additionalProperties": false
//!     })))
//!     .build()?;
//! let tools = [weather];
//! let hermes = TextFormat::hermes();
//!
//! let lark = grammar::lark(&hermes, &tools)?;
//! assert!(lark.contains("%json"));
//!
//! let tag = grammar::xgrammar_structural_tag(&hermes, &tools)?;
//! assert_eq!(tag["type"], "structural_tag");
//! assert_eq!(tag["format"]["type"], "triggered_tags");
//!
//! // Reasoning and calls start the lazy grammar.
//! let llama_cpp = grammar::gbnf(&hermes, &tools)?;
//! let words: Vec<&str> = llama_cpp.triggers.iter().map(|t| t.value.as_str()).collect();
//! assert_eq!(words, ["<think>", "<tool_call>"]);
//! assert!(llama_cpp.grammar.contains("root ::="));
//!
//! let required = grammar::required_schema(&tools)?;
//! assert_eq!(required["minItems"], 1);
//!
//! // The same four by name, as text (what `--grammar NAME` prints).
//! let kind: Grammar = "gbnf".parse()?;
//! assert!(kind.text(&hermes, &tools)?.contains("root ::="));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::str::FromStr;

use serde_json::{Value, json};

use super::text::TextFormat;
use crate::spec::ToolSpec;

mod cfg;
mod gbnf;
mod lark;
mod shape;
mod xgrammar;

pub use gbnf::{LazyGbnf, Trigger, TriggerKind};

/// One of the four grammar kinds, by the name the example's `--grammar`
/// takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Grammar {
    /// An xgrammar structural tag ([`xgrammar_structural_tag`]).
    XGrammar,
    /// A Lark grammar for llguidance ([`lark`]).
    Lark,
    /// A GBNF grammar for llama.cpp ([`gbnf`]).
    Gbnf,
    /// The "required" JSON schema ([`required_schema`]).
    Required,
}

impl Grammar {
    /// Every kind, in a fixed order.
    pub const ALL: [Grammar; 4] = [
        Grammar::XGrammar,
        Grammar::Lark,
        Grammar::Gbnf,
        Grammar::Required,
    ];

    /// The kind's name: `xgrammar`, `lark`, `gbnf` or `required`.
    pub fn as_str(self) -> &'static str {
        match self {
            Grammar::XGrammar => "xgrammar",
            Grammar::Lark => "lark",
            Grammar::Gbnf => "gbnf",
            Grammar::Required => "required",
        }
    }

    /// The grammar of this kind for `format` and `tools`, as the text an
    /// engine takes: the structural tag and the required schema as pretty
    /// JSON, the Lark grammar as is, and the GBNF grammar with its
    /// triggers in comments ([`LazyGbnf::text`]). The required schema does
    /// not depend on the format.
    pub fn text<'a>(
        self,
        format: &TextFormat,
        tools: impl IntoIterator<Item = &'a ToolSpec>,
    ) -> Result<String, GrammarError> {
        let pretty = |v: Value| serde_json::to_string_pretty(&v).unwrap_or_default();
        Ok(match self {
            Grammar::XGrammar => pretty(xgrammar_structural_tag(format, tools)?),
            Grammar::Lark => lark(format, tools)?,
            Grammar::Gbnf => gbnf(format, tools)?.text(),
            Grammar::Required => pretty(required_schema(tools)?),
        })
    }
}

impl fmt::Display for Grammar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A grammar name that is not one of [`Grammar::as_str`]'s.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown grammar `{0}`: expected xgrammar, lark, gbnf or required")]
pub struct UnknownGrammar(pub String);

impl FromStr for Grammar {
    type Err = UnknownGrammar;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Grammar::ALL
            .into_iter()
            .find(|g| g.as_str() == name)
            .ok_or_else(|| UnknownGrammar(name.to_owned()))
    }
}

/// Why a grammar could not be built. Each names the grammar kind, and
/// where a tool's schema is the cause, the tool and the JSON pointer into
/// its input schema; nothing is exported for a grammar that fails.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GrammarError {
    /// The schema uses a keyword (or a value of one) the grammar cannot
    /// express exactly.
    #[error(
        "tool `{tool}`: the {grammar} grammar cannot express `{keyword}` at `{pointer}`{}",
        if detail.is_empty() { String::new() } else { format!(" ({detail})") }
    )]
    Unsupported {
        /// The grammar kind.
        grammar: Grammar,
        /// The tool.
        tool: String,
        /// Where in the tool's input schema.
        pointer: String,
        /// The keyword.
        keyword: String,
        /// What about it, when more than the keyword is needed.
        detail: String,
    },
    /// A `$ref` leads back into itself: the schema is recursive.
    #[error(
        "tool `{tool}`: the {grammar} grammar cannot inline the recursive reference `{reference}` at `{pointer}`"
    )]
    Recursion {
        /// The grammar kind.
        grammar: Grammar,
        /// The tool.
        tool: String,
        /// Where the reference is.
        pointer: String,
        /// The reference.
        reference: String,
    },
    /// A `$ref` that points nowhere in the schema.
    #[error("tool `{tool}`: the reference `{reference}` at `{pointer}` resolves to nothing")]
    UnresolvedRef {
        /// The grammar kind.
        grammar: Grammar,
        /// The tool.
        tool: String,
        /// Where the reference is.
        pointer: String,
        /// The reference.
        reference: String,
    },
    /// The input schema's root is not `"type": "object"`.
    #[error("tool `{tool}`: the {grammar} grammar needs an input schema of type object")]
    RootNotObject {
        /// The grammar kind.
        grammar: Grammar,
        /// The tool.
        tool: String,
    },
    /// The format writes a property name or tool name the grammar cannot
    /// place (a pythonic keyword argument that is not an identifier, a
    /// name holding its format's markers).
    #[error(
        "tool `{tool}`: the {grammar} grammar of format `{format}` cannot write the name `{name}`"
    )]
    Name {
        /// The grammar kind.
        grammar: Grammar,
        /// The format.
        format: String,
        /// The tool.
        tool: String,
        /// The name.
        name: String,
    },
    /// A run of calls that has no end marker, whose calls may repeat, and
    /// whose calls do not all end with one character: the grammar has no
    /// way to say where the run ends (xgrammar refuses a repeated tag
    /// content without an end).
    #[error(
        "the {grammar} grammar cannot end the run of calls that starts at `{marker}`: it has no end marker and its calls do not all end with one character"
    )]
    Unbounded {
        /// The grammar kind.
        grammar: Grammar,
        /// The marker that starts the run.
        marker: String,
    },
    /// The required schema needs at least one tool.
    #[error("the required schema needs at least one tool")]
    NoTools,
}

impl GrammarError {
    /// The tool the error is about, when there is one.
    pub fn tool(&self) -> Option<&str> {
        match self {
            GrammarError::Unsupported { tool, .. }
            | GrammarError::Recursion { tool, .. }
            | GrammarError::UnresolvedRef { tool, .. }
            | GrammarError::RootNotObject { tool, .. }
            | GrammarError::Name { tool, .. } => Some(tool),
            GrammarError::Unbounded { .. } | GrammarError::NoTools => None,
        }
    }

    /// The JSON pointer into the tool's input schema, when there is one.
    pub fn pointer(&self) -> Option<&str> {
        match self {
            GrammarError::Unsupported { pointer, .. }
            | GrammarError::Recursion { pointer, .. }
            | GrammarError::UnresolvedRef { pointer, .. } => Some(pointer),
            _ => None,
        }
    }
}

/// An xgrammar structural tag for `format` and `tools`, in the form
/// vLLM's and SGLang's `response_format` take:
/// `{"type": "structural_tag", "format": {...}}`.
///
/// Free text is `triggered_tags` (its triggers are the format's run and
/// reasoning markers), each run a `tag` whose content holds the calls, a
/// call's JSON arguments a `json_schema` (the tool's input schema, `$ref`s
/// inlined), raw XML-parameter values `any_text` up to their end marker,
/// and pythonic values a `grammar` (GBNF, as [`gbnf`] converts them).
pub fn xgrammar_structural_tag<'a>(
    format: &TextFormat,
    tools: impl IntoIterator<Item = &'a ToolSpec>,
) -> Result<Value, GrammarError> {
    let tools = prepare(Grammar::XGrammar, tools)?;
    let shape = shape::Shape::build(Grammar::XGrammar, format, &tools)?;
    xgrammar::render(&shape)
}

/// A Lark grammar for llguidance for `format` and `tools`: free text as
/// lazy lexemes that end at the format's first marker, each call's JSON
/// arguments as `%json {...}` (the tool's input schema, `$ref`s inlined,
/// so properties come in the schema's order), raw XML-parameter values as
/// text up to their end marker, pythonic values as rules. Markers are
/// written as text: give llguidance a tokenizer that produces special
/// tokens as their text when [`TextFormat::special_tokens`] is set.
pub fn lark<'a>(
    format: &TextFormat,
    tools: impl IntoIterator<Item = &'a ToolSpec>,
) -> Result<String, GrammarError> {
    let tools = prepare(Grammar::Lark, tools)?;
    let shape = shape::Shape::build(Grammar::Lark, format, &tools)?;
    lark::render(&shape)
}

/// A lazy GBNF grammar for llama.cpp for `format` and `tools`: the
/// grammar from the first trigger on (llama.cpp leaves the text before it
/// free), the triggers (`grammar_triggers`) and the markers to keep as
/// special tokens (`preserved_tokens`).
///
/// JSON and Python values are converted from the input schema here. The
/// subset: `type` (one or several), `enum`, `const`, `anyOf`, `oneOf`
/// whose branches are provably disjoint, a one-element `allOf`,
/// `properties`/`required`/`additionalProperties` (an object with
/// properties accepts only them, in their order), `items`,
/// `minItems`/`maxItems`, `minLength`/`maxLength`, integer bounds, `$ref`s
/// (inlined) and annotations (`description`, `title`, `default`,
/// `examples`, numeric `format`s). Anything else (`pattern`, string
/// formats, number bounds, `multipleOf`, `patternProperties`,
/// `uniqueItems`, ...) is a [`GrammarError::Unsupported`]. Numbers are
/// written with at most 16 integer and 16 fraction digits and a two-digit
/// exponent, so that every number the grammar allows reads as a finite
/// `f64`; strings use `\uXXXX` only for control characters.
pub fn gbnf<'a>(
    format: &TextFormat,
    tools: impl IntoIterator<Item = &'a ToolSpec>,
) -> Result<LazyGbnf, GrammarError> {
    let tools = prepare(Grammar::Gbnf, tools)?;
    let shape = shape::Shape::build(Grammar::Gbnf, format, &tools)?;
    gbnf::render(&shape)
}

/// The JSON schema vLLM constrains `tool_choice: "required"` to: an array
/// of at least one `{"name": ..., "parameters": ...}` object, `name` the
/// tool's name and `parameters` its input schema (`$ref`s inlined). It is
/// the fallback for engines that take only a JSON schema; it holds no
/// format's markup.
pub fn required_schema<'a>(
    tools: impl IntoIterator<Item = &'a ToolSpec>,
) -> Result<Value, GrammarError> {
    let tools = prepare(Grammar::Required, tools)?;
    if tools.is_empty() {
        return Err(GrammarError::NoTools);
    }
    let items: Vec<Value> = tools
        .iter()
        .map(|t| {
            json!({
                "properties": {
                    "name": {"type": "string", "enum": [t.name]},
                    "parameters": t.schema,
                },
                "required": ["name", "parameters"],
            })
        })
        .collect();
    Ok(json!({
        "type": "array",
        "minItems": 1,
        "items": {"type": "object", "anyOf": items},
    }))
}

/// A tool as the grammars see it: its name and its input schema without
/// root meta, header annotations or `$ref`s.
#[derive(Debug, Clone)]
pub(crate) struct Tool {
    pub name: String,
    pub schema: Value,
}

/// The tools' schemas, ready for a grammar.
fn prepare<'a>(
    grammar: Grammar,
    tools: impl IntoIterator<Item = &'a ToolSpec>,
) -> Result<Vec<Tool>, GrammarError> {
    tools
        .into_iter()
        .map(|spec| {
            let schema = crate::providers::model_facing_schema(spec).map_err(|e| {
                let tool = spec.name.as_str().to_owned();
                match e {
                    crate::providers::InlineError::Recursion { pointer, reference } => {
                        GrammarError::Recursion {
                            grammar,
                            tool,
                            pointer,
                            reference,
                        }
                    }
                    crate::providers::InlineError::Unresolved { pointer, reference } => {
                        GrammarError::UnresolvedRef {
                            grammar,
                            tool,
                            pointer,
                            reference,
                        }
                    }
                }
            })?;
            if schema.get("type") != Some(&json!("object")) {
                return Err(GrammarError::RootNotObject {
                    grammar,
                    tool: spec.name.as_str().to_owned(),
                });
            }
            Ok(Tool {
                name: spec.name.as_str().to_owned(),
                schema,
            })
        })
        .collect()
}
