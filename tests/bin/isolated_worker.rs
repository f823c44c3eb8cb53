//! The worker program of the isolated-tool tests: the tool bodies, each a
//! runaway of one kind, behind `serve_if_worker` as an application's `main`
//! would have them. Started by hand it does nothing; started with the
//! argument `agent` it is also the agent, calling `isolated_typed` through
//! the global pool (workers of this very program) and printing the result.

use serde_json::json;
use tinyagents_tools::isolated::{WorkerRegistry, serve_if_worker};
use tinyagents_tools::{ToolExecutor, ToolOutput, ToolRegistry};
use tinyagents_tools_tests::isolated_bodies::*;
use tinyagents_tools_tests::{call, execute_once};

fn workers() -> WorkerRegistry {
    WorkerRegistry::new()
        // Written by hand: answers with its process id and arguments.
        .tool("isolated_echo", |call| async move {
            Ok(ToolOutput::structured(json!({
                "pid": std::process::id(),
                "arguments": call.arguments(),
                "call_id": call.call_id().as_str(),
            })))
        })
        .entry::<IsolatedAllocTool>()
        .entry::<IsolatedSpinTool>()
        .entry::<IsolatedAbortTool>()
        .entry::<IsolatedPanicTool>()
        .entry::<IsolatedSleepTool>()
        .entry::<IsolatedNoisyTool>()
        .entry::<IsolatedInjectedTool>()
        .entry::<IsolatedTypedTool>()
}

/// The agent side with the global pool: one call, its result on stdout.
fn agent() {
    let mut registry = ToolRegistry::new();
    registry.register(IsolatedTypedTool).expect("a valid tool");
    let exec = ToolExecutor::builder(registry, ())
        .build()
        .expect("an executor");
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let result = runtime.block_on(execute_once(
        &exec,
        call("global-1", "isolated_typed", r#"{"n":21}"#),
    ));
    println!(
        "{}",
        json!({"id": result.tool_call_id.as_str(), "structured": result.structured, "error": result.is_error})
    );
}

fn main() {
    serve_if_worker(workers);
    if std::env::args().nth(1).as_deref() == Some("agent") {
        agent();
    }
}
