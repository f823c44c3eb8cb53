// `#[tool(isolated)]` needs the runtime crate's `isolated` feature (worker
// processes, `nix` and tokio's `process`): without it, the one error says
// which feature to turn on. Run by `--no-default-features` only.
use tinyagents_tools::prelude::*;

/// Pings.
#[tool(isolated)]
async fn ping() -> String {
    "pong".into()
}

fn main() {
    let _ = PingTool;
}
