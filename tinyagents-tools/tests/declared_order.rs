//! Every provider export lists a tool's properties in the order its structs
//! declare them, nested structs included, in a build of this crate alone.
//!
//! `.ci/run` runs this test as `cargo test -p tinyagents-tools --test
//! declared_order`: a build of the core and its own dependencies, where no
//! other crate of the workspace (the rig adapter turns serde_json's
//! `preserve_order` on for a whole workspace build) can keep the order for
//! it.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tinyagents_tools::providers::{
    AnthropicOptions, ExportTarget, GeminiMode, GeminiOptions, OpenAiOptions, export_tool,
};
use tinyagents_tools::tool;

/// Where a note was written.
#[derive(Deserialize, Serialize, schemars::JsonSchema)]
struct Place {
    /// The street.
    street: String,
    /// The city.
    city: String,
    /// The postal code.
    postcode: String,
}

/// A note to save.
#[derive(Deserialize, schemars::JsonSchema)]
#[allow(dead_code)]
struct NoteArgs {
    /// Why the note is worth keeping (written first, read first).
    reasoning: String,
    /// The title.
    title: String,
    /// The text.
    body: String,
    /// Where it was written.
    place: Place,
    /// How urgent, 1 to 5.
    priority: Option<u8>,
}

/// The note as saved.
#[derive(Serialize, schemars::JsonSchema)]
struct Saved {
    /// The note's id.
    id: String,
    /// The title.
    title: String,
    /// Where it was written.
    place: Place,
    /// When it was saved (ms since the Unix epoch).
    created: u64,
}

/// Save a note.
#[tool(local)]
async fn save_note(args: NoteArgs) -> Saved {
    Saved {
        id: "note-1".into(),
        title: args.title,
        place: args.place,
        created: 0,
    }
}

/// The declared orders: not alphabetical, so a map that sorts its keys
/// cannot pass.
const ARGS: [&str; 5] = ["reasoning", "title", "body", "place", "priority"];
const PLACE: [&str; 3] = ["street", "city", "postcode"];
const SAVED: [&str; 4] = ["id", "title", "place", "created"];

/// The property names of the object schema `schema`, in the order listed.
fn names(schema: &Value) -> Vec<&str> {
    schema["properties"]
        .as_object()
        .unwrap_or_else(|| panic!("no properties in {schema}"))
        .keys()
        .map(String::as_str)
        .collect()
}

/// The schema of property `name` of `schema`, through a `$ref` into the
/// root's `$defs` when the export kept references.
fn property<'a>(root: &'a Value, schema: &'a Value, name: &str) -> &'a Value {
    let mut found = &schema["properties"][name];
    // A one-member `allOf` or `anyOf` around a reference (with a
    // description beside it) is looked through.
    for keyword in ["allOf", "anyOf"] {
        if let Some(first) = found[keyword].as_array().and_then(|a| a.first()) {
            found = first;
        }
    }
    match found["$ref"].as_str() {
        Some(pointer) => root
            .pointer(pointer.trim_start_matches('#'))
            .unwrap_or_else(|| panic!("{pointer} is not in {root}")),
        None => found,
    }
}

/// Checks the input schema `root` of an export: the arguments' order and
/// the nested place's.
fn check_input(what: &str, root: &Value) {
    assert_eq!(names(root), ARGS, "{what}: {root}");
    assert_eq!(
        names(property(root, root, "place")),
        PLACE,
        "{what}: {root}"
    );
}

fn openai(strict: bool) -> OpenAiOptions {
    OpenAiOptions { strict }
}

#[test]
fn every_export_lists_properties_in_declared_order() {
    assert!(
        !ARGS.is_sorted() && !PLACE.is_sorted() && !SAVED.is_sorted(),
        "a declared order that is also alphabetical proves nothing"
    );
    let spec = SaveNoteTool::spec();
    check_input("canonical", spec.input_schema.as_value());
    let output = spec.output_schema.as_ref().expect("an output schema");
    assert_eq!(names(output.as_value()), SAVED);

    let cases: Vec<(&str, ExportTarget, &[&str])> = vec![
        (
            "openai chat",
            ExportTarget::OpenAiChat(openai(false)),
            &["function", "parameters"],
        ),
        (
            "openai chat strict",
            ExportTarget::OpenAiChat(openai(true)),
            &["function", "parameters"],
        ),
        (
            "openai responses",
            ExportTarget::OpenAiResponses(openai(false)),
            &["parameters"],
        ),
        (
            "openai responses strict",
            ExportTarget::OpenAiResponses(openai(true)),
            &["parameters"],
        ),
        (
            "anthropic",
            ExportTarget::Anthropic(AnthropicOptions::default()),
            &["input_schema"],
        ),
        (
            "anthropic strict",
            ExportTarget::Anthropic(AnthropicOptions {
                strict: true,
                cache_last: false,
            }),
            &["input_schema"],
        ),
        (
            "gemini parameters",
            ExportTarget::Gemini(GeminiOptions {
                mode: GeminiMode::Parameters,
            }),
            &["parameters"],
        ),
        (
            "gemini parametersJsonSchema",
            ExportTarget::Gemini(GeminiOptions {
                mode: GeminiMode::ParametersJsonSchema,
            }),
            &["parametersJsonSchema"],
        ),
        ("mcp", ExportTarget::Mcp, &["inputSchema"]),
    ];
    for (what, target, path) in cases {
        let declaration = export_tool(spec, target).unwrap_or_else(|e| panic!("{what}: {e}"));
        let mut schema = declaration.json();
        for key in path {
            schema = &schema[*key];
        }
        check_input(what, schema);
        // The declaration's own text lists them so too: what is sent.
        let text = declaration.json().to_string();
        let at = |name: &str| text.find(&format!("\"{name}\":")).unwrap();
        let positions: Vec<usize> = ARGS.iter().map(|n| at(n)).collect();
        assert!(positions.is_sorted(), "{what}: {text}");
    }

    let mcp = export_tool(spec, ExportTarget::Mcp).unwrap();
    let output = &mcp.json()["outputSchema"];
    assert_eq!(names(output), SAVED, "mcp output: {output}");
    assert_eq!(
        names(property(output, output, "place")),
        PLACE,
        "mcp output: {output}"
    );
}

#[test]
fn serde_json_keeps_insertion_order_in_a_build_of_the_core_alone() {
    let value: Value = serde_json::from_str(r#"{"zebra": 1, "apple": 2}"#).unwrap();
    let keys: Vec<&String> = value.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        ["zebra", "apple"],
        "serde_json's `preserve_order` is off"
    );
}
