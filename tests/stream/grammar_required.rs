//! The "required" JSON schema, checked with the `jsonschema` crate and
//! with llguidance's `%json`: the calls every format's reader reads, as
//! an array of `{"name", "parameters"}`, are valid; schema violations, an
//! unknown tool, an empty array and malformed items are not. And what no
//! grammar is built for: a schema an engine cannot express, a recursive
//! or dangling `$ref`, a name a format cannot write, no tools.

use serde_json::{Value, json};
use tinyagents_tools::stream::grammar::{self, Grammar, GrammarError};
use tinyagents_tools::stream::text::TextFormat;
use tinyagents_tools::{ToolSchema, ToolSpec};

use super::grammar_support::{accepted_outputs, formats, refusal, violations};
use super::text_support::{arguments, calls, tools};

fn required() -> (Value, jsonschema::Validator) {
    let schema = grammar::required_schema(&tools()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    (schema, validator)
}

fn as_items(calls_: &[(String, Value)]) -> Value {
    Value::Array(
        calls_
            .iter()
            .map(|(n, a)| json!({"name": n, "parameters": a}))
            .collect(),
    )
}

#[test]
fn the_calls_every_format_s_reader_reads_are_valid_against_the_required_schema() {
    let (schema, v) = required();
    let lark = format!("%llguidance {{}}\nstart: %json {schema}\n");
    let mut checked = 0;
    for format in formats() {
        for text in accepted_outputs(&format) {
            let items = as_items(&calls(&format.parse(&tools(), &text)));
            assert!(v.is_valid(&items), "{}: {items}", format.name);
            assert_eq!(refusal(&lark, &items.to_string()), None, "{items}");
            checked += 1;
        }
    }
    assert!(checked >= 12 * 4 * 3);
    // Two parallel calls, pretty-printed.
    let two = json!([
        {"name": "get_location", "parameters": {}},
        {"name": "get_weather", "parameters": {"city": "Paris", "unit": "celsius"}}
    ]);
    assert!(v.is_valid(&two));
    assert_eq!(
        refusal(&lark, &serde_json::to_string_pretty(&two).unwrap()),
        None
    );
}

#[test]
fn the_required_schema_refuses_what_the_tools_refuse() {
    let (schema, v) = required();
    let lark = format!("%llguidance {{}}\nstart: %json {schema}\n");
    let mut bad: Vec<(String, Value)> = violations()
        .into_iter()
        .map(|(what, c)| {
            (
                what.to_owned(),
                json!([{"name": c.name.as_str(), "parameters": arguments(&c.arguments)}]),
            )
        })
        .collect();
    bad.extend([
        ("no call".to_owned(), json!([])),
        (
            "no parameters".to_owned(),
            json!([{"name": "get_location"}]),
        ),
        ("no name".to_owned(), json!([{"parameters": {}}])),
        ("not an object".to_owned(), json!(["get_location"])),
        (
            "a bad call after a good one".to_owned(),
            json!([
                {"name": "get_location", "parameters": {}},
                {"name": "get_weather", "parameters": {"city": 1}}
            ]),
        ),
        (
            "a call, not an array".to_owned(),
            json!({"name": "get_location", "parameters": {}}),
        ),
    ]);
    for (what, doc) in bad {
        assert!(!v.is_valid(&doc), "{what}: {doc}");
        assert!(
            refusal(&lark, &doc.to_string()).is_some(),
            "{what}: llguidance accepts {doc}"
        );
    }
}

#[test]
fn the_required_schema_is_vllm_s_array_of_calls() {
    let (schema, _) = required();
    assert_eq!(schema["type"], "array");
    assert_eq!(schema["minItems"], 1);
    assert_eq!(schema["items"]["type"], "object");
    let branches = schema["items"]["anyOf"].as_array().unwrap();
    assert_eq!(branches.len(), tools().len());
    assert_eq!(
        branches[0]["properties"]["name"],
        json!({"type": "string", "enum": ["get_weather"]})
    );
    assert_eq!(branches[0]["required"], json!(["name", "parameters"]));
}

fn spec(name: &str, schema: Value) -> ToolSpec {
    ToolSpec::builder(name, "A tool.")
        .input_schema(ToolSchema::from_value(schema))
        .build()
        .unwrap()
}

#[test]
fn what_an_engine_cannot_express_is_an_error_naming_the_tool_and_the_pointer() {
    let hermes = TextFormat::hermes();
    let coded = [spec(
        "lookup",
        json!({"type": "object", "properties": {"code": {"type": "string", "pattern": "^[A-Z]{3}$"}}, "required": ["code"]}),
    )];
    // GBNF is converted here, and refuses `pattern`; llguidance and
    // xgrammar take the schema as it is.
    let e = grammar::gbnf(&hermes, &coded).unwrap_err();
    assert!(
        matches!(&e, GrammarError::Unsupported { grammar: Grammar::Gbnf, tool, pointer, keyword, .. }
            if tool == "lookup" && pointer == "/properties/code" && keyword == "pattern"),
        "{e:?}"
    );
    assert_eq!(
        (e.tool(), e.pointer()),
        (Some("lookup"), Some("/properties/code"))
    );
    assert!(
        e.to_string().contains("`lookup`") && e.to_string().contains("/properties/code"),
        "{e}"
    );
    assert!(
        grammar::lark(&hermes, &coded)
            .unwrap()
            .contains("\"pattern\":\"^[A-Z]{3}$\"")
    );
    assert!(grammar::xgrammar_structural_tag(&hermes, &coded).is_ok());

    // A raw XML-parameter value cannot be held to a string constraint.
    let qwen = TextFormat::by_name("qwen3-coder").unwrap();
    let e = grammar::lark(&qwen, &coded).unwrap_err();
    assert_eq!(
        (e.tool(), e.pointer()),
        (Some("lookup"), Some("/properties/code")),
        "{e}"
    );

    // A pythonic keyword argument must be an identifier.
    let dashed = [spec(
        "f",
        json!({"type": "object", "properties": {"a-b": {"type": "string"}}}),
    )];
    let e = grammar::lark(&TextFormat::by_name("pythonic").unwrap(), &dashed).unwrap_err();
    assert!(
        matches!(&e, GrammarError::Name { name, .. } if name == "a-b"),
        "{e:?}"
    );

    // A recursive reference cannot be inlined; a dangling one resolves to nothing.
    let tree = [spec(
        "tree",
        json!({"type": "object", "properties": {"node": {"$ref": "#/$defs/node"}},
               "$defs": {"node": {"type": "object", "properties": {"child": {"$ref": "#/$defs/node"}}}}}),
    )];
    let e = grammar::lark(&hermes, &tree).unwrap_err();
    assert!(matches!(e, GrammarError::Recursion { .. }), "{e:?}");
    assert_eq!(e.tool(), Some("tree"));
    let dangling = [spec(
        "d",
        json!({"type": "object", "properties": {"x": {"$ref": "#/$defs/missing"}}}),
    )];
    assert!(matches!(
        grammar::gbnf(&hermes, &dangling).unwrap_err(),
        GrammarError::UnresolvedRef { .. }
    ));

    // No tool: no required schema.
    assert_eq!(
        grammar::required_schema(&[]).unwrap_err(),
        GrammarError::NoTools
    );
    assert!("regex".parse::<Grammar>().is_err());
    for kind in Grammar::ALL {
        assert_eq!(kind.as_str().parse::<Grammar>().unwrap(), kind);
    }
}
