//! Policy rules on their own: access lists, modes and per-turn selection.

use tinyagents_tools::error::ErrorKind;
use tinyagents_tools::policy::{AccessPolicy, PolicyError, ToolSelector};
use tinyagents_tools::spec::{Effect, Reach};
use tinyagents_tools::*;
use tinyagents_tools_tests::FakeTool;

fn spec(name: &str, description: &str, safety: ToolSafety, tags: &[&str]) -> ToolSpec {
    let mut b = ToolSpec::builder(name, description).safety(safety);
    for t in tags {
        b = b.tag(*t);
    }
    b.build().unwrap()
}

fn registry() -> ToolRegistry {
    let mut r = ToolRegistry::new();
    r.register(FakeTool::new(spec(
        "search_docs",
        "Search the documentation index.",
        ToolSafety::pure(),
        &["docs"],
    )))
    .unwrap();
    r.register(FakeTool::new(spec(
        "get_weather",
        "Current weather for a city.",
        ToolSafety::pure().reach(Reach::Networked),
        &["web"],
    )))
    .unwrap();
    r.register(FakeTool::new(spec(
        "delete_note",
        "Delete a note by id.",
        ToolSafety::default()
            .effect(Effect::Destructive)
            .reach(Reach::Local),
        &["notes"],
    )))
    .unwrap();
    r.register(FakeTool::new(spec(
        "run_shell",
        "Run a shell command.",
        ToolSafety::default().shell(true),
        &["system"],
    )))
    .unwrap();
    r
}

/// The spec of the registered tool `name`.
fn spec_in<'r>(r: &'r ToolRegistry, name: &str) -> &'r ToolSpec {
    r.get(name).unwrap().spec()
}

/// The access policy over `r` that allows only `names`.
fn allow_list(r: &ToolRegistry, names: &[&str]) -> Result<AccessPolicy, PolicyError> {
    AccessPolicy::builder()
        .allow(names.iter().copied())
        .build(r)
}

/// The access policy over `r` that denies `names`.
fn deny_list(r: &ToolRegistry, names: &[&str]) -> Result<AccessPolicy, PolicyError> {
    AccessPolicy::builder().deny(names.iter().copied()).build(r)
}

fn denied_policy(err: ToolError) -> String {
    assert_eq!(err.class(), ErrorClass::Repair);
    match err.kind() {
        ErrorKind::Denied { policy } => policy.to_string(),
        other => panic!("not a denial: {other:?}"),
    }
}

/// Checks that `policy` refuses each of `names`, a denial by the policy
/// named `by`.
fn assert_denies(policy: &AccessPolicy, r: &ToolRegistry, names: &[&str], by: &str) {
    for name in names {
        let err = policy.check(spec_in(r, name)).unwrap_err();
        assert_eq!(denied_policy(err), by, "{name}");
    }
}

#[test]
fn a_typo_in_an_allow_or_deny_list_is_an_error_with_a_suggestion() {
    let r = registry();
    let err = allow_list(&r, &["serch_docs"]).unwrap_err();
    assert_eq!(
        err,
        PolicyError::UnknownTool {
            policy: "allow_list",
            name: "serch_docs".into(),
            suggestion: Some("search_docs".into())
        }
    );
    assert_eq!(
        err.to_string(),
        "policy `allow_list` names `serch_docs`, which is not a registered tool; did you mean `search_docs`?"
    );
    let err = deny_list(&r, &["nothing_like_it"]).unwrap_err();
    assert!(matches!(
        err,
        PolicyError::UnknownTool {
            suggestion: None,
            ..
        }
    ));
}

#[test]
fn the_allow_list_admits_only_its_tools() {
    let r = registry();
    let policy = allow_list(&r, &["search_docs"]).unwrap();
    assert!(policy.check(spec_in(&r, "search_docs")).is_ok());
    assert_denies(&policy, &r, &["get_weather"], "allow_list");
}

