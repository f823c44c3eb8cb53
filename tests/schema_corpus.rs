//! `#[tool]` end to end: the input schema of a corpus of argument structs,
//! pinned as JSON (`golden/schema/*.json`; rewrite them with
//! `GOLDEN=overwrite` and read the diff); schema validation and serde agreeing
//! on every sample; options, description and injection as the spec and a call
//! see them.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tinyagents_tools::error::ErrorKind;
use tinyagents_tools::prelude::*;
use tinyagents_tools::registry::compile_schema;
use tinyagents_tools::safety::{
    Determinism, Effect, FilesystemAccess, Idempotency, Reach, RedactionPolicy,
};
use tinyagents_tools::schema::walk_schemas;
use tinyagents_tools::spec::InjectedKind;
use tinyagents_tools::{ErrorClass, RetryPolicy, ToolSafety, ToolSchema};

// ---- the corpus -------------------------------------------------------------

/// A postal address.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Address {
    /// Street and number.
    pub street: String,
    /// City name.
    pub city: String,
}

/// Arguments with a nested struct and documented fields.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShipArgs {
    /// Who receives the parcel.
    pub recipient: String,
    /// Where it goes.
    pub address: Address,
    /// Weight in grams.
    pub grams: u32,
}

/// Send a parcel.
#[tool]
pub async fn ship(args: ShipArgs) -> Result<(), ToolError> {
    let _ = (
        args.recipient,
        args.address.street,
        args.address.city,
        args.grams,
    );
    Ok(())
}

/// How thorough a plan is.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// A quick sketch.
    Fast,
    /// Every step checked.
    Thorough,
}

/// Which items a plan covers.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Filter {
    /// Items with this tag.
    ByTag {
        /// The tag.
        tag: String,
    },
    /// Items of this day (`YYYY-MM-DD`).
    ByDate(String),
    /// Every item.
    Everything,
}

/// Arguments with unit and data enums.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanArgs {
    /// How thorough.
    pub mode: Mode,
    /// Which items.
    pub filter: Filter,
}

/// Plan the work.
#[tool]
pub async fn plan(args: PlanArgs) -> Result<String, ToolError> {
    let filter = match args.filter {
        Filter::ByTag { tag } => tag,
        Filter::ByDate(day) => day,
        Filter::Everything => "all".to_owned(),
    };
    Ok(format!("{:?} {filter}", args.mode))
}

/// Arguments with optional, repeated and keyed values.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CollectArgs {
    /// At most this many.
    pub limit: Option<u32>,
    /// Tags to match.
    pub tags: Vec<String>,
    /// Weight per source.
    pub weights: HashMap<String, u8>,
    /// Feature switches.
    pub flags: BTreeMap<String, bool>,
}

/// Collect items.
#[tool]
pub async fn collect(args: CollectArgs) -> Result<usize, ToolError> {
    Ok(args.limit.unwrap_or(0) as usize + args.tags.len() + args.weights.len() + args.flags.len())
}

/// Arguments with renamed and defaulted fields.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LookupArgs {
    /// The query text.
    #[serde(rename = "q")]
    pub query: String,
    /// The page, from 0.
    #[serde(default)]
    pub page: u16,
    /// How many results.
    pub max_results: u8,
}

/// Look something up.
#[tool]
pub async fn lookup(args: LookupArgs) -> Result<Vec<String>, ToolError> {
    Ok(vec![
        args.query;
        usize::from(args.max_results) + usize::from(args.page)
    ])
}

// ---- schemas as JSON --------------------------------------------------------

fn assert_golden(name: &str, schema: &ToolSchema) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("golden/schema")
        .join(format!("{name}.json"));
    let actual = schema.as_value();
    if std::env::var("GOLDEN").as_deref() == Ok("overwrite") {
        let text = serde_json::to_string_pretty(actual).unwrap() + "\n";
        std::fs::write(&path, text).unwrap();
    }
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
    .unwrap();
    assert_eq!(
        actual,
        &expected,
        "input schema of `{name}` differs from {}",
        path.display()
    );
}

fn assert_every_object_closed(schema: &ToolSchema) {
    let mut objects = 0;
    walk_schemas(schema.as_value(), &mut |ptr, obj| {
        if obj.contains_key("properties") {
            objects += 1;
            assert_eq!(
                obj.get("additionalProperties"),
                Some(&json!(false)),
                "object at `{ptr}` is open"
            );
        }
    });
    assert!(objects > 0);
}

#[test]
fn nested_struct_schema_matches_its_golden_file() {
    assert_golden("ship", &ShipTool::spec().input_schema);
    assert_every_object_closed(&ShipTool::spec().input_schema);
}

#[test]
fn enum_schema_matches_its_golden_file() {
    assert_golden("plan", &PlanTool::spec().input_schema);
    assert_every_object_closed(&PlanTool::spec().input_schema);
}

#[test]
fn option_vec_and_map_schema_matches_its_golden_file() {
    assert_golden("collect", &CollectTool::spec().input_schema);
    assert_every_object_closed(&CollectTool::spec().input_schema);
}

