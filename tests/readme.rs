//! The README's first tool, kept compiling and running.

use tinyagents_tools::prelude::*;
use tinyagents_tools_tests::readme_block;

/// What to look up.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct WeatherArgs {
    /// City name, e.g. "Paris".
    city: String,
}

/// Current temperature in a city, in °C.
#[tool(read_only, idempotent, timeout = "5s")]
async fn weather(args: WeatherArgs, #[inject] cancel: CancellationToken) -> Result<f64, ToolError> {
    if cancel.is_cancelled() {
        return Err(ToolError::retry("cancelled"));
    }
    Ok(if args.city == "Paris" { 18.5 } else { 21.0 })
}

#[tokio::test]
async fn the_readme_tool_registers_and_runs_through_the_executor()
-> Result<(), Box<dyn std::error::Error>> {
    let mut registry: ToolRegistry = ToolRegistry::new();
    registry.register(WeatherTool)?;

    let executor = ToolExecutor::builder(registry, ()).build()?;
    let run = RunContext::empty();
    let call = ToolCall::new("call_1", "weather", r#"{"city": "Paris"}"#);
    let result = executor.execute(&run, &Turn::new(1), call).await;
    assert_eq!(result.text(), "18.5");

    let forged = ToolCall::new("call_2", "weather", r#"{"city": "Paris", "cancel": true}"#);
    let refused = executor.execute(&run, &Turn::new(1), forged).await;
    assert!(refused.is_error);
    // The fn is still a plain fn.
    let direct = weather(
        WeatherArgs {
            city: "Oslo".into(),
        },
        CancellationToken::new(),
    )
    .await?;
    assert_eq!(direct, 21.0);
    Ok(())
}

/// The README's first program (`cargo run --example first_tool`), as is.
mod first_program {
    include!("../examples/first_tool.rs");

    pub(super) fn run() -> Result<(), Box<dyn std::error::Error>> {
        main()
    }
}

#[test]
fn the_readmes_first_snippet_is_a_whole_program_that_compiles_and_runs() {
    assert_eq!(
        readme_block("## Your first tool"),
        include_str!("../examples/first_tool.rs"),
        "the README's first snippet and examples/first_tool.rs differ"
    );
    first_program::run().expect("the program runs");
}

#[test]
fn the_readme_puts_code_modes_stubs_in_the_code_arguments_description() {
    // As the code-mode crate's README, crate doc and guide do (its test
    // `the_readme_the_crate_doc_and_the_guide_put_the_stubs_where_the_declaration_does`).
    let prose = include_str!("../README.md")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let sentences: Vec<&str> = prose
        .split(". ")
        .filter(|sentence| sentence.contains("stub") && sentence.contains("description"))
        .collect();
    assert!(
        !sentences.is_empty(),
        "the README does not say where the stubs sit"
    );
    for sentence in sentences {
        assert!(sentence.contains("`code` argument"), "{sentence}");
    }
}