#[test]
fn the_deny_list_refuses_its_tools() {
    let r = registry();
    let policy = deny_list(&r, &["run_shell"]).unwrap();
    let err = policy.check(spec_in(&r, "run_shell")).unwrap_err();
    assert_eq!(denied_policy(err.clone()), "deny_list");
    assert_eq!(
        err.message(),
        "the tool `run_shell` is not allowed in this run"
    );
    assert!(policy.check(spec_in(&r, "delete_note")).is_ok());
}

#[test]
fn a_safety_predicate_denies_every_matching_tool() {
    let r = registry();
    let policy = AccessPolicy::builder()
        .deny_where("no_shell", "shell access is disabled here", |s| {
            s.safety.shell
        })
        .build(&r)
        .unwrap();
    let err = policy.check(spec_in(&r, "run_shell")).unwrap_err();
    assert_eq!(
        err.message(),
        "the tool `run_shell` cannot be used: shell access is disabled here"
    );
    assert_eq!(denied_policy(err), "no_shell");
    assert!(policy.check(spec_in(&r, "search_docs")).is_ok());
}

#[test]
fn read_only_mode_refuses_mutating_and_destructive_tools() {
    let r = registry();
    let policy = AccessPolicy::read_only();
    assert_denies(&policy, &r, &["delete_note", "run_shell"], "read_only_mode");
    for name in ["search_docs", "get_weather"] {
        assert!(policy.allows(spec_in(&r, name)), "{name}");
    }
}

#[test]
fn local_only_mode_refuses_networked_tools() {
    let r = registry();
    let policy = AccessPolicy::local_only();
    assert_denies(
        &policy,
        &r,
        &["get_weather", "run_shell"],
        "local_only_mode",
    );
    assert!(policy.allows(spec_in(&r, "delete_note")));
}

#[test]
fn combined_policies_must_all_pass() {
    let r = registry();
    let policy = AccessPolicy::read_only().and(AccessPolicy::local_only());
    assert!(policy.allows(spec_in(&r, "search_docs")));
    assert!(!policy.allows(spec_in(&r, "get_weather")));
    assert!(!policy.allows(spec_in(&r, "delete_note")));
}

#[test]
fn selection_by_predicate_group_and_relevance() {
    let r = registry();
    let run = RunContext::empty();
    let everything = ToolSelector::builder().build(&r).unwrap();
    assert_eq!(everything.select(&r, &run, "anything").len(), 4);

    let safe = ToolSelector::builder()
        .filter(|spec, _| spec.safety.is_read_only())
        .build(&r)
        .unwrap();
    assert_eq!(safe.select(&r, &run, ""), ["search_docs", "get_weather"]);

    let notes = ToolSelector::builder()
        .groups(["notes", "system"])
        .build(&r)
        .unwrap();
    assert_eq!(notes.select(&r, &run, ""), ["delete_note", "run_shell"]);

    let ranked = ToolSelector::builder()
        .rank_by_relevance(1)
        .always_include(["search_docs"])
        .build(&r)
        .unwrap();
    assert_eq!(
        ranked.select(&r, &run, "Delete the note about groceries"),
        ["search_docs", "delete_note"]
    );
    assert_eq!(
        ranked.select(&r, &run, "is it raining? check the weather"),
        ["search_docs", "get_weather"]
    );
    // Nothing relevant: only the always-include list.
    assert_eq!(ranked.select(&r, &run, "hello"), ["search_docs"]);
}

#[test]
fn a_selector_refuses_unknown_always_include_names_and_zero_top_k() {
    let r = registry();
    let err = ToolSelector::builder()
        .always_include(["get_wether"])
        .build(&r)
        .unwrap_err();
    assert!(matches!(
        err,
        PolicyError::UnknownTool { ref suggestion, .. } if suggestion.as_deref() == Some("get_weather")
    ));
    assert!(
        ToolSelector::<()>::builder()
            .rank_by_relevance(0)
            .build(&r)
            .is_err()
    );
}