#[test]
fn renamed_and_defaulted_fields_schema_matches_its_golden_file() {
    assert_golden("lookup", &LookupTool::spec().input_schema);
    assert_every_object_closed(&LookupTool::spec().input_schema);
}

#[test]
fn a_zero_argument_tool_takes_a_closed_empty_object() {
    assert_eq!(
        PingTool::spec().input_schema.as_value(),
        &json!({"type": "object", "properties": {}, "additionalProperties": false})
    );
}

// ---- schema and serde agree -------------------------------------------------

fn assert_agreement<T: DeserializeOwned>(schema: &ToolSchema, valid: &[Value], invalid: &[Value]) {
    let validator = compile_schema(schema.as_value()).expect("the schema compiles");
    for v in valid {
        assert!(validator.is_valid(v), "schema refuses valid {v}");
        if let Err(e) = serde_json::from_value::<T>(v.clone()) {
            panic!("serde refuses valid {v}: {e}");
        }
    }
    for v in invalid {
        assert!(!validator.is_valid(v), "schema accepts invalid {v}");
        assert!(
            serde_json::from_value::<T>(v.clone()).is_err(),
            "serde accepts invalid {v}"
        );
    }
}

#[test]
fn schema_and_serde_agree_on_nested_structs() {
    let addr = json!({"street": "1 Main St", "city": "Springfield"});
    assert_agreement::<ShipArgs>(
        &ShipTool::spec().input_schema,
        &[
            json!({"recipient": "Ann", "address": addr, "grams": 0}),
            json!({"recipient": "", "address": addr, "grams": 4_294_967_295u64}),
        ],
        &[
            json!({}),
            json!({"recipient": "Ann", "address": addr}),
            json!({"recipient": "Ann", "address": addr, "grams": -1}),
            json!({"recipient": "Ann", "address": addr, "grams": 4_294_967_296u64}),
            json!({"recipient": "Ann", "address": addr, "grams": 1.5}),
            json!({"recipient": "Ann", "address": {"street": "x"}, "grams": 1}),
            json!({"recipient": "Ann", "address": {"street": "x", "city": "y", "zip": "1"}, "grams": 1}),
            json!({"recipient": "Ann", "address": addr, "grams": 1, "api_key": "forged"}),
            json!({"recipient": 7, "address": addr, "grams": 1}),
        ],
    );
}

#[test]
fn schema_and_serde_agree_on_enums() {
    assert_agreement::<PlanArgs>(
        &PlanTool::spec().input_schema,
        &[
            json!({"mode": "fast", "filter": "everything"}),
            json!({"mode": "thorough", "filter": {"by_tag": {"tag": "red"}}}),
            json!({"mode": "fast", "filter": {"by_date": "2026-01-01"}}),
        ],
        &[
            json!({"mode": "slow", "filter": "everything"}),
            json!({"mode": "Fast", "filter": "everything"}),
            json!({"mode": "fast", "filter": {"by_tag": {}}}),
            json!({"mode": "fast", "filter": {"by_tag": {"tag": "red", "extra": 1}}}),
            json!({"mode": "fast", "filter": {"by_tag": {"tag": "a"}, "by_date": "b"}}),
            json!({"mode": "fast", "filter": {"by_date": 5}}),
            json!({"mode": "fast", "filter": "nothing"}),
            json!({"mode": "fast"}),
        ],
    );
}

#[test]
fn schema_and_serde_agree_on_options_vecs_and_maps() {
    assert_agreement::<CollectArgs>(
        &CollectTool::spec().input_schema,
        &[
            json!({"tags": [], "weights": {}, "flags": {}}),
            json!({"limit": null, "tags": ["a"], "weights": {"x": 255}, "flags": {"on": true}}),
            json!({"limit": 3, "tags": ["a", "b"], "weights": {}, "flags": {}}),
        ],
        &[
            json!({"weights": {}, "flags": {}}),
            json!({"limit": -3, "tags": [], "weights": {}, "flags": {}}),
            json!({"limit": "3", "tags": [], "weights": {}, "flags": {}}),
            json!({"tags": "a", "weights": {}, "flags": {}}),
            json!({"tags": [1], "weights": {}, "flags": {}}),
            json!({"tags": [], "weights": {"x": 256}, "flags": {}}),
            json!({"tags": [], "weights": {"x": "1"}, "flags": {}}),
            json!({"tags": [], "weights": {}, "flags": {"on": "yes"}}),
            json!({"tags": [], "weights": {}, "flags": {}, "other": 1}),
        ],
    );
}

#[test]
fn schema_and_serde_agree_on_renamed_and_defaulted_fields() {
    assert_agreement::<LookupArgs>(
        &LookupTool::spec().input_schema,
        &[
            json!({"q": "rust", "maxResults": 5}),
            json!({"q": "rust", "page": 65535, "maxResults": 0}),
        ],
        &[
            json!({"query": "rust", "maxResults": 5}),
            json!({"q": "rust", "max_results": 5}),
            json!({"q": "rust", "maxResults": 5, "page": 65536}),
            json!({"q": "rust", "maxResults": 256}),
            json!({"q": "rust"}),
        ],
    );
}

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
