//! A real agent loop against any OpenAI-compatible endpoint, with the
//! quickstart's tools.
//!
//! ```text
//! OPENAI_API_KEY=... OPENAI_MODEL=gpt-4.1-mini \
//!     cargo run --features openai --example openai_agent -- "How do retries work? And what is 6 * 7?"
//! ```
//!
//! Replies are streamed by default, as a chat user expects: the text is
//! printed as it arrives, each call starts the moment its arguments close
//! (while the model still writes the next one), and each answer is printed
//! as a `[turn N] id tool args -> status: answer` line once the turn's
//! calls are done; reasoning and the calls starting go to stderr.
//! `--no-stream` waits for each whole reply and prints the calls and the
//! answer at the end.
//!
//! `--text-format NAME` runs the same loop against a raw completion
//! endpoint (`{OPENAI_BASE_URL}/completions`) for a model served without a
//! tool parser: the prompt is written in the family's chat template (the
//! format's instruction, the conversation, the tool results in the family's
//! form) and the calls are read out of the streamed text. NAME is any text
//! format (`hermes`, `qwen3-coder`, `glm45`, `llama3-json`, `pythonic`,
//! `mistral`, `mistral-v11`, `deepseek-v3`, `deepseek-v31`, `kimi-k2`,
//! `harmony`, `tags:START,END`):
//!
//! ```text
//! OPENAI_BASE_URL=http://127.0.0.1:8000/v1 OPENAI_MODEL=Qwen/Qwen3-8B \
//!     cargo run --features openai --example openai_agent -- --text-format hermes "What is 6 * 7?"
//! ```
//!
//! `OPENAI_BASE_URL` points it at another compatible server (a local
//! llama.cpp or vLLM, a proxy); `--help` lists every flag. The loop lives
//! in `tinyagents_tools_examples::agent`.

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
