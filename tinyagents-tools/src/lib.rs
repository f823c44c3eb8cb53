//! Typed, safe tools for LLM agents.
//!
//! A `#[tool]` attribute on a plain async fn turns its argument struct into
//! the model-visible JSON schema, its `#[inject]` parameters into hidden
//! runtime values, and its options into a [`ToolSpec`] with safety metadata.
//! A [`ToolRegistry`] checks and holds tools; an executor runs
//! provider-supplied [`ToolCall`]s through a fail-closed lifecycle.
//!
//! # Where each concept lives
//!
//! Each module is one concept, each folder one module; the names used most
//! are also at the crate root and in [`prelude`]. From the bottom up: a
//! module uses only the modules of the rows above its own (or one named
//! before it in its row).
//!
//! | Module | Concept |
//! |---|---|
//! | [`ids`], [`error`], [`hash`] | names and ids, classified errors, canonical JSON and its hashes |
//! | [`spec`] | what a tool declares: [`ToolSpec`], [`ToolSchema`], [`ToolSafety`], [`RetryPolicy`] |
//! | [`approval`] | an approval request and its decision, as data |
//! | [`call`], [`output`] | what goes in and comes out: [`ToolCall`], [`ToolOutput`], [`ToolResult`], [`ToolMessage`] |
//! | [`redact`] | masking secrets and configured patterns in what the model sees |
//! | [`events`] | lifecycle events ([`events::ToolEvent`]) and their subscribers |
//! | [`runtime`] | the run ([`RunContext`], [`Turn`], limits and counters, secrets) and the per-call handle ([`ToolRuntime`]) |
//! | [`tool`](mod@tool), [`inject`] | the [`Tool`] trait, `#[tools]` services, [`tool::ToolSearch`]; hidden parameters ([`Inject`], [`Store`], [`State`], [`Secret`], ...) |
//! | [`registry`], [`journal`] | registration rules, compiled validators, [`Toolset`]s; the call journal that makes calls durable |
//! | [`middleware`], [`policy`] | code around every call, and the safety policies built on it |
//! | [`artifacts`], [`executor`] | where large outputs go; the fail-closed lifecycle every call goes through |
//! | `isolated`, `wasm` | tool bodies under OS or engine limits (worker processes, feature `isolated`; WebAssembly, feature `wasm`) |
//! | `stream` | model output as it streams: text, reasoning and calls read from provider streams and from text formats (feature `stream`) |
//! | [`providers`] | the edges: provider formats (MCP's declarations and results among them); code mode's `run_code` tool and MCP's server and client are crates of their own, `tinyagents-tools-code-mode` and `tinyagents-tools-mcp` |
//! | `builtins`, `testkit` | the `echo` and `hash` tools (feature `builtins`); test helpers (feature `testkit`) |
//! | [`guide`] | the guide: one page per topic |
//!
//! Adapters live in crates of their own and reach this one through its
//! public items only: `tinyagents-tools-mcp` serves a registry over MCP and
//! imports the tools of MCP servers (rmcp; stdio and streamable HTTP, tasks,
//! input rounds), and `tinyagents-tools-rig` puts registered tools in rig
//! agents. A transport hands the executor a call's arguments as the text
//! the client sent ([`call::RawArguments::Text`]) and keeps its durable
//! state in the journal's [`journal::Records`].
//!
//! # Example
//!
//! ```
//! use tinyagents_tools::prelude::*;
//!
//! struct DocIndex(Vec<&'static str>);
//!
//! /// Arguments the model chooses.
//! #[derive(Deserialize, JsonSchema)]
//! #[serde(deny_unknown_fields)]
//! struct SearchArgs {
//!     /// Words to look for.
//!     query: String,
//! }
//!
//! /// Search the document index.
//! #[tool(read_only, idempotent, local)]
//! async fn search_docs(args: SearchArgs, #[inject] index: Store<DocIndex>) -> Vec<String> {
//!     index.0.iter().filter(|d| d.contains(args.query.as_str())).map(|d| d.to_string()).collect()
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let mut registry: ToolRegistry = ToolRegistry::new();
//! registry.register(SearchDocsTool)?;
//! // `index` is hidden: the schema has only `query`.
//! let schema = SearchDocsTool::spec().input_schema.as_value();
//! assert_eq!(schema["required"], serde_json::json!(["query"]));
//!
//! let executor = ToolExecutor::builder(registry, ()).build()?;
//! let run = RunContext::builder(()).store(DocIndex(vec!["rust tools", "python"])).build();
//! let result = executor
//!     .execute(&run, &Turn::new(1), ToolCall::new("call_1", "search_docs", r#"{"query":"rust"}"#))
//!     .await;
//! assert_eq!(result.structured, Some(serde_json::json!(["rust tools"])));
//!
//! // A forged hidden key is refused before the tool runs.
//! let forged = ToolCall::new("call_2", "search_docs", r#"{"query":"x","index":"mine"}"#);
//! let refused = executor.execute(&run, &Turn::new(1), forged).await;
//! assert!(refused.is_error);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! # Features
//!
//! No feature is on by default: with none, the crate builds what `#[tool]`,
//! the registry, the executor, policies, events, the in-memory journal and
//! the provider formats need.
//!
#![cfg_attr(feature = "document-features", doc = document_features::document_features!())]
#![deny(missing_docs)]
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod approval;
pub mod artifacts;
#[cfg(feature = "builtins")]
pub mod builtins;
pub mod call;
pub mod error;
pub mod events;
pub mod executor;
pub mod guide;
pub mod hash;
pub mod ids;
pub mod inject;
#[cfg(feature = "isolated")]
pub mod isolated;
pub mod journal;
pub mod middleware;
pub mod output;
pub mod policy;
pub mod providers;
pub mod redact;
pub mod registry;
pub mod runtime;
pub mod spec;
#[cfg(feature = "stream")]
#[cfg_attr(docsrs, doc(cfg(feature = "stream")))]
pub mod stream;
#[cfg(feature = "testkit")]
pub mod testkit;
pub mod tool;
mod util;
#[cfg(feature = "wasm")]
pub mod wasm;

