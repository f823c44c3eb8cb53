//! Every schema a tool exports lists its properties in the order its
//! structs declare them, in every provider's format, in a build of this
//! crate alone: nested structs, `Option` fields, `#[serde(default)]` fields,
//! fields no contract requires and enum variants included, in the JSON
//! values a caller takes out as in the text that is sent.
//!
//! `.ci/run` runs this test as `cargo test -p tinyagents-tools --test
//! declared_order`: a build of the core and its own dependencies, where no
//! other crate of the workspace (the rig adapter turns serde_json's
//! `preserve_order` on for a whole workspace build) can keep the order for
//! it.
//!
//! The order is read from JSON text by [`Doc`], which keeps object members
//! as the text lists them whatever this build's maps do.

use std::fmt;

use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tinyagents_tools::ToolSpec;
use tinyagents_tools::providers::{
    AnthropicOptions, ExportTarget, GeminiMode, GeminiOptions, OpenAiOptions, export_declarations,
    export_tool,
};
use tinyagents_tools::tool;

/// A point on a map.
#[derive(Deserialize, Serialize, schemars::JsonSchema)]
struct Point {
    /// Degrees north.
    north: f64,
    /// Degrees east.
    east: f64,
}

/// Where a note was written.
#[derive(Deserialize, Serialize, schemars::JsonSchema)]
struct Place {
    /// The street.
    street: String,
    /// The city.
    city: String,
    /// Where on the map, when known.
    point: Option<Point>,
    /// The postal code.
    postcode: String,
}

/// Something attached to a note.
#[derive(Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Attachment {
    /// A web page.
    Link {
        /// Its address.
        url: String,
        /// What to call it.
        label: String,
    },
    /// A file.
    File {
        /// Where it is.
        path: String,
        /// Its media type.
        mime: String,
    },
}

/// A note to save.
#[derive(Deserialize, Serialize, schemars::JsonSchema)]
struct NoteArgs {
    /// Why the note is worth keeping (written first, read first).
    reasoning: String,
    /// The title.
    title: String,
    /// How urgent, 1 to 5 (an `Option`: not required to a caller).
    priority: Option<u8>,
    /// Its tags (a default: not required to a caller).
    #[serde(default)]
    tags: Vec<String>,
    /// The writer's mood (neither contract requires it: a default, and
    /// left out when serialized without one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mood: Option<String>,
    /// The text.
    body: String,
    /// Where it was written.
    place: Place,
    /// What is attached, if anything.
    attachment: Option<Attachment>,
}

/// The note as saved.
#[derive(Serialize, schemars::JsonSchema)]
struct Saved {
    /// The note's id.
    id: String,
    /// The title.
    title: String,
    /// A remark, left out when there is none (not required to a reader).
    #[serde(skip_serializing_if = "Option::is_none")]
    remark: Option<String>,
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
        remark: args.mood,
        place: args.place,
        created: 0,
    }
}

/// The declared orders, none alphabetical, so a map that sorts its keys
/// cannot pass.
const ARGS: &[&str] = &[
    "reasoning",
    "title",
    "priority",
    "tags",
    "mood",
    "body",
    "place",
    "attachment",
];
const PLACE: &[&str] = &["street", "city", "point", "postcode"];
const POINT: &[&str] = &["north", "east"];
const LINK: &[&str] = &["url", "label"];
const FILE: &[&str] = &["path", "mime"];
const SAVED: &[&str] = &["id", "title", "remark", "place", "created"];

/// Every object of the input schema with more than one property.
const INPUT_OBJECTS: &[&[&str]] = &[ARGS, PLACE, POINT, LINK, FILE];
/// Every object of the output schema with more than one property.
const OUTPUT_OBJECTS: &[&[&str]] = &[SAVED, PLACE, POINT];

/// A JSON document as its text lists it: object members in the order
/// written.
#[derive(Debug, Clone, PartialEq)]
enum Doc {
    Object(Vec<(String, Doc)>),
    Array(Vec<Doc>),
    Scalar(Value),
}

impl Doc {
    fn parse(text: &str) -> Doc {
        serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
    }

    fn at(&self, key: &str) -> &Doc {
        match self {
            Doc::Object(members) => members
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v)
                .unwrap_or_else(|| panic!("no `{key}` in {self:?}")),
            other => panic!("not an object: {other:?}"),
        }
    }

    fn first(&self) -> &Doc {
        match self {
            Doc::Array(items) => &items[0],
            other => panic!("not an array: {other:?}"),
        }
    }

    /// The property names of every `properties` object in the document,
    /// in document order, each as listed.
    fn property_lists(&self) -> Vec<Vec<&str>> {
        let mut lists = Vec::new();
        self.collect(&mut lists);
        lists
    }

    fn collect<'a>(&'a self, lists: &mut Vec<Vec<&'a str>>) {
        match self {
            Doc::Object(members) => {
                for (key, value) in members {
                    if let (true, Doc::Object(props)) = (key == "properties", value) {
                        lists.push(props.iter().map(|(k, _)| k.as_str()).collect());
                    }
                    value.collect(lists);
                }
            }
            Doc::Array(items) => items.iter().for_each(|item| item.collect(lists)),
            Doc::Scalar(_) => {}
        }
    }
}

