//! JSON Schema 2020-12 keywords (SEP-1613, SEP-2106) through the canonical
//! spec, the MCP export and validation, and what the LLM providers' exports
//! do with them; `x-mcp-header` annotations (SEP-2243) in the schema and the
//! exports.

use std::sync::LazyLock;

use serde_json::{Value, json};
use tinyagents_tools::providers::{
    AnthropicOptions, ExportError, ExportTarget, GeminiMode, GeminiOptions, McpHeaderProblem,
    OpenAiOptions, export_tool,
};
use tinyagents_tools::testkit::FakeTool;
use tinyagents_tools::{ToolOutput, ToolSafety, ToolSpec};
use tinyagents_tools_examples::conformance_tools::{
    JsonSchema202012ToolTool, TestCustomHeadersNullTool, TestCustomHeadersTool,
};
use tinyagents_tools_tests::{call, execute_once, executor, kind, spec};

/// The conformance suite's document (`tests/fixtures/mcp_json_schema_2020_12.json`).
static SUITE: LazyLock<Value> = LazyLock::new(|| {
    serde_json::from_str(include_str!("../fixtures/mcp_json_schema_2020_12.json"))
        .expect("the fixture is JSON")
});

/// The input schema the suite expects of `json_schema_2020_12_tool`.
fn suite_schema() -> Value {
    SUITE["inputSchema"].clone()
}

fn mcp_input_schema(spec: &ToolSpec) -> Value {
    let tool = export_tool(spec, ExportTarget::Mcp).expect("an MCP declaration");
    tool.into_json()["inputSchema"].take()
}

#[test]
fn the_conformance_tool_is_listed_with_the_suites_schema() {
    let mut expected = suite_schema();
    // The argument struct's doc comment, and the address closed like every
    // object of an input schema (its struct refuses unknown fields too).
    expected["description"] = json!(
        "A contact: a phone number or an email address at least (`allOf`/`anyOf`),\n\
         and the one `contactMethod` chooses (`if`/`then`/`else`: the phone number\n\
         for `phone`, else the email address)."
    );
    expected["$defs"]["address"]["additionalProperties"] = json!(false);
    let spec = JsonSchema202012ToolTool::spec();
    assert_eq!(mcp_input_schema(spec), expected);
    // The canonical schema holds the same keywords as schemars wrote them.
    let canonical = spec.input_schema.as_value();
    for keyword in [
        "$schema",
        "$defs",
        "allOf",
        "if",
        "then",
        "else",
        "properties",
    ] {
        assert_eq!(canonical[keyword], expected[keyword], "{keyword}");
    }
}

#[test]
fn a_hand_written_schema_is_listed_over_mcp_exactly_as_given() {
    let spec = spec("contact", suite_schema()).build().unwrap();
    assert_eq!(mcp_input_schema(&spec), suite_schema());
}

/// Runs `arguments` through `json_schema_2020_12_tool`: the outcome and the
/// text.
async fn contact(arguments: Value) -> (&'static str, String) {
    let exec = executor(vec![std::sync::Arc::new(JsonSchema202012ToolTool)])
        .build()
        .unwrap();
    let result = execute_once(&exec, call("c1", "json_schema_2020_12_tool", arguments)).await;
    (kind(&result), result.text())
}

#[tokio::test]
async fn a_call_meeting_the_if_then_branch_runs() {
    let (outcome, text) = contact(json!({"contactMethod": "phone", "phone": "555-0100"})).await;
    assert_eq!(outcome, "ok", "{text}");
    assert!(text.contains("contact: 555-0100"), "{text}");
    let (outcome, text) = contact(json!({"email": "ada@example.com"})).await;
    assert_eq!(outcome, "ok", "{text}");
}

#[tokio::test]
async fn a_call_breaking_a_conditional_or_a_referenced_definition_is_refused() {
    for arguments in [
        // `then`: choosing the phone needs a phone number.
        json!({"contactMethod": "phone", "email": "ada@example.com"}),
        // `else`: otherwise an email address.
        json!({"contactMethod": "email", "phone": "555-0100"}),
        // `allOf`/`anyOf`: at least one of the two.
        json!({"name": "Ada"}),
        // `$ref` to the anchored definition.
        json!({"email": "ada@example.com", "address": {"city": 7}}),
    ] {
        let (outcome, text) = contact(arguments.clone()).await;
        assert_eq!(outcome, "invalid_arguments", "{arguments}: {text}");
    }
}

