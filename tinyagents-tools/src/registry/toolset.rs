//! [`Toolset`]: a named group of tools that composes before registration,
//! for the common case of several services (or MCP servers) whose tool names
//! collide.
//!
//! A toolset is given a prefix, renames single tools, keeps only some tools
//! (by name or tag) and merges with other toolsets; then it is registered.
//! A composed name is the tool's canonical name everywhere (declarations,
//! events, results), so two tools never share one; a name claimed twice, in
//! a merge or at registration, is [`RegistryError::Collision`] naming both
//! origins (`toolset \`github\` (tool \`search\`)`).

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;

use crate::ids::ToolName;
use crate::registry::{RegistryError, ToolRegistry};
use crate::runtime::ToolRuntime;
use crate::spec::ToolSpec;
use crate::tool::CallResult;
use crate::tool::Shared;
use crate::tool::{InlineCall, Tool};

/// A named group of tools, composed before it is registered.
///
/// ```
/// use tinyagents_tools::prelude::*;
/// use tinyagents_tools::{RegistryError, Toolset};
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Query {
///     /// What to find.
///     text: String,
/// }
///
/// /// Searches issues.
/// #[tool(tags = ["read"])]
/// async fn search(args: Query) -> String {
///     format!("issues about {}", args.text)
/// }
///
/// let github = Toolset::new("github").tool(SearchTool).prefixed("github_")?;
/// let jira = Toolset::new("jira").tool(SearchTool).prefixed("jira_")?;
/// let registry = github.merge(jira)?.into_registry()?;
/// assert_eq!(registry.names().collect::<Vec<_>>(), ["github_search", "jira_search"]);
/// # Ok::<(), RegistryError>(())
/// ```
pub struct Toolset<S = (), C = ()> {
    name: String,
    members: Vec<Member<S, C>>,
}

/// One tool of a toolset, with where it came from.
struct Member<S, C> {
    tool: Arc<dyn Tool<S, C>>,
    /// The toolset it was first added to.
    toolset: Arc<str>,
    /// Its name when it was added.
    original: String,
}

impl<S: Shared, C: Shared> Member<S, C> {
    fn name(&self) -> &str {
        self.tool.spec().name.as_str()
    }

    fn origin(&self) -> String {
        if self.name() == self.original {
            format!("toolset `{}` (tool `{}`)", self.toolset, self.original)
        } else {
            format!(
                "toolset `{}` (tool `{}`, renamed `{}`)",
                self.toolset,
                self.original,
                self.name()
            )
        }
    }
}

impl Toolset {
    /// An empty toolset of tools without application state or run context
    /// value, so `Toolset::new("github")` needs no type annotation; `name`
    /// says where its tools come from in errors and in
    /// [`RegisteredTool::origin`](crate::registry::RegisteredTool::origin). For tools
    /// with a state or context type, use [`Toolset::named`].
    pub fn new(name: impl Into<String>) -> Self {
        Toolset::named(name)
    }
}

impl<S: Shared, C: Shared> Toolset<S, C> {
    /// An empty toolset for tools of any state and context types
    /// (`Toolset::<AppState, Session>::named("github")`, or inferred).
    pub fn named(name: impl Into<String>) -> Self {
        Toolset {
            name: name.into(),
            members: Vec::new(),
        }
    }

    /// Adds a tool (an `Arc<T>` of one, to keep a handle on it).
    pub fn tool(mut self, tool: impl Tool<S, C>) -> Self {
        let tool: Arc<dyn Tool<S, C>> = Arc::new(tool);
        let original = tool.spec().name.to_string();
        self.members.push(Member {
            tool,
            toolset: Arc::from(self.name.as_str()),
            original,
        });
        self
    }

    /// The toolset's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The current name of every tool, in the order they were added.
    pub fn names(&self) -> impl ExactSizeIterator<Item = &str> {
        self.members.iter().map(Member::name)
    }

    /// Puts `prefix` before every tool's name. A name the naming rule
    /// refuses ([`ToolName::new`], for example one over 64 characters) is
    /// [`RegistryError::InvalidName`].
    pub fn prefixed(mut self, prefix: &str) -> Result<Self, RegistryError> {
        for member in &mut self.members {
            let name = format!("{prefix}{}", member.name());
            member.tool = renamed(&member.tool, &name)?;
        }
        Ok(self)
    }

    /// Gives the tool now called `from` the name `to`. A `from` the toolset
    /// does not hold is [`RegistryError::NotInToolset`].
    pub fn rename(mut self, from: &str, to: &str) -> Result<Self, RegistryError> {
        let Some(member) = self.members.iter_mut().find(|m| m.name() == from) else {
            return Err(RegistryError::NotInToolset {
                toolset: self.name,
                tool: from.to_owned(),
            });
        };
        member.tool = renamed(&member.tool, to)?;
        Ok(self)
    }

    /// Keeps only the tools whose spec `keep` accepts.
    pub fn filter(mut self, keep: impl Fn(&ToolSpec) -> bool) -> Self {
        self.members.retain(|m| keep(m.tool.spec()));
        self
    }

    /// Keeps only the tools with one of `names` (current names).
    pub fn only<'a>(self, names: impl IntoIterator<Item = &'a str>) -> Self {
        let names: Vec<&str> = names.into_iter().collect();
        self.filter(|spec| names.contains(&spec.name.as_str()))
    }

    /// Keeps only the tools tagged `tag`.
    pub fn tagged(self, tag: &str) -> Self {
        self.filter(|spec| spec.tags.iter().any(|t| t == tag))
    }

    /// Adds every tool of `other` (each keeping its own origin). A name
    /// both hold is [`RegistryError::Collision`] naming both origins.
    pub fn merge(mut self, other: Toolset<S, C>) -> Result<Self, RegistryError> {
        for member in other.members {
            if let Some(held) = self.members.iter().find(|m| m.name() == member.name()) {
                return Err(RegistryError::Collision {
                    name: member.name().to_owned(),
                    first: held.origin(),
                    second: member.origin(),
                });
            }
            self.members.push(member);
        }
        Ok(self)
    }

    /// A registry holding this toolset's tools.
    pub fn into_registry(self) -> Result<ToolRegistry<S, C>, RegistryError> {
        let mut registry = ToolRegistry::default();
        registry.register_toolset(self)?;
        Ok(registry)
    }
}

