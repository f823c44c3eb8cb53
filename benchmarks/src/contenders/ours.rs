//! "add" written for tinyagents-tools by hand (a `Tool` impl), and the
//! specs of many "add" tools for the registration and declaration cases.

use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;
use tinyagents_tools::output::IntoToolOutput;
use tinyagents_tools::{
    Json, Tool, ToolError, ToolOutput, ToolRegistry, ToolRuntime, ToolSafety, ToolSchema, ToolSpec,
    async_trait,
};

use crate::add::{AddArgs, Sum, add};

/// The spec of an "add" tool named `name`, built the way `#[tool]` builds
/// one (input and output schemas from the Rust types).
pub fn add_spec(name: &str) -> ToolSpec {
    ToolSpec::builder(name, "Add two integers.")
        .input_schema(ToolSchema::for_input::<AddArgs>())
        .output_schema(ToolSchema::for_output::<Sum>())
        .safety(ToolSafety::pure())
        .build()
        .expect("a valid spec")
}

/// "add" as a hand-written `Tool` impl (spec built once, in a static).
pub struct HandAdd;

#[async_trait]
impl Tool for HandAdd {
    fn spec(&self) -> &ToolSpec {
        static SPEC: OnceLock<ToolSpec> = OnceLock::new();
        SPEC.get_or_init(|| add_spec("add"))
    }

    async fn call(&self, _: &(), _: &ToolRuntime, args: Value) -> Result<ToolOutput, ToolError> {
        let args: AddArgs = serde_json::from_value(args)?;
        Json(add(args)).into_tool_output()
    }
}

/// The spec of "add" tool `name` whose input schema says whose arguments
/// they are (a root `description`): 1,000 distinct tools do not share one
/// schema text, so nothing keyed by a schema's content can answer for all
/// of them at once.
pub fn distinct_add_spec(name: &str) -> ToolSpec {
    let mut input = ToolSchema::for_input::<AddArgs>().as_value().clone();
    input["description"] = Value::String(format!("Arguments of {name}."));
    ToolSpec::builder(name, "Add two integers.")
        .input_schema(ToolSchema::from_value(input))
        .output_schema(ToolSchema::for_output::<Sum>())
        .safety(ToolSafety::pure())
        .build()
        .expect("a valid spec")
}

/// The spec of "add" tool `index` whose schemas have a shape of their own:
/// an optional property named after the tool in the input and in the output
/// schema, so no two tools' schemas validate alike and nothing compiled for
/// one can serve another.
pub fn distinct_shape_spec(index: usize) -> ToolSpec {
    let name = format!("add_{index}");
    let mut input = ToolSchema::for_input::<AddArgs>().as_value().clone();
    input["properties"][format!("note_{index}")] = serde_json::json!({"type": "string"});
    let mut output = ToolSchema::for_output::<Sum>().as_value().clone();
    output["properties"][format!("extra_{index}")] = serde_json::json!({"type": "integer"});
    ToolSpec::builder(name, "Add two integers.")
        .input_schema(ToolSchema::from_value(input))
        .output_schema(ToolSchema::from_value(output))
        .safety(ToolSafety::pure())
        .build()
        .expect("a valid spec")
}

/// An "add" tool with a name of its own, for the 1,000-tool cases; or
/// "sleepy_add", which awaits a timer before answering, for the batch and
/// in-flight cases.
pub struct NamedAdd {
    spec: ToolSpec,
    delay: Option<Duration>,
}

impl NamedAdd {
    /// An "add" tool named `add_{index}`.
    pub fn new(index: usize) -> Self {
        NamedAdd {
            spec: distinct_add_spec(&format!("add_{index}")),
            delay: None,
        }
    }

    /// An "add" tool named `add_{index}` whose schemas have a shape no
    /// other tool has ([`distinct_shape_spec`]).
    pub fn distinct_shape(index: usize) -> Self {
        NamedAdd {
            spec: distinct_shape_spec(index),
            delay: None,
        }
    }

    /// "sleepy_add", awaiting `delay` before answering.
    pub fn sleepy(delay: Duration) -> Self {
        NamedAdd {
            spec: add_spec("sleepy_add"),
            delay: Some(delay),
        }
    }
}

#[async_trait]
impl Tool for NamedAdd {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, _: &(), _: &ToolRuntime, args: Value) -> Result<ToolOutput, ToolError> {
        let args: AddArgs = serde_json::from_value(args)?;
        if let Some(delay) = self.delay {
            tokio::time::sleep(delay).await;
        }
        Json(add(args)).into_tool_output()
    }
}

/// A registry of `n` "add" tools named `add_0` to `add_{n-1}`
/// ([`NamedAdd::new`]).
pub fn named_registry(n: usize) -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    for i in 0..n {
        registry.register(NamedAdd::new(i)).expect("registers");
    }
    registry
}

/// "add" written with our `#[tool]` (the type is `MacroAddTool`): a plain
/// fn, as rmcp's "add" is, so its calls are answered without a future.
#[tinyagents_tools::tool(name = "add", read_only, idempotent)]
/// Add two integers.
pub fn macro_add(args: AddArgs) -> Sum {
    add(args)
}
