//! What `#[tool]` puts in a spec (description, options, safety, output
//! schema, injected parameters) and what calling the generated tool does
//! (injection, refusals, outputs), on the corpus's argument structs.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tinyagents_tools::error::ErrorKind;
use tinyagents_tools::prelude::*;
use tinyagents_tools::spec::InjectedKind;
use tinyagents_tools::spec::*;
use tinyagents_tools::{ErrorClass, RetryPolicy, ToolSafety, ToolSchema};

use crate::corpus::*;

// ---- description and options ------------------------------------------------

/// Look a word up in the dictionary.
/// Returns every sense of the word.
///
/// Senses are ordered by frequency:
/// - common first
/// - rare last
#[tool(read_only)]
async fn define() -> ToolOutput {
    ToolOutput::text("a sense")
}

#[test]
fn the_doc_comment_becomes_the_description_with_its_paragraphs() {
    assert_eq!(
        DefineTool::spec().description,
        "Look a word up in the dictionary. Returns every sense of the word.\n\n\
         Senses are ordered by frequency:\n- common first\n- rare last"
    );
}

/// Answer pong.
#[tool(description = "Check that the tools are alive.")]
async fn ping() -> &'static str {
    "pong"
}

#[test]
fn a_description_option_wins_over_the_doc_comment() {
    assert_eq!(
        PingTool::spec().description,
        "Check that the tools are alive."
    );
}

/// Remove files under the workspace.
#[tool(
    name = "remove_files",
    title = "Remove files",
    destructive,
    idempotent,
    local,
    filesystem = "write",
    shell,
    spend,
    requires_confirmation,
    workspace,
    redact(fields = ["password"], patterns = ["sk-"], secrets = false),
    unredacted_secrets,
    deterministic_given_injected,
    timeout = "2m",
    retry(max_attempts = 3, backoff = "250ms"),
    max_concurrency = 2,
    tags = ["files", "danger"]
)]
async fn delete_files(#[inject] root: WorkspaceRoot) -> Result<(), ToolError> {
    let _ = root.path();
    Ok(())
}

#[test]
fn every_option_maps_onto_the_spec() {
    let spec = DeleteFilesTool::spec();
    assert_eq!(spec.name.as_str(), "remove_files");
    assert_eq!(spec.title.as_deref(), Some("Remove files"));
    let expected = ToolSafety::default()
        .effect(Effect::Destructive)
        .idempotency(Idempotency::Idempotent)
        .reach(Reach::Local)
        .filesystem(FilesystemAccess::Write)
        .shell(true)
        .spend(true)
        .requires_confirmation(true)
        .workspace(true)
        .redaction(RedactionPolicy {
            secrets: false,
            fields: vec!["password".into()],
            patterns: vec!["sk-".into()],
        })
        .determinism(Determinism::GivenInjected)
        .allow_unredacted_secrets(true);
    assert_eq!(spec.safety, expected);
    assert_eq!(spec.timeout, Some(Duration::from_secs(120)));
    assert_eq!(
        spec.retry,
        RetryPolicy::attempts(3, Duration::from_millis(250))
    );
    assert!(!spec.concurrency.sequential);
    assert_eq!(spec.concurrency.max_concurrency.map(|n| n.get()), Some(2));
    assert_eq!(spec.tags, ["files", "danger"]);
    assert!(!spec.blocking);
    assert_eq!(spec.injected.len(), 1);
    assert_eq!(spec.injected[0].kind, InjectedKind::Workspace);
    assert_eq!(spec.output_schema, None);
}

/// Show the token, unmasked.
#[tool(read_only, redact(secrets = false), unredacted_secrets)]
async fn show_token() -> String {
    "shown".to_owned()
}

#[test]
fn a_tool_that_opts_in_to_unredacted_secrets_registers() {
    let mut registry: ToolRegistry = ToolRegistry::new();
    registry.register(ShowTokenTool).unwrap();
    let safety = &ShowTokenTool::spec().safety;
    assert!(!safety.redaction.secrets && safety.unredacted_secrets);
}

#[test]
fn a_tool_without_options_gets_the_conservative_defaults() {
    let spec = ShipTool::spec();
    assert_eq!(spec.name.as_str(), "ship");
    assert_eq!(spec.title, None);
    assert_eq!(spec.safety, ToolSafety::default());
    assert_eq!(spec.timeout, None);
    assert_eq!(spec.retry, RetryPolicy::none());
    assert!(!spec.concurrency.sequential);
    assert_eq!(spec.concurrency.max_concurrency, None);
    assert!(spec.tags.is_empty());
}

#[test]
fn the_output_schema_comes_from_a_json_schema_return_type() {
    assert_eq!(
        LookupTool::spec()
            .output_schema
            .as_ref()
            .map(ToolSchema::as_value),
        Some(&json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "Array_of_string",
            "type": "array",
            "items": {"type": "string"}
        }))
    );
    assert_eq!(ShipTool::spec().output_schema, None, "`()` has no output");
    assert_eq!(
        DefineTool::spec().output_schema,
        None,
        "`ToolOutput` has none"
    );
}

