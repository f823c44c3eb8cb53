//! tinyagents-tools inside rig: any registered tool, or a whole registry,
//! handed to rig as rig tools, every call going through a
//! [`ToolExecutor`] (argument validation, hidden injection, policies and
//! middleware, limits, timeouts, redaction, events).
//!
//! A [`RigTool`] is rig's object-safe tool ([`ErasedTool`]: raw JSON
//! arguments in, a [`ToolResult`] out) and becomes a [`DynamicTool`] (rig's
//! runtime-defined tool, which rig's agent runtimes and tool registries
//! take) with [`RigTool::into_dynamic`]. [`rig_tools`] makes one per
//! registered tool, [`rig_dynamic_tools`] the same as [`DynamicTool`]s.
//!
//! Agents come from [`rig_agent`] (rig's agent runtime; rig-core itself has
//! none): [`AgentToolsExt::tinyagents_tools`] adds every tool of a registry
//! to an [`AgentBuilder`], and the agent's tool calls then run through the
//! executor:
//!
//! ```no_run
//! # use std::sync::Arc;
//! # use rig_agent::AgentBuilder;
//! # use rig_core::providers::openai::OpenAIConfig;
//! # use tinyagents_tools::{RunContext, ToolExecutor, ToolRegistry};
//! use tinyagents_tools_rig::AgentToolsExt;
//! # async fn run(executor: Arc<ToolExecutor>) -> Result<(), Box<dyn std::error::Error>> {
//! let model = OpenAIConfig::new("key").client().chat("gpt-4o-mini");
//! let agent = AgentBuilder::new(model)
//!     .tinyagents_tools(executor, Arc::new(RunContext::empty()))
//!     .build();
//! let answer = agent.prompt("What is the BLAKE3 digest of `hello`?").max_turns(4).await?;
//! println!("{}", answer.output());
//! # Ok(()) }
//! ```
//!
//! Each call rig makes is one [`ToolCall`] with an id of its own
//! (`rig-<tool>-<n>`; rig does not hand the provider's id to a tool) in a
//! turn of its own, in the run given: per-run limits and the run's secrets,
//! cancellation and stores apply; per-turn limits count one call. A refused
//! or failed call comes back to rig as a failed [`ToolResult`] whose error
//! kind maps the executor's (`invalid_arguments` to rig's `invalid_args`,
//! `unknown_tool` to `not_found`, `denied` and `not_advertised` to
//! `permission_denied`, ...) and whose model feedback is the executor's
//! (redacted) message.
//!
//! rig-core turns on serde_json's `preserve_order`, as tinyagents-tools
//! itself does (its schemas list properties in declared order): adding this
//! crate changes nothing about how JSON maps keep their keys.
#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rig_agent::agent::{AgentBuilder, NoToolConfig, WithBuilderTools};
use rig_core::completion::ToolDefinition;
use rig_core::message::ToolName;
use rig_core::tool::{
    DynamicTool, ErasedTool, ToolContext, ToolErrorKind, ToolExecutionError, ToolOutput, ToolResult,
};
use rig_core::wasm_compat::WasmBoxedFuture;
use serde_json::Value;
use tinyagents_tools::call::RawArguments;
use tinyagents_tools::prelude::Shared;
use tinyagents_tools::{RunContext, ToolCall, ToolExecutor, Turn};

/// One registered tool as a rig tool, running through an executor in a run.
///
/// Cheap to clone: clones share the tool's definition and its count of
/// calls (which numbers the call ids).
pub struct RigTool<S = (), C = ()>(Arc<Inner<S, C>>);

/// What a [`RigTool`] and its clones share.
struct Inner<S, C> {
    executor: Arc<ToolExecutor<S, C>>,
    run: Arc<RunContext<C>>,
    definition: ToolDefinition,
    calls: AtomicU64,
}

impl<S, C> Clone for RigTool<S, C> {
    fn clone(&self) -> Self {
        RigTool(Arc::clone(&self.0))
    }
}

/// A tool name the executor's registry does not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the registry has no tool `{0}`")]
pub struct UnknownTool(pub String);

impl<S: Shared, C: Shared> RigTool<S, C> {
    /// The registered tool `name` of `executor`'s registry, called in `run`.
    /// Its rig definition is the tool's name, description and input schema
    /// (hidden parameters are not in it).
    pub fn new(
        executor: Arc<ToolExecutor<S, C>>,
        run: Arc<RunContext<C>>,
        name: &str,
    ) -> Result<Self, UnknownTool> {
        let spec = executor
            .registry()
            .specs()
            .find(|spec| spec.name.as_str() == name)
            .ok_or_else(|| UnknownTool(name.to_owned()))?;
        let definition = ToolDefinition::new(
            ToolName::new(spec.name.to_string()).expect("a registered tool's name is never empty"),
            spec.description.clone(),
            spec.input_schema.as_value().clone(),
        );
        Ok(RigTool(Arc::new(Inner {
            executor,
            run,
            definition,
            calls: AtomicU64::new(0),
        })))
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        self.0.definition.name.as_str()
    }

