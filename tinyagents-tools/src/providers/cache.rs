//! [`ExportCache`]: each tool's declaration exported once per provider and
//! options, then shared.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use super::{Declaration, ExportError, ExportTarget, ExportedTools, assemble, export_tool};
use crate::ids::ToolName;
use crate::registry::{RegistryVersion, ToolRegistry};
use crate::spec::ToolSafety;
use crate::spec::ToolSchema;
use crate::spec::ToolSpec;
use crate::tool::Shared;

/// What an export depends on, compared on every lookup: schemas by identity
/// (a clone of a spec shares them), the rest by value.
struct Fingerprint {
    input: ToolSchema,
    output: Option<ToolSchema>,
    description: String,
    title: Option<String>,
    safety: ToolSafety,
    examples: Vec<serde_json::Value>,
}

impl Fingerprint {
    fn of(spec: &ToolSpec) -> Self {
        Fingerprint {
            input: spec.input_schema.clone(),
            output: spec.output_schema.clone(),
            description: spec.description.clone(),
            title: spec.title.clone(),
            safety: spec.safety.clone(),
            examples: spec.examples.clone(),
        }
    }

    fn matches(&self, spec: &ToolSpec) -> bool {
        let output = match (&self.output, &spec.output_schema) {
            (None, None) => true,
            (Some(a), Some(b)) => a.ptr_eq(b),
            _ => false,
        };
        output
            && self.input.ptr_eq(&spec.input_schema)
            && self.description == spec.description
            && self.title == spec.title
            && self.safety == spec.safety
            && self.examples == spec.examples
    }
}

struct Entry {
    fingerprint: Fingerprint,
    result: Result<Arc<Declaration>, ExportError>,
}

/// How often the cache answered from memory and how often it exported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CacheStats {
    /// Lookups answered from the cache.
    pub hits: u64,
    /// Exports actually run (first sight of a tool, target, or changed spec).
    pub misses: u64,
}

/// Declarations (and failures) kept per tool name and [`ExportTarget`].
///
/// A lookup checks that the spec is still the one exported (same schema
/// values by identity, same description, title and safety); a changed spec
/// under the same name is exported again. Safe to share between threads.
#[derive(Default)]
pub struct ExportCache {
    entries: RwLock<HashMap<(ToolName, ExportTarget), Entry>>,
    toolsets: RwLock<HashMap<ToolsetKey, Arc<ExportedTools>>>,
    hits: AtomicU64,
    misses: AtomicU64,
}

/// A registry state, a target, and the advertised names (`None`: all).
type ToolsetKey = (RegistryVersion, ExportTarget, Option<Vec<String>>);

/// How many per-request tool sets are kept before the oldest are forgotten.
const MAX_TOOLSETS: usize = 256;

impl ExportCache {
    /// An empty cache.
    pub fn new() -> Self {
        ExportCache::default()
    }

    /// One tool's declaration for `target`, exported on first use.
    pub fn export(
        &self,
        spec: &ToolSpec,
        target: ExportTarget,
    ) -> Result<Arc<Declaration>, ExportError> {
        let target = target.per_tool();
        let key = (spec.name.clone(), target);
        {
            let entries = self.entries.read().unwrap_or_else(|e| e.into_inner());
            if let Some(entry) = entries.get(&key)
                && entry.fingerprint.matches(spec)
            {
                self.hits.fetch_add(1, Ordering::Relaxed);
                return entry.result.clone();
            }
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        let result = export_tool(spec, target).map(Arc::new);
        let mut entries = self.entries.write().unwrap_or_else(|e| e.into_inner());
        entries.insert(
            key,
            Entry {
                fingerprint: Fingerprint::of(spec),
                result: result.clone(),
            },
        );
        result
    }

    /// The declarations of one request's tools (see
    /// [`export_declarations`](super::export_declarations)), each taken from
    /// the cache when it can be.
    pub fn export_declarations<'a>(
        &self,
        target: ExportTarget,
        specs: impl IntoIterator<Item = &'a ToolSpec>,
    ) -> ExportedTools {
        assemble(
            target,
            specs
                .into_iter()
                .map(|spec| (spec, self.export(spec, target))),
        )
    }

    /// The declarations of every tool of `registry` for `target`, as one
    /// shared value: the first call exports (through the per-tool cache),
    /// later calls for the same registry state and target return the same
    /// `Arc` without touching a single spec. A registration or alias changes
    /// the registry's [`RegistryVersion`], so a changed registry is exported
    /// again.
    pub fn export_registry<S, C>(
        &self,
        target: ExportTarget,
        registry: &ToolRegistry<S, C>,
    ) -> Arc<ExportedTools>
    where
        S: Shared,
        C: Shared,
    {
        self.toolset(target, registry, None)
    }

    /// Like [`export_registry`](Self::export_registry), for the tools named
    /// in `names` only (a turn's advertised set), in registration order.
    pub fn export_selected<S, C>(
        &self,
        target: ExportTarget,
        registry: &ToolRegistry<S, C>,
        names: &[String],
    ) -> Arc<ExportedTools>
    where
        S: Shared,
        C: Shared,
    {
        self.toolset(target, registry, Some(names))
    }

    fn toolset<S, C>(
        &self,
        target: ExportTarget,
        registry: &ToolRegistry<S, C>,
        names: Option<&[String]>,
    ) -> Arc<ExportedTools>
    where
        S: Shared,
        C: Shared,
    {
        let mut selected = names.map(<[String]>::to_vec);
        if let Some(list) = &mut selected {
            list.sort_unstable();
            list.dedup();
        }
        let key = (registry.version(), target, selected);
        if let Some(found) = self
            .toolsets
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
        {
            self.hits.fetch_add(1, Ordering::Relaxed);
            return Arc::clone(found);
        }
        let specs = registry.specs().filter(|spec| {
            key.2.as_ref().is_none_or(|list| {
                list.binary_search_by(|n| n.as_str().cmp(spec.name.as_str()))
                    .is_ok()
            })
        });
        let exported = Arc::new(self.export_declarations(target, specs));
        let mut toolsets = self.toolsets.write().unwrap_or_else(|e| e.into_inner());
        if toolsets.len() >= MAX_TOOLSETS {
            toolsets.clear();
        }
        toolsets.insert(key, Arc::clone(&exported));
        exported
    }

    /// Hit and miss counts since the cache was made.
    pub fn stats(&self) -> CacheStats {
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
        }
    }

    /// The number of cached entries.
    pub fn len(&self) -> usize {
        self.entries.read().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// True when nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Forgets every entry.
    pub fn clear(&self) {
        self.entries
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        self.toolsets
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }
}

impl std::fmt::Debug for ExportCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExportCache")
            .field("entries", &self.len())
            .field("stats", &self.stats())
            .finish()
    }
}
