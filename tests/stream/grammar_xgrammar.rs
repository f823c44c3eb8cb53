//! The check of the xgrammar structural tag: its JSON against a schema of
//! xgrammar's documented format objects (`fixtures/xgrammar_structural_tag
//! .schema.json`) and golden files, and its meaning with llguidance's
//! matcher over the tag translated node for node into Lark: for every
//! format, the calls the reader reads are accepted, arguments the schema
//! refuses are refused, and random walks read back as valid calls.

use std::path::PathBuf;

use serde_json::{Value, json};
use tinyagents_tools::stream::grammar;
use tinyagents_tools::stream::text::{Join, TextFormat};
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

/// Whether xgrammar counts a format object as unlimited text (its
/// `StructuralTagAnalyzer::IsUnlimited` in 0.2): free text, triggered or
/// separated tags, a repetition without a bound, and what holds one that
/// no `excludes` bound.
fn xgrammar_unlimited(f: &Value) -> bool {
    let excluded = |f: &Value| {
        matches!(f["type"].as_str(), Some("any_text" | "triggered_tags"))
            && f["excludes"].as_array().is_some_and(|e| !e.is_empty())
    };
    match f["type"].as_str().unwrap_or_default() {
        "any_text" | "triggered_tags" | "tags_with_separator" | "star" | "plus" => true,
        "repeat" => f["max"] == -1 || (f["max"] != 0 && xgrammar_unlimited(&f["content"])),
        "sequence" | "or" => f["elements"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|e| xgrammar_unlimited(e) && !excluded(e)),
        "optional" => xgrammar_unlimited(&f["content"]),
        _ => false,
    }
}

/// The begin markers of the `tag`s in `f` that have an empty end around
/// unlimited content: xgrammar refuses the whole structural tag for one
/// ("When the content is unlimited, at least one end string must be
/// non-empty"), which vLLM and SGLang then answer with an error.
fn tags_xgrammar_refuses(f: &Value, found: &mut Vec<String>) {
    match f {
        Value::Object(o) => {
            if f["type"] == "tag"
                && f["end"].as_str() == Some("")
                && xgrammar_unlimited(&f["content"])
                && !(f["content"]["type"] == "any_text"
                    && f["content"]["excludes"]
                        .as_array()
                        .is_some_and(|e| !e.is_empty()))
            {
                found.push(f["begin"].as_str().unwrap_or_default().to_owned());
            }
            o.values().for_each(|v| tags_xgrammar_refuses(v, found));
        }
        Value::Array(items) => items.iter().for_each(|v| tags_xgrammar_refuses(v, found)),
        _ => {}
    }
}

#[test]
fn no_tag_has_an_empty_end_around_content_xgrammar_counts_unlimited() {
    // Llama 3.x JSON's calls after `<|python_tag|>` and Mistral's list
    // after `[TOOL_CALLS]` have no end marker: their tags now end with the
    // character every one of their texts ends with (`}`, `]`), so that
    // xgrammar 0.2.9 compiles them (checked with its
    // `Grammar.from_structural_tag`); the tests above check the texts
    // they accept did not change.
    for format in formats() {
        for tools in [tools(), weather()] {
            let t = grammar::xgrammar_structural_tag(&format, &tools)
                .unwrap_or_else(|e| panic!("{}: {e}", format.name));
            let mut refused = Vec::new();
            tags_xgrammar_refuses(&t, &mut refused);
            assert!(refused.is_empty(), "{}: {refused:?}", format.name);
        }
    }
    let mistral = tag(&TextFormat::mistral());
    let list = &mistral["format"]["tags"][0];
    assert_eq!(
        (list["begin"].as_str(), list["end"].as_str()),
        (Some("[TOOL_CALLS]"), Some("]"))
    );
}

#[test]
fn a_run_with_no_end_whose_calls_end_in_no_one_character_is_refused_by_name() {
    // Mistral v11's calls end with their JSON arguments; joined by `, `
    // in a run without an end marker, nothing says where the run ends.
    let mut format = TextFormat::mistral_v11();
    format.runs[0].join = Join::Separator(", ".into());
    let err = grammar::xgrammar_structural_tag(&format, &weather()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the xgrammar grammar cannot end the run of calls that starts at `[TOOL_CALLS]`: it has no end marker and its calls do not all end with one character"
    );
    assert_eq!(err.tool(), None);
}
