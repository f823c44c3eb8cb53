//! [`Turn`]: one model turn, with the tools advertised in it and its call
//! counter.

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

use crate::runtime::limits::CallCounter;

/// One model turn: which tools were advertised to the model, and how many
/// calls it has made.
///
/// Build one per turn (after exposure or selection decides what the model
/// sees) and pass it to every `execute` of that turn; clones share the same
/// counter. A call to a tool that was not advertised is refused with
/// `not_advertised`, even if the tool is registered.
///
/// ```
/// use tinyagents_tools::Turn;
/// let turn = Turn::new(3).advertising(["search_docs"]);
/// assert!(turn.advertises("search_docs"));
/// assert!(!turn.advertises("delete_repo"));
/// assert!(Turn::new(0).advertises("anything"));
/// ```
#[derive(Clone, Default)]
pub struct Turn {
    index: u32,
    advertised: Option<Arc<HashSet<String>>>,
    calls: Arc<CallCounter>,
}

impl Turn {
    /// Turn number `index` in which every registered tool was advertised.
    pub fn new(index: u32) -> Self {
        Turn {
            index,
            advertised: None,
            calls: Arc::default(),
        }
    }

    /// Restricts the turn to the tools named (canonical names).
    pub fn advertising(mut self, names: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.advertised = Some(Arc::new(names.into_iter().map(Into::into).collect()));
        self
    }

    /// The turn number.
    pub fn index(&self) -> u32 {
        self.index
    }

    /// The advertised tool names, or `None` when every tool was advertised.
    pub fn advertised(&self) -> Option<&HashSet<String>> {
        self.advertised.as_deref()
    }

    /// True when the tool `name` (canonical) was advertised this turn.
    pub fn advertises(&self, name: &str) -> bool {
        self.advertised
            .as_ref()
            .is_none_or(|set| set.contains(name))
    }

    /// Calls admitted in this turn so far.
    pub fn calls(&self) -> u32 {
        self.calls.get()
    }

    pub(crate) fn counter(&self) -> &CallCounter {
        &self.calls
    }
}

impl fmt::Debug for Turn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Turn")
            .field("index", &self.index)
            .field("advertised", &self.advertised)
            .field("calls", &self.calls())
            .finish()
    }
}
