//! The worker program of the isolated-tool tests: the tool bodies, each a
//! runaway of one kind, behind `serve_if_worker` as an application's `main`
//! would have them. Started by hand it does nothing.

use std::time::Duration;

use serde_json::{Value, json};
use tinyagents_tools::isolated::{WorkerRegistry, serve_if_worker};
use tinyagents_tools::{Secret, ToolCallId, ToolError, ToolOutput};

fn workers() -> WorkerRegistry {
    WorkerRegistry::new()
        // Answers with its process id and arguments.
        .tool("isolated_echo", |call| async move {
            Ok(ToolOutput::structured(
                json!({"pid": std::process::id(), "arguments": call.arguments()}),
            ))
        })
        // Keeps 64 MiB blocks, each written, until it holds 4 GiB.
        .tool("isolated_alloc", |_| async move {
            let mut blocks: Vec<Vec<u8>> = Vec::new();
            for i in 0..64u8 {
                blocks.push(vec![i | 1; 64 << 20]);
            }
            let total: usize = blocks.iter().map(Vec::len).sum();
            Ok(ToolOutput::text(format!("held {total} bytes")))
        })
        // Never returns and never awaits.
        .tool("isolated_spin", |_| async move {
            let mut x: u64 = 0;
            loop {
                x = std::hint::black_box(x.wrapping_add(1));
            }
        })
        .tool("isolated_abort", |_| async move { std::process::abort() })
        .tool("isolated_panic", |_| async move {
            panic!("a bug in the tool");
        })
        // Blocks its thread far longer than any test waits.
        .tool("isolated_sleep", |_| async move {
            std::thread::sleep(Duration::from_secs(3600));
            Ok(ToolOutput::empty())
        })
        // Prints to stdout around its answer.
        .tool("isolated_noisy", |_| async move {
            print!("partial line without a newline ");
            println!("and a full line");
            Ok(ToolOutput::text("answered"))
        })
        // Reports what crossed: the injected call id and the secret's length.
        .tool("isolated_injected", |mut call| async move {
            let id: ToolCallId = call.injected("id")?;
            let key: Secret<String> = call.injected("key")?;
            Ok(ToolOutput::structured(json!({
                "injected_id": id.as_str(),
                "call_id": call.call_id().as_str(),
                "key_len": key.expose().len(),
            })))
        })
        .tool("isolated_typed", |call| async move {
            let n: u64 = call
                .args::<Value>()?
                .get("n")
                .and_then(Value::as_u64)
                .ok_or_else(|| ToolError::repair("`n` must be a number"))?;
            Ok(ToolOutput::structured(json!(n * 2)))
        })
}

fn main() {
    serve_if_worker(workers);
}