// ---- injection and calls ----------------------------------------------------

/// The document index.
pub struct Index(Vec<String>);

/// The search service's key.
pub struct ApiKey(String);

impl AsRef<str> for ApiKey {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// Search the index.
#[tool(read_only, idempotent)]
pub async fn search(
    args: LookupArgs,
    #[inject] index: Store<Index>,
    #[inject] key: Secret<ApiKey>,
    #[inject] call: ToolCallId,
) -> Result<Vec<String>, ToolError> {
    if key.expose().0.is_empty() {
        return Err(ToolError::fatal("no key"));
    }
    let hits = index.0.iter().filter(|d| d.contains(&args.query));
    Ok(hits.map(|d| format!("{call}: {d}")).collect())
}

fn runtime_with_index() -> ToolRuntime {
    let run = RunContext::builder(())
        .store(Index(vec!["rust book".into(), "go book".into()]))
        .secret(ApiKey("sk-test".into()))
        .build();
    ToolRuntime::new(run, "call-1", "search")
}

#[test]
fn injected_parameters_never_appear_in_the_schema_and_are_listed_in_the_spec() {
    let spec = SearchTool::spec();
    assert_eq!(spec.input_schema, LookupTool::spec().input_schema);
    let injected: Vec<_> = spec
        .injected
        .iter()
        .map(|i| (i.name.as_str(), i.type_name.as_str(), i.kind))
        .collect();
    assert_eq!(
        injected,
        [
            ("index", "Store<Index>", InjectedKind::Store),
            ("key", "Secret<ApiKey>", InjectedKind::Secret),
            ("call", "ToolCallId", InjectedKind::ToolCallId),
        ]
    );
}

#[tokio::test]
async fn calling_the_generated_tool_injects_store_secret_and_call_id() {
    let out = SearchTool
        .call(
            &(),
            &runtime_with_index(),
            json!({"q": "rust", "maxResults": 1}),
        )
        .await
        .unwrap();
    assert_eq!(out.structured, Some(json!(["call-1: rust book"])));
}

#[tokio::test]
async fn a_missing_store_is_a_fatal_error_that_names_no_internals() {
    let runtime = ToolRuntime::new(RunContext::empty(), "call-2", "search");
    let err = SearchTool
        .call(&(), &runtime, json!({"q": "rust", "maxResults": 1}))
        .await
        .unwrap_err();
    assert_eq!(err.class(), ErrorClass::Fatal);
    assert!(matches!(err.kind(), ErrorKind::InjectionFailed { .. }));
    assert!(!err.message().contains("Index"), "{}", err.message());
}

#[tokio::test]
async fn arguments_serde_refuses_are_a_repairable_error_that_echoes_no_value() {
    let err = SearchTool
        .call(
            &(),
            &runtime_with_index(),
            json!({"q": "sk-leak", "maxResults": "sk-leak"}),
        )
        .await
        .unwrap_err();
    assert!(err.is_repairable());
    assert!(!err.message().contains("sk-leak"), "{}", err.message());
}

#[tokio::test]
async fn the_tool_fn_stays_callable_directly() {
    let args = LookupArgs {
        query: "go".into(),
        page: 0,
        max_results: 1,
    };
    let index = Store::new(Arc::new(Index(vec!["go book".into()])));
    let hits = search(args, index, Secret::new(ApiKey("k".into())), "c".into())
        .await
        .unwrap();
    assert_eq!(hits, ["c: go book"]);
}

#[tokio::test]
async fn plain_values_and_tool_outputs_become_tool_outputs() {
    let rt = runtime_with_index();
    let pong = PingTool.call(&(), &rt, json!({})).await.unwrap();
    assert_eq!(pong.structured, Some(json!("pong")));
    let sense = DefineTool.call(&(), &rt, json!({})).await.unwrap();
    assert_eq!(sense, ToolOutput::text("a sense"));
    let none = ShipTool
        .call(
            &(),
            &rt,
            json!({"recipient": "a", "address": {"street": "s", "city": "c"}, "grams": 1}),
        )
        .await
        .unwrap();
    assert_eq!(none, ToolOutput::empty());
}

#[test]
fn generated_tools_register_under_their_names() {
    let mut registry: ToolRegistry = ToolRegistry::new();
    registry
        .register(ShipTool)
        .unwrap()
        .register(SearchTool)
        .unwrap();
    // `remove_files` declares `workspace` but takes no `WorkspacePath`: there
    // is nothing to confine, and registration says so.
    let refused = registry.register(DeleteFilesTool).unwrap_err();
    assert_eq!(refused.rule(), "workspace_without_path");
    assert_eq!(registry.names().collect::<Vec<_>>(), ["ship", "search"]);
}

#[test]
fn a_zero_argument_tool_takes_a_closed_empty_object() {
    assert_eq!(
        PingTool::spec().input_schema.as_value(),
        &json!({"type": "object", "properties": {}, "additionalProperties": false})
    );
}
