//! [`BeforeTool`]: a middleware made of a name and a closure, for a test
//! that needs a policy without writing a type for it.

use std::marker::PhantomData;

use async_trait::async_trait;

use crate::middleware::{BeforeResult, BeforeToolCtx, Middleware};
use crate::tool::Shared;

/// A middleware whose `before_tool` is a closure: it sees each call (its
/// arguments, spec, run) and lets it go on, denies it, answers it or fails
/// it, exactly as a hand-written [`Middleware`] would.
///
/// ```
/// use serde_json::json;
/// use tinyagents_tools::middleware::BeforeOutcome;
/// use tinyagents_tools::prelude::*;
/// use tinyagents_tools::testkit::{BeforeTool, FakeTool, ToolHarness};
/// use tinyagents_tools::ToolSchema;
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let spec = ToolSpec::builder("echo", "Say the text back.")
///     .input_schema(ToolSchema::from_value(json!({
///         "type": "object",
///         "properties": {"text": {"type": "string"}},
///         "required": ["text"]
///     })))
///     .build()
///     .unwrap();
/// let echo = FakeTool::new(spec)
///     .answering_with(|_, args| Ok(ToolOutput::text(args["text"].as_str().unwrap_or_default())));
/// let no_shouting = BeforeTool::new("no_shouting", |ctx| {
///     Ok(if ctx.arguments()["text"].as_str().is_some_and(|t| t == t.to_uppercase()) {
///         BeforeOutcome::deny("no_shouting", "write in lower case")
///     } else {
///         BeforeOutcome::Continue
///     })
/// });
/// let harness = ToolHarness::builder(echo).middleware(no_shouting).build().unwrap();
/// assert_eq!(harness.call_ok(json!({"text": "hi"})).await.text(), "hi");
/// assert_eq!(harness.call_err(json!({"text": "HI"})).await.kind().as_str(), "denied");
/// # });
/// ```
pub struct BeforeTool<F, S = (), C = ()> {
    name: String,
    decide: F,
    types: PhantomData<fn() -> (S, C)>,
}

impl<F, S, C> BeforeTool<F, S, C>
where
    F: Fn(&mut BeforeToolCtx<'_, S, C>) -> BeforeResult,
{
    /// A middleware named `name` that runs `decide` before each call.
    pub fn new(name: impl Into<String>, decide: F) -> Self {
        BeforeTool {
            name: name.into(),
            decide,
            types: PhantomData,
        }
    }
}

#[async_trait]
impl<F, S, C> Middleware<S, C> for BeforeTool<F, S, C>
where
    F: Fn(&mut BeforeToolCtx<'_, S, C>) -> BeforeResult + Send + Sync + 'static,
    S: Shared,
    C: Shared,
{
    fn name(&self) -> &str {
        &self.name
    }

    async fn before_tool(&self, ctx: &mut BeforeToolCtx<'_, S, C>) -> BeforeResult {
        (self.decide)(ctx)
    }
}
