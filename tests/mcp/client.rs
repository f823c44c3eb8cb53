//! The MCP client against a server written here with rmcp alone (no project
//! code on the server side): remote tools imported into a registry run with
//! every local guarantee. The project's own server: `mcp_client_own_server`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ContentBlock, ProgressNotificationParam,
    Tool as RemoteDecl,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Value, json};
use tinyagents_tools::events::EventKind;
use tinyagents_tools::spec::{Effect, Idempotency, Reach};
use tinyagents_tools::testkit::EventRecorder;
use tinyagents_tools::{
    ErrorClass, RetryPolicy, RunContext, ToolCall, ToolExecutor, ToolRegistry, Turn,
};
use tinyagents_tools_mcp::client::{ImportOptions, ImportReport, McpClient};
use tinyagents_tools_tests::execute_in;
use tokio::sync::mpsc;

use crate::common::{HANG, RmcpServed, RmcpTools, rmcp_served};

/// What the test server saw.
#[derive(Default)]
struct Seen {
    flaky_calls: AtomicUsize,
    grown: AtomicBool,
}

/// The tools of an MCP server written with rmcp only.
struct Remote {
    seen: Arc<Seen>,
    cancelled: mpsc::UnboundedSender<String>,
}

fn decl(value: Value) -> RemoteDecl {
    serde_json::from_value(value).expect("a tool declaration")
}

fn sum_schema() -> Value {
    json!({"type": "object", "properties": {"sum": {"type": "integer"}}, "required": ["sum"]})
}

impl RmcpTools for Remote {
    fn tools(&self) -> Vec<RemoteDecl> {
        let ab = json!({
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
            "additionalProperties": false
        });
        let mut tools = vec![
            decl(json!({
                "name": "add", "description": "Add two integers.", "inputSchema": ab,
                "outputSchema": sum_schema(),
                "annotations": {"readOnlyHint": true, "idempotentHint": true, "openWorldHint": false}
            })),
            decl(json!({
                "name": "wrong_shape", "description": "Claims a sum, returns text.",
                "inputSchema": {"type": "object"}, "outputSchema": sum_schema()
            })),
            decl(
                json!({"name": "fail", "description": "Always fails.", "inputSchema": {"type": "object"}}),
            ),
            decl(
                json!({"name": "slow", "description": "Reports progress, then waits.", "inputSchema": {"type": "object"}}),
            ),
            decl(json!({
                "name": "flaky", "description": "Fails once, then works.", "inputSchema": {"type": "object"},
                "annotations": {"idempotentHint": true}
            })),
            decl(
                json!({"name": "flaky_write", "description": "Fails once, then works.", "inputSchema": {"type": "object"}}),
            ),
            decl(
                json!({"name": "grow", "description": "Adds a tool.", "inputSchema": {"type": "object"}}),
            ),
            decl(
                json!({"name": "bad name!", "description": "Invalid name.", "inputSchema": {"type": "object"}}),
            ),
            decl(json!({
                "name": "bad_schema", "description": "Invalid schema.",
                "inputSchema": {"type": "object", "properties": {"n": {"type": "integer", "minimum": "zero"}}}
            })),
            decl(
                json!({"name": "not_object", "description": "String root.", "inputSchema": {"type": "string"}}),
            ),
            decl(json!({
                "name": "bad_output", "description": "Invalid output schema.",
                "inputSchema": {"type": "object"},
                "outputSchema": {"type": "object", "properties": {"x": {"type": "integer", "minimum": "zero"}}}
            })),
        ];
        if self.seen.grown.load(Ordering::SeqCst) {
            tools.push(decl(
                json!({"name": "extra", "description": "New.", "inputSchema": {"type": "object"}}),
            ));
        }
        tools
    }

    async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let args = request.arguments.clone().unwrap_or_default();
        let result = match request.name.as_ref() {
            "add" => {
                let sum = args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0);
                CallToolResult::structured(json!({"sum": sum}))
            }
            "wrong_shape" => CallToolResult::structured(json!({"sum": "many"})),
            "fail" => {
                let text = format!("token sk-SECRET-123 rejected; {}", "x".repeat(5000));
                CallToolResult::error(vec![ContentBlock::text(text)])
            }
            "slow" => {
                if let Some(token) = context.meta.get_progress_token() {
                    for step in 1..=2 {
                        let note = ProgressNotificationParam::new(token.clone(), f64::from(step))
                            .with_total(2.0)
                            .with_message(format!("step {step}"));
                        let _ = context.peer.notify_progress(note).await;
                    }
                }
                context.ct.cancelled().await;
                let _ = self.cancelled.send(format!("{:?}", context.id));
                return Err(McpError::internal_error("cancelled", None));
            }
            "flaky" | "flaky_write" => {
                if self.seen.flaky_calls.fetch_add(1, Ordering::SeqCst) == 0 {
                    return Err(McpError::internal_error("try again", None));
                }
                CallToolResult::success(vec![ContentBlock::text("ok")])
            }
            "grow" => {
                self.seen.grown.store(true, Ordering::SeqCst);
                let _ = context.peer.notify_tool_list_changed().await;
                CallToolResult::success(vec![ContentBlock::text("grown")])
            }
            _ => CallToolResult::success(vec![ContentBlock::text("ran")]),
        };
        Ok(result)
    }
}

