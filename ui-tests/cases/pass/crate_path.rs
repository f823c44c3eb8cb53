// A crate that re-exports the framework under another path names it with
// `crate = ..`.
mod framework {
    pub mod tools {
        pub use tinyagents_tools::*;
    }
}

use framework::tools::prelude::{Deserialize, JsonSchema};

#[derive(Deserialize, JsonSchema)]
struct Args {
    /// A number.
    n: u32,
}

/// Double a number.
#[framework::tools::tool(crate = "framework::tools")]
async fn double(args: Args) -> u32 {
    args.n * 2
}

/// Triple a number.
#[framework::tools::tool(crate = crate::framework::tools)]
async fn triple(args: Args) -> u32 {
    args.n * 3
}

fn main() {
    use framework::tools::ToolRegistry;
    let mut registry: ToolRegistry = ToolRegistry::new();
    registry.register(DoubleTool).unwrap();
    registry.register(TripleTool).unwrap();
    assert_eq!(DoubleTool::spec().name.as_str(), "double");
}
