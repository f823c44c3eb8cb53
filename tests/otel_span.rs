//! (A test binary of its own, built with the `otel` feature.)
//! Each call's `execute_tool` span, exported through `tracing-opentelemetry`
//! into OpenTelemetry's in-memory exporter, carries the GenAI semantic
//! conventions' name and attributes; arguments and results only when the
//! executor opts in, and then redacted.

use opentelemetry::trace::{Status, TracerProvider as _};
use opentelemetry::{KeyValue, Value};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::json;
use tinyagents_tools::*;
use tinyagents_tools_tests::{FakeTool, call, echo};
use tracing_subscriber::layer::SubscriberExt;

/// Runs `calls` on an executor over `echo` (configured by `trace_content`)
/// with a subscriber exporting to memory, and returns the finished spans.
async fn exported(trace_content: bool, run: RunContext, calls: Vec<ToolCall>) -> Vec<SpanData> {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("otel_span")));
    let guard = tracing::subscriber::set_default(subscriber);

    let mut registry = ToolRegistry::new();
    registry.register(echo()).unwrap();
    let executor = ToolExecutor::builder(registry, ())
        .configure(|c| c.trace_content = trace_content)
        .build()
        .unwrap();
    for one in calls {
        executor.execute(&run, &Turn::new(1), one).await;
    }
    drop(guard);
    provider.force_flush().unwrap();
    exporter.get_finished_spans().unwrap()
}

fn attribute<'a>(span: &'a SpanData, key: &str) -> Option<&'a Value> {
    span.attributes
        .iter()
        .find(|KeyValue { key: k, .. }| k.as_str() == key)
        .map(|kv| &kv.value)
}

fn text(span: &SpanData, key: &str) -> Option<String> {
    attribute(span, key).map(|v| v.as_str().into_owned())
}

#[tokio::test]
async fn a_call_exports_an_execute_tool_span_with_the_gen_ai_attributes() {
    let spans = exported(
        false,
        RunContext::empty(),
        vec![call("call-7", "echo", json!({"text": "hi"}))],
    )
    .await;
    assert_eq!(spans.len(), 1, "{spans:#?}");
    let span = &spans[0];
    assert_eq!(span.name, "execute_tool echo");
    assert_eq!(
        text(span, "gen_ai.operation.name").as_deref(),
        Some("execute_tool")
    );
    assert_eq!(text(span, "gen_ai.tool.name").as_deref(), Some("echo"));
    assert_eq!(text(span, "gen_ai.tool.call.id").as_deref(), Some("call-7"));
    assert_eq!(text(span, "gen_ai.tool.type").as_deref(), Some("function"));
    let description = FakeTool::spec(&echo()).description.clone();
    assert_eq!(
        text(span, "gen_ai.tool.description").as_deref(),
        Some(description.as_str())
    );
    assert_eq!(attribute(span, "error.type"), None);
    assert_ne!(span.status, Status::error(""));
    // Values stay out unless the application opts in.
    assert_eq!(attribute(span, "gen_ai.tool.call.arguments"), None);
    assert_eq!(attribute(span, "gen_ai.tool.call.result"), None);
}

#[tokio::test]
async fn a_failed_call_exports_its_error_type_and_an_error_status() {
    let spans = exported(
        false,
        RunContext::empty(),
        vec![
            call("call-8", "nope", json!({})),
            call("call-9", "echo", json!({"limit": 3})),
        ],
    )
    .await;
    assert_eq!(spans.len(), 2, "{spans:#?}");
    let unknown = spans
        .iter()
        .find(|s| text(s, "gen_ai.tool.call.id").as_deref() == Some("call-8"))
        .unwrap();
    assert_eq!(unknown.name, "execute_tool nope");
    assert_eq!(text(unknown, "error.type").as_deref(), Some("unknown_tool"));
    assert!(
        matches!(unknown.status, Status::Error { .. }),
        "{unknown:?}"
    );
    let invalid = spans
        .iter()
        .find(|s| text(s, "gen_ai.tool.call.id").as_deref() == Some("call-9"))
        .unwrap();
    assert_eq!(
        text(invalid, "error.type").as_deref(),
        Some("invalid_arguments")
    );
    assert!(
        matches!(invalid.status, Status::Error { .. }),
        "{invalid:?}"
    );
}

#[tokio::test]
async fn arguments_and_result_are_exported_redacted_when_the_executor_opts_in() {
    let run = RunContext::builder(()).secret("hunter2-secret").build();
    let spans = exported(
        true,
        run,
        vec![call(
            "call-10",
            "echo",
            json!({"text": "the key is hunter2-secret"}),
        )],
    )
    .await;
    assert_eq!(spans.len(), 1, "{spans:#?}");
    let arguments = text(&spans[0], "gen_ai.tool.call.arguments").expect("arguments recorded");
    let result = text(&spans[0], "gen_ai.tool.call.result").expect("result recorded");
    assert!(arguments.contains("the key is"), "{arguments}");
    assert!(result.contains("the key is"), "{result}");
    for value in [&arguments, &result] {
        assert!(!value.contains("hunter2-secret"), "{value}");
    }
}
