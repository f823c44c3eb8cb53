//! [`ToolRegistry`]: the tools an executor may run, checked once at
//! registration.
//!
//! Registration refuses, with a typed [`RegistryError`]: a duplicate name
//! (never a silent replace), an input schema whose root is not an object, a
//! schema that exposes an injected parameter's name, a schema that does not
//! compile, a tool that declares `workspace` but takes no workspace path, a
//! tool that turns secret redaction off without opting in explicitly, and
//! aliases that break the provider name rule or collide. Names
//! themselves are checked when the spec is built ([`crate::ids::ToolName`]), so a
//! registry can never hold one a provider would refuse. Each input schema is
//! compiled into a validator here, once (schemas of one registry that differ
//! only in annotations such as `description` share one validator); iteration
//! follows registration order.

use std::fmt;
use std::sync::Arc;

use crate::error::ToolError;
use crate::ids::NameError;
use crate::output::ToolOutput;
use crate::registry::validation::{InputValidator, OutputValidator, ValidatorCache};
use crate::spec::ToolSpec;
use crate::spec::schema::has_workspace_path;
use crate::tool::Shared;
use crate::tool::Tool;
use crate::tool::service::ToolService;
use crate::util::fasthash::NameMap;
use crate::util::names::same_name;

#[cfg(feature = "collect")]
pub(crate) mod collect;
mod error;
mod examples;
pub(crate) mod toolset;
pub(crate) mod validation;

pub use error::RegistryError;
pub use toolset::Toolset;

/// A registered tool with its compiled validators.
pub struct RegisteredTool<S = (), C = ()> {
    tool: Arc<dyn Tool<S, C>>,
    input: InputValidator,
    output: Option<OutputValidator>,
    origin: Option<Arc<str>>,
    index: usize,
    /// The spec's [`takes_draw`](ToolSpec::takes_draw), read once.
    takes_draw: bool,
}

impl<S: Shared, C: Shared> RegisteredTool<S, C> {
    /// The tool.
    pub fn tool(&self) -> &Arc<dyn Tool<S, C>> {
        &self.tool
    }

    /// The tool's spec.
    pub fn spec(&self) -> &ToolSpec {
        self.tool.spec()
    }

    /// True when the tool takes what its call is given
    /// ([`ToolSpec::takes_draw`]).
    pub fn takes_draw(&self) -> bool {
        self.takes_draw
    }

    /// Checks a successful output against the tool's output schema, when
    /// it declares one: its structured value (`null` when it has none) must
    /// match, or the call fails with [`ErrorKind::InvalidOutput`](crate::error::ErrorKind::InvalidOutput)
    /// (a fatal tool fault; the mismatches are in the error's source, never
    /// in its message). The executor runs this on every successful call,
    /// before redaction and bounding.
    pub fn check_output(&self, output: &ToolOutput) -> Result<(), ToolError> {
        match &self.output {
            Some(validator) => validator.check(output),
            None => Ok(()),
        }
    }

    /// The input check the executor runs.
    pub(crate) fn input(&self) -> &InputValidator {
        &self.input
    }

    /// Where the tool came from when it was registered through a
    /// [`Toolset`] (`toolset \`github\` (tool \`search\`)`);
    /// `None` for a tool registered directly.
    pub fn origin(&self) -> Option<&str> {
        self.origin.as_deref()
    }

    /// The position in registration order.
    pub(crate) fn index(&self) -> usize {
        self.index
    }
}

impl<S: Shared, C: Shared> fmt::Debug for RegisteredTool<S, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegisteredTool")
            .field("name", &self.spec().name)
            .finish_non_exhaustive()
    }
}

pub use crate::registry::validation::SchemaError;
#[cfg(feature = "json-schema-full")]
pub use crate::registry::validation::compile_schema;

/// Up to how many tools a name is looked for by comparing it with each
/// registered name instead of by its hash.
const SCANNED_NAMES: usize = 8;

