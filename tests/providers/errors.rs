//! Schemas a provider cannot take give typed errors naming the tool and the
//! JSON pointer; nothing is sent for that tool.

use serde_json::{Value, json};
use tinyagents_tools::providers::{
    AnthropicOptions, ExportError, ExportTarget, GeminiOptions, Limit, OpenAiOptions, Provider,
    export_declarations, export_tool,
};
use tinyagents_tools::{ToolSchema, ToolSpec};

use crate::corpus::corpus;

const STRICT: ExportTarget = ExportTarget::OpenAiChat(OpenAiOptions { strict: true });

fn spec_with(name: &str, schema: Value) -> ToolSpec {
    ToolSpec::builder(name, "A test tool.")
        .input_schema(ToolSchema::from_value(schema))
        .build()
        .expect("valid spec")
}

fn corpus_tool(name: &str) -> ToolSpec {
    corpus()
        .into_iter()
        .find(|s| s.name.as_str() == name)
        .expect("in the corpus")
}

#[test]
fn an_open_map_under_openai_strict_is_refused_with_tool_and_pointer() {
    let err = export_tool(&corpus_tool("count_tags"), STRICT).unwrap_err();
    assert_eq!(
        err,
        ExportError::OpenMap {
            tool: "count_tags".into(),
            provider: Provider::OpenAiChat,
            pointer: "/properties/weights".into(),
        }
    );
    assert_eq!(err.pointer(), Some("/properties/weights"));
    assert!(err.to_string().contains("count_tags"));
}

#[test]
fn a_free_form_object_under_anthropic_strict_is_an_open_map() {
    let spec = spec_with(
        "free_form",
        json!({"type": "object", "properties": {"meta": {"type": "object"}}, "required": ["meta"]}),
    );
    let strict = ExportTarget::Anthropic(AnthropicOptions {
        strict: true,
        cache_last: false,
    });
    let err = export_tool(&spec, strict).unwrap_err();
    assert_eq!(err.rule(), "open_map");
    assert_eq!(err.pointer(), Some("/properties/meta"));
    assert!(export_tool(&spec, ExportTarget::Anthropic(AnthropicOptions::default())).is_ok());
}

#[test]
fn recursion_under_gemini_parameters_is_refused_with_the_reference() {
    let err = export_tool(
        &corpus_tool("walk_tree"),
        ExportTarget::Gemini(GeminiOptions::default()),
    )
    .unwrap_err();
    assert_eq!(
        err,
        ExportError::Recursion {
            tool: "walk_tree".into(),
            provider: Provider::Gemini,
            pointer: "/properties/root/properties/children/items".into(),
            reference: "#/$defs/TreeNode".into(),
        }
    );
}

#[test]
fn recursion_through_a_ref_with_siblings_is_refused_under_openai_strict() {
    let spec = spec_with(
        "linked",
        json!({
            "type": "object",
            "properties": {"head": {"$ref": "#/$defs/Node"}},
            "required": ["head"],
            "$defs": {"Node": {"type": "object", "properties": {
                "next": {"$ref": "#/$defs/Node", "description": "The next node."}
            }, "required": ["next"]}}
        }),
    );
    let err = export_tool(&spec, STRICT).unwrap_err();
    assert_eq!(err.rule(), "recursion");
    assert_eq!(err.tool(), "linked");
    assert_eq!(
        err.pointer(),
        Some("/$defs/Node/properties/next/properties/next")
    );
}

/// An object nested `levels` deep under property `a`.
fn nested(levels: usize) -> Value {
    let mut schema = json!({"type": "string"});
    for _ in 0..levels {
        schema = json!({"type": "object", "properties": {"a": schema}, "required": ["a"]});
    }
    schema
}

#[test]
fn nesting_deeper_than_ten_objects_exceeds_openai_strict_depth() {
    assert!(export_tool(&spec_with("deep_ok", nested(10)), STRICT).is_ok());
    let err = export_tool(&spec_with("too_deep", nested(11)), STRICT).unwrap_err();
    assert_eq!(
        err,
        ExportError::LimitExceeded {
            tool: "too_deep".into(),
            provider: Provider::OpenAiChat,
            pointer: "/properties/a".repeat(10),
            limit: Limit::Depth,
            max: 10,
        }
    );
}

#[test]
fn more_than_a_thousand_enum_values_exceed_openai_strict_limits() {
    let values: Vec<String> = (0..1001).map(|i| format!("v{i}")).collect();
    let spec = spec_with(
        "big_enum",
        json!({"type": "object", "properties": {"pick": {"type": "string", "enum": values}}, "required": ["pick"]}),
    );
    let err = export_tool(&spec, STRICT).unwrap_err();
    assert!(matches!(
        &err,
        ExportError::LimitExceeded { tool, pointer, limit: Limit::EnumValues, max: 1000, .. }
            if tool == "big_enum" && pointer == "/properties/pick"
    ));
    let relaxed = ExportTarget::OpenAiChat(OpenAiOptions { strict: false });
    assert!(export_tool(&spec, relaxed).is_ok());
}

