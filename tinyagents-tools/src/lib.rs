//! Typed, safe tools for LLM agents.
//!
//! A `#[tool]` attribute on a plain async fn turns its argument struct into
//! the model-visible JSON schema, its `#[inject]` parameters into hidden
//! runtime values, and its options into a [`ToolSpec`] with safety metadata.
//! A [`ToolRegistry`] checks and holds tools; an executor runs
//! provider-supplied [`ToolCall`]s through a fail-closed lifecycle.
//!
//! The pieces, in the order data flows (the names used most are also at the
//! crate root and in [`prelude`]):
//! - [`spec`], [`schema`], [`safety`], [`retry`]: what a tool is and
//!   declares ([`ToolSpec`], [`ToolSchema`], [`ToolSafety`], [`RetryPolicy`]);
//! - [`Tool`]: the trait every tool implements (by hand or via `#[tool]`;
//!   [`prelude::InstantTool`] for a stateless tool that answers at once);
//! - [`inject`]: hidden parameters ([`Inject`] and the built-in injectables
//!   [`Store`], [`Secret`], [`State`], ...);
//! - [`runtime`]: the run ([`RunContext`]) and the per-call handle
//!   ([`ToolRuntime`]);
//! - [`registry`]: registration rules and compiled validators
//!   ([`ToolRegistry`]);
//! - [`call`], [`output`], [`error`], [`ids`]: what goes in and comes out
//!   ([`ToolCall`], [`ToolResult`], [`ToolMessage`], [`ToolError`]);
//! - [`executor`] and [`middleware`]: the fail-closed lifecycle every call
//!   goes through ([`ToolExecutor`], [`Turn`], [`Middleware`]);
//! - [`artifacts`]: where large outputs go;
//! - [`events`] and [`hash`]: lifecycle events and the canonical hashes they
//!   carry;
//! - [`policy`]: safety policies; [`providers`]: provider formats;
//! - `mcp` (cargo feature `mcp`): serving a registry as an MCP server over
//!   stdio or any rmcp transport; with `mcp-http`, over streamable HTTP too.
//! - [`builtins`]: the `echo` and `hash` tools, the smallest complete tools;
//! - [`isolated`]: tool bodies run in worker processes under OS memory and
//!   CPU limits; `wasm` (feature `wasm`): WebAssembly tools under fuel and
//!   memory limits;
//! - `testkit` (feature `testkit`): a harness that runs a tool with test
//!   injections through a real executor, and an event recorder.
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
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod approval;
pub mod artifacts;
pub mod builtins;
pub mod call;
#[cfg(feature = "code-mode")]
pub mod code_mode;
#[cfg(feature = "collect")]
mod collect;
#[cfg(not(feature = "collect"))]
mod collect_off;
pub mod error;
pub mod events;
pub mod executor;
mod extensions;
mod fasthash;
pub mod hash;
pub mod ids;
pub mod inject;
pub mod isolated;
pub mod journal;
mod limits;
mod macro_support;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod middleware;
mod name_rules;
pub mod output;
mod panics;
pub mod policy;
pub mod providers;
mod redact;
pub mod registry;
pub mod retry;
pub mod runtime;
pub mod safety;
pub mod schema;
mod secret;
mod secret_forms;
mod service;
pub mod spec;
mod sync;
#[cfg(feature = "testkit")]
pub mod testkit;
mod tool;
pub mod tool_search;
mod toolset;
mod turn;
mod validation;
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
pub use registry::{RegistryError, ToolRegistry};
pub use retry::RetryPolicy;
pub use runtime::{Ctx, EventEmitter, RunContext, StreamWriter, ToolRuntime};
pub use safety::ToolSafety;
pub use schema::ToolSchema;
pub use secret::Secret;
pub use service::ToolService;
pub use spec::ToolSpec;
pub use tinyagents_tools_macros::{tool, tools};
pub use tokio_util::sync::CancellationToken;
pub use tool::Tool;
pub use toolset::Toolset;
pub use turn::Turn;

/// The names most tools need: `use tinyagents_tools::prelude::*;`.
pub mod prelude {
    pub use crate::middleware::{AfterToolCtx, BeforeOutcome, BeforeToolCtx, Middleware};
    pub use crate::tool::{CallResult, InstantTool, Shared};
    pub use crate::{
        CancellationToken, ContentBlock, Ctx, EventEmitter, Json, Rendered, Resource, RunContext,
        RunId, Secret, State, Store, StreamWriter, ThreadId, Tool, ToolCall, ToolCallId, ToolError,
        ToolExecutor, ToolOutput, ToolRegistry, ToolResult, ToolRuntime, ToolService, ToolSpec,
        Turn, WorkspaceRoot, tool, tools,
    };
    pub use async_trait::async_trait;
    pub use schemars::JsonSchema;
    pub use serde::{Deserialize, Serialize};
}

/// Re-exports for code generated by `#[tool]`. Not public API: its items
/// may change in any release.
#[doc(hidden)]
pub mod tool_macro {
    pub use async_trait::async_trait;
    pub use schemars;
    pub use serde;
    pub use serde_json;
    pub use std::sync::OnceLock;

    pub use crate::macro_support::*;
    pub use crate::service::{BlockAbsent, BlockPresent, BlockProbe, BlockTools, ToolBlock};

    #[cfg(feature = "collect")]
    pub use crate::collect::CollectedTool;
    #[cfg(feature = "collect")]
    pub use inventory;
}

/// Hooks for the benchmarks, which time the registry's argument check on its
/// own. Not public API: its items may change in any release.
#[doc(hidden)]
pub mod __bench {
    use crate::registry::RegisteredTool;

    /// The registered tool's compiled input validator.
    pub fn validator<S, C>(tool: &RegisteredTool<S, C>) -> &jsonschema::Validator
    where
        S: Send + Sync + 'static,
        C: Send + Sync + 'static,
    {
        tool.input().full()
    }

    /// Whether `value` passes the input check the executor runs on every call.
    pub fn accepts<S, C>(tool: &RegisteredTool<S, C>, value: &serde_json::Value) -> bool
    where
        S: Send + Sync + 'static,
        C: Send + Sync + 'static,
    {
        tool.input().is_valid(value)
    }
}