impl<'de> Deserialize<'de> for Doc {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Doc, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Doc;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("JSON")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Doc, A::Error> {
                let mut members = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, Doc>()? {
                    members.push((k, v));
                }
                Ok(Doc::Object(members))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Doc, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(Doc::Array(items))
            }
            fn visit_bool<E>(self, v: bool) -> Result<Doc, E> {
                Ok(Doc::Scalar(v.into()))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Doc, E> {
                Ok(Doc::Scalar(v.into()))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Doc, E> {
                Ok(Doc::Scalar(v.into()))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Doc, E> {
                Ok(Doc::Scalar(v.into()))
            }
            fn visit_str<E>(self, v: &str) -> Result<Doc, E> {
                Ok(Doc::Scalar(v.into()))
            }
            fn visit_unit<E>(self) -> Result<Doc, E> {
                Ok(Doc::Scalar(Value::Null))
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// Checks that the objects of `schema` (more than one property) are exactly
/// `expected`, each in declared order: every expected one appears, and
/// none appears in another order.
fn check(what: &str, schema: &Doc, expected: &[&[&str]]) {
    let lists: Vec<Vec<&str>> = schema
        .property_lists()
        .into_iter()
        .filter(|l| l.len() > 1)
        .collect();
    for want in expected {
        assert!(
            lists.iter().any(|l| l == want),
            "{what}: no object lists {want:?}; listed {lists:?}"
        );
    }
    for list in &lists {
        assert!(
            expected.contains(&list.as_slice()),
            "{what}: {list:?} is not a declared order; listed {lists:?}"
        );
    }
}

fn openai(strict: bool) -> OpenAiOptions {
    OpenAiOptions { strict }
}

/// Every export target, with the path from a declaration to its input
/// schema.
fn targets() -> Vec<(&'static str, ExportTarget, &'static [&'static str])> {
    vec![
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
    ]
}

fn spec() -> &'static ToolSpec {
    SaveNoteTool::spec()
}

/// `value` as text, read back in the text's order.
fn doc(value: &Value) -> Doc {
    Doc::parse(&value.to_string())
}

fn path<'a>(mut at: &'a Doc, keys: &[&str]) -> &'a Doc {
    for key in keys {
        at = at.at(key);
    }
    at
}

#[test]
fn the_declared_orders_are_not_alphabetical() {
    for list in INPUT_OBJECTS.iter().chain(OUTPUT_OBJECTS) {
        assert!(!list.is_sorted(), "{list:?} proves nothing");
    }
}

#[test]
fn the_schemas_a_caller_takes_out_keep_the_declared_order() {
    let spec = spec();
    // The `Value` itself: its maps list keys as declared.
    let value = spec.input_schema.as_value();
    let keys: Vec<&str> = value["properties"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ARGS);
    let names: Vec<&str> = spec.input_schema.property_names().collect();
    assert_eq!(names, ARGS);
    check("input schema", &doc(value), INPUT_OBJECTS);
    let output = spec.output_schema.as_ref().expect("an output schema");
    check("output schema", &doc(output.as_value()), OUTPUT_OBJECTS);
    // Serializing the schema writes the same text.
    let text = serde_json::to_string(&spec.input_schema).unwrap();
    assert_eq!(Doc::parse(&text), doc(value));
}

#[test]
fn every_export_lists_properties_in_declared_order() {
    for (what, target, at) in targets() {
        let declaration = export_tool(spec(), target).unwrap_or_else(|e| panic!("{what}: {e}"));
        check(what, path(&doc(declaration.json()), at), INPUT_OBJECTS);
        let text = serde_json::to_string(&declaration).unwrap();
        check(what, path(&Doc::parse(&text), at), INPUT_OBJECTS);
    }
    let mcp = export_tool(spec(), ExportTarget::Mcp).unwrap();
    check(
        "mcp output",
        doc(mcp.json()).at("outputSchema"),
        OUTPUT_OBJECTS,
    );
}

#[test]
fn a_request_keeps_the_order_as_text_and_inside_a_json_body() {
    for (what, target, at) in targets() {
        let exported = export_declarations(target, [spec()]);
        assert!(exported.errors.is_empty(), "{what}: {:?}", exported.errors);
        let first = |tools: &Doc| -> Doc {
            match target {
                ExportTarget::Gemini(_) => tools.first().at("functionDeclarations").first().clone(),
                _ => tools.first().clone(),
            }
        };
        let text = Doc::parse(&exported.request_tools_text());
        check(what, path(&first(&text), at), INPUT_OBJECTS);
        // A request body built with `json!` around the tools value, as a
        // caller writes one for an HTTP client.
        let body = json!({"model": "m", "tools": exported.request_tools()});
        let body = doc(&body);
        check(what, path(&first(body.at("tools")), at), INPUT_OBJECTS);
    }
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