    /// Runs one call with `arguments` (as the model sent them: a JSON value
    /// or JSON text) through the executor and shapes the answer for rig.
    pub async fn call(
        &self,
        arguments: impl Into<RawArguments>,
    ) -> Result<ToolOutput, ToolExecutionError> {
        let Inner {
            executor,
            run,
            calls,
            ..
        } = &*self.0;
        let n = calls.fetch_add(1, Ordering::Relaxed) + 1;
        let name = self.name();
        let call = ToolCall::new(format!("rig-{name}-{n}"), name, arguments);
        let result = executor.execute(run, &Turn::new(1), call).await;
        match &result.error {
            None => Ok(match result.message.structured {
                Some(value) => ToolOutput::json(value),
                None => ToolOutput::text(result.message.text()),
            }),
            Some(error) => {
                let kind = match error.kind().as_str() {
                    "invalid_arguments" => ToolErrorKind::InvalidArgs,
                    "unknown_tool" => ToolErrorKind::NotFound,
                    "denied" | "not_advertised" => ToolErrorKind::PermissionDenied,
                    "timeout" => ToolErrorKind::Timeout,
                    "cancelled" => ToolErrorKind::Cancelled,
                    "limit_exceeded" => ToolErrorKind::RateLimited,
                    _ => ToolErrorKind::Other,
                };
                let message = result.text();
                Err(ToolExecutionError::new(kind, message.clone())
                    .with_code(error.kind().as_str())
                    .with_model_feedback(message))
            }
        }
    }

    /// The tool's rig definition (name, description, input schema), as a
    /// completion request lists it.
    pub fn definition(&self) -> ToolDefinition {
        self.0.definition.clone()
    }

    /// The tool as rig's runtime-defined tool, for rig's agent runtimes and
    /// registries.
    pub fn into_dynamic(self) -> DynamicTool {
        let ToolDefinition {
            name,
            description,
            parameters,
        } = self.definition();
        DynamicTool::new(name, description, parameters, move |arguments| {
            let tool = self.clone();
            Box::pin(async move { tool.call(arguments).await })
        })
    }
}

impl<S: Shared, C: Shared> ErasedTool for RigTool<S, C> {
    fn name(&self) -> String {
        RigTool::name(self).to_owned()
    }

    fn description(&self) -> String {
        self.0.definition.description.clone()
    }

    fn parameters(&self) -> Value {
        self.0.definition.parameters.clone()
    }

    fn execute<'a>(
        &'a self,
        args: String,
        _: &'a mut ToolContext,
    ) -> WasmBoxedFuture<'a, ToolResult> {
        Box::pin(async move {
            // The executor parses the text (and refuses it, classified, when
            // it is not a JSON object).
            match self.call(RawArguments::Text(args)).await {
                Ok(output) => ToolResult::success(output),
                Err(error) => ToolResult::failed(error),
            }
        })
    }
}

/// Every tool of `executor`'s registry as a rig tool, in the registry's
/// order, called in `run`.
pub fn rig_tools<S: Shared, C: Shared>(
    executor: Arc<ToolExecutor<S, C>>,
    run: Arc<RunContext<C>>,
) -> Vec<RigTool<S, C>> {
    let names: Vec<String> = executor
        .registry()
        .specs()
        .map(|spec| spec.name.to_string())
        .collect();
    names
        .iter()
        .filter_map(|name| RigTool::new(Arc::clone(&executor), Arc::clone(&run), name).ok())
        .collect()
}

/// Every tool of `executor`'s registry as rig's [`DynamicTool`] (what rig's
/// agent builder and tool servers take), in the registry's order, called in
/// `run`.
pub fn rig_dynamic_tools<S: Shared, C: Shared>(
    executor: Arc<ToolExecutor<S, C>>,
    run: Arc<RunContext<C>>,
) -> Vec<DynamicTool> {
    rig_tools(executor, run)
        .into_iter()
        .map(RigTool::into_dynamic)
        .collect()
}

/// Adds a whole tinyagents registry to a [`rig_agent`] agent builder (one
/// without tools yet, or one with some already).
pub trait AgentToolsExt: sealed::AddDynamicTools {
    /// Adds every tool of `executor`'s registry (as [`rig_dynamic_tools`]
    /// makes them) to the agent: each call the agent makes runs through
    /// `executor` in `run`.
    fn tinyagents_tools<S: Shared, C: Shared>(
        self,
        executor: Arc<ToolExecutor<S, C>>,
        run: Arc<RunContext<C>>,
    ) -> AgentBuilder<WithBuilderTools> {
        self.add_dynamic_tools(rig_dynamic_tools(executor, run))
    }
}

impl<B: sealed::AddDynamicTools> AgentToolsExt for B {}

/// The agent builders [`AgentToolsExt`] extends: rig writes `dynamic_tools`
/// once per builder state, so each state is named here once.
mod sealed {
    use super::{AgentBuilder, DynamicTool, NoToolConfig, WithBuilderTools};

    /// An agent builder that takes dynamic tools.
    pub trait AddDynamicTools: Sized {
        /// Rig's `dynamic_tools` of this builder state.
        fn add_dynamic_tools(self, tools: Vec<DynamicTool>) -> AgentBuilder<WithBuilderTools>;
    }

    impl AddDynamicTools for AgentBuilder<NoToolConfig> {
        fn add_dynamic_tools(self, tools: Vec<DynamicTool>) -> AgentBuilder<WithBuilderTools> {
            self.dynamic_tools(tools)
        }
    }

    impl AddDynamicTools for AgentBuilder<WithBuilderTools> {
        fn add_dynamic_tools(self, tools: Vec<DynamicTool>) -> AgentBuilder<WithBuilderTools> {
            self.dynamic_tools(tools)
        }
    }
}
