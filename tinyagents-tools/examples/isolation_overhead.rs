//! What resource bounds cost: per-call time of an isolated tool and of a WASM
//! tool against the same tool in process, how long a runaway takes to be
//! detected, and how long a worker takes to start.
//!
//! ```text
//! cargo run --release -p tinyagents-tools --features wasm --example isolation_overhead
//! ```
//!
//! The program is its own worker: `serve_if_worker` comes first in `main`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tinyagents_tools::builtins::EchoTool;
use tinyagents_tools::isolated::{IsolatedTool, WorkerPool, WorkerRegistry, serve_if_worker};
use tinyagents_tools::spec::{ResourceBounds, ToolSpecBuilder};
use tinyagents_tools::wasm::WasmTool;
use tinyagents_tools::*;

const ECHO_WAT: &str = include_str!("echo.wat");

const SPIN_WAT: &str = r#"(module
  (memory (export "memory") 1)
  (func (export "alloc") (param i32) (result i32) (i32.const 1024))
  (func (export "call") (param i32 i32) (result i64) (loop $l (br $l)) (i64.const 0)))"#;

fn workers() -> WorkerRegistry {
    WorkerRegistry::new()
        .tool("iso_echo", |call| async move {
            Ok(ToolOutput::text(
                call.arguments()["text"].as_str().unwrap_or_default(),
            ))
        })
        .tool("alloc", |_| async move {
            let blocks: Vec<Vec<u8>> = (0..64).map(|_| vec![1u8; 64 << 20]).collect();
            Ok(ToolOutput::text(blocks.len().to_string()))
        })
        .tool("spin", |_| async move {
            let mut x = 0u64;
            loop {
                x = std::hint::black_box(x.wrapping_add(1));
            }
        })
        .tool("abort", |_| async move { std::process::abort() })
}

fn spec(name: &str) -> ToolSpecBuilder {
    ToolSpec::builder(name, format!("The `{name}` tool.")).input_schema(ToolSchema::from_value(
        json!({"type": "object", "properties": {"text": {"type": "string"}}}),
    ))
}

/// The median of `samples`.
fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn show(what: &str, value: Duration) {
    println!("{what:<48} {:>10.1} µs", value.as_secs_f64() * 1e6);
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    serve_if_worker(workers);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(measure())
}

async fn measure() -> Result<(), Box<dyn std::error::Error>> {
    const CALLS: usize = 2000;
    let pool = WorkerPool::new(1);
    let mib = 1u64 << 20;
    let capped = |name: &str| {
        spec(name)
            .max_memory(256 * mib)
            .max_cpu(Duration::from_secs(1))
            .timeout(Duration::from_secs(30))
            .build()
    };
    let tools: Vec<Arc<dyn Tool>> = vec![
        Arc::new(EchoTool),
        Arc::new(IsolatedTool::new(capped("iso_echo")?).with_pool(pool.clone())),
        Arc::new(IsolatedTool::new(capped("alloc")?).with_pool(pool.clone())),
        Arc::new(IsolatedTool::new(capped("spin")?).with_pool(pool.clone())),
        Arc::new(IsolatedTool::new(capped("abort")?).with_pool(pool.clone())),
        Arc::new(WasmTool::new(
            spec("wasm_echo").build()?,
            &wat::parse_str(ECHO_WAT)?,
        )?),
        Arc::new(WasmTool::new(
            spec("wasm_spin").fuel(10_000_000).build()?,
            &wat::parse_str(SPIN_WAT)?,
        )?),
    ];
    let mut registry: ToolRegistry = ToolRegistry::new();
    for tool in tools {
        registry.register(tool)?;
    }
    let exec = ToolExecutor::builder(registry, ()).build()?;
    let run = RunContext::builder(()).build();
    let turn = Turn::new(1);
    let once = |id: String, name: &'static str| {
        let call = ToolCall::new(id, name, r#"{"text":"hello"}"#);
        exec.execute(&run, &turn, call)
    };
    // Warm up: the worker starts on the first call.
    assert!(!once("w".into(), "wasm_echo").await.is_error);
    println!("calls: {CALLS} each, median of per-call wall time\n");
    for (name, label) in [
        ("echo", "in-process echo (builtin)"),
        ("iso_echo", "isolated echo (warm worker)"),
        ("wasm_echo", "WASM echo (fresh instance per call)"),
    ] {
        let mut samples = Vec::with_capacity(CALLS);
        for i in 0..CALLS {
            let started = Instant::now();
            let result = once(format!("{name}-{i}"), name).await;
            samples.push(started.elapsed());
            if result.is_error {
                return Err(format!("{name}: {:?}", result.error).into());
            }
        }
        show(label, median(samples));
    }

    println!();
    for (name, label) in [
        ("abort", "detect a crash (abort)"),
        ("alloc", "detect memory exhaustion (4 GiB under 256 MiB)"),
        ("spin", "detect CPU exhaustion (endless loop, 1 s cap)"),
        ("wasm_spin", "detect fuel exhaustion (10M fuel)"),
    ] {
        let started = Instant::now();
        let result = once(format!("{name}-x"), name).await;
        let took = started.elapsed();
        show(&format!("{label} -> {}", result.outcome()), took);
    }

    let mut spawns = Vec::new();
    for _ in 0..20 {
        let fresh = WorkerPool::new(1);
        let started = Instant::now();
        fresh.prewarm(&ResourceBounds::NONE, 1).await?;
        spawns.push(started.elapsed());
    }
    show(
        "worker start (spawn until ready), median of 20",
        median(spawns),
    );
    let stats = pool.stats();
    println!(
        "\npool: spawned {}, died {}, killed {}",
        stats.spawned, stats.died, stats.killed
    );
    Ok(())
}