#[tokio::test]
async fn an_all_of_member_and_an_anchor_reference_are_enforced_as_written() {
    let schema = json!({
        "type": "object",
        "$defs": {"address": {"$anchor": "addressDef", "type": "object",
                              "properties": {"city": {"type": "string"}}}},
        "properties": {"phone": {"type": "string"}, "email": {"type": "string"},
                       "address": {"$ref": "#addressDef"}},
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "additionalProperties": false
    });
    let tool = FakeTool::new(
        spec("reach", schema)
            .safety(ToolSafety::pure())
            .build()
            .unwrap(),
    )
    .answering(ToolOutput::text("reached"))
    .shared();
    let exec = executor(vec![tool.clone()]).build().unwrap();
    let outcome = |arguments: Value| {
        let exec = &exec;
        async move { kind(&execute_once(exec, call("c1", "reach", arguments)).await) }
    };
    assert_eq!(outcome(json!({})).await, "invalid_arguments");
    assert_eq!(
        outcome(json!({"phone": "1", "address": {"city": 7}})).await,
        "invalid_arguments"
    );
    assert_eq!(
        outcome(json!({"phone": "1", "address": {"city": "Paris"}})).await,
        "ok"
    );
    assert_eq!(tool.runs(), 1);
}

/// A schema with the 2020-12 keywords below the root (a property's schema),
/// where every provider's root rule holds.
fn nested_keywords() -> Value {
    json!({
        "type": "object",
        "$defs": {"digits": {"$anchor": "digitsDef", "type": "string", "pattern": "^[0-9]+$"}},
        "properties": {
            "code": {
                "type": "string",
                "allOf": [{"minLength": 2}, {"maxLength": 8}],
                "if": {"pattern": "^0"}, "then": {"minLength": 3}, "else": {"minLength": 2}
            },
            "number": {"$ref": "#/$defs/digits"}
        },
        "required": ["code", "number"],
        "additionalProperties": false
    })
}

#[test]
fn llm_exports_keep_the_keywords_their_provider_takes_and_refuse_the_rest() {
    let spec = spec("coded", nested_keywords()).build().unwrap();
    let code = &nested_keywords()["properties"]["code"];
    let relaxed = ExportTarget::OpenAiChat(OpenAiOptions { strict: false });
    let openai = export_tool(&spec, relaxed).unwrap().into_json();
    assert_eq!(
        &openai["function"]["parameters"]["properties"]["code"],
        code
    );
    assert_eq!(
        openai["function"]["parameters"]["$defs"],
        nested_keywords()["$defs"]
    );
    let anthropic = export_tool(&spec, ExportTarget::Anthropic(AnthropicOptions::default()))
        .unwrap()
        .into_json();
    assert_eq!(&anthropic["input_schema"]["properties"]["code"], code);
    assert_eq!(
        anthropic["input_schema"]["$defs"],
        nested_keywords()["$defs"]
    );
    let json_schema = GeminiOptions {
        mode: GeminiMode::ParametersJsonSchema,
    };
    let gemini = export_tool(&spec, ExportTarget::Gemini(json_schema))
        .unwrap()
        .into_json();
    assert_eq!(&gemini["parametersJsonSchema"]["properties"]["code"], code);

    // Strict modes and Gemini's `parameters` cannot express a two-member
    // `allOf` or a conditional, and say so.
    for target in [
        ExportTarget::OpenAiChat(OpenAiOptions { strict: true }),
        ExportTarget::Anthropic(AnthropicOptions {
            strict: true,
            cache_last: false,
        }),
        ExportTarget::Gemini(GeminiOptions::default()),
    ] {
        let error = export_tool(&spec, target).unwrap_err();
        assert!(
            matches!(&error, ExportError::Unsupported { pointer, keyword, .. }
                if pointer == "/properties/code" && keyword == "allOf"),
            "{target:?}: {error}"
        );
    }
}

#[test]
fn llm_exports_refuse_the_conformance_tools_root_combinator_and_mcp_keeps_it() {
    let spec = JsonSchema202012ToolTool::spec();
    for target in [
        ExportTarget::OpenAiChat(OpenAiOptions { strict: false }),
        ExportTarget::Anthropic(AnthropicOptions::default()),
        ExportTarget::Gemini(GeminiOptions {
            mode: GeminiMode::ParametersJsonSchema,
        }),
    ] {
        let error = export_tool(spec, target).unwrap_err();
        assert_eq!(error.rule(), "root_combinator", "{target:?}: {error}");
    }
    assert_eq!(mcp_input_schema(spec)["allOf"], suite_schema()["allOf"]);
}

