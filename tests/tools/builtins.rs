//! The built-in `echo` and `hash` tools, registered like any tool.

use std::sync::Arc;

use serde_json::json;
use tinyagents_tools::builtins::{EchoTool, HashTool};
use tinyagents_tools::*;
use tinyagents_tools_tests::*;

#[tokio::test]
async fn echo_and_hash_answer_deterministically_through_the_executor() {
    let exec = executor(vec![Arc::new(EchoTool), Arc::new(HashTool)])
        .build()
        .unwrap();
    for id in ["c1", "c2"] {
        let echoed = execute_once(&exec, call(id, "echo", r#"{"text":"same text"}"#)).await;
        assert_eq!(echoed.text(), "same text");
        // The published BLAKE3 digest of "abc".
        let hashed = execute_once(&exec, call(id, "hash", r#"{"text":"abc"}"#)).await;
        assert_eq!(
            hashed.text(),
            "6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85"
        );
    }
}

#[tokio::test]
async fn a_call_without_text_is_refused_by_the_schema_before_the_tool_runs() {
    let exec = executor(vec![Arc::new(HashTool)]).build().unwrap();
    let result = execute_once(&exec, call("c1", "hash", r#"{"txt":"abc"}"#)).await;
    assert_eq!(result.outcome(), "invalid_arguments");
}

#[test]
fn the_built_ins_declare_themselves_pure() {
    for spec in [
        Tool::<(), ()>::spec(&EchoTool),
        Tool::<(), ()>::spec(&HashTool),
    ] {
        assert_eq!(spec.safety, ToolSafety::pure());
        assert_eq!(spec.input_schema.as_value()["required"], json!(["text"]));
    }
}
