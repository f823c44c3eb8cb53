//! Registered tools handed to rig run through the tinyagents executor:
//! validation, events and classified refusals come back as rig results.

#[path = "support/executor.rs"]
mod executor;

use std::sync::Arc;

use rig_core::tool::{ErasedTool, ToolContext, ToolErrorKind};
use serde_json::json;
use tinyagents_tools::RunContext;
use tinyagents_tools::events::EventKind;
use tinyagents_tools_rig::{RigTool, UnknownTool, rig_tools};

use executor::recorded_executor;

#[tokio::test]
async fn a_whole_registry_becomes_rig_tools_that_run_through_the_executor() {
    let (executor, recorder) = recorded_executor();
    let tools = rig_tools(executor, Arc::new(RunContext::empty()));
    let names: Vec<String> = tools.iter().map(ErasedTool::name).collect();
    assert_eq!(names, ["echo", "hash"]);
    let echo = &tools[0];
    assert_eq!(echo.description(), "Return the given text unchanged.");
    assert_eq!(echo.parameters()["required"], json!(["text"]));

    let result = echo
        .execute(r#"{"text": "hi"}"#.to_owned(), &mut ToolContext::default())
        .await;
    assert!(result.is_success(), "{result:?}");
    assert_eq!(result.output().as_text(), Some("hi"));
    assert_eq!(
        recorder.kinds_for("rig-echo-1"),
        [EventKind::Started, EventKind::Completed]
    );
}

#[tokio::test]
async fn invalid_arguments_from_rig_are_refused_classified_and_the_tool_never_runs() {
    let (executor, recorder) = recorded_executor();
    let hash = RigTool::new(executor, Arc::new(RunContext::empty()), "hash").unwrap();
    let result = hash
        .execute(r#"{"text": 7}"#.to_owned(), &mut ToolContext::default())
        .await;
    assert!(
        result.is_error_kind(ToolErrorKind::InvalidArgs),
        "{result:?}"
    );
    let error = result.error().unwrap();
    assert_eq!(error.code(), Some("invalid_arguments"));
    let feedback = error.model_feedback().unwrap();
    assert!(feedback.contains("text"), "{feedback}");
    assert_eq!(feedback, error.message());
    assert_eq!(recorder.kinds_for("rig-hash-1"), [EventKind::Rejected]);

    let not_json = hash
        .execute("not json".to_owned(), &mut ToolContext::default())
        .await;
    assert!(
        not_json.is_error_kind(ToolErrorKind::InvalidArgs),
        "{not_json:?}"
    );
}

#[tokio::test]
async fn a_rig_dynamic_tool_keeps_the_definition_and_unknown_names_are_refused() {
    let (executor, _) = recorded_executor();
    let run = Arc::new(RunContext::empty());
    assert_eq!(
        RigTool::new(executor.clone(), run.clone(), "nope").err(),
        Some(UnknownTool("nope".into()))
    );
    let echo = RigTool::new(executor, run, "echo").unwrap();
    let direct = echo.call(json!({"text": "direct"})).await.unwrap();
    assert_eq!(direct.as_text(), Some("direct"));
    let listed = echo.definition();
    assert_eq!(listed.name.as_str(), "echo");
    assert_eq!(listed.parameters, echo.parameters());
    let dynamic = echo.into_dynamic();
    assert_eq!(dynamic.name().as_str(), "echo");
    let definition = dynamic.definition();
    assert_eq!(definition.description, "Return the given text unchanged.");
    assert_eq!(
        definition.parameters["properties"]["text"]["type"],
        "string"
    );
}
