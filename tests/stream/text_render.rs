//! The other direction: tools, calls and results written as each family's
//! chat template writes them, checked against the templates' own text, and
//! calls that read back as they were written.

use serde_json::json;
use tinyagents_tools::stream::text::{FORMAT_NAMES, TextFormat};
use tinyagents_tools::{ContentBlock, ToolCall, ToolMessage, ToolSchema, ToolSpec};

use super::text_support::{calls, everywhere, ids, tools};

fn result(id: &str, name: &str, text: &str) -> ToolMessage {
    ToolMessage {
        tool_call_id: id.into(),
        name: name.into(),
        content: vec![ContentBlock::Text { text: text.into() }],
        structured: None,
        is_error: false,
    }
}

fn location() -> ToolSpec {
    ToolSpec::builder("get_location", "Gets the location of the user.")
        .input_schema(ToolSchema::from_value(
            json!({"additionalProperties": false, "properties": {}, "type": "object"}),
        ))
        .build()
        .unwrap()
}

#[test]
fn hermes_lists_the_tools_as_qwen3_s_template_does() {
    let tool = ToolSpec::builder("f", "Does f.")
        // Keys in sorted order: written the same whether JSON maps keep
        // insertion order (serde_json's `preserve_order`) or sort.
        .input_schema(ToolSchema::from_value(
            json!({"properties": {}, "type": "object"}),
        ))
        .build()
        .unwrap();
    assert_eq!(
        TextFormat::hermes().instruction(&[tool]),
        "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n\
         You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n\
         {\"type\": \"function\", \"function\": {\"name\": \"f\", \"description\": \"Does f.\", \"parameters\": {\"properties\": {}, \"type\": \"object\"}}}\n\
         </tools>\n\nFor each function call, return a json object with function name and arguments within \
         <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call>"
    );
}

#[test]
fn qwen3_coder_lists_each_parameter_as_its_template_does() {
    let text = TextFormat::qwen3_coder().instruction(&tools()[..1]);
    assert!(text.starts_with(
        "# Tools\n\nYou have access to the following functions:\n\n<tools>\n<function>\n<name>get_weather</name>\n\
         <description>Current weather for a city.</description>\n<parameters>\n<parameter>\n<name>city</name>\n\
         <type>string</type>\n<description>The city, e.g. Paris</description>\n</parameter>"
    ));
    assert!(text.contains("\n<required>[\"city\"]</required>"));
    assert!(text.contains("\n<additionalProperties>false</additionalProperties>"));
    assert!(text.contains("\n</parameters>\n</function>\n</tools>"));
    assert!(text.ends_with("do not tell the user about function calls\n</IMPORTANT>"));
}

#[test]
fn harmony_writes_the_format_document_s_function_without_arguments() {
    assert_eq!(
        TextFormat::harmony().instruction(&[location()]),
        "# Tools\n\n## functions\n\nnamespace functions {\n\n// Gets the location of the user.\n\
         type get_location = () => any;\n\n} // namespace functions"
    );
}

#[test]
fn kimi_mistral_and_deepseek_declare_tools_in_their_own_blocks() {
    let t = [location()];
    let json = "[{\"type\": \"function\", \"function\": {\"name\": \"get_location\", \"description\": \
                \"Gets the location of the user.\", \"parameters\": {\"additionalProperties\": false, \"properties\": {}, \
                \"type\": \"object\"}}}]";
    assert_eq!(
        TextFormat::kimi_k2().instruction(&t),
        format!("<|im_system|>tool_declare<|im_middle|>{json}<|im_end|>")
    );
    assert_eq!(
        TextFormat::mistral().instruction(&t),
        format!("[AVAILABLE_TOOLS] {json}[/AVAILABLE_TOOLS]")
    );
    assert_eq!(
        TextFormat::mistral_v11().instruction(&t),
        format!("[AVAILABLE_TOOLS]{json}[/AVAILABLE_TOOLS]")
    );
    assert!(
        TextFormat::deepseek_v31()
            .instruction(&t)
            .starts_with("## Tools\nYou have access to the following tools:\n{")
    );
    assert!(TextFormat::llama3_json().instruction(&t).starts_with(
        "Given the following functions, please respond with a JSON for a function call with its proper arguments"
    ));
}

#[test]
fn results_are_written_in_each_family_s_form() {
    let r = [result("functions.get_location:0", "get_location", "Paris")];
    let cases = [
        (
            "hermes",
            "<|im_start|>user\n<tool_response>\nParis\n</tool_response><|im_end|>\n",
        ),
        (
            "qwen3-coder",
            "<|im_start|>user\n<tool_response>\nParis\n</tool_response>\n<|im_end|>\n",
        ),
        (
            "glm45",
            "<|observation|>\n<tool_response>\nParis\n</tool_response>",
        ),
        (
            "llama3-json",
            "<|start_header_id|>ipython<|end_header_id|>\n\n{\"output\": \"Paris\"}<|eot_id|>",
        ),
        (
            "mistral",
            "[TOOL_RESULTS] {\"content\": \"Paris\", \"call_id\": \"functions.get_location:0\"}[/TOOL_RESULTS]",
        ),
        ("mistral-v11", "[TOOL_RESULTS]Paris[/TOOL_RESULTS]"),
        (
            "deepseek-v3",
            "<｜tool▁outputs▁begin｜><｜tool▁output▁begin｜>Paris<｜tool▁output▁end｜><｜tool▁outputs▁end｜>",
        ),
        (
            "deepseek-v31",
            "<｜tool▁output▁begin｜>Paris<｜tool▁output▁end｜>",
        ),
        (
            "kimi-k2",
            "<|im_system|>tool<|im_middle|>## Return of functions.get_location:0\nParis<|im_end|>",
        ),
        (
            "harmony",
            "<|start|>functions.get_location to=assistant<|channel|>commentary<|message|>Paris<|end|>",
        ),
    ];
    for (name, expected) in cases {
        assert_eq!(
            TextFormat::by_name(name).unwrap().render_results(&r),
            expected,
            "{name}"
        );
    }
}

#[test]
fn every_format_reads_back_the_calls_it_writes() {
    let written = [
        ToolCall::new(
            "functions.get_weather:0",
            "get_weather",
            r#"{"city": "Paris é", "days": 3}"#,
        ),
        ToolCall::new(
            "functions.write_file:1",
            "write_file",
            r#"{"path": "/tmp/x", "content": "a\nb \"q\"", "append": true}"#,
        ),
        ToolCall::new("functions.get_location:2", "get_location", "{}"),
    ];
    let expected: Vec<_> = written
        .iter()
        .map(|c| {
            (
                c.name.as_str().to_owned(),
                super::text_support::arguments(&c.arguments),
            )
        })
        .collect();
    let mut names: Vec<String> = FORMAT_NAMES.iter().map(|n| n.to_string()).collect();
    names.push("tags:[TOOL_CALL],[/TOOL_CALL]".into());
    for name in names {
        let format = TextFormat::by_name(&name).unwrap();
        let text = format.render_calls(&written);
        let out = everywhere(&format, &text);
        assert_eq!(calls(&out), expected, "{name}: {text}");
        if name == "kimi-k2" {
            assert_eq!(
                ids(&out),
                [
                    "functions.get_weather:0",
                    "functions.write_file:1",
                    "functions.get_location:2"
                ]
            );
        }
        if name == "mistral" {
            assert_eq!(ids(&out)[0], "functions.get_weather:0");
        }
    }
}