impl<S: Shared, C: Shared> ToolRegistry<S, C> {
    /// Registers every tool of `toolset`, with the checks of
    /// [`register`](Self::register); each remembers its origin
    /// ([`RegisteredTool::origin`](crate::registry::RegisteredTool::origin)). A name
    /// already registered is [`RegistryError::Collision`] naming both
    /// origins. Tools registered before a refused one stay registered.
    pub fn register_toolset(&mut self, toolset: Toolset<S, C>) -> Result<&mut Self, RegistryError> {
        for member in toolset.members {
            let origin = Arc::from(member.origin());
            self.register_from(member.tool, Some(origin))?;
        }
        Ok(self)
    }
}

/// `tool` under the name `name`: the spec copied once with the new name,
/// the calls passed through.
fn renamed<S, C>(
    tool: &Arc<dyn Tool<S, C>>,
    name: &str,
) -> Result<Arc<dyn Tool<S, C>>, RegistryError>
where
    S: Shared,
    C: Shared,
{
    let name = ToolName::new(name).map_err(|reason| RegistryError::InvalidName {
        name: name.to_owned(),
        reason,
    })?;
    let mut spec = tool.spec().clone();
    spec.name = name;
    Ok(Arc::new(Renamed {
        inner: Arc::clone(tool),
        spec,
    }))
}

/// A tool under another name.
struct Renamed<S, C> {
    inner: Arc<dyn Tool<S, C>>,
    spec: ToolSpec,
}

#[async_trait]
impl<S: Shared, C: Shared> Tool<S, C> for Renamed<S, C> {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, state: &S, runtime: &ToolRuntime<C>, arguments: Value) -> CallResult {
        self.inner.call(state, runtime, arguments).await
    }

    fn __inline(&self) -> Option<&dyn InlineCall<S, C>> {
        self.inner.__inline()
    }
}