#[test]
fn a_root_combinator_is_refused_by_llm_providers_and_a_non_object_root_by_all() {
    let union = spec_with(
        "either",
        json!({"type": "object", "anyOf": [{"required": ["a"]}]}),
    );
    for provider in Provider::ALL {
        let exported = export_tool(&union, provider.default_target());
        if provider == Provider::Mcp {
            // MCP asks only for an object root (SEP-2106 keeps the rest).
            let tool = exported.unwrap().into_json();
            assert_eq!(
                tool["inputSchema"],
                json!({"type": "object", "anyOf": [{"required": ["a"]}]})
            );
        } else {
            assert_eq!(
                exported.unwrap_err().rule(),
                "root_combinator",
                "{provider}"
            );
        }
    }
    let string = spec_with("stringly", json!({"type": "string"}));
    let err = export_tool(&string, ExportTarget::Mcp).unwrap_err();
    assert_eq!(err.rule(), "root_not_object");
}

#[test]
fn an_untyped_value_is_refused_where_the_provider_needs_a_type() {
    let spec = spec_with(
        "anything",
        json!({"type": "object", "properties": {"value": true}, "required": ["value"]}),
    );
    let err = export_tool(&spec, STRICT).unwrap_err();
    assert_eq!(
        (err.rule(), err.pointer()),
        ("untyped", Some("/properties/value"))
    );
    let gemini = ExportTarget::Gemini(GeminiOptions::default());
    assert_eq!(export_tool(&spec, gemini).unwrap_err().rule(), "untyped");
    let relaxed = export_tool(
        &spec,
        ExportTarget::OpenAiChat(OpenAiOptions { strict: false }),
    )
    .expect("non-strict takes any value");
    assert_eq!(
        relaxed.json()["function"]["parameters"]["properties"]["value"],
        json!({})
    );
}

#[test]
fn a_false_schema_and_a_bad_gemini_property_name_are_refused() {
    let never = spec_with(
        "never",
        json!({"type": "object", "properties": {"x": false}}),
    );
    let err = export_tool(&never, STRICT).unwrap_err();
    assert_eq!(
        (err.rule(), err.pointer()),
        ("false_schema", Some("/properties/x"))
    );
    let dashed = spec_with(
        "dashed",
        json!({"type": "object", "properties": {"max-size": {"type": "integer"}}}),
    );
    let err = export_tool(&dashed, ExportTarget::Gemini(GeminiOptions::default())).unwrap_err();
    assert_eq!(
        err,
        ExportError::PropertyName {
            tool: "dashed".into(),
            provider: Provider::Gemini,
            pointer: String::new(),
            name: "max-size".into(),
        }
    );
}

#[test]
fn openai_chat_leaves_out_tools_beyond_one_hundred_twenty_eight() {
    let specs: Vec<ToolSpec> = (0..130)
        .map(|i| {
            spec_with(
                &format!("tool_{i}"),
                json!({"type": "object", "properties": {}}),
            )
        })
        .collect();
    let out = export_declarations(STRICT, &specs);
    assert_eq!(out.declarations.len(), 128);
    let left_out: Vec<&str> = out.errors.iter().map(ExportError::tool).collect();
    assert_eq!(left_out, ["tool_128", "tool_129"]);
    assert!(matches!(
        out.errors[0],
        ExportError::RequestLimit {
            limit: Limit::ToolsPerRequest,
            max: 128,
            ..
        }
    ));
}

#[test]
fn anthropic_strict_counts_optional_parameters_over_the_request() {
    let optional = |name: &str| {
        let props: serde_json::Map<String, Value> = (0..10)
            .map(|i| (format!("p{i}"), json!({"type": "string"})))
            .collect();
        spec_with(name, json!({"type": "object", "properties": props}))
    };
    let specs = [optional("first"), optional("second"), optional("third")];
    let strict = ExportTarget::Anthropic(AnthropicOptions {
        strict: true,
        cache_last: false,
    });
    let out = export_declarations(strict, &specs);
    assert_eq!(out.declarations.len(), 2);
    assert_eq!(
        out.errors,
        [ExportError::RequestLimit {
            tool: "third".into(),
            provider: Provider::Anthropic,
            limit: Limit::OptionalParameters,
            max: 24,
        }]
    );
    let relaxed = export_declarations(ExportTarget::Anthropic(AnthropicOptions::default()), &specs);
    assert_eq!(relaxed.declarations.len(), 3);
}

#[test]
fn exporting_never_changes_the_canonical_schema() {
    let specs = corpus();
    let before: Vec<Value> = specs
        .iter()
        .map(|s| s.input_schema.as_value().clone())
        .collect();
    for provider in Provider::ALL {
        let _ = export_declarations(provider.default_target(), &specs);
    }
    let after: Vec<Value> = specs
        .iter()
        .map(|s| s.input_schema.as_value().clone())
        .collect();
    assert_eq!(before, after);
}
