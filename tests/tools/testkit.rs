//! The testkit: a harness that runs tools with test injections through a real
//! executor, and the event recorder's assertions.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use serde_json::json;
use tinyagents_tools::RegistryError;
use tinyagents_tools::events::EventKind;
use tinyagents_tools::inject::InjectError;
use tinyagents_tools::prelude::*;
use tinyagents_tools::spec::SafetyItem;
use tinyagents_tools::testkit::{EventRecorder, HarnessError, ToolHarness};
use tinyagents_tools_examples::{
    CalculateTool, DocIndex, NoteBook, ReadFileTool, SearchArgs, SearchDocsTool, WriteNoteTool,
    search_docs,
};

use EventKind::{Completed, Progress, Rejected, Started};

/// A harness for `search_docs` over the built-in document index.
fn search_harness() -> ToolHarness {
    ToolHarness::builder(SearchDocsTool)
        .store(DocIndex::builtin())
        .build()
        .unwrap()
}

#[tokio::test]
async fn harness_runs_a_tool_with_a_fake_store_through_the_executor() {
    let harness = search_harness();
    let one_hit = json!({"query": "retries and timeouts", "limit": 1});

    let result = harness.call_ok(one_hit).await;

    assert_eq!(result.tool_call_id.as_str(), "call-1");
    let hits = result.structured.as_ref().unwrap();
    assert_eq!(hits[0]["id"], "retries");
    assert_eq!(hits.as_array().unwrap().len(), 1);
    harness.events().assert_kinds(&[Started, Completed]);
}

#[tokio::test]
async fn harness_refuses_arguments_with_the_registrys_validator() {
    let harness = search_harness();
    let over_the_limit = json!({"query": "tools", "limit": 500});

    let error = harness.call_err(over_the_limit).await;

    assert_eq!(error.kind().as_str(), "invalid_arguments");
    assert!(error.message().contains("`limit`"), "{}", error.message());
    harness.events().assert_kinds(&[Rejected]);
}

#[tokio::test]
async fn a_forged_injected_key_never_reaches_the_store() {
    let notebook = Arc::new(NoteBook::default());
    let harness = ToolHarness::builder(WriteNoteTool)
        .store_arc(notebook.clone())
        .unenforced(SafetyItem::Confirmation)
        .build()
        .unwrap();

    let error = harness
        .call_err(json!({"title": "t", "body": "b", "notebook": {"notes": []}}))
        .await;
    assert_eq!(error.kind().as_str(), "invalid_arguments");
    assert!(notebook.notes().is_empty());

    harness.call_ok(json!({"title": "t", "body": "b"})).await;
    assert_eq!(notebook.notes().len(), 1);
    harness
        .events()
        .assert_kinds(&[Rejected, Started, Completed]);
    assert_eq!(harness.events().kinds_for("call-2"), [Started, Completed]);
}

#[tokio::test]
async fn harness_confines_file_reads_to_its_workspace_root() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("plan.txt"), "ship on friday").unwrap();
    let harness = ToolHarness::builder(ReadFileTool)
        .workspace_root(dir.path())
        .build()
        .unwrap();

    let ok = harness.call_ok(json!({"path": "plan.txt"})).await;
    assert_eq!(ok.structured.as_ref().unwrap()["text"], "ship on friday");

    let escaped = harness.call_err(json!({"path": "../outside.txt"})).await;
    assert_eq!(escaped.kind().as_str(), "denied");
}

#[tokio::test]
async fn a_missing_injection_fails_the_call_without_naming_the_type_to_the_model() {
    let harness = ToolHarness::builder(SearchDocsTool).build().unwrap();

    let error = harness.call_err(json!({"query": "tools"})).await;

    assert_eq!(error.kind().as_str(), "injection_failed");
    assert!(!error.message().contains("DocIndex"), "{}", error.message());
    harness.events().assert_kinds(&[Started, EventKind::Failed]);
}

#[tokio::test]
async fn inject_builds_the_values_a_tool_fn_takes_when_called_directly() {
    let harness = search_harness();

    let args = SearchArgs {
        query: "provider formats".into(),
        limit: Some(2),
    };
    let hits = search_docs(args, harness.inject().unwrap()).await;
    assert_eq!(hits[0].id, "providers");

    let missing = harness.inject::<Store<NoteBook>>().unwrap_err();
    assert!(matches!(missing, InjectError::MissingStore(_)), "{missing}");
    assert!(
        harness.events().is_empty(),
        "a direct call goes around the executor"
    );
}

