//! Typed, safe tools for LLM agents.
//!
//! A `#[tool]` attribute on a plain async fn turns its argument struct into
//! the model-visible JSON schema, its `#[inject]` parameters into hidden
//! runtime values, and its options into a [`ToolSpec`] with safety metadata.
//! A [`ToolRegistry`] checks and holds tools; an executor runs
//! provider-supplied [`ToolCall`]s through a fail-closed lifecycle.
//!
//! The pieces, in the order data flows:
//! - [`ToolSpec`], [`ToolSchema`], [`ToolSafety`], [`RetryPolicy`]: what a tool
//!   is and declares;
//! - [`Tool`]: the trait every tool implements (by hand or via `#[tool]`);
//! - [`Inject`] and the built-in injectables ([`Store`], [`Secret`],
//!   [`State`], ...): hidden parameters;
//! - [`RunContext`] and [`ToolRuntime`]: the run and the per-call handle;
//! - [`ToolRegistry`]: registration rules and compiled validators;
//! - [`ToolCall`], [`ToolResult`], [`ToolMessage`], [`ToolError`]: what goes in
//!   and comes out;
//! - [`ToolExecutor`], [`Turn`] and [`Middleware`]: the fail-closed
//!   lifecycle every call goes through;
//! - [`ArtifactStore`]: where large outputs go;
//! - [`EventBus`] and [`ToolEvent`]: lifecycle events;
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

mod artifacts;
pub mod builtins;
mod call;
#[cfg(feature = "collect")]
mod collect;
#[cfg(not(feature = "collect"))]
mod collect_off;
mod error;
mod events;
mod executor;
mod extensions;
mod fasthash;
mod hash;
mod ids;
mod inject;
pub mod isolated;
mod limits;
mod macro_support;
#[cfg(feature = "mcp")]
pub mod mcp;
mod middleware;
mod name_rules;
mod output;
mod panics;
pub mod policy;
pub mod providers;
mod redact;
mod registry;
mod retry;
mod runtime;
mod safety;
pub mod schema;
mod secret;
mod secret_forms;
mod service;
mod spec;
#[cfg(feature = "testkit")]
pub mod testkit;
mod tool;
pub mod tool_search;
mod toolset;
mod turn;
mod validation;
#[cfg(feature = "wasm")]
pub mod wasm;

pub use artifacts::{
    ArtifactError, ArtifactStore, FsArtifactStore, InMemoryArtifactStore, artifact_key,
};
pub use async_trait::async_trait;
pub use call::{RawArguments, ToolCall};
pub use error::{ArgumentProblem, ClassifyError, ErrorClass, ErrorKind, MAX_ERROR_TEXT, ToolError};
pub use events::{Delivery, EventBus, EventKind, EventSubscriber, Progress, ToolEvent};
pub use executor::{
    CallCounter, CallLimits, ExecutorBuildError, ExecutorConfig, RunCallCounts, ToolExecutor,
    ToolExecutorBuilder, Turn, canonical_hash, canonical_json, sha256_hex,
};
pub use extensions::Extensions;
pub use ids::{CallName, MAX_NAME_LEN, NameError, RunId, ThreadId, ToolCallId, ToolName};
pub use inject::{
    FromState, Inject, InjectError, IntoState, Resource, State, Store, WorkspaceRoot,
};
pub use middleware::{AfterToolCtx, BeforeOutcome, BeforeToolCtx, Middleware};
pub use output::{
    ArtifactRef, ContentBlock, IntoToolOutput, Json, Rendered, ToolMessage, ToolOutput, ToolResult,
    ToolReturn,
};
pub use panics::PanicMessage;
pub use registry::{RegisteredTool, RegistryError, RegistryVersion, ToolRegistry, compile_schema};
pub use retry::{Jitter, RetryPolicy};
pub use runtime::{Ctx, EventEmitter, RunContext, RunContextBuilder, StreamWriter, ToolRuntime};
pub use safety::{
    Determinism, Effect, FilesystemAccess, Idempotency, Reach, RedactionPolicy, SafetyItem,
    ToolSafety,
};
pub use schema::ToolSchema;
pub use secret::{Secret, Secrets};
pub use service::ToolService;
pub use spec::{
    ConcurrencyPolicy, InjectedArgSpec, InjectedKind, ResourceBounds, SpecError, ToolSpec,
    ToolSpecBuilder,
};
pub use tinyagents_tools_macros::{tool, tools};
pub use tokio_util::sync::CancellationToken;
pub use tool::Tool;
pub use toolset::Toolset;

#[cfg(feature = "collect")]
#[doc(hidden)]
pub use collect::CollectedTool as __CollectedTool;
#[cfg(feature = "collect")]
#[doc(hidden)]
pub use inventory as __inventory;

/// The names most tools need: `use tinyagents_tools::prelude::*;`.
pub mod prelude {
    pub use crate::{
        CancellationToken, ContentBlock, Ctx, EventEmitter, Json, Rendered, Resource, RunContext,
        RunId, Secret, State, Store, StreamWriter, ThreadId, Tool, ToolCall, ToolCallId, ToolError,
        ToolExecutor, ToolOutput, ToolRegistry, ToolResult, ToolRuntime, ToolService, ToolSpec,
        Turn, WorkspaceRoot, tool, tools,
    };
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
}
