//! A tool fn's return type: every `Result`, whatever its name, is split into
//! success or failure, and the error types users already have become a
//! classified `ToolError` whose message is the error's `Display` only.

use std::fmt;

use serde_json::json;
use tinyagents_tools::ErrorClass;
use tinyagents_tools::error::{ClassifyError, MAX_ERROR_TEXT};
use tinyagents_tools::prelude::*;
use tinyagents_tools::testkit::ToolHarness;

type Outcome<T> = Result<T, String>;

/// Returns two, or fails when asked to.
#[tool(read_only)]
async fn alias_ok() -> Outcome<u32> {
    Ok(2)
}

/// Always fails with a plain message.
#[tool(read_only)]
async fn alias_err() -> Outcome<u32> {
    Err("no such city".to_owned())
}

/// Fails with an anyhow error that has context.
#[tool(read_only)]
async fn anyhow_err() -> anyhow::Result<u32> {
    let inner: Result<u32, std::num::ParseIntError> = "x".parse::<u32>();
    let value = anyhow::Context::context(inner, "the city code is not a number")?;
    Ok(value)
}

/// Fails with an I/O timeout.
#[tool(read_only)]
async fn io_err() -> std::io::Result<u32> {
    Err(std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        "/etc/secret/path",
    ))
}

/// An error type of the application's, with a `Debug` form that must not
/// reach the model.
#[derive(Debug)]
struct LookupError {
    #[allow(dead_code)]
    internal_token: &'static str,
}

impl fmt::Display for LookupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the lookup service refused the query")
    }
}

impl std::error::Error for LookupError {}

/// Fails with an application error.
#[tool(read_only)]
async fn custom_err() -> Result<u32, LookupError> {
    Err(LookupError {
        internal_token: "tok-123",
    })
}

#[derive(Debug)]
struct Busy;

impl fmt::Display for Busy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the service is busy")
    }
}

impl std::error::Error for Busy {}

impl ClassifyError for Busy {
    fn error_class(&self) -> ErrorClass {
        ErrorClass::Retry
    }
}

/// Fails with an error that chooses its class.
#[tool(read_only)]
async fn classified_err() -> Result<u32, Busy> {
    Err(Busy)
}

/// Fails with a boxed error.
#[tool(read_only)]
async fn boxed_err() -> Result<u32, Box<dyn std::error::Error + Send + Sync>> {
    Err("x".repeat(4 * MAX_ERROR_TEXT).into())
}

#[derive(Serialize, JsonSchema)]
struct Report {
    total: u32,
}

/// Returns a report under an alias.
#[tool(read_only)]
async fn report() -> Outcome<Report> {
    Ok(Report { total: 3 })
}

/// Returns nothing under an alias.
#[tool(read_only)]
async fn nothing() -> anyhow::Result<()> {
    Ok(())
}

async fn error_of(tool: impl Tool) -> ToolError {
    ToolHarness::builder(tool)
        .build()
        .unwrap()
        .call_err(json!({}))
        .await
}

/// The error `tool` fails with, which must be of `class` with `message`.
async fn error_with(tool: impl Tool, class: ErrorClass, message: &str) -> ToolError {
    let err = error_of(tool).await;
    assert_eq!(err.class(), class, "{err:?}");
    assert_eq!(err.message(), message);
    err
}

#[tokio::test]
async fn a_result_alias_is_a_success_or_a_failure_not_a_value() {
    let harness = ToolHarness::builder(AliasOkTool).build().unwrap();
    let result = harness.call_ok(json!({})).await;
    assert_eq!(result.structured, Some(json!(2)));

    error_with(AliasErrTool, ErrorClass::Repair, "no such city").await;
}

#[tokio::test]
async fn an_anyhow_error_is_a_repairable_error_showing_its_display_only() {
    let err = error_with(
        AnyhowErrTool,
        ErrorClass::Repair,
        "the city code is not a number",
    )
    .await;
    assert_eq!(err.kind().as_str(), "tool");
}

#[tokio::test]
async fn an_io_result_keeps_the_io_errors_class_and_hides_its_text() {
    let err = error_of(IoErrTool).await;
    assert_eq!(err.class(), ErrorClass::Retry);
    assert!(!err.message().contains("secret"), "{}", err.message());
}

#[tokio::test]
async fn an_application_error_shows_its_display_never_its_debug_form() {
    let err = error_with(
        CustomErrTool,
        ErrorClass::Repair,
        "the lookup service refused the query",
    )
    .await;
    assert!(!format!("{err}").contains("tok-123"));
}

#[tokio::test]
async fn an_error_type_chooses_its_class_through_classify_error() {
    error_with(ClassifiedErrTool, ErrorClass::Retry, "the service is busy").await;
}

#[tokio::test]
async fn a_boxed_errors_text_is_bounded() {
    let err = error_of(BoxedErrTool).await;
    assert_eq!(err.class(), ErrorClass::Repair);
    assert!(
        err.message().len() <= MAX_ERROR_TEXT,
        "{}",
        err.message().len()
    );
    assert!(err.message().ends_with('…'));
}

#[test]
fn the_output_schema_of_an_alias_is_its_success_types() {
    let schema = ReportTool::spec().output_schema.as_ref().expect("a schema");
    assert_eq!(schema.as_value()["properties"]["total"]["type"], "integer");
    assert_eq!(NothingTool::spec().output_schema, None);
}
