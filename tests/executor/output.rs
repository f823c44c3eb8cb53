//! Steps 8 and 9: bounded content and artifacts.

use std::sync::Arc;

use tinyagents_tools::artifacts::{
    ArtifactError, ArtifactStore, FsArtifactStore, InMemoryArtifactStore, artifact_key,
};
use tinyagents_tools::*;
use tinyagents_tools_tests::*;

/// Runs one call of `big` through `exec`.
async fn call_big(exec: &ToolExecutor) -> ToolResult {
    execute_once(exec, call("c1", "big", "{}")).await
}

#[tokio::test]
async fn a_large_output_goes_to_the_artifact_store_and_the_model_sees_a_preview_and_the_key() {
    let store = Arc::new(InMemoryArtifactStore::new());
    let (recorder, exec) =
        recorded_with(executor(vec![big(100_000, false)]).artifact_store(store.clone()));
    let r = call_big(&exec).await;
    assert!(!r.is_error);
    let artifact = &r.artifacts[0];
    assert_eq!(artifact.size, 100_000);
    assert_eq!(
        artifact.key,
        artifact_key("abcdefghij".repeat(10_000).as_bytes())
    );
    let text = r.text();
    assert!(text.len() < 2_000, "the preview is {} bytes", text.len());
    assert!(text.starts_with("abcdefghij"));
    assert!(text.contains(&artifact.key));
    let stored = store.get(&artifact.key).await.unwrap().unwrap();
    assert_eq!(stored.len(), 100_000);
    let completed = recorder.events().pop().unwrap();
    assert_eq!(completed.artifact_keys, std::slice::from_ref(&artifact.key));
}

#[tokio::test]
async fn without_a_store_a_large_output_is_cut_to_the_content_bound() {
    let exec = executor(vec![big(100_000, false)])
        .configure(|c| c.max_content_bytes = 4_000)
        .build()
        .unwrap();
    let r = call_big(&exec).await;
    let text = r.text();
    assert!(text.len() < 4_100, "{} bytes", text.len());
    assert!(text.ends_with("[output truncated: showing 4000 of 100000 bytes]"));
}

#[tokio::test]
async fn a_structured_output_gets_a_json_text_copy_and_keeps_the_value() {
    let exec = executor(vec![big(20, true)]).build().unwrap();
    let r = call_big(&exec).await;
    assert_eq!(r.text(), r#"{"data":"abcdefghijabcdefghij"}"#);
    assert_eq!(
        r.structured.as_ref().unwrap()["data"],
        "abcdefghijabcdefghij"
    );
}

#[tokio::test]
async fn a_failing_artifact_store_answers_the_call_with_a_classified_error_and_keeps_the_value() {
    let (recorder, exec) =
        recorded_with(executor(vec![big(100_000, true)]).artifact_store(BrokenStore));
    let r = call_big(&exec).await;
    assert_eq!(r.tool_call_id.as_str(), "c1");
    assert_eq!(kind(&r), "artifact_failed");
    assert_eq!(r.error.as_ref().unwrap().class(), ErrorClass::Fatal);
    assert!(!r.text().contains("disk full"));
    assert!(
        r.structured.is_some(),
        "the application keeps the full value"
    );
    assert_eq!(recorder.steps(), [("tool.started", 1), ("tool.failed", 1)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_filesystem_store_is_content_addressed_and_leaves_no_temporary_files() {
    let dir = tempfile::tempdir().unwrap();
    let store = FsArtifactStore::new(dir.path().join("artifacts")).unwrap();
    let a = store.put(b"hello".to_vec(), "text/plain").await.unwrap();
    let b = store.put(b"hello".to_vec(), "text/plain").await.unwrap();
    assert_eq!(a.key, b.key);
    assert_eq!(a.key, artifact_key(b"hello"));
    assert_eq!(store.get(&a.key).await.unwrap().unwrap(), b"hello");
    let files: Vec<_> = std::fs::read_dir(store.root())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(files, std::slice::from_ref(&a.key));
    let missing = artifact_key(b"other");
    assert_eq!(store.get(&missing).await.unwrap(), None);
    assert!(matches!(
        store.get("../../etc/passwd").await,
        Err(ArtifactError::InvalidKey { .. })
    ));
}
