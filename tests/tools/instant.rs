//! `InstantTool`: a stateless tool that answers at once is a `Tool` for any
//! state and context, one the executor answers without a future.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use tinyagents_tools::builtins::{EchoTool, HashTool};
use tinyagents_tools::prelude::*;
use tinyagents_tools::testkit::{Spy, ToolHarness};
use tinyagents_tools::tool_search::ToolSearch;

/// Counts its answers (and those that read borrowed arguments); answers
/// with the length of its `text`.
#[derive(Default)]
struct Length {
    answers: AtomicUsize,
    borrowed: AtomicUsize,
}

impl InstantTool for Length {
    fn spec(&self) -> &ToolSpec {
        static SPEC: OnceLock<ToolSpec> = OnceLock::new();
        SPEC.get_or_init(|| text_spec("length", "Count the characters of the text."))
    }

    fn answer(&self, arguments: Value) -> Result<ToolOutput, ToolError> {
        self.answers.fetch_add(1, Ordering::SeqCst);
        Ok(length(&arguments))
    }

    fn answer_ref(&self, arguments: &Value) -> Result<ToolOutput, ToolError> {
        self.borrowed.fetch_add(1, Ordering::SeqCst);
        Ok(length(arguments))
    }
}

/// The spec of a tool that takes one required `text`.
fn text_spec(name: &str, description: &str) -> ToolSpec {
    ToolSpec::builder(name, description)
        .input_schema(tinyagents_tools::ToolSchema::from_value(json!({
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
            "additionalProperties": false
        })))
        .build()
        .unwrap()
}

/// The length of the arguments' `text`, as `Length` answers it.
fn length(arguments: &Value) -> ToolOutput {
    let text = arguments["text"].as_str().unwrap_or_default();
    ToolOutput::structured(json!({"length": text.chars().count()}))
}

#[tokio::test]
async fn an_instant_tool_never_waits_and_answers_the_same_through_call_and_call_now() {
    let tool = Length::default();
    assert!(Tool::<(), ()>::never_waits(&tool));
    assert!(Tool::<String, u8>::never_waits(&tool));
    assert_eq!(Tool::<(), ()>::spec(&tool).name.as_str(), "length");

    let harness = ToolHarness::builder(EchoTool).build().unwrap();
    let runtime = harness.runtime("c1");
    let arguments = json!({"text": "héllo"});
    let now = Tool::call_now(&tool, &(), &runtime, arguments.clone()).unwrap();
    let later = Tool::call(&tool, &(), &runtime, arguments).await.unwrap();
    assert_eq!(now.structured, Some(json!({"length": 5})));
    assert_eq!(later.structured, now.structured);
    assert_eq!(tool.answers.load(Ordering::SeqCst), 2);
    // Borrowed arguments reach `answer_ref`.
    let borrowed = Tool::call_now_ref(&tool, &(), &runtime, &json!({"text": "hé"})).unwrap();
    assert_eq!(borrowed.structured, Some(json!({"length": 2})));
    assert_eq!(tool.borrowed.load(Ordering::SeqCst), 1);
    assert_eq!(tool.answers.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn an_instant_tool_runs_through_the_executor_like_any_tool() {
    let harness = ToolHarness::builder(Length::default()).build().unwrap();
    let result = harness.call_ok(json!({"text": "four"})).await;
    assert_eq!(result.structured, Some(json!({"length": 4})));
    let refused = harness.call_err(json!({"text": 4})).await;
    assert!(refused.is_repairable());
}

#[test]
fn the_builtins_and_tool_search_answer_at_once() {
    assert!(Tool::<(), ()>::never_waits(&EchoTool));
    assert!(Tool::<(), ()>::never_waits(&HashTool));
    let search = ToolSearch::new([Tool::<(), ()>::spec(&EchoTool)]);
    assert!(Tool::<(), ()>::never_waits(&search));
}

#[tokio::test]
async fn a_spied_tool_that_never_waits_still_never_waits_and_every_call_is_seen() {
    let spy = Spy::new(Length::default());
    assert!(Tool::<(), ()>::never_waits(&*spy));
    let harness = ToolHarness::builder(EchoTool).build().unwrap();
    let runtime = harness.runtime("c1");
    let now = Tool::call_now(&*spy, &(), &runtime, json!({"text": "ab"})).unwrap();
    assert_eq!(now.structured, Some(json!({"length": 2})));

    let harness = ToolHarness::builder(spy.clone()).build().unwrap();
    harness.call_ok(json!({"text": "abc"})).await;
    let borrowed = Tool::call_now_ref(&*spy, &(), &runtime, &json!({"text": "abcd"})).unwrap();
    assert_eq!(borrowed.structured, Some(json!({"length": 4})));
    assert_eq!(
        spy.seen(),
        [
            json!({"text": "ab"}),
            json!({"text": "abc"}),
            json!({"text": "abcd"})
        ]
    );
    assert_eq!(spy.runs(), 3);
}

/// Answers with its text in capitals; implements `answer` only.
struct Upper;

impl InstantTool for Upper {
    fn spec(&self) -> &ToolSpec {
        static SPEC: OnceLock<ToolSpec> = OnceLock::new();
        SPEC.get_or_init(|| text_spec("upper", "Return the text in capitals."))
    }

    fn answer(&self, arguments: Value) -> Result<ToolOutput, ToolError> {
        let text = arguments["text"].as_str().unwrap_or_default();
        Ok(ToolOutput::text(text.to_uppercase()))
    }
}

#[tokio::test]
async fn an_instant_tool_with_answer_alone_lends_through_the_default_under_after_tool_hooks() {
    // `answer_ref`'s default copies the arguments once and answers through
    // `answer`; the hook still reads the arguments the tool ran with.
    let runtime = ToolHarness::builder(EchoTool)
        .build()
        .unwrap()
        .runtime("c1");
    let lent = Tool::call_now_ref(&Upper, &(), &runtime, &json!({"text": "hé"})).unwrap();
    assert_eq!(lent, ToolOutput::text("HÉ"));
    let read = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut registry: ToolRegistry = ToolRegistry::new();
    registry.register(Upper).unwrap();
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
