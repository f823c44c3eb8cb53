//! A newcomer's first hour: the rough edges met writing two tools from the
//! README alone.

use serde_json::json;
use tinyagents_tools::error::ErrorKind;
use tinyagents_tools::prelude::*;
use tinyagents_tools::testkit::ToolHarness;
use tinyagents_tools::{ErrorClass, WorkspaceRoot};

/// A temperature unit.
#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Unit {
    /// Degrees Celsius.
    Celsius,
    /// Degrees Fahrenheit.
    Fahrenheit,
}

#[derive(Deserialize, JsonSchema)]
struct ForecastArgs {
    /// The city.
    city: String,
    /// The unit of the answer.
    unit: Unit,
}

/// Tomorrow's temperature in a city.
#[tool]
async fn forecast(args: ForecastArgs) -> String {
    let degrees = match args.unit {
        Unit::Celsius => "20 °C",
        Unit::Fahrenheit => "68 °F",
    };
    format!("{}: {degrees}", args.city)
}

#[derive(Deserialize, JsonSchema)]
struct Nothing {}

/// Lists the workspace.
#[tool]
async fn list_workspace(_args: Nothing, #[inject] root: WorkspaceRoot) -> String {
    root.path().display().to_string()
}

#[test]
fn a_documented_enum_is_a_one_of_of_consts_in_the_schema() {
    let schema = ForecastTool::spec().input_schema.as_value().clone();
    let text = schema.to_string();
    assert!(text.contains("oneOf"), "{text}");
    assert!(text.contains("Degrees Celsius."), "{text}");
}

#[tokio::test]
async fn a_documented_enum_gives_the_allowed_values_in_the_repair_message() {
    let harness = ToolHarness::builder(ForecastTool).build().unwrap();
    let error = harness
        .call_err(json!({"city": "Paris", "unit": "kelvin"}))
        .await;
    assert_eq!(
        error.message(),
        "invalid arguments: `unit`: must be one of: \"celsius\", \"fahrenheit\""
    );
    let error = harness.call_err(json!({"city": "Paris", "unit": 3})).await;
    assert_eq!(
        error.message(),
        "invalid arguments: `unit`: must be one of: \"celsius\", \"fahrenheit\""
    );
}

#[tokio::test]
async fn a_registry_and_an_executor_infer_their_types_without_annotations() {
    let mut registry = ToolRegistry::new();
    registry.register(ForecastTool).unwrap();
    assert_eq!(registry.names().collect::<Vec<_>>(), ["forecast"]);
    let executor = ToolExecutor::builder(registry, ()).build().unwrap();
    let call = ToolCall::new("c1", "forecast", r#"{"city": "Oslo", "unit": "celsius"}"#);
    let result = executor
        .execute(&RunContext::empty(), &Turn::new(1), call)
        .await;
    assert_eq!(result.text(), "Oslo: 20 °C");
}

#[tokio::test]
async fn a_runtime_errors_display_says_its_cause_and_the_model_sees_only_the_message() {
    let harness = ToolHarness::builder(ListWorkspaceTool).build().unwrap();
    let result = harness.call(json!({})).await;
    let error = result.error.as_ref().unwrap();
    assert!(matches!(error.kind(), ErrorKind::InjectionFailed { .. }));
    assert_eq!(
        error.to_string(),
        "the tool could not run: a resource it needs is not available (cause: the run has no workspace root)"
    );
    assert_eq!(
        result.text(),
        "the tool could not run: a resource it needs is not available"
    );
}

#[test]
fn a_display_does_not_repeat_a_cause_the_message_already_says() {
    let error = ToolError::from_error(std::io::Error::other("disk full"), ErrorClass::Retry);
    assert_eq!(error.to_string(), "disk full");
}

/// A harness over both tools.
fn forecast_and_workspace() -> ToolHarness {
    ToolHarness::builder(ForecastTool)
        .tool(ListWorkspaceTool)
        .build()
        .unwrap()
}

#[tokio::test]
async fn an_unknown_tool_name_close_to_an_offered_one_gets_did_you_mean() {
    let harness = forecast_and_workspace();
    let result = harness.call_tool("forcast", json!({})).await;
    assert_eq!(result.outcome(), "unknown_tool");
    assert_eq!(
        result.text(),
        "there is no tool named `forcast`; did you mean `forecast`?"
    );
    let far = harness.call_tool("translate", json!({})).await;
    assert_eq!(
        far.text(),
        "there is no tool named `translate`; call one of the tools you were given"
    );
}

#[tokio::test]
async fn did_you_mean_never_names_a_tool_not_offered_this_turn() {
    let harness = forecast_and_workspace();
    let turn = Turn::new(1).advertising(["list_workspace"]);
    let call = ToolCall::new("c1", "forcast", "{}");
    let result = harness.executor().execute(harness.run(), &turn, call).await;
    assert_eq!(
        result.text(),
        "there is no tool named `forcast`; call one of the tools you were given"
    );
}
