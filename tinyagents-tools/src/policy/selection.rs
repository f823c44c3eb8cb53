//! Dynamic exposure: which tools are advertised to the model each turn.
//!
//! A [`ToolSelector`] picks, per turn, from the registry: tools that pass its
//! predicates (over the spec and the run), that belong to its groups (tags),
//! and, when ranking is on, the `top_k` most relevant to the request by
//! keyword overlap, plus an always-include list. The executor then refuses
//! calls to tools outside the advertised set.

use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;

use crate::registry::ToolRegistry;
use crate::runtime::RunContext;
use crate::runtime::Turn;
use crate::spec::ToolSpec;
use crate::tool::Shared;

use super::access::{PolicyError, check_names};
use super::add_names;

type Predicate<C> = Arc<dyn Fn(&ToolSpec, &RunContext<C>) -> bool + Send + Sync>;

/// Picks the tools advertised in a turn.
///
/// ```
/// # use std::sync::OnceLock;
/// # use serde_json::Value;
/// # use tinyagents_tools::*;
/// # use tinyagents_tools::policy::ToolSelector;
/// # struct T(ToolSpec);
/// # #[async_trait]
/// # impl Tool for T {
/// #     fn spec(&self) -> &ToolSpec { &self.0 }
/// #     async fn call(&self, _: &(), _: &ToolRuntime, _: Value) -> Result<ToolOutput, ToolError> { unreachable!() }
/// # }
/// let mut registry = ToolRegistry::new();
/// registry.register(T(ToolSpec::builder("get_weather", "Current weather for a city.").build()?))?;
/// registry.register(T(ToolSpec::builder("send_email", "Send an email.").build()?))?;
/// registry.register(T(ToolSpec::builder("help", "Explain what you can do.").build()?))?;
///
/// let selector = ToolSelector::builder()
///     .rank_by_relevance(1)
///     .always_include(["help"])
///     .build(&registry)?;
/// let picked = selector.select(&registry, &RunContext::empty(), "what's the weather in Oslo?");
/// assert_eq!(picked, ["get_weather", "help"]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct ToolSelector<C = ()> {
    predicates: Vec<Predicate<C>>,
    groups: Option<BTreeSet<String>>,
    top_k: Option<usize>,
    always: BTreeSet<String>,
}

impl<C> Clone for ToolSelector<C> {
    fn clone(&self) -> Self {
        ToolSelector {
            predicates: self.predicates.clone(),
            groups: self.groups.clone(),
            top_k: self.top_k,
            always: self.always.clone(),
        }
    }
}

impl<C> fmt::Debug for ToolSelector<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolSelector")
            .field("predicates", &self.predicates.len())
            .field("groups", &self.groups)
            .field("top_k", &self.top_k)
            .field("always", &self.always)
            .finish()
    }
}

impl<C: Shared> ToolSelector<C> {
    /// Starts a selector that advertises everything.
    pub fn builder() -> ToolSelectorBuilder<C> {
        ToolSelectorBuilder {
            selector: ToolSelector {
                predicates: Vec::new(),
                groups: None,
                top_k: None,
                always: BTreeSet::new(),
            },
        }
    }

    /// The names advertised this turn, in registration order.
    pub fn select<S: Shared>(
        &self,
        registry: &ToolRegistry<S, C>,
        run: &RunContext<C>,
        request: &str,
    ) -> Vec<String> {
        let eligible: Vec<&ToolSpec> = registry
            .specs()
            .filter(|spec| {
                self.predicates.iter().all(|p| p(spec, run))
                    && self
                        .groups
                        .as_ref()
                        .is_none_or(|g| spec.tags.iter().any(|t| g.contains(t)))
            })
            .collect();
        let mut chosen: BTreeSet<&str> = match self.top_k {
            None => eligible.iter().map(|s| s.name.as_str()).collect(),
            Some(k) => {
                let words = keywords(request);
                let mut scored: Vec<(usize, usize, &str)> = eligible
                    .iter()
                    .enumerate()
                    .map(|(i, spec)| (relevance(spec, &words), i, spec.name.as_str()))
                    .filter(|(score, _, _)| *score > 0)
                    .collect();
                // Highest score first; registration order breaks ties.
                scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
                scored.into_iter().take(k).map(|(_, _, n)| n).collect()
            }
        };
        chosen.extend(self.always.iter().map(String::as_str));
        registry
            .names()
            .filter(|n| chosen.contains(n))
            .map(str::to_owned)
            .collect()
    }
}

