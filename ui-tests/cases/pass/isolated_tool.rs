// An isolated tool: the spec carries its bounds, the worker side runs the
// fn with the arguments and hidden values that crossed.
use std::time::Duration;

use tinyagents_tools::isolated::{WorkerCall, WorkerEntry, WorkerRegistry};
use tinyagents_tools::prelude::*;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CrunchArgs {
    /// How many numbers to add up.
    n: u64,
}

/// Add up the numbers from 1 to `n`.
#[tool(isolated, max_memory = "256MiB", max_cpu = "2s", read_only)]
async fn crunch(args: CrunchArgs, #[inject] id: ToolCallId) -> Result<u64, ToolError> {
    if args.n == 0 {
        return Err(ToolError::repair(format!(
            "call {id}: `n` must be positive"
        )));
    }
    Ok((1..=args.n).sum())
}

fn main() {
    let spec = CrunchTool::spec();
    assert_eq!(spec.bounds.max_memory, Some(256 << 20));
    assert_eq!(spec.bounds.max_cpu(), Some(Duration::from_secs(2)));
    assert_eq!(<CrunchTool as WorkerEntry>::NAME, "crunch");
    let _ = WorkerRegistry::new().entry::<CrunchTool>();
    let mut registry: ToolRegistry = ToolRegistry::new();
    registry.register(CrunchTool).unwrap();

    let rt = tokio::runtime::Runtime::new().unwrap();
    let call = WorkerCall::new("c1".into(), serde_json::json!({"n": 4}))
        .with_injected("id", &ToolCallId::from("c1"))
        .unwrap();
    let out = rt.block_on(CrunchTool::run(call)).unwrap();
    assert_eq!(out.structured, Some(serde_json::json!(10)));
    let call = WorkerCall::new("c2".into(), serde_json::json!({"n": 0}))
        .with_injected("id", &ToolCallId::from("c2"))
        .unwrap();
    let err = rt.block_on(CrunchTool::run(call)).unwrap_err();
    assert!(err.is_repairable());
    assert_eq!(err.message(), "call c2: `n` must be positive");
}
