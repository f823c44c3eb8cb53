//! Examples of arguments: `#[tool(example = ...)]` on the spec, checked
//! against the input schema at registration, exported as Anthropic's
//! `input_examples` and appended to the description for other providers.

use serde_json::json;
use tinyagents_tools::RegistryError;
use tinyagents_tools::prelude::*;
use tinyagents_tools::providers::{
    AnthropicOptions, ExportTarget, GeminiOptions, OpenAiOptions, export_tool,
};
use tinyagents_tools_tests::FakeTool;

/// Current weather in a city.
#[tool(
    read_only,
    example = r#"{"city": "Paris"}"#,
    example = r#"{"unit": "celsius", "city": "Oslo"}"#
)]
async fn weather(
    /// The city.
    city: String,
    /// `celsius` or `fahrenheit` (default `celsius`).
    unit: Option<String>,
) -> String {
    format!("sunny in {city} ({})", unit.unwrap_or_default())
}

/// What the model reads for `weather` everywhere but Anthropic.
const WEATHER_WITH_EXAMPLES: &str = "Current weather in a city.\n\nExamples of arguments:\n\
     {\"city\":\"Paris\"}\n{\"city\":\"Oslo\",\"unit\":\"celsius\"}";

#[test]
fn examples_on_the_attribute_reach_the_spec_in_order() {
    assert_eq!(
        WeatherTool::spec().examples,
        [
            json!({"city": "Paris"}),
            json!({"city": "Oslo", "unit": "celsius"})
        ]
    );
    let mut registry = ToolRegistry::new();
    registry.register(WeatherTool).unwrap();
}

/// Current weather, with a city given as a number.
#[tool(example = r#"{"city": "Paris"}"#, example = r#"{"city": 75}"#)]
async fn wrong_type(
    /// The city.
    city: String,
) -> String {
    city
}

/// Current weather, with the city left out.
#[tool(example = r#"{"unit": "celsius"}"#)]
async fn missing_city(
    /// The city.
    city: String,
    /// The unit.
    unit: Option<String>,
) -> String {
    format!("{city}{unit:?}")
}

/// Current weather, with a key the tool does not take.
#[tool(example = r#"{"city": "Paris", "country": "FR"}"#)]
async fn unknown_key(
    /// The city.
    city: String,
) -> String {
    city
}

#[test]
fn an_example_the_schema_refuses_is_a_registration_error_naming_the_field() {
    let mut registry = ToolRegistry::new();
    let err = registry.register(WrongTypeTool).unwrap_err();
    let RegistryError::InvalidExample {
        tool,
        example,
        field,
        problem,
    } = &err
    else {
        panic!("not an example error: {err}");
    };
    assert_eq!(
        (tool.as_str(), *example, field.as_str()),
        ("wrong_type", 2, "city")
    );
    assert!(problem.contains("is not of type \"string\""), "{problem}");
    assert_eq!(err.rule(), "invalid_example");
    assert!(
        err.to_string().starts_with(
            "tool `wrong_type`: example 2 does not match the input schema at `city`: "
        ),
        "{err}"
    );

    let err = registry.register(MissingCityTool).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tool `missing_city`: example 1 does not match the input schema at `city`: is required"
    );
    let err = registry.register(UnknownKeyTool).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tool `unknown_key`: example 1 does not match the input schema at `country`: is not an accepted argument"
    );
    // Nothing refused was registered.
    assert!(registry.is_empty());
}

#[test]
fn an_example_that_is_not_an_object_is_refused_at_the_root() {
    let spec = ToolSpec::builder("echo", "Repeat the text.")
        .example(json!(["Paris"]))
        .build()
        .unwrap();
    let err = registry_with(spec).unwrap_err();
    assert_eq!(
        err.to_string(),
        "tool `echo`: example 1 does not match the input schema at `arguments`: an example is the JSON object of a call's arguments"
    );
}

fn registry_with(spec: ToolSpec) -> Result<ToolRegistry, RegistryError> {
    let mut registry = ToolRegistry::new();
    registry.register(FakeTool::new(spec))?;
    Ok(registry)
}

#[test]
fn anthropic_declarations_list_the_examples_as_input_examples() {
    let declaration = export_tool(
        WeatherTool::spec(),
        ExportTarget::Anthropic(AnthropicOptions::default()),
    )
    .unwrap()
    .into_json();
    assert_eq!(
        declaration["description"],
        json!("Current weather in a city.")
    );
    assert_eq!(
        declaration["input_examples"],
        json!([{"city": "Paris"}, {"city": "Oslo", "unit": "celsius"}])
    );
}

#[test]
fn other_providers_read_the_examples_appended_to_the_description() {
    let spec = WeatherTool::spec();
    let chat = export_tool(spec, ExportTarget::OpenAiChat(OpenAiOptions::default()))
        .unwrap()
        .into_json();
    assert_eq!(
        chat["function"]["description"],
        json!(WEATHER_WITH_EXAMPLES)
    );
    for target in [
        ExportTarget::OpenAiResponses(OpenAiOptions::default()),
        ExportTarget::Gemini(GeminiOptions::default()),
        ExportTarget::Mcp,
    ] {
        let declaration = export_tool(spec, target).unwrap().into_json();
        assert_eq!(
            declaration["description"],
            json!(WEATHER_WITH_EXAMPLES),
            "{target:?}"
        );
        assert!(declaration.get("input_examples").is_none(), "{target:?}");
    }
}

/// Current weather, without examples.
#[tool(read_only)]
async fn plain_weather(
    /// The city.
    city: String,
) -> String {
    city
}

#[test]
fn a_tool_without_examples_exports_its_description_as_written() {
    let spec = PlainWeatherTool::spec();
    assert!(spec.examples.is_empty());
    let anthropic = export_tool(spec, ExportTarget::Anthropic(AnthropicOptions::default()))
        .unwrap()
        .into_json();
    assert!(anthropic.get("input_examples").is_none());
    let chat = export_tool(spec, ExportTarget::OpenAiChat(OpenAiOptions::default()))
        .unwrap()
        .into_json();
    assert_eq!(
        chat["function"]["description"],
        json!("Current weather, without examples.")
    );
    // The serialized spec leaves the empty list out.
    assert!(
        serde_json::to_value(spec)
            .unwrap()
            .get("examples")
            .is_none()
    );
}