impl<C: Shared> ToolSelector<C> {
    /// The [`Turn`] number `index` advertising what [`select`](Self::select)
    /// picks: the executor refuses calls to any other tool in that turn.
    pub fn turn<S: Shared>(
        &self,
        registry: &ToolRegistry<S, C>,
        run: &RunContext<C>,
        request: &str,
        index: u32,
    ) -> Turn {
        Turn::new(index).advertising(self.select(registry, run, request))
    }
}

/// Builds a [`ToolSelector`].
pub struct ToolSelectorBuilder<C> {
    selector: ToolSelector<C>,
}

impl<C: Shared> ToolSelectorBuilder<C> {
    /// Advertises only tools for which `predicate(spec, run)` holds (several
    /// predicates must all hold).
    pub fn filter(
        mut self,
        predicate: impl Fn(&ToolSpec, &RunContext<C>) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.selector.predicates.push(Arc::new(predicate));
        self
    }

    /// Advertises only tools tagged with one of `groups`.
    pub fn groups(mut self, groups: impl IntoIterator<Item = impl Into<String>>) -> Self {
        add_names(&mut self.selector.groups, groups);
        self
    }

    /// Advertises at most `top_k` tools, the most relevant to the request by
    /// keyword overlap with name, description and tags (tools with no overlap
    /// are left out).
    pub fn rank_by_relevance(mut self, top_k: usize) -> Self {
        self.selector.top_k = Some(top_k);
        self
    }

    /// Always advertises these tools, whatever the other rules say.
    pub fn always_include(mut self, names: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.selector
            .always
            .extend(names.into_iter().map(Into::into));
        self
    }

    /// Checks the always-include names against the registry and builds.
    pub fn build<S: Shared>(
        self,
        registry: &ToolRegistry<S, C>,
    ) -> Result<ToolSelector<C>, PolicyError> {
        let known: Vec<&str> = registry.names().collect();
        check_names(
            "always_include",
            self.selector.always.iter().map(String::as_str),
            &known,
        )?;
        if self.selector.top_k == Some(0) {
            return Err(PolicyError::Invalid {
                policy: "rank_by_relevance",
                message: "top_k must be at least 1".into(),
            });
        }
        Ok(self.selector)
    }
}

const STOP_WORDS: &[&str] = &[
    "the", "and", "for", "with", "what", "whats", "this", "that", "from", "into", "you", "your",
    "are", "can", "please", "how", "who", "when", "where", "which", "about", "some", "give",
    "tell",
];

/// Lower-case words of three letters or more, stop words removed.
fn keywords(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .filter(|w| w.chars().count() >= 3 && !STOP_WORDS.contains(&w.as_str()))
        .collect()
}

/// Name matches weigh 3, tag matches 2, description matches 1; a word matches
/// a token that starts with it or that it starts with (weather ~ weathers).
fn relevance(spec: &ToolSpec, words: &BTreeSet<String>) -> usize {
    let matches = |token: &str, word: &str| token.starts_with(word) || word.starts_with(token);
    let name_tokens = keywords(&spec.name.as_str().replace('_', " "));
    let tag_tokens: BTreeSet<String> = spec.tags.iter().flat_map(|t| keywords(t)).collect();
    let desc_tokens = keywords(&spec.description);
    words
        .iter()
        .map(|w| {
            let in_set = |set: &BTreeSet<String>| set.iter().any(|t| matches(t, w));
            3 * usize::from(in_set(&name_tokens))
                + 2 * usize::from(in_set(&tag_tokens))
                + usize::from(in_set(&desc_tokens))
        })
        .sum()
}
