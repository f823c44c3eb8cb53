//! The testkit's fakes: `FakeTool` answers as scripted and keeps what it
//! was called with; `Spy` keeps what any tool was called with.

use std::time::Duration;

use serde_json::json;
use tinyagents_tools::builtins::EchoTool;
use tinyagents_tools::prelude::*;
use tinyagents_tools::testkit::{FakeTool, Spy, ToolHarness};
use tinyagents_tools::{ErrorClass, ToolSchema};

fn lookup_spec() -> ToolSpec {
    ToolSpec::builder("lookup", "Look a word up.")
        .input_schema(ToolSchema::from_value(json!({
            "type": "object",
            "properties": {"word": {"type": "string"}},
            "additionalProperties": false
        })))
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_fake_fails_its_first_calls_then_answers_from_the_arguments_and_keeps_them_all() {
    let fake = FakeTool::new(lookup_spec())
        .failing_first(2, ToolError::repair("try another word"))
        .answering_with(|id, args| {
            Ok(ToolOutput::text(format!(
                "{id}: {}",
                args["word"].as_str().unwrap()
            )))
        })
        .shared();
    let harness = ToolHarness::builder(fake.clone()).build().unwrap();
    for word in ["a", "b"] {
        let error = harness.call_err(json!({ "word": word })).await;
        assert_eq!(error.class(), ErrorClass::Repair);
    }
    let answer = harness.call_ok(json!({"word": "c"})).await;
    assert!(answer.text().ends_with(": c"), "{}", answer.text());
    assert_eq!(fake.runs(), 3);
    assert_eq!(
        fake.seen(),
        [
            json!({"word": "a"}),
            json!({"word": "b"}),
            json!({"word": "c"})
        ]
    );
}

#[tokio::test]
async fn a_fake_that_forgets_arguments_still_counts_its_calls() {
    let fake = FakeTool::new(lookup_spec()).forgetting_arguments().shared();
    let harness = ToolHarness::builder(fake.clone()).build().unwrap();
    harness.call_ok(json!({"word": "a"})).await;
    harness.call_ok(json!({"word": "b"})).await;
    assert_eq!(fake.runs(), 2);
    assert!(fake.seen().is_empty());
}

#[tokio::test]
async fn a_cooperative_wait_ends_at_the_calls_cancellation_and_a_deaf_one_does_not() {
    let cancel = CancellationToken::new();
    let cooperative = FakeTool::new(lookup_spec())
        .waiting(Duration::from_secs(60))
        .shared();
    let harness = ToolHarness::builder(cooperative.clone())
        .cancellation(cancel.clone())
        .build()
        .unwrap();
    let call = harness.call_err(json!({}));
    let (error, ()) = tokio::join!(call, async { cancel.cancel() });
    assert_eq!(error.kind().as_str(), "cancelled");
    assert!(cooperative.saw_cancel());

    let deaf = FakeTool::new(lookup_spec())
        .waiting_deaf(Duration::from_millis(20))
        .answering(ToolOutput::text("done"))
        .shared();
    let harness = ToolHarness::builder(deaf.clone()).build().unwrap();
    assert_eq!(harness.call_ok(json!({})).await.text(), "done");
    assert!(!deaf.saw_cancel());
}

#[tokio::test]
async fn a_spy_keeps_the_arguments_of_every_call_the_tool_ran_and_only_those() {
    let spy = Spy::new(EchoTool);
    let harness = ToolHarness::builder(spy.clone()).build().unwrap();
    harness.call_ok(json!({"text": "hi"})).await;
    // Refused before the tool ran: the spy never sees it.
    harness
        .call_err(json!({"text": "hi", "forged": true}))
        .await;
    assert_eq!(spy.runs(), 1);
    assert_eq!(spy.seen(), [json!({"text": "hi"})]);
}
