//! "add" written for rig (0.44) with its `PortableTool` trait, called through
//! a `ToolSet` the way rig's agent loop calls tools.

use rig_agent::tool::{ToolContext, ToolSet};
use rig_core::tool::PortableTool;

use crate::add::{AddArgs, Sum, add};

/// rig's "add".
pub struct RigAdd;

impl PortableTool for RigAdd {
    const NAME: &'static str = "add";
    type Args = AddArgs;
    type Output = Sum;
    type Error = std::convert::Infallible;

    fn description(&self) -> String {
        "Add two integers.".to_owned()
    }

    fn parameters(&self) -> serde_json::Value {
        serde_json::to_value(schemars::schema_for!(AddArgs)).expect("schema serializes")
    }

    async fn call(&self, args: AddArgs) -> Result<Sum, Self::Error> {
        Ok(add(args))
    }
}

/// A tool set holding rig's "add".
pub fn toolset() -> ToolSet {
    ToolSet::from_tools(vec![RigAdd])
}

/// One call through the tool set, arguments as JSON text (rig's interface).
pub async fn call(
    set: &ToolSet,
    ctx: &mut ToolContext,
    args: String,
) -> rig_core::tool::ToolResult {
    set.execute("add", args, ctx).await
}
