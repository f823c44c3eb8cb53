//! Isolated tools: tool fns that run in worker processes of this very
//! binary, under memory and CPU limits the operating system enforces.
//!
//! ```sh
//! cargo run --example isolated
//! ```
//!
//! `crunch` answers from a worker; `hog` allocates without end and meets its
//! 64 MiB cap (on Linux and macOS): its call gets `resource_exhausted`, the
//! worker is replaced, and the next call is answered.

use tinyagents_tools::isolated::{WorkerPool, WorkerRegistry, serve_if_worker};
use tinyagents_tools::prelude::*;
use tinyagents_tools::{ToolCall, ToolExecutor, Turn};

/// Sum the numbers from 1 to `n`.
#[tool(isolated, max_memory = "256MiB", max_cpu = "2s", read_only, idempotent)]
async fn crunch(
    /// How many numbers to add up.
    n: u64,
) -> u64 {
    (1..=n).sum()
}

/// Allocate memory until something stops it.
#[tool(isolated, max_memory = "64MiB")]
async fn hog() -> usize {
    let mut blocks: Vec<Vec<u8>> = Vec::new();
    loop {
        blocks.push(std::hint::black_box(vec![1u8; 16 << 20]));
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // First thing: in a worker, this serves calls and never returns.
    serve_if_worker(|| {
        WorkerRegistry::new()
            .entry::<CrunchTool>()
            .entry::<HogTool>()
    });

    let mut registry = ToolRegistry::new();
    registry.register(CrunchTool)?;
    registry.register(HogTool)?;
    let executor = ToolExecutor::builder(registry, ()).build()?;
    let run = RunContext::empty();
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        for (id, name, arguments) in [
            ("call_1", "crunch", r#"{"n": 1000}"#),
            ("call_2", "hog", "{}"),
            ("call_3", "crunch", r#"{"n": 10}"#),
        ] {
            let call = ToolCall::new(id, name, arguments);
            let result = executor.execute(&run, &Turn::new(1), call).await;
            println!("{id} {name:<6} {:<20} {}", result.outcome(), result.text());
        }
    });
    let stats = WorkerPool::global().stats();
    println!("workers started {}, died {}", stats.spawned, stats.died);
    Ok(())
}
