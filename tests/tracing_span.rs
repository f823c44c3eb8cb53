//! (A test binary of its own.)
//! Each call runs in an `execute_tool` tracing span naming the tool and the
//! call (OpenTelemetry's GenAI attribute names).

use serde_json::json;
use tinyagents_tools::*;
use tinyagents_tools_tests::{LogCapture, call, echo, execute_in};
use tracing_subscriber::fmt::format::FmtSpan;

#[tokio::test]
async fn every_call_gets_an_execute_tool_span_with_its_tool_and_id() {
    let buffer = LogCapture::default();
    let _guard = buffer.set_default(tracing::Level::DEBUG, FmtSpan::CLOSE);

    let mut registry = ToolRegistry::new();
    registry.register(echo()).unwrap();
    let executor = ToolExecutor::builder(registry, ()).build().unwrap();
    let run = RunContext::empty();
    let ok = execute_in(
        &executor,
        &run,
        call("call-77", "echo", json!({"text": "hi"})),
    )
    .await;
    assert!(!ok.is_error);
    let refused = execute_in(&executor, &run, call("call-78", "nope", json!({}))).await;
    assert!(refused.is_error);

    let text = buffer.text();
    let closes: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("execute_tool{") && l.contains("close"))
        .collect();
    assert_eq!(closes.len(), 2, "{text}");
    assert!(
        closes[0].contains("gen_ai.tool.name=echo")
            && closes[0].contains("gen_ai.tool.call.id=call-77"),
        "{text}"
    );
    assert!(closes[0].contains("attempt=1"), "{text}");
    assert!(
        closes[1].contains("gen_ai.tool.name=nope")
            && closes[1].contains("gen_ai.tool.call.id=call-78")
            && closes[1].contains("error.type=\"unknown_tool\""),
        "{text}"
    );
}