struct Fixture {
    client: McpClient,
    /// How many calls reached the server.
    calls: Arc<AtomicUsize>,
    seen: Arc<Seen>,
    cancelled: mpsc::UnboundedReceiver<String>,
}

async fn fixture() -> Fixture {
    let (tx, cancelled) = mpsc::unbounded_channel();
    let seen = Arc::new(Seen::default());
    let remote = Remote {
        seen: Arc::clone(&seen),
        cancelled: tx,
    };
    let RmcpServed { client, calls, .. } = rmcp_served(remote).await;
    Fixture {
        client,
        calls,
        seen,
        cancelled,
    }
}

pub(crate) async fn imported(
    client: &McpClient,
    options: &ImportOptions,
) -> (ToolRegistry, ImportReport) {
    let mut registry = ToolRegistry::new();
    let report = client
        .import_into(&mut registry, options)
        .await
        .expect("tools listed");
    (registry, report)
}

/// An executor over the tools `client` lists, imported with `options`.
pub(crate) async fn executor_over(client: &McpClient, options: &ImportOptions) -> ToolExecutor {
    let (registry, _) = imported(client, options).await;
    ToolExecutor::builder(registry, ()).build().unwrap()
}

pub(crate) fn call(id: &str, name: &str, args: Value) -> ToolCall {
    ToolCall::new(id, name, args.to_string())
}

/// Executes the call `id` of `name` with `args` in an empty run context.
pub(crate) async fn execute_call(
    executor: &ToolExecutor,
    id: &str,
    name: &str,
    args: Value,
) -> tinyagents_tools::ToolResult {
    execute_in(executor, &RunContext::empty(), call(id, name, args)).await
}

#[tokio::test]
async fn import_registers_valid_remote_tools_and_reports_each_refused_one_with_its_rule() {
    let fx = fixture().await;
    let (registry, report) = imported(&fx.client, &ImportOptions::new()).await;
    let names: Vec<&str> = report
        .imported
        .iter()
        .map(|t| t.local_name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "add",
            "wrong_shape",
            "fail",
            "slow",
            "flaky",
            "flaky_write",
            "grow"
        ]
    );
    assert_eq!(registry.len(), 7);
    let refused: Vec<(&str, &str)> = report
        .refused
        .iter()
        .map(|r| (r.remote_name.as_str(), r.rule))
        .collect();
    assert_eq!(
        refused,
        [
            ("bad name!", "invalid_name"),
            ("bad_schema", "invalid_schema"),
            ("not_object", "schema_root_not_object"),
            ("bad_output", "invalid_output_schema"),
        ]
    );
    assert!(report.refused[1].to_string().contains("bad_schema"));
}

#[tokio::test]
async fn remote_annotations_become_safety_and_absent_ones_count_as_mutating_and_networked() {
    let fx = fixture().await;
    let (registry, _) = imported(&fx.client, &ImportOptions::new()).await;
    let add = &registry.get("add").unwrap().spec().safety;
    assert_eq!(add.effect, Effect::ReadOnly);
    assert_eq!(add.reach, Reach::Local);
    assert_eq!(add.idempotency, Idempotency::Idempotent);
    let fail = &registry.get("fail").unwrap().spec().safety;
    assert!(fail.effect.mutates());
    assert_eq!(fail.reach, Reach::Networked);
    assert_eq!(fail.idempotency, Idempotency::NotIdempotent);
}

#[tokio::test]
async fn a_prefixed_tool_is_called_on_the_server_by_its_own_name() {
    let fx = fixture().await;
    let (registry, report) = imported(&fx.client, &ImportOptions::new().prefix("calc_")).await;
    assert_eq!(report.imported[0].local_name, "calc_add");
    assert_eq!(report.imported[0].remote_name, "add");
    let executor = ToolExecutor::builder(registry, ()).build().unwrap();
    let result = execute_call(&executor, "c1", "calc_add", json!({"a": 2, "b": 40})).await;
    assert!(!result.is_error, "{}", result.text());
    assert_eq!(result.structured, Some(json!({"sum": 42})));
    assert_eq!(result.tool_call_id.as_str(), "c1");
}

#[tokio::test]
async fn importing_a_name_already_taken_leaves_the_registered_tool_in_place() {
    let fx = fixture().await;
    let (mut registry, first) = imported(&fx.client, &ImportOptions::new()).await;
    let again = fx
        .client
        .import_into(&mut registry, &ImportOptions::new())
        .await
        .unwrap();
    assert!(again.imported.is_empty());
    let duplicates = again
        .refused
        .iter()
        .filter(|r| r.rule == "duplicate")
        .count();
    assert_eq!(duplicates, first.imported.len());
    assert_eq!(registry.len(), first.imported.len());
}