/// The tools an executor may run, by canonical name and by alias.
///
/// ```
/// # use std::sync::OnceLock;
/// # use serde_json::Value;
/// # use tinyagents_tools::*;
/// # struct Ping;
/// # #[async_trait]
/// # impl Tool for Ping {
/// #     fn spec(&self) -> &ToolSpec {
/// #         static S: OnceLock<ToolSpec> = OnceLock::new();
/// #         S.get_or_init(|| ToolSpec::builder("ping", "Answer pong.").build().unwrap())
/// #     }
/// #     async fn call(&self, _: &(), _: &ToolRuntime, _: Value) -> Result<ToolOutput, ToolError> {
/// #         Ok(ToolOutput::text("pong"))
/// #     }
/// # }
/// let mut registry = ToolRegistry::new();
/// registry.register(Ping)?;
/// assert!(registry.register(Ping).is_err()); // never a silent replace
/// assert_eq!(registry.names().collect::<Vec<_>>(), ["ping"]);
/// # Ok::<(), RegistryError>(())
/// ```
pub struct ToolRegistry<S = (), C = ()> {
    tools: Vec<Arc<RegisteredTool<S, C>>>,
    /// The canonical name of each tool, in the order of `tools` (a few are
    /// looked through in line faster than hashed).
    names: Vec<Arc<str>>,
    by_name: NameMap<Arc<str>, usize>,
    aliases: NameMap<String, usize>,
    version: RegistryVersion,
    /// Validators compiled so far, shared by schemas that differ only in
    /// annotations.
    validators: ValidatorCache,
}

/// Identifies one registry in one state: a process-unique id, and a
/// generation that every registration or alias changes. Equal versions mean
/// the same tools with the same specs, so work derived from a registry (its
/// exported declarations) can be cached by version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RegistryVersion {
    /// The registry's id.
    pub id: u64,
    /// How many times it changed.
    pub generation: u64,
}

impl<S, C> Default for ToolRegistry<S, C> {
    fn default() -> Self {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        ToolRegistry {
            tools: Vec::new(),
            names: Vec::new(),
            by_name: NameMap::default(),
            aliases: NameMap::default(),
            version: RegistryVersion {
                id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
                generation: 0,
            },
            validators: ValidatorCache::default(),
        }
    }
}

impl ToolRegistry {
    /// An empty registry for tools without application state or run
    /// context value (`ToolRegistry<(), ()>`), so `ToolRegistry::new()`
    /// needs no type annotation. For tools with a state or context type,
    /// start from [`ToolRegistry::default()`] (the types are then inferred
    /// from the tools or the executor) or name them:
    /// `ToolRegistry::<AppState, Session>::default()`.
    pub fn new() -> Self {
        ToolRegistry::default()
    }
}

impl<S: Shared, C: Shared> ToolRegistry<S, C> {
    /// Registers a tool (an `Arc<T>` of one, to keep a handle on it).
    pub fn register(&mut self, tool: impl Tool<S, C>) -> Result<&mut Self, RegistryError> {
        self.register_from(Arc::new(tool), None)
    }

    /// Registers every tool of `service` (each `#[tool]` method of its
    /// `#[tools]` blocks), all sharing the one instance. All or nothing: when
    /// one of them is refused, none stays registered, the registry keeps its
    /// [`version`](Self::version), and the error is that tool's.
    pub fn register_service<T: ToolService<S, C>>(
        &mut self,
        service: Arc<T>,
    ) -> Result<&mut Self, RegistryError> {
        let (before, version) = (self.tools.len(), self.version);
        for tool in T::tools(&service) {
            if let Err(err) = self.register_from(tool, None) {
                for added in self.tools.drain(before..) {
                    self.by_name.remove(added.spec().name.as_str());
                }
                self.names.truncate(before);
                // The same tools again: the same version, so work cached
                // for it stays valid.
                self.version = version;
                return Err(err);
            }
        }
        Ok(self)
    }

