//! The check of the xgrammar structural tag: its JSON against a schema of
//! xgrammar's documented format objects (`fixtures/xgrammar_structural_tag
//! .schema.json`) and golden files, and its meaning with llguidance's
//! matcher over the tag translated node for node into Lark: for every
//! format, the calls the reader reads are accepted, arguments the schema
//! refuses are refused, and random walks read back as valid calls.

use std::path::PathBuf;

use serde_json::{Value, json};
use tinyagents_tools::stream::grammar;
use tinyagents_tools::stream::text::TextFormat;
use tinyagents_tools::{ToolSchema, ToolSpec};

use super::grammar_convert::structural_tag_to_lark;
use super::grammar_support::{
    accepted_outputs, assert_accepts, assert_refuses, formats, plain_outputs, refused_outputs,
    walks,
};
use super::text_support::tools;

fn tag(format: &TextFormat) -> Value {
    grammar::xgrammar_structural_tag(format, &tools())
        .unwrap_or_else(|e| panic!("{}: {e}", format.name))
}

fn documented_shape() -> jsonschema::Validator {
    let schema: Value = serde_json::from_str(include_str!(
        "../fixtures/xgrammar_structural_tag.schema.json"
    ))
    .unwrap();
    jsonschema::validator_for(&schema).unwrap()
}

#[test]
fn every_format_s_tag_has_xgrammar_s_documented_shape() {
    let shape = documented_shape();
    for format in formats() {
        let t = tag(&format);
        let errors: Vec<String> = shape
            .iter_errors(&t)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{}: {errors:#?}", format.name);
        // The text `--grammar xgrammar` prints is the same document.
        let text = grammar::Grammar::XGrammar.text(&format, &tools()).unwrap();
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), t);
    }
    // The shape check can fail: a misspelled field, an unknown format, a
    // tag without its end.
    for bad in [
        json!({"type": "structural_tag", "format": {"type": "const_string", "text": "x"}}),
        json!({"type": "structural_tag", "format": {"type": "json", "json_schema": {}}}),
        json!({"type": "structural_tag", "format": {"type": "tag", "begin": "<a>", "content": {"type": "any_text"}}}),
        json!({"type": "structural_tag", "format": {"type": "repeat", "min": 1, "max": -2, "content": {"type": "any_text"}}}),
    ] {
        assert!(!shape.is_valid(&bad), "{bad}");
    }
}

/// One tool, so that the golden files stay readable.
fn weather() -> Vec<ToolSpec> {
    vec![
        ToolSpec::builder("get_weather", "Current weather for a city.")
            .input_schema(ToolSchema::from_value(json!({
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}
                },
                "required": ["city"],
                "additionalProperties": false
            })))
            .build()
            .unwrap(),
    ]
}

#[test]
fn every_format_s_tag_matches_its_golden_file() {
    for format in formats() {
        let t = grammar::xgrammar_structural_tag(&format, &weather()).unwrap();
        let name = format
            .name
            .replace(|c: char| !c.is_ascii_alphanumeric() && c != '-', "_");
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("golden/grammar")
            .join(format!("{name}.structural_tag.json"));
        let text = serde_json::to_string_pretty(&t).unwrap() + "\n";
        if std::env::var_os("UPDATE_GOLDEN").is_some() {
            std::fs::write(&path, &text).unwrap();
            continue;
        }
        let golden = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (run with UPDATE_GOLDEN=1)", path.display()));
        assert_eq!(text, golden, "{} differs from the export", path.display());
    }
}

#[test]
fn every_format_s_tag_accepts_the_calls_the_reader_reads() {
    let mut checked = 0;
    for format in formats() {
        let g = structural_tag_to_lark(&tag(&format));
        for text in accepted_outputs(&format) {
            assert_accepts(&g, &text);
            checked += 1;
        }
        for text in plain_outputs(&format) {
            assert_accepts(&g, text);
        }
    }
    assert!(checked >= 12 * 4 * 3, "{checked} outputs checked");
}

#[test]
fn arguments_the_schema_refuses_are_refused_by_every_format_s_tag() {
    for format in formats() {
        let g = structural_tag_to_lark(&tag(&format));
        for (what, text) in refused_outputs(&format) {
            assert_refuses(&g, what, &text);
        }
    }
}

#[test]
fn outputs_a_random_walk_over_the_tag_writes_read_back_as_valid_calls() {
    let (mut finished, mut calls, mut beyond) = (0, 0, 0);
    for format in formats() {
        let w = walks(&format, &structural_tag_to_lark(&tag(&format)), 3000);
        finished += w.finished;
        calls += w.calls;
        beyond += w.beyond_f64;
    }
    assert!(finished > 100, "{finished} walks finished");
    assert!(calls > 50, "{calls} calls written");
    // `json_schema` leaves numbers unbounded (documented).
    assert!(
        beyond * 10 < calls,
        "{beyond} calls with numbers beyond f64"
    );
}
