//! Output schemas, enforced: a tool's declared output schema is checked on
//! every successful call, exported to MCP, and a tool may give the model a
//! separate view of its output.

use std::error::Error as _;

use serde_json::json;
use tinyagents_tools::error::ErrorKind;
use tinyagents_tools::prelude::*;
use tinyagents_tools::providers::{ExportTarget, export_tool, mcp};
use tinyagents_tools::testkit::{FakeTool, ToolHarness};
use tinyagents_tools::{ErrorClass, ToolSchema};
use tinyagents_tools_tests::{CityArgs, Reading, RenderedReadingTool};

#[derive(Deserialize, JsonSchema)]
struct ReadArgs {
    /// The raw sensor value to report.
    kelvin: i64,
}

/// Reports a reading exactly as the sensor gave it.
#[tool]
async fn read_sensor(args: ReadArgs) -> Reading {
    Reading {
        kelvin: args.kelvin,
        city: "Paris".into(),
    }
}

/// Describes the weather in a city.
#[tool]
async fn weather(args: CityArgs) -> String {
    format!("It is sunny in {}.\nWarm.", args.city)
}

#[tokio::test]
async fn an_output_that_matches_its_schema_is_a_success() {
    let harness = ToolHarness::builder(ReadSensorTool).build().unwrap();
    let result = harness.call_ok(json!({"kelvin": 290})).await;
    assert_eq!(
        result.structured,
        Some(json!({"kelvin": 290, "city": "Paris"}))
    );
}

#[tokio::test]
async fn an_output_that_breaks_its_schema_is_a_fatal_tool_fault_never_a_success() {
    let harness = ToolHarness::builder(ReadSensorTool).build().unwrap();
    let result = harness.call(json!({"kelvin": -7})).await;
    assert!(result.is_error);
    assert_eq!(result.outcome(), "invalid_output");
    assert_eq!(result.structured, None, "the bad value is not handed on");
    let error = result.error.as_ref().unwrap();
    assert_eq!(error.kind(), &ErrorKind::InvalidOutput);
    assert_eq!(error.class(), ErrorClass::Fatal);
    assert!(
        !result.text().contains("-7"),
        "the model never sees the bad value: {}",
        result.text()
    );
    let cause = error.source().expect("the mismatch is kept").to_string();
    assert!(cause.contains("/kelvin"), "{cause}");
}

#[tokio::test]
async fn an_output_schema_that_does_not_compile_is_refused_at_registration() {
    let spec = ToolSpec::builder("odd", "Returns an odd value.")
        .output_schema(ToolSchema::from_value(json!({"type": 12})))
        .build()
        .unwrap();
    let mut registry = ToolRegistry::new();
    let fixed = FakeTool::new(spec).answering(ToolOutput::structured(json!(1)));
    let error = registry.register(fixed).unwrap_err();
    assert_eq!(error.rule(), "invalid_output_schema");
    assert!(error.to_string().contains("`odd`"), "{error}");
}

#[tokio::test]
async fn a_hand_written_tool_without_a_structured_value_fails_a_schema_that_needs_one() {
    let spec = ToolSpec::builder("count", "Counts.")
        .output_schema(ToolSchema::from_value(
            json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}),
        ))
        .build()
        .unwrap();
    let fixed = FakeTool::new(spec).answering(ToolOutput::text("done"));
    let harness = ToolHarness::builder(fixed).build().unwrap();
    let error = harness.call_err(json!({})).await;
    assert_eq!(error.kind(), &ErrorKind::InvalidOutput);
}

#[tokio::test]
async fn a_flat_output_schema_checks_each_value_its_type_and_its_required_keys() {
    let schema = json!({
        "type": "object",
        "properties": {"n": {"type": "integer", "maximum": 10}, "unit": {"enum": ["m", "s"]}},
        "required": ["n"],
        "additionalProperties": false,
    });
    let cases = [
        (json!({"n": 3}), true),
        (json!({"n": 3, "unit": "m"}), true),
        (json!({"n": "3"}), false),
        (json!({"n": 11}), false),
        (json!({"n": 3, "unit": "kg"}), false),
        (json!({"unit": "m"}), false),
        (json!({"n": 3, "extra": true}), false),
        (json!([3]), false),
    ];
    for (value, valid) in cases {
        let spec = ToolSpec::builder("count", "Counts.")
            .output_schema(ToolSchema::from_value(schema.clone()))
            .build()
            .unwrap();
        let fixed = FakeTool::new(spec).answering(ToolOutput::structured(value.clone()));
        let result = ToolHarness::builder(fixed)
            .build()
            .unwrap()
            .call(json!({}))
            .await;
        assert_eq!(!result.is_error, valid, "{value}: {}", result.text());
        if !valid {
            assert_eq!(result.outcome(), "invalid_output", "{value}");
        }
    }
}

#[tokio::test]
async fn mcp_exports_the_output_schema_and_the_value_as_structured_content() {
    let harness = ToolHarness::builder(ReadSensorTool).build().unwrap();
    let declared = export_tool(ReadSensorTool::spec(), ExportTarget::Mcp)
        .unwrap()
        .json()
        .clone();
    assert_eq!(
        declared["outputSchema"]["properties"]["kelvin"]["minimum"],
        0
    );
    let result = harness.call_ok(json!({"kelvin": 300})).await;
    let answer = mcp::call_tool_result(&result);
    assert_eq!(
        answer["structuredContent"],
        json!({"kelvin": 300, "city": "Paris"})
    );
}

#[tokio::test]
async fn a_string_output_is_plain_text_to_the_model() {
    let harness = ToolHarness::builder(WeatherTool).build().unwrap();
    let result = harness.call_ok(json!({"city": "Paris"})).await;
    assert_eq!(result.text(), "It is sunny in Paris.\nWarm.");
    assert_eq!(result.to_message().text(), "It is sunny in Paris.\nWarm.");
    assert_eq!(
        result.structured,
        Some(json!("It is sunny in Paris.\nWarm."))
    );
}

#[tokio::test]
async fn a_rendered_output_shows_the_model_its_view_and_keeps_the_value() {
    let harness = ToolHarness::builder(RenderedReadingTool).build().unwrap();
    let result = harness.call_ok(json!({"city": "Oslo"})).await;
    assert_eq!(result.text(), "Oslo: 294 K");
    assert_eq!(
        result.structured,
        Some(json!({"kelvin": 294, "city": "Oslo"}))
    );
    let schema = RenderedReadingTool::spec().output_schema.clone().unwrap();
    assert_eq!(schema.as_value()["properties"]["kelvin"]["minimum"], 0);
    let answer = mcp::call_tool_result(&result);
    assert_eq!(answer["structuredContent"]["city"], "Oslo");
}