pub use async_trait::async_trait;
pub use call::ToolCall;
pub use error::{ErrorClass, ToolError};
pub use executor::{ExecutorBuildError, ToolExecutor};
pub use ids::{RunId, ThreadId, ToolCallId};
pub use inject::{Inject, Resource, State, Store, WorkspaceRoot};
pub use middleware::Middleware;
pub use output::{ContentBlock, Json, Rendered, ToolMessage, ToolOutput, ToolResult};
pub use registry::Toolset;
pub use registry::{RegistryError, ToolRegistry};
pub use runtime::Secret;
pub use runtime::Turn;
pub use runtime::{Clock, Ids, Random};
pub use runtime::{Ctx, EventEmitter, RunContext, StreamWriter, ToolRuntime};
pub use spec::RetryPolicy;
pub use spec::ToolSafety;
pub use spec::ToolSchema;
pub use spec::ToolSpec;
pub use tinyagents_tools_macros::{tool, tools};
pub use tokio_util::sync::CancellationToken;
pub use tool::Tool;
pub use tool::ToolService;

/// The names most tools need: `use tinyagents_tools::prelude::*;`.
pub mod prelude {
    pub use crate::middleware::{AfterToolCtx, BeforeOutcome, BeforeToolCtx, Middleware};
    pub use crate::tool::{CallResult, Shared};
    pub use crate::{
        CancellationToken, Clock, ContentBlock, Ctx, ErrorClass, EventEmitter, ExecutorBuildError,
        Ids, Json, Random, RegistryError, Rendered, Resource, RunContext, RunId, Secret, State,
        Store, StreamWriter, ThreadId, Tool, ToolCall, ToolCallId, ToolError, ToolExecutor,
        ToolOutput, ToolRegistry, ToolResult, ToolRuntime, ToolService, ToolSpec, Turn,
        WorkspaceRoot, tool, tools,
    };
    pub use async_trait::async_trait;
    pub use schemars::JsonSchema;
    pub use serde::{Deserialize, Serialize};
}

/// What code generated by `#[tool]` uses. Not public API: its items may
/// change in any release.
#[doc(hidden)]
pub mod tool_macro;
