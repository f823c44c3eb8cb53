//! Toolsets that compose: prefixes, renames, filters and merges, with
//! collisions named by both origins.

use serde_json::json;
use tinyagents_tools::events::EventKind;
use tinyagents_tools::prelude::*;
use tinyagents_tools::testkit::EventRecorder;
use tinyagents_tools::{RegistryError, Toolset};

use tinyagents_tools_examples::services::{github, jira};
use tinyagents_tools_tests::execute_once;

#[tokio::test]
async fn prefixed_toolsets_with_colliding_names_merge_and_each_call_reaches_its_own_tool() {
    let registry = github()
        .prefixed("gh_")
        .unwrap()
        .merge(jira().prefixed("jira_").unwrap())
        .unwrap()
        .into_registry()
        .unwrap();
    assert_eq!(
        registry.names().collect::<Vec<_>>(),
        ["gh_search", "gh_open_issue", "jira_search"]
    );
    assert_eq!(
        registry.get("jira_search").unwrap().origin(),
        Some("toolset `jira` (tool `search`, renamed `jira_search`)")
    );
    let recorder = EventRecorder::new();
    let executor = ToolExecutor::builder(registry, ())
        .subscribe(recorder.clone())
        .build()
        .unwrap();
    let run = RunContext::empty();
    let gh = ToolCall::new("c1", "gh_search", json!({"text": "flaky"}));
    let jr = ToolCall::new("c2", "jira_search", json!({"text": "flaky"}));
    let results = executor
        .execute_batch(&run, &Turn::new(1), vec![gh, jr])
        .await;
    assert_eq!(results[0].text(), "github issues about flaky");
    assert_eq!(results[1].text(), "jira tickets about flaky");
    let completed: Vec<(String, String)> = recorder
        .events()
        .into_iter()
        .filter(|e| e.kind == EventKind::Completed)
        .map(|e| (e.call_id.to_string(), e.tool.to_string()))
        .collect();
    assert!(completed.contains(&("c1".into(), "gh_search".into())));
    assert!(completed.contains(&("c2".into(), "jira_search".into())));
}

#[test]
fn a_merge_where_two_tools_claim_one_name_names_both_origins() {
    let err = github().merge(jira()).err().unwrap();
    assert_eq!(err.rule(), "collision");
    assert_eq!(
        err.to_string(),
        "the tool name `search` is claimed twice: by toolset `github` (tool `search`) and by \
         toolset `jira` (tool `search`); prefix, rename or filter one of them"
    );
}

#[test]
fn a_rename_that_lands_on_a_taken_name_is_a_collision_naming_the_rename() {
    let github = github().rename("open_issue", "search_issues").unwrap();
    let jira = jira().rename("search", "search_issues").unwrap();
    let err = github.merge(jira).err().unwrap();
    assert_eq!(
        err,
        RegistryError::Collision {
            name: "search_issues".into(),
            first: "toolset `github` (tool `open_issue`, renamed `search_issues`)".into(),
            second: "toolset `jira` (tool `search`, renamed `search_issues`)".into(),
        }
    );
}

#[test]
fn registering_a_toolset_over_a_directly_registered_tool_names_both() {
    let mut registry = ToolRegistry::new();
    registry.register(jira::SearchTool).unwrap();
    let err = registry.register_toolset(github()).err().unwrap();
    assert_eq!(
        err.to_string(),
        "the tool name `search` is claimed twice: by a tool registered directly and by \
         toolset `github` (tool `search`); prefix, rename or filter one of them"
    );
}

#[tokio::test]
async fn a_renamed_tool_keeps_its_schema_and_safety_and_runs_under_its_new_name() {
    let registry = jira()
        .rename("search", "tickets")
        .unwrap()
        .into_registry()
        .unwrap();
    let spec = registry.get("tickets").unwrap().spec();
    assert!(spec.safety.is_read_only());
    assert_eq!(spec.input_schema, jira::SearchTool::spec().input_schema);
    assert!(registry.get("search").is_none());
    let executor = ToolExecutor::builder(registry, ()).build().unwrap();
    let call = ToolCall::new("c1", "tickets", json!({"text": "login"}));
    let result = execute_once(&executor, call).await;
    assert_eq!(result.text(), "jira tickets about login");
    let old = ToolCall::new("c2", "search", json!({"text": "login"}));
    let refused = execute_once(&executor, old).await;
    assert_eq!(refused.outcome(), "unknown_tool");
}

#[test]
fn filters_keep_tools_by_name_or_by_tag() {
    assert_eq!(
        github().tagged("read").names().collect::<Vec<_>>(),
        ["search"]
    );
    assert_eq!(
        github().only(["open_issue"]).names().collect::<Vec<_>>(),
        ["open_issue"]
    );
    let read_only = github().filter(|spec| spec.safety.is_read_only());
    assert_eq!(read_only.names().collect::<Vec<_>>(), ["search"]);
    // Filtering out the colliding tool lets the merge through.
    let merged = github().tagged("write").merge(jira()).unwrap();
    assert_eq!(merged.names().collect::<Vec<_>>(), ["open_issue", "search"]);
}

#[test]
fn a_prefix_or_rename_that_breaks_the_name_rule_is_refused() {
    let err = github().prefixed("bad prefix ").err().unwrap();
    assert!(matches!(err, RegistryError::InvalidName { .. }), "{err}");
    let err = github().rename("search", &"x".repeat(65)).err().unwrap();
    assert!(matches!(err, RegistryError::InvalidName { .. }), "{err}");
}

#[test]
fn renaming_a_tool_the_toolset_does_not_hold_is_an_error() {
    let err = github().rename("delete_repo", "rm").err().unwrap();
    assert_eq!(err.rule(), "not_in_toolset");
    assert_eq!(
        err.to_string(),
        "cannot rename `delete_repo` in toolset `github`: no such tool"
    );
}

/// Counts from the application's state.
#[tool]
async fn count(#[inject] start: State<u32>) -> u32 {
    *start + 1
}

#[tokio::test]
async fn a_toolset_of_stateful_tools_composes_and_runs_with_the_executors_state() {
    let registry = Toolset::<u32>::named("counters")
        .tool(CountTool)
        .prefixed("c_")
        .unwrap()
        .into_registry()
        .unwrap();
    let executor = ToolExecutor::builder(registry, 41u32).build().unwrap();
    let call = ToolCall::new("c1", "c_count", "{}");
    let result = executor
        .execute(&RunContext::empty(), &Turn::new(1), call)
        .await;
    assert_eq!(result.text(), "42");
}
