//! [`SequentialIds`]: ids numbered in order, for tests that name them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::ids::IdSource;
use crate::util::sync::lock;

/// An id source that numbers the ids of each prefix from 0: `run-0`,
/// `thread-0`, `note-0`, `note-1`, ... Give it to a run
/// ([`RunContextBuilder::ids`](crate::runtime::RunContextBuilder::ids) or
/// [`ToolHarnessBuilder::ids`](super::ToolHarnessBuilder::ids)): the run's
/// generated ids and the ids its tools make with
/// [`Ids`](crate::runtime::Ids) come from it. Clones share the counters.
///
/// The numbers follow the order ids are asked for, and are not kept in a
/// journal: a call delivered again makes the next ones.
///
/// ```
/// use tinyagents_tools::ids::IdSource;
/// use tinyagents_tools::testkit::SequentialIds;
///
/// let ids = SequentialIds::new();
/// assert_eq!(ids.next_id("note"), "note-0");
/// assert_eq!(ids.next_id("note"), "note-1");
/// assert_eq!(ids.next_id("run"), "run-0");
/// ```
#[derive(Debug, Clone, Default)]
pub struct SequentialIds {
    next: Arc<Mutex<HashMap<String, u64>>>,
}

impl SequentialIds {
    /// Counters at 0 for every prefix.
    pub fn new() -> Self {
        SequentialIds::default()
    }
}

impl IdSource for SequentialIds {
    fn next_id(&self, prefix: &str) -> String {
        let mut next = lock(&self.next);
        let n = next.entry(prefix.to_owned()).or_insert(0);
        let id = format!("{prefix}-{n}");
        *n += 1;
        id
    }
}
