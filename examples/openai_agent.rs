//! A real agent loop against any OpenAI-compatible Chat Completions endpoint,
//! with the quickstart's tools.
//!
//! ```text
//! OPENAI_API_KEY=... OPENAI_MODEL=gpt-4.1-mini \
//!     cargo run --features openai --example openai_agent -- "How do retries work? And what is 6 * 7?"
//! ```
//!
//! `OPENAI_BASE_URL` points it at another compatible server (a local
//! llama.cpp or vLLM, a proxy). The loop lives in
//! `tinyagents_tools_examples::agent`.

use std::process::ExitCode;

use tinyagents_tools_examples::agent::cli;

#[tokio::main]
async fn main() -> ExitCode {
    let code = cli(
        std::env::args().skip(1),
        |name| std::env::var(name).ok(),
        &mut std::io::stdout(),
        &mut std::io::stderr(),
    )
    .await;
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}
