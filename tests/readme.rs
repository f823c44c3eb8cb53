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
