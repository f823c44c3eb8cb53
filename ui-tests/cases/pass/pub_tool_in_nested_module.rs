// A `pub` tool in a nested module is usable from outside it.
#![deny(missing_docs)]
//! A crate with a public tool.

/// Tools.
pub mod tools {
    /// Text tools.
    pub mod text {
        use tinyagents_tools::prelude::*;

        /// What to shout.
        #[derive(Deserialize, JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub struct ShoutArgs {
            /// The text.
            pub text: String,
        }

        /// Upper-case a text.
        #[tool(read_only, idempotent, local, deterministic)]
        pub async fn shout(args: ShoutArgs) -> String {
            args.text.to_uppercase()
        }
    }
}

fn main() {
    use tinyagents_tools::ToolRegistry;
    let mut registry: ToolRegistry = ToolRegistry::new();
    registry.register(tools::text::ShoutTool).unwrap();
    assert_eq!(tools::text::ShoutTool::spec().name.as_str(), "shout");
}