#[test]
fn an_x_mcp_header_field_attribute_lands_in_its_property_and_the_mcp_export() {
    let spec = TestCustomHeadersTool::spec();
    let canonical = spec.input_schema.as_value();
    assert_eq!(
        canonical["properties"]["region"],
        json!({"description": "Plain ASCII string value", "type": "string", "x-mcp-header": "Region"})
    );
    let listed = mcp_input_schema(spec);
    for (property, header) in [
        ("region", "Region"),
        ("priority", "Priority"),
        ("method_val", "Method"),
    ] {
        assert_eq!(
            listed["properties"][property]["x-mcp-header"], header,
            "{property}"
        );
    }
    assert!(listed["properties"]["query"].get("x-mcp-header").is_none());
    assert_eq!(listed["required"], json!(["region", "priority", "query"]));
}

/// True when some object in `value` has the key `key`.
fn has_key(value: &Value, key: &str) -> bool {
    match value {
        Value::Object(map) => map.contains_key(key) || map.values().any(|v| has_key(v, key)),
        Value::Array(items) => items.iter().any(|v| has_key(v, key)),
        _ => false,
    }
}

#[test]
fn llm_exports_leave_x_mcp_header_out() {
    for spec in [
        TestCustomHeadersTool::spec(),
        TestCustomHeadersNullTool::spec(),
    ] {
        for target in [
            ExportTarget::OpenAiChat(OpenAiOptions { strict: true }),
            ExportTarget::OpenAiResponses(OpenAiOptions { strict: false }),
            ExportTarget::Anthropic(AnthropicOptions::default()),
            ExportTarget::Anthropic(AnthropicOptions {
                strict: true,
                cache_last: false,
            }),
            ExportTarget::Gemini(GeminiOptions::default()),
            ExportTarget::Gemini(GeminiOptions {
                mode: GeminiMode::ParametersJsonSchema,
            }),
        ] {
            let declaration = export_tool(spec, target).unwrap().into_json();
            assert!(
                !has_key(&declaration, "x-mcp-header"),
                "{target:?}: {declaration}"
            );
            assert!(has_key(&declaration, "region"), "{target:?}");
        }
    }
}

/// Checks that the MCP export refuses a tool whose input schema has
/// `properties`, for `problem` at `pointer`.
fn assert_mcp_header_refused(properties: Value, pointer: &str, problem: McpHeaderProblem) {
    let schema = json!({"type": "object", "properties": properties});
    let spec = spec("annotated", schema).build().unwrap();
    let error = export_tool(&spec, ExportTarget::Mcp).unwrap_err();
    assert_eq!(error.rule(), "mcp_header", "{properties}");
    assert_eq!(error.pointer(), Some(pointer), "{properties}");
    assert!(
        matches!(&error, ExportError::McpHeader { problem: p, .. } if *p == problem),
        "{properties}: {error}"
    );
}

#[test]
fn an_x_mcp_header_that_clients_refuse_is_refused_by_the_mcp_export() {
    // The invalid annotations of the suite's `http-invalid-tool-headers`
    // scenario (clients drop such tools), and placements this server does
    // not mirror.
    let region = |header: &str| json!({"type": "string", "x-mcp-header": header});
    // Header names that are not HTTP tokens.
    for header in ["", "My Region", "Region:Primary", "Région", "Region\t1"] {
        let properties = json!({"value": region(header)});
        assert_mcp_header_refused(properties, "/properties/value", McpHeaderProblem::NotAToken);
    }
    // Headers on values that are not a string, an integer or a boolean.
    for (property, schema) in [
        ("data", json!({"type": "object", "x-mcp-header": "Data"})),
        (
            "items",
            json!({"type": "array", "items": {"type": "string"}, "x-mcp-header": "Items"}),
        ),
        ("nil", json!({"type": "null", "x-mcp-header": "Nil"})),
        ("score", json!({"type": "number", "x-mcp-header": "Score"})),
        (
            "maybe",
            json!({"type": ["string", "null"], "x-mcp-header": "Maybe"}),
        ),
    ] {
        let pointer = format!("/properties/{property}");
        let problem = McpHeaderProblem::NotPrimitive;
        assert_mcp_header_refused(json!({ property: schema }), &pointer, problem);
    }
    assert_mcp_header_refused(
        json!({"field1": region("MyField"), "field2": region("myfield")}),
        "/properties/field2",
        McpHeaderProblem::Duplicate {
            property: "field1".into(),
        },
    );
    assert_mcp_header_refused(
        json!({"place": {"type": "object", "properties": {"region": region("Region")}}}),
        "/properties/place/properties/region",
        McpHeaderProblem::NotARootProperty,
    );
}