    /// Registers `tool`, remembering its `origin` (a toolset's description
    /// of it); a name already taken is a [`RegistryError::Collision`] naming
    /// both origins when either has one.
    pub(crate) fn register_from(
        &mut self,
        tool: Arc<dyn Tool<S, C>>,
        origin: Option<Arc<str>>,
    ) -> Result<&mut Self, RegistryError> {
        let spec = tool.spec();
        let name = spec.name.as_str();
        if let Some(&held) = self.by_name.get(name).or_else(|| self.aliases.get(name)) {
            let first = self.tools[held].origin.clone();
            return Err(match (first, &origin) {
                (None, None) => RegistryError::Duplicate {
                    name: name.to_owned(),
                },
                (first, second) => RegistryError::Collision {
                    name: name.to_owned(),
                    first: first.map_or_else(
                        || "a tool registered directly".to_owned(),
                        |o| o.to_string(),
                    ),
                    second: second
                        .as_deref()
                        .unwrap_or("a tool registered directly")
                        .to_owned(),
                },
            });
        }
        if !spec.input_schema.is_object_root() {
            return Err(RegistryError::SchemaRootNotObject {
                tool: name.to_owned(),
            });
        }
        if let Some(arg) = spec.injected.iter().find(|arg| {
            spec.input_schema
                .property_names()
                .any(|p| p == arg.name.as_str())
        }) {
            return Err(RegistryError::SchemaExposesInjected {
                tool: name.to_owned(),
                argument: arg.name.clone(),
            });
        }
        if spec.safety.workspace && !has_workspace_path(spec.input_schema.as_value()) {
            return Err(RegistryError::WorkspaceWithoutPath {
                tool: name.to_owned(),
            });
        }
        if !spec.safety.redaction.secrets && !spec.safety.unredacted_secrets {
            return Err(RegistryError::UnredactedSecrets {
                tool: name.to_owned(),
            });
        }
        let input =
            InputValidator::compile_with(spec.input_schema.as_value(), &mut self.validators)
                .map_err(|problem| RegistryError::InvalidSchema {
                    tool: name.to_owned(),
                    problem,
                })?;
        examples::check_examples(spec, &input)?;
        let output = match &spec.output_schema {
            Some(schema) => Some(
                OutputValidator::compile(schema.as_value(), &mut self.validators).map_err(
                    |problem| RegistryError::InvalidOutputSchema {
                        tool: name.to_owned(),
                        problem,
                    },
                )?,
            ),
            None => None,
        };
        let index = self.tools.len();
        self.version.generation += 1;
        let canonical = Arc::<str>::from(name);
        self.by_name.insert(Arc::clone(&canonical), index);
        self.names.push(canonical);
        let takes_draw = spec.takes_draw();
        self.tools.push(Arc::new(RegisteredTool {
            tool,
            input,
            output,
            origin,
            index,
            takes_draw,
        }));
        Ok(self)
    }

    /// Adds `alias` as another name for the registered tool `tool` (for a
    /// provider that needs a different spelling). Aliases follow the
    /// providers' common rule (`[A-Za-z0-9_-]`, 1 to 64) and never collide
    /// with a name or another alias.
    pub fn add_alias(
        &mut self,
        tool: &str,
        alias: impl Into<String>,
    ) -> Result<&mut Self, RegistryError> {
        let alias = alias.into();
        check_alias(&alias)?;
        let Some(&index) = self.by_name.get(tool) else {
            return Err(RegistryError::UnknownTool {
                alias,
                tool: tool.to_owned(),
            });
        };
        if self.by_name.contains_key(alias.as_str()) || self.aliases.contains_key(&alias) {
            return Err(RegistryError::Duplicate { name: alias });
        }
        self.aliases.insert(alias, index);
        self.version.generation += 1;
        Ok(self)
    }

    /// The tool with canonical name `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<RegisteredTool<S, C>>> {
        // A few names are compared in line, with no hash: the same answer,
        // as `names` holds the keys of `by_name` at their indices.
        if self.names.len() <= SCANNED_NAMES {
            let index = self.names.iter().position(|n| same_name(n, name))?;
            return Some(&self.tools[index]);
        }
        self.by_name.get(name).map(|&i| &self.tools[i])
    }

    /// The tool a model called by `name`: a canonical name or an alias.
    pub fn resolve(&self, name: &str) -> Option<&Arc<RegisteredTool<S, C>>> {
        self.get(name)
            .or_else(|| self.aliases.get(name).map(|&i| &self.tools[i]))
    }

    /// The canonical name closest to `name` among those `offered` accepts,
    /// when one is close enough to be a likely misspelling (a normalized
    /// Damerau-Levenshtein similarity of at least 0.7, or the same name in
    /// another case); `None` otherwise, and for names longer than 128 bytes.
    pub fn closest_name(&self, name: &str, offered: impl Fn(&str) -> bool) -> Option<&str> {
        if name.len() > 128 {
            return None;
        }
        let lower = name.to_ascii_lowercase();
        self.names()
            .filter(|candidate| offered(candidate))
            .map(|candidate| {
                let score = if candidate.eq_ignore_ascii_case(name) {
                    1.0
                } else {
                    strsim::normalized_damerau_levenshtein(&lower, &candidate.to_ascii_lowercase())
                };
                (score, candidate)
            })
            .filter(|(score, _)| *score >= 0.7)
            .max_by(|a, b| a.0.total_cmp(&b.0))
            .map(|(_, candidate)| candidate)
    }

    /// The aliases of the tool `name`, sorted.
    pub fn aliases_of(&self, name: &str) -> Vec<&str> {
        let Some(&index) = self.by_name.get(name) else {
            return Vec::new();
        };
        let mut out: Vec<&str> = self
            .aliases
            .iter()
            .filter(|(_, i)| **i == index)
            .map(|(a, _)| a.as_str())
            .collect();
        out.sort_unstable();
        out
    }

    /// Every tool, in registration order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &Arc<RegisteredTool<S, C>>> {
        self.tools.iter()
    }

    /// Every spec, in registration order.
    pub fn specs(&self) -> impl ExactSizeIterator<Item = &ToolSpec> {
        self.tools.iter().map(|t| t.spec())
    }

    /// Every canonical name, in registration order.
    pub fn names(&self) -> impl ExactSizeIterator<Item = &str> {
        self.tools.iter().map(|t| t.spec().name.as_str())
    }

    /// The registry's identity and state (see [`RegistryVersion`]).
    pub fn version(&self) -> RegistryVersion {
        self.version
    }

    /// The number of tools.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// True when no tool is registered.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