struct ApiToken(String);

impl AsRef<str> for ApiToken {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// Arguments of `sync_remote`.
#[derive(Deserialize, JsonSchema)]
struct SyncArgs {
    /// How many pages to sync.
    pages: u32,
}

/// Sync pages from a remote service, reporting progress.
#[tool(read_only, idempotent)]
async fn sync_remote(
    args: SyncArgs,
    #[inject] token: Secret<ApiToken>,
    #[inject] progress: StreamWriter,
) -> String {
    for page in 1..=args.pages {
        progress.progress(
            f64::from(page),
            Some(f64::from(args.pages)),
            Some(&format!("page {page}")),
        );
    }
    format!(
        "synced {} pages with a {}-byte token",
        args.pages,
        token.expose().0.len()
    )
}

#[tokio::test]
async fn secrets_are_injected_and_progress_is_recorded_in_order() {
    let harness = ToolHarness::builder(SyncRemoteTool)
        .secret(ApiToken("tok-0123456789".into()))
        .build()
        .unwrap();

    let result = harness.call_ok(json!({"pages": 2})).await;

    assert_eq!(
        result.structured,
        Some(json!("synced 2 pages with a 14-byte token"))
    );
    assert_eq!(harness.events().progress_messages(), ["page 1", "page 2"]);
    harness
        .events()
        .assert_kinds(&[Started, Progress, Progress, Completed]);
    harness.events().assert_order(&[Started, Completed]);
}

#[tokio::test]
async fn a_second_tool_is_called_by_name() {
    let harness = ToolHarness::builder(SearchDocsTool)
        .tool(CalculateTool)
        .store(DocIndex::builtin())
        .build()
        .unwrap();

    let result = harness
        .call_tool("calculate", r#"{"a": 6, "op": "multiply", "b": 7}"#)
        .await;

    assert_eq!(result.structured, Some(json!(42.0)));
}

#[test]
fn a_tool_the_registry_refuses_fails_the_build() {
    let error = ToolHarness::builder(SearchDocsTool)
        .tool(SearchDocsTool)
        .build()
        .unwrap_err();

    assert!(
        matches!(
            error,
            HarnessError::Registry(RegistryError::Duplicate { .. })
        ),
        "{error}"
    );
}

async fn recorded_calculation() -> ToolHarness {
    let harness = ToolHarness::builder(CalculateTool).build().unwrap();
    harness.call_ok(json!({"a": 1, "op": "add", "b": 2})).await;
    harness
        .call_err(json!({"a": 1, "op": "divide", "b": 0}))
        .await;
    harness
}

fn panic_text(f: impl FnOnce()) -> String {
    let payload = catch_unwind(AssertUnwindSafe(f)).expect_err("the assertion should fail");
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

#[tokio::test]
async fn assert_order_allows_events_in_between_but_not_a_different_order() {
    let harness = recorded_calculation().await;
    let events = harness.events();

    events.assert_order(&[Started, EventKind::Failed]);
    let text = panic_text(|| events.assert_order(&[EventKind::Failed, Completed]));

    assert!(text.contains("first missing: tool.completed"), "{text}");
}

#[tokio::test]
async fn assert_kinds_lists_every_recorded_event_when_it_fails() {
    let harness = recorded_calculation().await;

    let text = panic_text(|| harness.events().assert_kinds(&[Started, Completed]));

    assert!(
        text.contains("expected: [tool.started, tool.completed]"),
        "{text}"
    );
    assert!(
        text.contains("3: tool.failed call=call-2 tool=calculate attempt=1 error=tool"),
        "{text}"
    );
}

#[tokio::test]
async fn call_ok_panics_with_the_error_when_the_call_fails() {
    let harness = ToolHarness::builder(CalculateTool).build().unwrap();

    let payload = tokio::spawn(async move {
        harness
            .call_ok(json!({"a": 1, "op": "divide", "b": 0}))
            .await;
    })
    .await
    .expect_err("call_ok should panic")
    .into_panic();

    let text = payload
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(text.contains("expected `calculate` to succeed"), "{text}");
    assert!(text.contains("division by zero"), "{text}");
    assert!(
        text.contains("tests/tools/testkit.rs"),
        "the panic names the caller: {text}"
    );
}

#[test]
fn the_recorder_is_empty_until_it_records() {
    let recorder = EventRecorder::new();
    assert!(recorder.is_empty());
    assert_eq!(recorder.kinds(), []);
    recorder.assert_kinds(&[]);
    recorder.assert_order(&[]);
}
