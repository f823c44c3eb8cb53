//! `#[tool]` on a plain (not `async`) fn: a tool for any state and context
//! (when it injects nothing that names them), one the executor answers at
//! once, without a future.

use std::cell::Cell;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tinyagents_tools::builtins::{EchoTool, HashTool};
use tinyagents_tools::prelude::*;
use tinyagents_tools::testkit::{Spy, ToolHarness};
use tinyagents_tools::tool::ToolSearch;

thread_local! {
    /// How many times `length` answered on this thread (a test's calls
    /// all run on its own thread: `#[tokio::test]` runs a current-thread
    /// runtime, and the executor answers a plain fn's call in line).
    static ANSWERS: Cell<usize> = const { Cell::new(0) };
}

/// How many times `length` answered on this thread so far.
fn answers() -> usize {
    ANSWERS.with(Cell::get)
}

/// Count the characters of the text.
#[tool(read_only, idempotent, local)]
fn length(
    /// The text.
    text: String,
) -> Value {
    ANSWERS.with(|n| n.set(n.get() + 1));
    json!({"length": text.chars().count()})
}

/// Return the text in capitals.
#[tool(read_only, idempotent, local)]
fn upper(
    /// The text.
    text: String,
) -> ToolOutput {
    ToolOutput::text(text.to_uppercase())
}

#[tokio::test]
async fn a_plain_fn_tool_answers_the_same_at_once_and_through_call() {
    assert!(Tool::<(), ()>::__inline(&LengthTool).is_some());
    assert!(Tool::<String, u8>::__inline(&LengthTool).is_some());
    assert_eq!(Tool::<(), ()>::spec(&LengthTool).name.as_str(), "length");
    assert_eq!(
        Tool::<(), ()>::spec(&LengthTool).description,
        "Count the characters of the text."
    );

    let harness = ToolHarness::builder(EchoTool).build().unwrap();
    let runtime = harness.runtime("c1");
    let before = answers();
    let arguments = json!({"text": "héllo"});
    let inline = Tool::<(), ()>::__inline(&LengthTool).unwrap();
    let now = inline
        .call_inline(&(), &(&runtime).into(), &arguments)
        .unwrap();
    let later = Tool::call(&LengthTool, &(), &runtime, arguments)
        .await
        .unwrap();
    assert_eq!(now.structured, Some(json!({"length": 5})));
    assert_eq!(later.structured, now.structured);
    assert_eq!(answers() - before, 2);
    // A decoding failure is the same error both ways.
    let bad = json!({"text": 4});
    let now = inline
        .call_inline(&(), &(&runtime).into(), &bad)
        .unwrap_err();
    let later = Tool::call(&LengthTool, &(), &runtime, bad)
        .await
        .unwrap_err();
    assert_eq!(now.kind().as_str(), "invalid_arguments");
    assert_eq!(now.message(), later.message());
    assert_eq!(answers() - before, 2, "neither ran the fn");
}

#[tokio::test]
async fn a_plain_fn_tool_runs_through_the_executor_like_any_tool() {
    let harness = ToolHarness::builder(LengthTool).build().unwrap();
    let result = harness.call_ok(json!({"text": "four"})).await;
    assert_eq!(result.structured, Some(json!({"length": 4})));
    let refused = harness.call_err(json!({"text": 4})).await;
    assert!(refused.is_repairable());
    // Registered with its schema: `text`, a required string, and nothing
    // else.
    let schema = Tool::<(), ()>::spec(&LengthTool).input_schema.as_value();
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["properties"]["text"]["type"], "string");
    assert_eq!(schema["required"], json!(["text"]));
    assert_eq!(schema["additionalProperties"], json!(false));
    let mut registry: ToolRegistry = ToolRegistry::new();
    registry.register(LengthTool).unwrap();
    assert_eq!(registry.names().collect::<Vec<_>>(), ["length"]);
}

#[test]
fn the_builtins_and_tool_search_answer_at_once() {
    assert!(Tool::<(), ()>::__inline(&EchoTool).is_some());
    assert!(Tool::<(), ()>::__inline(&HashTool).is_some());
    let search = ToolSearch::new([Tool::<(), ()>::spec(&EchoTool)]);
    assert!(Tool::<(), ()>::__inline(&search).is_some());
}

#[tokio::test]
async fn a_spied_plain_fn_tool_still_answers_at_once_and_every_call_is_seen() {
    let before = answers();
    let spy = Spy::new(LengthTool);
    let inline = Tool::<(), ()>::__inline(&*spy).expect("answered at once");
    let harness = ToolHarness::builder(EchoTool).build().unwrap();
    let runtime = harness.runtime("c1");
    let now = inline
        .call_inline(&(), &(&runtime).into(), &json!({"text": "ab"}))
        .unwrap();
    assert_eq!(now.structured, Some(json!({"length": 2})));

    let harness = ToolHarness::builder(spy.clone()).build().unwrap();
    harness.call_ok(json!({"text": "abc"})).await;
    let later = Tool::call(&*spy, &(), &runtime, json!({"text": "abcd"}))
        .await
        .unwrap();
    assert_eq!(later.structured, Some(json!({"length": 4})));
    assert_eq!(
        spy.seen(),
        [
            json!({"text": "ab"}),
            json!({"text": "abc"}),
            json!({"text": "abcd"})
        ]
    );
    assert_eq!(spy.runs(), 3);
    assert_eq!(answers() - before, 3);
}

#[tokio::test]
async fn after_tool_hooks_read_the_arguments_a_plain_fn_tool_ran_with() {
    let runtime = ToolHarness::builder(EchoTool)
        .build()
        .unwrap()
        .runtime("c1");
    let inline = Tool::<(), ()>::__inline(&UpperTool).unwrap();
    let answered = inline
        .call_inline(&(), &(&runtime).into(), &json!({"text": "hé"}))
        .unwrap();
    assert_eq!(answered, ToolOutput::text("HÉ"));
    let read = Arc::new(Mutex::new(Vec::new()));
    let mut registry: ToolRegistry = ToolRegistry::new();
    registry.register(UpperTool).unwrap();
    let executor = ToolExecutor::builder(registry, ())
        .middleware(tinyagents_tools_tests::SeesArguments(read.clone()))
        .build()
        .unwrap();
    let run = RunContext::builder(()).build();
    let call = ToolCall::new("c1", "upper", r#"{"text":"abc"}"#);
    let result = executor.execute(&run, &Turn::new(1), call).await;
    assert_eq!(result.text(), "ABC");
    assert_eq!(*read.lock().unwrap(), [json!({"text": "abc"})]);
}