impl<S: Shared, C: Shared> fmt::Debug for ToolRegistry<S, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolRegistry")
            .field("tools", &self.names().collect::<Vec<_>>())
            .field("aliases", &self.aliases.len())
            .finish()
    }
}

fn check_alias(alias: &str) -> Result<(), RegistryError> {
    let err = |reason| RegistryError::InvalidName {
        name: alias.to_owned(),
        reason,
    };
    if alias.is_empty() {
        return Err(err(NameError::Empty));
    }
    for ch in alias.chars() {
        if ch.is_whitespace() {
            return Err(err(NameError::Whitespace));
        }
        if !ch.is_ascii() {
            return Err(err(NameError::NonAscii));
        }
        if !(ch.is_ascii_alphanumeric() || ch == '_' || ch == '-') {
            return Err(err(NameError::InvalidChar { ch }));
        }
    }
    if alias.len() > crate::ids::MAX_NAME_LEN {
        return Err(err(NameError::TooLong { len: alias.len() }));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use async_trait::async_trait;
    use serde_json::Value;

    use super::*;
    use crate::runtime::ToolRuntime;
    use crate::spec::ToolSafety;
    use crate::tool::CallResult;

    struct Named(ToolSpec);

    #[async_trait]
    impl Tool for Named {
        fn spec(&self) -> &ToolSpec {
            &self.0
        }

        async fn call(&self, _: &(), _: &ToolRuntime, _: Value) -> CallResult {
            Ok(ToolOutput::text("ok"))
        }
    }

    fn named(name: &str) -> Named {
        let spec = ToolSpec::builder(name, "A tool.")
            .safety(ToolSafety::pure())
            .build()
            .unwrap();
        Named(spec)
    }

    #[test]
    fn a_name_is_found_alike_by_comparison_and_by_hash() {
        // Registries on both sides of the in-line bound, with names that
        // share prefixes and lengths; every lookup agrees with the hash map.
        let names = [
            "add",
            "adds",
            "ad",
            "sub",
            "search_files",
            "search_filez",
            "read_file_contents_now",
            "read_file_contents_nov",
            "x",
            "y",
            "mul",
            "div",
        ];
        let probes = [
            "",
            "a",
            "add",
            "ADD",
            "add ",
            "adds",
            "search_files",
            "read_file_contents",
            "read_file_contents_now",
            "read_file_contents_nox",
            "y",
            "z",
            "div",
            "mod",
        ];
        for count in 0..=names.len() {
            let mut registry = ToolRegistry::new();
            for name in &names[..count] {
                registry.register(named(name)).unwrap();
            }
            assert_eq!(registry.names.len(), count);
            for probe in probes.iter().chain(&names) {
                let hashed = registry.by_name.get(*probe).copied();
                let found = registry.get(probe).map(|t| t.index);
                assert_eq!(found, hashed, "{probe} among {count}");
                if let Some(tool) = registry.get(probe) {
                    assert_eq!(tool.spec().name.as_str(), *probe);
                }
            }
        }
    }

    #[test]
    fn an_alias_is_resolved_and_a_refused_tool_leaves_no_name() {
        let mut registry = ToolRegistry::new();
        registry.register(named("add")).unwrap();
        registry.add_alias("add", "plus").unwrap();
        assert!(registry.register(named("add")).is_err());
        assert_eq!(registry.names.len(), 1);
        assert!(
            registry.get("plus").is_none(),
            "an alias is not a canonical name"
        );
        assert_eq!(
            registry.resolve("plus").unwrap().spec().name.as_str(),
            "add"
        );
        assert_eq!(registry.resolve("add").unwrap().index, 0);
        assert!(registry.resolve("minus").is_none());
    }
}
