//! The READMEs' first tool: the repository's README and the core crate's
//! show the same whole program, which is `examples/first_tool.rs` as is.
//! That program is compiled here and its tool checked against what the
//! README says happened. (Every Rust block of both READMEs is also a
//! doctest: the repository's in this package, the crate's in the crate.)

use tinyagents_tools_tests::readme_block;

#[test]
fn both_readmes_first_snippet_is_the_first_tool_example() {
    let example = include_str!("../examples/first_tool.rs");
    for (readme, text) in [
        ("README.md", include_str!("../README.md")),
        (
            "tinyagents-tools/README.md",
            include_str!("../tinyagents-tools/README.md"),
        ),
    ] {
        assert_eq!(
            readme_block(text, "## Your first tool"),
            example,
            "the first snippet of {readme} and examples/first_tool.rs differ"
        );
    }
}

/// The README's first program (`cargo run --example first_tool`), as is,
/// and the checks of its tool (here, where its private items are seen).
mod first_program {
    include!("../examples/first_tool.rs");

    use serde_json::json;
    use tinyagents_tools::spec::Idempotency;

    #[test]
    fn the_first_program_compiles_and_runs() {
        main().expect("the program runs");
    }

    #[test]
    fn the_first_tool_is_what_the_readme_says_it_became() {
        let spec = WeatherTool::spec();
        // The fn's doc comment is the description; the arguments' struct is the
        // input schema (JSON Schema 2020-12), its doc comments the descriptions,
        // closed to other keys.
        assert_eq!(spec.description, "Current weather in a city.");
        assert_eq!(
            spec.input_schema.as_value(),
            &json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "title": "WeatherArgs",
                "description": "What to look up.",
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "City name, e.g. \"Paris\"."}
                },
                "required": ["city"],
                "additionalProperties": false
            })
        );
        // The declared safety metadata and timeout.
        assert!(spec.safety.is_read_only());
        assert_eq!(spec.safety.idempotency, Idempotency::Idempotent);
        assert_eq!(spec.timeout, Some(std::time::Duration::from_secs(5)));
    }

    #[tokio::test]
    async fn a_key_the_model_invents_is_refused_and_the_fn_stays_a_fn()
    -> Result<(), Box<dyn std::error::Error>> {
        let mut registry = ToolRegistry::new();
        registry.register(WeatherTool)?;
        let executor = ToolExecutor::builder(registry, ()).build()?;
        let invented = ToolCall::new("call_1", "weather", r#"{"city": "Paris", "units": "C"}"#);
        let refused = executor
            .execute(&RunContext::empty(), &Turn::new(1), invented)
            .await;
        assert!(refused.is_error);
        assert_eq!(
            refused.error.as_ref().map(|e| e.kind().as_str()),
            Some("invalid_arguments")
        );
        // `weather` itself is unchanged: a test calls it directly.
        let direct = weather(WeatherArgs {
            city: "Oslo".into(),
        })
        .await?;
        assert_eq!(direct, "It is sunny in Oslo.");
        Ok(())
    }
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
