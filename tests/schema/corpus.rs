//! The input schemas `#[tool]` makes of a corpus of argument structs,
//! pinned as JSON (`golden/schema/*.json`; rewrite them with
//! `GOLDEN=overwrite` and read the diff), and schema validation and serde
//! agreeing on every sample.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tinyagents_tools::ToolSchema;
use tinyagents_tools::prelude::*;
use tinyagents_tools::registry::compile_schema;
use tinyagents_tools::spec::schema::walk_schemas;

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

fn assert_every_object_closed(name: &str, schema: &ToolSchema) {
    let mut objects = 0;
    walk_schemas(schema.as_value(), &mut |ptr, obj| {
        if obj.contains_key("properties") {
            objects += 1;
            assert_eq!(
                obj.get("additionalProperties"),
                Some(&json!(false)),
                "{name}: object at `{ptr}` is open"
            );
        }
    });
    assert!(objects > 0, "{name} has no object");
}

#[test]
fn every_corpus_schema_matches_its_golden_file_and_closes_every_object() {
    let corpus = [
        // A nested struct.
        ("ship", ShipTool::spec()),
        // An enum.
        ("plan", PlanTool::spec()),
        // Options, vectors and maps.
        ("collect", CollectTool::spec()),
        // Renamed and defaulted fields.
        ("lookup", LookupTool::spec()),
    ];
    for (name, spec) in corpus {
        assert_golden(name, &spec.input_schema);
        assert_every_object_closed(name, &spec.input_schema);
    }
}

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