#[tokio::test]
async fn bad_arguments_are_refused_locally_and_never_reach_the_server() {
    let fx = fixture().await;
    let executor = executor_over(&fx.client, &ImportOptions::new()).await;
    let result = execute_call(&executor, "c1", "add", json!({"a": "two", "b": 1, "c": 3})).await;
    assert_eq!(result.outcome(), "invalid_arguments");
    assert_eq!(fx.calls.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn structured_content_that_breaks_the_remote_output_schema_is_a_fatal_error() {
    let fx = fixture().await;
    let executor = executor_over(&fx.client, &ImportOptions::new()).await;
    let result = execute_call(&executor, "c1", "wrong_shape", json!({})).await;
    assert!(result.is_error);
    let error = result.error.as_ref().unwrap();
    assert_eq!(error.class(), ErrorClass::Fatal);
    assert!(result.text().contains("output schema"), "{}", result.text());
}

#[tokio::test]
async fn an_is_error_result_is_a_repair_error_with_the_remote_text_bounded_and_redacted() {
    let fx = fixture().await;
    let executor = executor_over(&fx.client, &ImportOptions::new()).await;
    let run = RunContext::builder(()).secret("sk-SECRET-123").build();
    let result = execute_in(&executor, &run, call("c1", "fail", json!({}))).await;
    assert!(result.is_error);
    assert_eq!(result.error.as_ref().unwrap().class(), ErrorClass::Repair);
    let text = result.text();
    assert!(text.contains("rejected"), "{text}");
    assert!(!text.contains("sk-SECRET-123"), "{text}");
    assert!(text.len() < 700, "{} bytes", text.len());
}

#[tokio::test]
async fn a_timed_out_call_sends_notifications_cancelled_and_its_progress_became_events() {
    let mut fx = fixture().await;
    let options = ImportOptions::new().timeout(Duration::from_millis(300));
    let (registry, _) = imported(&fx.client, &options).await;
    let recorder = EventRecorder::new();
    let executor = ToolExecutor::builder(registry, ())
        .subscribe(recorder.clone())
        .build()
        .unwrap();
    let started = std::time::Instant::now();
    let result = execute_call(&executor, "c1", "slow", json!({})).await;
    assert_eq!(result.outcome(), "timeout");
    assert!(started.elapsed() < Duration::from_secs(5));
    let seen = tokio::time::timeout(HANG, fx.cancelled.recv()).await;
    assert!(
        matches!(seen, Ok(Some(_))),
        "the server saw no cancellation"
    );
    let progress: Vec<f64> = recorder
        .events()
        .iter()
        .filter(|e| e.kind == EventKind::Progress)
        .filter_map(|e| e.progress.as_ref().map(|p| p.progress))
        .collect();
    assert_eq!(progress, [1.0, 2.0]);
}

#[tokio::test]
async fn a_cancelled_run_sends_notifications_cancelled_to_the_server() {
    let mut fx = fixture().await;
    let executor = executor_over(&fx.client, &ImportOptions::new()).await;
    let run = RunContext::empty();
    let canceller = run.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        canceller.cancel();
    });
    let result = execute_in(&executor, &run, call("c1", "slow", json!({}))).await;
    assert_eq!(result.outcome(), "cancelled");
    let seen = tokio::time::timeout(HANG, fx.cancelled.recv()).await;
    assert!(
        matches!(seen, Ok(Some(_))),
        "the server saw no cancellation"
    );
}

#[tokio::test]
async fn only_tools_the_remote_declares_idempotent_are_retried() {
    let options = ImportOptions::new().retry(RetryPolicy::attempts(3, Duration::from_millis(1)));
    let fx = fixture().await;
    let executor = executor_over(&fx.client, &options).await;
    let result = execute_call(&executor, "c1", "flaky", json!({})).await;
    assert!(!result.is_error, "{}", result.text());
    assert_eq!(fx.seen.flaky_calls.load(Ordering::SeqCst), 2);

    let fx = fixture().await;
    let executor = executor_over(&fx.client, &options).await;
    let result = execute_call(&executor, "c1", "flaky_write", json!({})).await;
    assert!(result.is_error);
    assert_eq!(result.error.as_ref().unwrap().class(), ErrorClass::Retry);
    assert_eq!(fx.seen.flaky_calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn list_changed_is_picked_up_by_a_new_import_between_turns() {
    let fx = fixture().await;
    let options = ImportOptions::new();
    let executor = executor_over(&fx.client, &options).await;
    assert!(!fx.client.take_tools_changed());
    let result = execute_call(&executor, "c1", "grow", json!({})).await;
    assert!(!result.is_error, "{}", result.text());
    tokio::time::timeout(HANG, fx.client.tools_changed_notified())
        .await
        .expect("the notification arrived");
    // The executor of this turn keeps its set: `extra` is not there.
    assert!(executor.registry().get("extra").is_none());
    assert!(fx.client.take_tools_changed());
    assert!(!fx.client.take_tools_changed());
    let (registry, report) = imported(&fx.client, &options).await;
    assert!(report.imported.iter().any(|t| t.local_name == "extra"));
    let executor = ToolExecutor::builder(registry, ()).build().unwrap();
    let result = executor
        .execute(
            &RunContext::empty(),
            &Turn::new(2),
            call("c2", "extra", json!({})),
        )
        .await;
    assert_eq!(result.text(), "ran");
}
