//! The isolated tools of the tests, written with `#[tool(isolated, ...)]`:
//! each a runaway of one kind. The worker program registers their bodies,
//! the tests register their agent sides.

use std::time::Duration;

use serde_json::{Value, json};
use tinyagents_tools::prelude::*;

/// Keeps 64 MiB blocks, each written, until it holds 4 GiB.
#[tool(isolated, max_memory = "256MiB")]
pub async fn isolated_alloc() -> ToolOutput {
    let mut blocks: Vec<Vec<u8>> = Vec::new();
    for i in 0..64u8 {
        blocks.push(vec![i | 1; 64 << 20]);
    }
    let total: usize = blocks.iter().map(Vec::len).sum();
    ToolOutput::text(format!("held {total} bytes"))
}

/// Never returns and never awaits.
#[tool(isolated, max_cpu = "1s", timeout = "60s")]
pub async fn isolated_spin() {
    let mut x: u64 = 0;
    loop {
        x = std::hint::black_box(x.wrapping_add(1));
    }
}

/// Aborts its process.
#[tool(isolated)]
pub async fn isolated_abort() {
    std::process::abort()
}

/// Panics.
#[tool(isolated)]
pub async fn isolated_panic() {
    panic!("a bug in the tool");
}

/// Blocks its thread far longer than any test waits: a synchronous fn, run
/// as is in its worker.
#[tool(isolated, blocking, timeout = "300ms")]
pub fn isolated_sleep() {
    std::thread::sleep(Duration::from_secs(3600));
}

/// Prints to stdout around its answer.
#[tool(isolated)]
pub async fn isolated_noisy() -> ToolOutput {
    print!("partial line without a newline ");
    println!("and a full line");
    ToolOutput::text("answered")
}

/// Reports what crossed: the injected call id and the secret's length.
#[tool(isolated)]
pub async fn isolated_injected(#[inject] id: ToolCallId, #[inject] key: Secret<String>) -> Value {
    json!({
        "injected_id": id.as_str(),
        "key_len": key.expose().len(),
    })
}

/// The arguments of `isolated_typed`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TypedArgs {
    /// The number to double.
    pub n: Option<u64>,
}

/// Doubles `n`; without it, a repairable error.
#[tool(isolated, read_only)]
pub async fn isolated_typed(args: TypedArgs) -> Result<u64, ToolError> {
    args.n
        .map(|n| n * 2)
        .ok_or_else(|| ToolError::repair("`n` must be a number"))
}
