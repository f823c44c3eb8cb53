//! A rig-agent `Agent` built with a tinyagents registry's tools, against a
//! local OpenAI-compatible stub: the agent's tool calls run through the
//! tinyagents executor (events recorded), a forged argument from the model is
//! refused before the tool runs, and the refusal goes back to the model.

mod support;

use std::sync::Arc;

use rig_agent::{Agent, AgentBuilder};
use rig_core::providers::openai::OpenAIConfig;
use serde_json::Value;
use support::executor::recorded_executor;
use support::stub;
use tinyagents_tools::RunContext;
use tinyagents_tools::events::EventKind;
use tinyagents_tools::testkit::EventRecorder;
use tinyagents_tools_rig::AgentToolsExt;

/// Prompts an agent over the registry's tools, against a stub model
/// answering `script`: the agent's answer, the executor's events and the
/// requests the model got.
async fn prompted(script: Vec<Value>, prompt: &str) -> (String, Arc<EventRecorder>, Vec<Value>) {
    let stub = stub::start(script).await.unwrap();
    let (executor, recorder) = recorded_executor();
    let model = OpenAIConfig::new("stub-key")
        .with_base_url(stub.base_url.clone())
        .client()
        .chat("stub-model");
    let agent: Agent = AgentBuilder::new(model)
        .tinyagents_tools(executor, Arc::new(RunContext::empty()))
        .build();
    let response = agent.prompt(prompt).max_turns(4).await.unwrap();
    let requests = stub.requests.lock().unwrap().clone();
    (response.output().to_owned(), recorder, requests)
}

/// The tool message of the second and last request, answering `call_1`.
fn answer_to_call_1(requests: &[Value]) -> Value {
    assert_eq!(requests.len(), 2, "{requests:?}");
    let result = tool_message(&requests[1]);
    assert_eq!(result["tool_call_id"], "call_1");
    result
}

/// The `tool` message of `request` (the last one), as the model gets it.
fn tool_message(request: &Value) -> Value {
    request["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "tool"))
        .cloned()
        .unwrap_or_else(|| panic!("no tool message in {request}"))
}

/// The text of a tool message (a string, or text parts).
fn content_text(message: &Value) -> String {
    match &message["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        other => other.to_string(),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rig_agent_calls_a_registered_tool_through_the_executor() {
    let script = vec![
        stub::tool_call("call_1", "echo", r#"{"text": "through the executor"}"#),
        stub::text("done"),
    ];
    let (output, recorder, requests) = prompted(script, "Echo something.").await;
    assert_eq!(output, "done");

    assert_eq!(
        recorder.kinds_for("rig-echo-1"),
        [EventKind::Started, EventKind::Completed]
    );
    // The agent listed the registry's tools to the model...
    let listed: Vec<&str> = requests[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert_eq!(listed, ["echo", "hash"]);
    // ...and sent the tool's output back under the provider's call id.
    let result = answer_to_call_1(&requests);
    assert_eq!(content_text(&result), "through the executor");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_forged_argument_from_the_model_is_refused_and_the_tool_never_runs() {
    let script = vec![
        // `text` must be a string: the executor refuses this call.
        stub::tool_call("call_1", "hash", r#"{"text": 7}"#),
        stub::text("gave up"),
    ];
    let (output, recorder, requests) = prompted(script, "Hash something.").await;
    assert_eq!(output, "gave up");

    // Refused by the executor's validation: never started, never completed.
    assert_eq!(recorder.kinds_for("rig-hash-1"), [EventKind::Rejected]);
    assert!(
        !recorder
            .events()
            .iter()
            .any(|e| matches!(e.kind, EventKind::Started | EventKind::Completed)),
        "{:?}",
        recorder.events()
    );
    // The model got the executor's classified refusal as the tool result.
    let feedback = content_text(&answer_to_call_1(&requests));
    assert!(feedback.contains("text"), "{feedback}");
}
