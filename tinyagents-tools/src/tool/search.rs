//! [`ToolSearch`]: the built-in `search_tools` tool, deferred tools for the
//! providers without a tool search of their own.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{Value, json};

use crate::error::{ArgumentProblem, ToolError};
use crate::output::ToolOutput;
use crate::spec::ToolSafety;
use crate::spec::ToolSchema;
use crate::spec::ToolSpec;
use crate::tool::CallResult;
use crate::tool::answered_at_once;
use crate::util::sync::lock;

/// One deferred tool as the search sees it.
#[derive(Debug, Clone)]
struct Entry {
    name: String,
    description: String,
    name_words: Vec<String>,
    tags: Vec<String>,
    description_words: BTreeSet<String>,
}

/// The built-in `search_tools` tool over a fixed set of deferred tools, for
/// the providers without a tool search of their own. Calls from any number
/// of runs share its enabled set; build one per conversation when
/// conversations must not share what they found.
///
/// A deferred tool is left out of a request's `tools` until the model asks
/// for it. OpenAI Responses and Anthropic search deferred tools themselves
/// (`defer_loading`: [`providers::request_tools_deferred`](crate::providers::request_tools_deferred)).
/// For the others, register a [`ToolSearch`] over the deferred specs and
/// advertise it: the model calls `search_tools` with a query, gets the best
/// matches (name and description), and the tools found are *enabled*: the
/// application adds [`ToolSearch::enabled`] to the next turn's tools (and to
/// [`Turn::advertising`](crate::Turn::advertising), so the executor admits
/// them).
///
/// # Ranking
///
/// The query and each tool's name, tags and description are split into
/// lowercase words (runs of letters and digits; a name's `_`, `-`, `.` and
/// `:` separate words too). Each query word scores, per deferred tool:
/// 3 when it is a word of the name, 2 when it is one of the tool's tags
/// (case-insensitive), 1 when it is a word of the description; a query that
/// is the tool's whole name scores 10 more. Tools scoring 0 are not
/// returned; the others come best first, ties by name, at most
/// [`ToolSearch::limit`] (5 by default).
///
/// ```
/// use tinyagents_tools::prelude::*;
/// use tinyagents_tools::tool::ToolSearch;
///
/// let refund = ToolSpec::builder("issue_refund", "Refund an order to the card it was paid with.")
///     .tag("billing")
///     .build()?;
/// let search = ToolSearch::new([&refund]);
/// assert_eq!(search.rank("refund an order"), ["issue_refund"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct ToolSearch {
    entries: Vec<Entry>,
    limit: usize,
    enabled: Mutex<BTreeSet<String>>,
}

/// Lowercase words of `text`: runs of letters and digits.
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

impl ToolSearch {
    /// The tool's name.
    pub const NAME: &'static str = "search_tools";

    /// A search over `deferred` (the specs of the tools left out of the
    /// requests until found), returning at most 5 tools a call.
    pub fn new<'a>(deferred: impl IntoIterator<Item = &'a ToolSpec>) -> Arc<Self> {
        Arc::new(Self::build(deferred, 5))
    }

    /// [`ToolSearch::new`] returning at most `limit` tools a call (at least
    /// one).
    pub fn with_limit<'a>(
        deferred: impl IntoIterator<Item = &'a ToolSpec>,
        limit: usize,
    ) -> Arc<Self> {
        Arc::new(Self::build(deferred, limit.max(1)))
    }

    fn build<'a>(deferred: impl IntoIterator<Item = &'a ToolSpec>, limit: usize) -> Self {
        let entries = deferred
            .into_iter()
            .map(|spec| Entry {
                name: spec.name.to_string(),
                description: spec.description.clone(),
                name_words: words(spec.name.as_str()).collect(),
                tags: spec.tags.iter().map(|t| t.to_lowercase()).collect(),
                description_words: words(&spec.description).collect(),
            })
            .collect();
        ToolSearch {
            entries,
            limit,
            enabled: Mutex::new(BTreeSet::new()),
        }
    }

    /// The most tools one call returns.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// The names of the deferred tools matching `query`, best first (at most
    /// [`limit`](Self::limit)); enables nothing.
    pub fn rank(&self, query: &str) -> Vec<&str> {
        let query_words: Vec<String> = words(query).collect();
        let whole = query.trim().to_lowercase();
        let mut scored: Vec<(u32, &str)> = self
            .entries
            .iter()
            .map(|e| {
                let mut score = 0;
                for w in &query_words {
                    if e.name_words.contains(w) {
                        score += 3;
                    }
                    if e.tags.contains(w) {
                        score += 2;
                    }
                    if e.description_words.contains(w) {
                        score += 1;
                    }
                }
                if whole == e.name.to_lowercase() {
                    score += 10;
                }
                (score, e.name.as_str())
            })
            .filter(|(score, _)| *score > 0)
            .collect();
        scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
        scored.truncate(self.limit);
        scored.into_iter().map(|(_, name)| name).collect()
    }

    /// The deferred tools found so far, by name: add them to the next
    /// turn's exported and advertised tools.
    pub fn enabled(&self) -> Vec<String> {
        let enabled = lock(&self.enabled);
        enabled.iter().cloned().collect()
    }

    /// One call: the matches, which become enabled.
    fn answer(&self, arguments: &Value) -> CallResult {
        let query = arguments
            .get("query")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                ToolError::invalid_arguments(vec![ArgumentProblem::new("/query", "is required")])
            })?;
        let found = self.rank(query);
        let mut enabled = lock(&self.enabled);
        let tools: Vec<Value> = found
            .iter()
            .filter_map(|name| self.entries.iter().find(|e| e.name == *name))
            .map(|e| {
                enabled.insert(e.name.clone());
                json!({"name": e.name, "description": e.description})
            })
            .collect();
        let note = if tools.is_empty() {
            "No tool matches; try other words."
        } else {
            "These tools are available from the next turn on."
        };
        Ok(ToolOutput::structured(
            json!({"tools": tools, "note": note}),
        ))
    }
}

fn spec() -> &'static ToolSpec {
    static SPEC: OnceLock<ToolSpec> = OnceLock::new();
    SPEC.get_or_init(|| {
        ToolSpec::builder(
            ToolSearch::NAME,
            "Find more tools by what they do; the tools found can be called from the next turn on.",
        )
        .input_schema(ToolSchema::from_value(json!({
            "type": "object",
            "properties": {"query": {
                "type": "string",
                "description": "Words describing the task, e.g. \"refund an order\"."
            }},
            "required": ["query"],
            "additionalProperties": false
        })))
        .safety(ToolSafety::pure())
        .build()
        .expect("the built-in spec follows every spec rule")
    })
}

answered_at_once!(ToolSearch, spec: spec(), answer: ToolSearch::answer);
