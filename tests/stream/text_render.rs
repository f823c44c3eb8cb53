//! The other direction: tools, calls and results written as each family's
//! chat template writes them, checked against the templates' own text, and
//! calls that read back as they were written.
//!
//! Every expected string below is a real renderer's output for the tools of
//! `text_support::tools()` (and the results of [`results`]), cut out of the
//! whole prompt it rendered and committed as it came, with the renderer and
//! its version named on each test. How they were made, by hand (CI runs none
//! of it):
//!
//! - the Jinja templates: saved from the repository and commit named on the
//!   test, and rendered in Python with `jinja2` 3.1.6 set up as
//!   transformers' `apply_chat_template` sets it up
//!   (`ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)`,
//!   `tojson` as `json.dumps(x, ensure_ascii=False)`), with `messages` = a
//!   system message, a user message, an assistant message calling
//!   `get_weather` and `get_location`, and the two tool messages, and
//!   `tools` = the three tools as OpenAI's `{"type": "function", "function":
//!   {...}}`, their keys in the order `tools()` writes them;
//! - mistral-common 1.13.1: `MistralTokenizer.v3()` (the SentencePiece v3
//!   tokenizer it ships) and, for v11 and v13, its `tekken_240911.json` with
//!   the `[ARGS]` and `[CALL_ID]` special tokens added and its version set,
//!   loaded with `MistralTokenizer.from_file`;
//!   `encode_chat_completion(ChatCompletionRequest(messages, tools)).text`,
//!   SentencePiece's `▁` read as a space;
//! - openai-harmony 0.0.8: `load_harmony_encoding(HARMONY_GPT_OSS)`
//!   (`TIKTOKEN_ENCODINGS_BASE` pointed at the `o200k_base.tiktoken` that the
//!   tiktoken-rs crate ships), a developer message
//!   `DeveloperContent.new().with_function_tools(...)` and `Role.TOOL`
//!   messages from `functions.NAME` to `assistant` on `commentary`,
//!   `decode(render_conversation(...))`.

use serde_json::json;
use tinyagents_tools::stream::text::{FORMAT_NAMES, TextFormat};
use tinyagents_tools::{ContentBlock, ToolCall, ToolMessage, ToolSchema, ToolSpec};

use super::text_support::{calls, everywhere, everywhere_with, ids, tools};

/// Call ids as a provider writes them (Mistral's nine letters and digits).
const IDS: [&str; 2] = ["abcDEF123", "xyzXYZ789"];
/// Kimi's `functions.NAME:IDX` ids.
const KIMI_IDS: [&str; 2] = ["functions.get_weather:0", "functions.get_location:1"];

fn result(id: &str, name: &str, text: &str) -> ToolMessage {
    ToolMessage {
        tool_call_id: id.into(),
        name: name.into(),
        content: vec![ContentBlock::Text { text: text.into() }],
        structured: None,
        is_error: false,
    }
}

/// The answers to a `get_weather` call (JSON text) and a `get_location`
/// call (plain text), with these ids.
fn results(ids: [&str; 2]) -> [ToolMessage; 2] {
    [
        result(ids[0], "get_weather", r#"{"sunny": true}"#),
        result(ids[1], "get_location", "Paris"),
    ]
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

/// Qwen3's template writes each result in a `<tool_response>` block of one
/// user turn.
#[test]
fn hermes_results_are_qwen3_s_template_s() {
    assert_eq!(
        TextFormat::hermes().render_results(&results(IDS)),
        "<|im_start|>user\n<tool_response>\n{\"sunny\": true}\n</tool_response>\n\
         <tool_response>\nParis\n</tool_response><|im_end|>\n"
    );
}

/// vLLM's `examples/tool_chat_template_qwen3coder.jinja` (commit 7a3bde4c),
/// rendered with jinja2 3.1.6 set up as transformers' `apply_chat_template` sets it up
/// (`trim_blocks`, `lstrip_blocks`, `tojson` = `json.dumps` keeping non-ASCII and key order):
/// the system text, then `\n\n`, go before it.
#[test]
fn qwen3_coder_instruction_is_its_template_s() {
    assert_eq!(
        TextFormat::qwen3_coder().instruction(&tools()),
        r##"# Tools

You have access to the following functions:

<tools>
<function>
<name>get_weather</name>
<description>Current weather for a city.</description>
<parameters>
<parameter>
<name>city</name>
<type>string</type>
<description>The city, e.g. Paris</description>
</parameter>
<parameter>
<name>days</name>
<type>integer</type>
</parameter>
<parameter>
<name>unit</name>
<type>string</type>
<enum>["celsius", "fahrenheit"]</enum>
</parameter>
<required>["city"]</required>
<additionalProperties>False</additionalProperties>
</parameters>
</function>
<function>
<name>write_file</name>
<description>Write a file.</description>
<parameters>
<parameter>
<name>path</name>
<type>string</type>
</parameter>
<parameter>
<name>content</name>
<type>string</type>
</parameter>
<parameter>
<name>append</name>
<type>boolean</type>
</parameter>
<parameter>
<name>lines</name>
<type>array</type>
<items>{"type": "string"}</items>
</parameter>
<required>["path", "content"]</required>
<additionalProperties>False</additionalProperties>
</parameters>
</function>
<function>
<name>get_location</name>
<description>Gets the location of the user.</description>
<parameters>
</parameters>
</function>
</tools>

If you choose to call a function ONLY reply in the following format with NO suffix:

<tool_call>
<function=example_function_name>
<parameter=example_parameter_1>
value_1
</parameter>
<parameter=example_parameter_2>
This is the value for the second parameter
that can span
multiple lines
</parameter>
</function>
</tool_call>

<IMPORTANT>
Reminder:
- Function calls MUST follow the specified format: an inner <function=...></function> block must be nested within <tool_call></tool_call> XML tags
- Required parameters MUST be specified
- You may provide optional reasoning for your function call in natural language BEFORE the function call, but NOT after
- If there is no function call available, answer the question like normal with your current knowledge and do not tell the user about function calls
</IMPORTANT>"##
    );
}

/// vLLM's `examples/tool_chat_template_qwen3coder.jinja` (commit 7a3bde4c), rendered with jinja2 3.1.6 set up as transformers' `apply_chat_template` sets it up
/// (`trim_blocks`, `lstrip_blocks`, `tojson` = `json.dumps` keeping non-ASCII and key order).
#[test]
fn qwen3_coder_results_are_its_template_s() {
    assert_eq!(
        TextFormat::qwen3_coder().render_results(&results(IDS)),
        r##"<|im_start|>user
<tool_response>
{"sunny": true}
</tool_response>
<tool_response>
Paris
</tool_response>
<|im_end|>
"##
    );
}

/// GLM-4.5's template as llama.cpp keeps it (`models/templates/glm_4_5.jinja`, commit 623f3dd0),
/// rendered with jinja2 3.1.6 set up as transformers' `apply_chat_template` sets it up
/// (`trim_blocks`, `lstrip_blocks`, `tojson` = `json.dumps` keeping non-ASCII and key order):
/// `[gMASK]<sop><|system|>\n` goes before it.
#[test]
fn glm45_instruction_is_its_template_s() {
    assert_eq!(
        TextFormat::glm45().instruction(&tools()),
        r##"# Tools

You may call one or more functions to assist with the user query.

You are provided with function signatures within <tools></tools> XML tags:
<tools>
{"type": "function", "function": {"name": "get_weather", "description": "Current weather for a city.", "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "The city, e.g. Paris"}, "days": {"type": "integer"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["city"], "additionalProperties": false}}}
{"type": "function", "function": {"name": "write_file", "description": "Write a file.", "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}, "append": {"type": "boolean"}, "lines": {"type": "array", "items": {"type": "string"}}}, "required": ["path", "content"], "additionalProperties": false}}}
{"type": "function", "function": {"name": "get_location", "description": "Gets the location of the user.", "parameters": {"type": "object", "properties": {}}}}
</tools>

For each function call, output the function name and arguments within the following XML format:
<tool_call>{function-name}
<arg_key>{arg-key-1}</arg_key>
<arg_value>{arg-value-1}</arg_value>
<arg_key>{arg-key-2}</arg_key>
<arg_value>{arg-value-2}</arg_value>
...
</tool_call>"##
    );
}

/// GLM-4.5's template as llama.cpp keeps it (`models/templates/glm_4_5.jinja`, commit 623f3dd0), rendered with jinja2 3.1.6 set up as transformers' `apply_chat_template` sets it up
/// (`trim_blocks`, `lstrip_blocks`, `tojson` = `json.dumps` keeping non-ASCII and key order).
#[test]
fn glm45_results_are_its_template_s() {
    assert_eq!(
        TextFormat::glm45().render_results(&results(IDS)),
        r##"<|observation|>
<tool_response>
{"sunny": true}
</tool_response>
<tool_response>
Paris
</tool_response>"##
    );
}

/// vLLM's `examples/tool_chat_template_llama3.1_json.jinja` (commit 54522760),
/// rendered with jinja2 3.1.6 set up as transformers' `apply_chat_template` sets it up
/// (`trim_blocks`, `lstrip_blocks`, `tojson` = `json.dumps` keeping non-ASCII and key order):
/// the template writes it at the start of the first user turn, the user's text right after.
#[test]
fn llama3_json_instruction_is_its_template_s() {
    assert_eq!(
        TextFormat::llama3_json().instruction(&tools()),
        r##"Given the following functions, please respond with a JSON for a function call with its proper arguments that best answers the given prompt.

Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}. Do not use variables.

{
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {
                    "type": "string",
                    "description": "The city, e.g. Paris"
                },
                "days": {
                    "type": "integer"
                },
                "unit": {
                    "type": "string",
                    "enum": [
                        "celsius",
                        "fahrenheit"
                    ]
                }
            },
            "required": [
                "city"
            ],
            "additionalProperties": false
        }
    }
}

{
    "type": "function",
    "function": {
        "name": "write_file",
        "description": "Write a file.",
        "parameters": {
            "type": "object",
            "properties": {
                "path": {
                    "type": "string"
                },
                "content": {
                    "type": "string"
                },
                "append": {
                    "type": "boolean"
                },
                "lines": {
                    "type": "array",
                    "items": {
                        "type": "string"
                    }
                }
            },
            "required": [
                "path",
                "content"
            ],
            "additionalProperties": false
        }
    }
}

{
    "type": "function",
    "function": {
        "name": "get_location",
        "description": "Gets the location of the user.",
        "parameters": {
            "type": "object",
            "properties": {}
        }
    }
}

"##
    );
}

/// vLLM's `examples/tool_chat_template_llama3.1_json.jinja` (commit 54522760), rendered with jinja2 3.1.6 set up as transformers' `apply_chat_template` sets it up
/// (`trim_blocks`, `lstrip_blocks`, `tojson` = `json.dumps` keeping non-ASCII and key order).
#[test]
fn llama3_json_results_are_its_template_s() {
    assert_eq!(
        TextFormat::llama3_json().render_results(&results(IDS)[..1]),
        r##"<|start_header_id|>ipython<|end_header_id|>

{"output": "{\"sunny\": true}"}<|eot_id|>"##
    );
}

/// vLLM's `examples/tool_chat_template_llama4_pythonic.jinja` (commit 0471aed1, its `custom_tools` path),
/// rendered with jinja2 3.1.6 set up as transformers' `apply_chat_template` sets it up
/// (`trim_blocks`, `lstrip_blocks`, `tojson` = `json.dumps` keeping non-ASCII and key order):
/// the system text, then `\n`, go before it, in the system turn.
#[test]
fn pythonic_instruction_is_its_template_s() {
    assert_eq!(
        TextFormat::pythonic().instruction(&tools()),
        r##"Here is a list of functions in JSON format that you can invoke. Use exact format: [func_name1(param1=value1, param2=value2), func_name2(...)]
[
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {
                        "type": "string",
                        "description": "The city, e.g. Paris"
                    },
                    "days": {
                        "type": "integer"
                    },
                    "unit": {
                        "type": "string",
                        "enum": [
                            "celsius",
                            "fahrenheit"
                        ]
                    }
                },
                "required": [
                    "city"
                ],
                "additionalProperties": false
            }
        }
    },
    {
        "type": "function",
        "function": {
            "name": "write_file",
            "description": "Write a file.",
            "parameters": {
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string"
                    },
                    "content": {
                        "type": "string"
                    },
                    "append": {
                        "type": "boolean"
                    },
                    "lines": {
                        "type": "array",
                        "items": {
                            "type": "string"
                        }
                    }
                },
                "required": [
                    "path",
                    "content"
                ],
                "additionalProperties": false
            }
        }
    },
    {
        "type": "function",
        "function": {
            "name": "get_location",
            "description": "Gets the location of the user.",
            "parameters": {
                "type": "object",
                "properties": {}
            }
        }
    }
]
"##
    );
}

/// vLLM's `examples/tool_chat_template_llama4_pythonic.jinja` (commit 0471aed1, its `custom_tools` path), rendered with jinja2 3.1.6 set up as transformers' `apply_chat_template` sets it up
/// (`trim_blocks`, `lstrip_blocks`, `tojson` = `json.dumps` keeping non-ASCII and key order).
#[test]
fn pythonic_results_are_its_template_s() {
    assert_eq!(
        TextFormat::pythonic().render_results(&results(IDS)),
        r##"<|header_start|>ipython<|header_end|>

"{\"sunny\": true}"<|eot|><|header_start|>ipython<|header_end|>

"Paris"<|eot|>"##
    );
}

/// Kimi K2's template as llama.cpp keeps it (`models/templates/moonshotai-Kimi-K2-Thinking.jinja`, commit 0c3c896e),
/// rendered with jinja2 3.1.6 set up as transformers' `apply_chat_template` sets it up
/// (`trim_blocks`, `lstrip_blocks`, `tojson` = `json.dumps` keeping non-ASCII and key order):
/// the whole `tool_declare` message, first in the prompt.
#[test]
fn kimi_k2_instruction_is_its_template_s() {
    assert_eq!(
        TextFormat::kimi_k2().instruction(&tools()),
        r##"<|im_system|>tool_declare<|im_middle|>[{"type": "function", "function": {"name": "get_weather", "description": "Current weather for a city.", "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "The city, e.g. Paris"}, "days": {"type": "integer"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["city"], "additionalProperties": false}}}, {"type": "function", "function": {"name": "write_file", "description": "Write a file.", "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}, "append": {"type": "boolean"}, "lines": {"type": "array", "items": {"type": "string"}}}, "required": ["path", "content"], "additionalProperties": false}}}, {"type": "function", "function": {"name": "get_location", "description": "Gets the location of the user.", "parameters": {"type": "object", "properties": {}}}}]<|im_end|>"##
    );
}

/// Kimi K2's template as llama.cpp keeps it (`models/templates/moonshotai-Kimi-K2-Thinking.jinja`, commit 0c3c896e), tool messages without a `name` (the template writes a message's `name` in place of its role), rendered with jinja2 3.1.6 set up as transformers' `apply_chat_template` sets it up
/// (`trim_blocks`, `lstrip_blocks`, `tojson` = `json.dumps` keeping non-ASCII and key order).
#[test]
fn kimi_k2_results_are_its_template_s() {
    assert_eq!(
        TextFormat::kimi_k2().render_results(&results(KIMI_IDS)),
        r##"<|im_system|>tool<|im_middle|>## Return of functions.get_weather:0
{"sunny": true}<|im_end|><|im_system|>tool<|im_middle|>## Return of functions.get_location:1
Paris<|im_end|>"##
    );
}

/// vLLM's `examples/tool_chat_template_deepseekv31.jinja` (commit fb73c465),
/// rendered with jinja2 3.1.6 set up as transformers' `apply_chat_template` sets it up
/// (`trim_blocks`, `lstrip_blocks`, `tojson` = `json.dumps` keeping non-ASCII and key order):
/// the system text, then `\n\n`, go before it.
#[test]
fn deepseek_v31_instruction_is_its_template_s() {
    assert_eq!(
        TextFormat::deepseek_v31().instruction(&tools()),
        r##"## Tools
You have access to the following tools:

### get_weather
Description: Current weather for a city.

Parameters: {"type": "object", "properties": {"city": {"type": "string", "description": "The city, e.g. Paris"}, "days": {"type": "integer"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["city"], "additionalProperties": false}

### write_file
Description: Write a file.

Parameters: {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}, "append": {"type": "boolean"}, "lines": {"type": "array", "items": {"type": "string"}}}, "required": ["path", "content"], "additionalProperties": false}

### get_location
Description: Gets the location of the user.

Parameters: {"type": "object", "properties": {}}

IMPORTANT: ALWAYS adhere to this exact format for tool use:
<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>tool_call_name<｜tool▁sep｜>tool_call_arguments<｜tool▁call▁end｜>{{additional_tool_calls}}<｜tool▁calls▁end｜>

Where:

- `tool_call_name` must be an exact match to one of the available tools
- `tool_call_arguments` must be valid JSON that strictly follows the tool's Parameters Schema
- For multiple tool calls, chain them directly without separators or spaces
"##
    );
}

/// vLLM's `examples/tool_chat_template_deepseekv31.jinja` (commit fb73c465),
/// rendered as above, less the four spaces of the template's own
/// indentation that it writes before each `{{ ... }}` (not DeepSeek's
/// format: its model card writes the outputs one after the other).
#[test]
fn deepseek_v31_results_are_its_template_s() {
    assert_eq!(
        TextFormat::deepseek_v31().render_results(&results(IDS)),
        r##"<｜tool▁output▁begin｜>{"sunny": true}<｜tool▁output▁end｜><｜tool▁output▁begin｜>Paris<｜tool▁output▁end｜>"##
    );
}

/// mistral-common 1.13.1, SentencePiece tokenizer v3 (Mistral 7B v0.3,
/// Mixtral 8x22B): the `[AVAILABLE_TOOLS]` block it puts before the last
/// user message.
#[test]
fn mistral_instruction_is_mistral_common_s_v3() {
    assert_eq!(
        TextFormat::mistral().instruction(&tools()),
        r##"[AVAILABLE_TOOLS] [{"type": "function", "function": {"name": "get_weather", "description": "Current weather for a city.", "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "The city, e.g. Paris"}, "days": {"type": "integer"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["city"], "additionalProperties": false}}}, {"type": "function", "function": {"name": "write_file", "description": "Write a file.", "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}, "append": {"type": "boolean"}, "lines": {"type": "array", "items": {"type": "string"}}}, "required": ["path", "content"], "additionalProperties": false}}}, {"type": "function", "function": {"name": "get_location", "description": "Gets the location of the user.", "parameters": {"type": "object", "properties": {}}}}][/AVAILABLE_TOOLS]"##
    );
}

/// mistral-common 1.13.1, tokenizer v3: a result that is JSON text goes in
/// as that JSON, other text as a string.
#[test]
fn mistral_results_are_mistral_common_s_v3() {
    assert_eq!(
        TextFormat::mistral().render_results(&results(IDS)),
        r##"[TOOL_RESULTS] {"content": {"sunny": true}, "call_id": "abcDEF123"}[/TOOL_RESULTS][TOOL_RESULTS] {"content": "Paris", "call_id": "xyzXYZ789"}[/TOOL_RESULTS]"##
    );
}

/// mistral-common 1.13.1, tokenizers v11 and v13 alike.
#[test]
fn mistral_v11_instruction_is_mistral_common_s() {
    assert_eq!(
        TextFormat::mistral_v11().instruction(&tools()),
        r##"[AVAILABLE_TOOLS][{"type": "function", "function": {"name": "get_weather", "description": "Current weather for a city.", "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "The city, e.g. Paris"}, "days": {"type": "integer"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["city"], "additionalProperties": false}}}, {"type": "function", "function": {"name": "write_file", "description": "Write a file.", "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}, "append": {"type": "boolean"}, "lines": {"type": "array", "items": {"type": "string"}}}, "required": ["path", "content"], "additionalProperties": false}}}, {"type": "function", "function": {"name": "get_location", "description": "Gets the location of the user.", "parameters": {"type": "object", "properties": {}}}}][/AVAILABLE_TOOLS]"##
    );
}

/// mistral-common 1.13.1: tokenizer v11 writes the call id the model wrote
/// after `[CALL_ID]` back with each call and each result; v13 writes no id
/// (and its models write none, so their calls have generated ids).
#[test]
fn mistral_v11_results_and_calls_are_mistral_common_s_v11_and_v13() {
    let v11 = TextFormat::mistral_v11();
    assert_eq!(
        v11.render_results(&results(IDS)),
        r##"[TOOL_RESULTS]abcDEF123[TOOL_CONTENT]{"sunny": true}[/TOOL_RESULTS][TOOL_RESULTS]xyzXYZ789[TOOL_CONTENT]Paris[/TOOL_RESULTS]"##
    );
    let calls = [
        ToolCall::new(IDS[0], "get_weather", r#"{"city": "Paris"}"#),
        ToolCall::new(IDS[1], "get_location", "{}"),
    ];
    assert_eq!(
        v11.render_calls(&calls),
        r##"[TOOL_CALLS]get_weather[CALL_ID]abcDEF123[ARGS]{"city": "Paris"}[TOOL_CALLS]get_location[CALL_ID]xyzXYZ789[ARGS]{}"##
    );
    // Read back, the ids are the model's own again.
    let out = everywhere(&v11, &v11.render_calls(&calls));
    assert_eq!(ids(&out), IDS);
    let generated = ["text-call-0", "text-call-1"];
    assert_eq!(
        v11.render_results(&results(generated)),
        r##"[TOOL_RESULTS]{"sunny": true}[/TOOL_RESULTS][TOOL_RESULTS]Paris[/TOOL_RESULTS]"##
    );
    let calls = [
        ToolCall::new(generated[0], "get_weather", r#"{"city": "Paris"}"#),
        ToolCall::new(generated[1], "get_location", "{}"),
    ];
    assert_eq!(
        v11.render_calls(&calls),
        r##"[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}[TOOL_CALLS]get_location[ARGS]{}"##
    );
}

/// vLLM's `examples/tool_chat_template_deepseekv3.jinja` (commit 7531ada7;
/// DeepSeek V3's own template writes no tools), its text strings
/// concatenated: the template, rendered as above, also writes the
/// indentation of its own lines between them (four spaces before `</tools>`
/// and each sentence, blank lines), which is no part of the instruction.
#[test]
fn deepseek_v3_instruction_is_vllm_s_template_s() {
    assert_eq!(
        TextFormat::deepseek_v3().instruction(&tools()),
        r##"# Tools

You may call one or more functions to assist with the user query.

You are provided with function signatures within <tools></tools> XML tags:
<tools>
{"type": "function", "function": {"name": "get_weather", "description": "Current weather for a city.", "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "The city, e.g. Paris"}, "days": {"type": "integer"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["city"], "additionalProperties": false}}}
{"type": "function", "function": {"name": "write_file", "description": "Write a file.", "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}, "append": {"type": "boolean"}, "lines": {"type": "array", "items": {"type": "string"}}}, "required": ["path", "content"], "additionalProperties": false}}}
{"type": "function", "function": {"name": "get_location", "description": "Gets the location of the user.", "parameters": {"type": "object", "properties": {}}}}
</tools>

For function call returns, you should first print <｜tool▁calls▁begin｜>For each function call, you should return object like:
<｜tool▁call▁begin｜>function<｜tool▁sep｜><function_name>
```json
<function_arguments_in_json_format>
```<｜tool▁call▁end｜>At the end of function call returns, you should print <｜tool▁calls▁end｜><｜end▁of▁sentence｜>"##
    );
}

/// vLLM's `examples/tool_chat_template_deepseekv3.jinja` (commit 7531ada7),
/// as DeepSeek V3's own template writes them too, less the template's
/// indentation whitespace.
#[test]
fn deepseek_v3_results_are_its_template_s() {
    assert_eq!(
        TextFormat::deepseek_v3().render_results(&results(IDS)),
        r##"<｜tool▁outputs▁begin｜><｜tool▁output▁begin｜>{"sunny": true}<｜tool▁output▁end｜>
<｜tool▁output▁begin｜>Paris<｜tool▁output▁end｜><｜tool▁outputs▁end｜>"##
    );
}

/// openai-harmony 0.0.8's developer message, its `# Tools` section: a tool
/// without properties is written as the renderer writes a tool declared
/// without parameters (`() => any`, the format document's rule for a
/// function without arguments).
#[test]
fn harmony_instruction_is_openai_harmony_s() {
    assert_eq!(
        TextFormat::harmony().instruction(&tools()),
        r##"# Tools

## functions

namespace functions {

// Current weather for a city.
type get_weather = (_: {
// The city, e.g. Paris
city: string,
days?: number,
unit?: "celsius" | "fahrenheit",
}) => any;

// Write a file.
type write_file = (_: {
path: string,
content: string,
append?: boolean,
lines?: string[],
}) => any;

// Gets the location of the user.
type get_location = () => any;

} // namespace functions"##
    );
}

/// openai-harmony 0.0.8's own test of function schemas
/// (`test-data/test_render_functions_with_parameters.txt`, the tools of
/// `tests/test_harmony.py::test_render_functions_with_parameters`): titles,
/// examples, `nullable`, defaults, and a `oneOf` property.
#[test]
fn harmony_writes_openai_harmony_s_kitchensink_as_its_renderer_does() {
    let spec = |name: &str, description: &str, schema: serde_json::Value| {
        ToolSpec::builder(name, description)
            .input_schema(ToolSchema::from_value(schema))
            .build()
            .unwrap()
    };
    let format = json!({"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"});
    let tools = [
        ToolSpec::builder("get_location", "Gets the location of the user.")
            .build()
            .unwrap(),
        spec(
            "get_current_weather",
            "Gets the current weather in the provided location.",
            json!({
                "type": "object",
                "properties": {
                    "location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"},
                    "format": format.clone(),
                },
                "required": ["location"],
            }),
        ),
        spec(
            "get_multiple_weathers",
            "Gets the current weather in the provided list of locations.",
            json!({
                "type": "object",
                "properties": {
                    "locations": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "List of city and state, e.g. [\"San Francisco, CA\", \"New York, NY\"]",
                    },
                    "format": format,
                },
                "required": ["locations"],
            }),
        ),
        spec(
            "kitchensink",
            "A function with various complex schemas.",
            json!({
                "description": "params object",
                "type": "object",
                "properties": {
                    "string": {
                        "type": "string",
                        "title": "STRING",
                        "description": "A string",
                        "examples": ["hello", "world"],
                    },
                    "string_nullable": {
                        "type": "string",
                        "nullable": true,
                        "description": "A nullable string",
                        "default": "the default",
                    },
                    "string_enum": {"type": "string", "enum": ["a", "b", "c"]},
                    "oneof_string_or_number": {
                        "oneOf": [
                            {"type": "string", "default": "default_string_in_oneof"},
                            {"type": "number", "description": "numbers can happen too"},
                        ],
                        "description": "a oneof",
                        "default": 20,
                    },
                },
            }),
        ),
    ];
    assert_eq!(
        TextFormat::harmony().instruction(&tools),
        r##"# Tools

## functions

namespace functions {

// Gets the location of the user.
type get_location = () => any;

// Gets the current weather in the provided location.
type get_current_weather = (_: {
// The city and state, e.g. San Francisco, CA
location: string,
format?: "celsius" | "fahrenheit", // default: celsius
}) => any;

// Gets the current weather in the provided list of locations.
type get_multiple_weathers = (_: {
// List of city and state, e.g. ["San Francisco, CA", "New York, NY"]
locations: string[],
format?: "celsius" | "fahrenheit", // default: celsius
}) => any;

// A function with various complex schemas.
type kitchensink = (_: // params object
{
// STRING
//
// A string
// Examples:
// - "hello"
// - "world"
string?: string,
// A nullable string
string_nullable?: string | null, // default: "the default"
string_enum?: "a" | "b" | "c",
// a oneof
// default: 20
oneof_string_or_number?:
 | string // default: "default_string_in_oneof"
 | number // numbers can happen too
,
}) => any;

} // namespace functions"##
    );
}

/// openai-harmony 0.0.8: each result a message from `functions.NAME` to
/// the assistant on the commentary channel.
#[test]
fn harmony_results_are_openai_harmony_s() {
    assert_eq!(
        TextFormat::harmony().render_results(&results(IDS)),
        r##"<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>{"sunny": true}<|end|><|start|>functions.get_location to=assistant<|channel|>commentary<|message|>Paris<|end|>"##
    );
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

// The assistant's calls, written back as each family's renderer writes
// them. Every expected string below is that renderer's output for an
// assistant message with two parallel calls, [`edit_call`] and a
// `get_location` call without arguments (ids `functions.NAME:IDX`, or
// Mistral's `abcDEF123` and `xyzXYZ789`), cut out of the whole prompt at
// the assistant header before it and the end of turn after it. The Jinja
// templates get the arguments as an object, as transformers and vLLM pass
// them, except DeepSeek V3.1's and Kimi's, which concatenate them as text
// and get `json.dumps(arguments, ensure_ascii=False)`; mistral-common and
// openai-harmony get that text.

/// The tools the calls below are for: every JSON type among the
/// arguments.
fn edit_tools() -> Vec<ToolSpec> {
    let edit = ToolSpec::builder("edit", "Edit a file.")
        .input_schema(ToolSchema::from_value(json!({
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "content": {"type": "string"},
                "append": {"type": "boolean"},
                "count": {"type": "integer"},
                "ratio": {"type": "number"},
                "limit": {"type": ["integer", "null"]},
                "options": {"type": "object"}
            },
            "required": ["path", "content"]
        })))
        .build()
        .unwrap();
    vec![edit, location()]
}

/// The arguments of the `edit` call: a string with quotes and non-ASCII,
/// one with newlines, a boolean, an integer, a negative float, a null and
/// a nested object, written as `json.dumps` writes them.
const EDIT_ARGUMENTS: &str = r#"{"path": "docs/naïve \"q\".md", "content": "line 1\n  \"two\" — ü\n", "append": true, "count": 3, "ratio": -0.5, "limit": null, "options": {"mode": "fast", "tags": ["x", "y"], "deep": {"on": false}}}"#;

/// The two parallel calls, with these ids.
fn edit_call(ids: [&str; 2]) -> [ToolCall; 2] {
    [
        ToolCall::new(ids[0], "edit", EDIT_ARGUMENTS),
        ToolCall::new(ids[1], "get_location", "{}"),
    ]
}

/// `text` read back by `format`'s reader for [`edit_tools`], whole and in
/// every chunking: the same names and arguments as `written`, and the
/// output's ids.
fn reads_back(format: &TextFormat, text: &str, written: &[ToolCall]) -> Vec<String> {
    let tools = edit_tools();
    let out = everywhere_with(|| format.reader(&tools), text, 8);
    let expected: Vec<_> = written
        .iter()
        .map(|c| {
            (
                c.name.as_str().to_owned(),
                super::text_support::arguments(&c.arguments),
            )
        })
        .collect();
    assert_eq!(calls(&out), expected, "{}: {text}", format.name);
    // The newline between two calls is text (the reader passes it on).
    assert_eq!(out.text().trim(), "", "{}: {text}", format.name);
    assert_eq!(out.failed().count(), 0, "{}: {text}", format.name);
    ids(&out)
}

/// Qwen3's chat template (Qwen/Qwen3-14B's `chat_template` on Hugging
/// Face, whose assistant branch Qwen2.5's shares; quoted whole in
/// SagesAi/terminal-agent's Qwen3 guide), its assistant branch rendered
/// with jinja2 3.1.6 as above.
#[test]
fn hermes_calls_are_qwen3_s_template_s() {
    let calls = edit_call(KIMI_IDS_EDIT);
    let template = r##"<tool_call>
{"name": "edit", "arguments": {"path": "docs/naïve \"q\".md", "content": "line 1\n  \"two\" — ü\n", "append": true, "count": 3, "ratio": -0.5, "limit": null, "options": {"mode": "fast", "tags": ["x", "y"], "deep": {"on": false}}}}
</tool_call>
<tool_call>
{"name": "get_location", "arguments": {}}
</tool_call>"##;
    let format = TextFormat::hermes();
    assert_eq!(format.render_calls(&calls), template);
    reads_back(&format, template, &calls);
}

/// The ids of [`edit_call`] in Kimi's form.
const KIMI_IDS_EDIT: [&str; 2] = ["functions.edit:0", "functions.get_location:1"];

/// vLLM's `examples/tool_chat_template_qwen3coder.jinja` (commit
/// 7a3bde4c), rendered with jinja2 3.1.6 as above. The template writes a
/// value that is not an object or array through `| string`, Python's
/// `str()`: `True`, `False`, `None`. Ours writes JSON's `true`, `false`,
/// `null` instead, on purpose: the reader types them as such for every
/// parameter, Python's spellings only where the schema allows the value,
/// so the transcript shows the model only values that read back. The
/// template's own bytes read back as the same calls too (a model that
/// learned them writes `True`). Strings, numbers, objects and arrays are
/// the template's bytes.
#[test]
fn qwen3_coder_calls_are_its_template_s_but_for_python_s_true_and_none() {
    let calls = edit_call(KIMI_IDS_EDIT);
    let template = r##"<tool_call>
<function=edit>
<parameter=path>
docs/naïve "q".md
</parameter>
<parameter=content>
line 1
  "two" — ü

</parameter>
<parameter=append>
True
</parameter>
<parameter=count>
3
</parameter>
<parameter=ratio>
-0.5
</parameter>
<parameter=limit>
None
</parameter>
<parameter=options>
{"mode": "fast", "tags": ["x", "y"], "deep": {"on": false}}
</parameter>
</function>
</tool_call>
<tool_call>
<function=get_location>
</function>
</tool_call>"##;
    let format = TextFormat::qwen3_coder();
    let ours = template
        .replace("<parameter=append>\nTrue\n", "<parameter=append>\ntrue\n")
        .replace("<parameter=limit>\nNone\n", "<parameter=limit>\nnull\n");
    assert_ne!(ours, template);
    assert_eq!(format.render_calls(&calls), ours);
    reads_back(&format, &ours, &calls);
    reads_back(&format, template, &calls);
}

/// GLM-4.6's template as Z.ai ships it and llama.cpp keeps it
/// (`models/templates/GLM-4.6.jinja`, commit afefa651), GLM-4.5's
/// assistant branch alike, rendered with jinja2 3.1.6 as above: a newline
/// before each `<arg_key>` and `<arg_value>` and before `</tool_call>`.
#[test]
fn glm45_calls_are_glm_4_6_s_template_s() {
    let calls = edit_call(KIMI_IDS_EDIT);
    let template = r##"<tool_call>edit
<arg_key>path</arg_key>
<arg_value>docs/naïve "q".md</arg_value>
<arg_key>content</arg_key>
<arg_value>line 1
  "two" — ü
</arg_value>
<arg_key>append</arg_key>
<arg_value>true</arg_value>
<arg_key>count</arg_key>
<arg_value>3</arg_value>
<arg_key>ratio</arg_key>
<arg_value>-0.5</arg_value>
<arg_key>limit</arg_key>
<arg_value>null</arg_value>
<arg_key>options</arg_key>
<arg_value>{"mode": "fast", "tags": ["x", "y"], "deep": {"on": false}}</arg_value>
</tool_call>
<tool_call>get_location
</tool_call>"##;
    let format = TextFormat::glm45();
    assert_eq!(format.render_calls(&calls), template);
    reads_back(&format, template, &calls);
}

/// llama.cpp's own GLM-4.5 template (`models/templates/glm_4_5.jinja`,
/// commit 623f3dd0, rewritten for its engine) writes no newline before an
/// `<arg_key>` or `</tool_call>`; ours writes GLM's own form (above), and
/// reads this one back as the same calls.
#[test]
fn glm45_reads_llama_cpp_s_glm_4_5_template_s_calls() {
    let calls = edit_call(KIMI_IDS_EDIT);
    let template = r##"<tool_call>edit<arg_key>path</arg_key>
<arg_value>docs/naïve "q".md</arg_value><arg_key>content</arg_key>
<arg_value>line 1
  "two" — ü
</arg_value><arg_key>append</arg_key>
<arg_value>true</arg_value><arg_key>count</arg_key>
<arg_value>3</arg_value><arg_key>ratio</arg_key>
<arg_value>-0.5</arg_value><arg_key>limit</arg_key>
<arg_value>null</arg_value><arg_key>options</arg_key>
<arg_value>{"mode": "fast", "tags": ["x", "y"], "deep": {"on": false}}</arg_value></tool_call>
<tool_call>get_location</tool_call>"##;
    let format = TextFormat::glm45();
    assert_ne!(format.render_calls(&calls), template);
    reads_back(&format, template, &calls);
}

/// vLLM's `examples/tool_chat_template_llama3.1_json.jinja` (commit
/// 54522760), its assistant branch rendered with jinja2 3.1.6 as above
/// (the `{"name", "parameters"}` form of Llama 3.1's own template, which
/// is not on GitHub). The template takes one
/// call a turn (it raises "This model only supports single tool-calls at
/// once!" for two); ours joins several with `; `, as Llama 3.2's JSON
/// calls are read.
#[test]
fn llama3_json_calls_are_its_template_s() {
    let calls = edit_call(KIMI_IDS_EDIT);
    let template = r##"{"name": "edit", "parameters": {"path": "docs/naïve \"q\".md", "content": "line 1\n  \"two\" — ü\n", "append": true, "count": 3, "ratio": -0.5, "limit": null, "options": {"mode": "fast", "tags": ["x", "y"], "deep": {"on": false}}}}"##;
    let format = TextFormat::llama3_json();
    assert_eq!(format.render_calls(&calls[..1]), template);
    reads_back(&format, template, &calls[..1]);
    let both = format.render_calls(&calls);
    assert_eq!(
        both,
        format!("{template}; {{\"name\": \"get_location\", \"parameters\": {{}}}}")
    );
    reads_back(&format, &both, &calls);
}

/// vLLM's `examples/tool_chat_template_llama4_pythonic.jinja` (commit
/// 0471aed1), its assistant branch rendered with jinja2 3.1.6 as above,
/// for calls whose values
/// are plain strings. For other values the template writes
/// `name="%s" | format(value)`: every value quoted, a string's own quotes
/// unescaped, `True` and dicts as Python's repr inside the quotes
/// (`append="True"`, `options="{'mode': 'fast'}"`), which no Python
/// reader gives back as the call; ours writes Python literals.
#[test]
fn pythonic_calls_are_llama_4_s_template_s_for_strings_and_python_literals_else() {
    let calls = [
        ToolCall::new(
            "functions.get_weather:0",
            "get_weather",
            r#"{"city": "Paris", "unit": "celsius"}"#,
        ),
        ToolCall::new("functions.get_location:1", "get_location", "{}"),
    ];
    let template = r##"[get_weather(city="Paris", unit="celsius"), get_location()]"##;
    let format = TextFormat::pythonic();
    assert_eq!(format.render_calls(&calls), template);
    let out = everywhere(&format, template);
    assert_eq!(
        super::text_support::calls(&out),
        [
            (
                "get_weather".to_owned(),
                json!({"city": "Paris", "unit": "celsius"})
            ),
            ("get_location".to_owned(), json!({})),
        ]
    );
    let calls = edit_call(KIMI_IDS_EDIT);
    let ours = format.render_calls(&calls);
    assert_eq!(
        ours,
        r##"[edit(path="docs/naïve \"q\".md", content="line 1\n  \"two\" — ü\n", append=True, count=3, ratio=-0.5, limit=None, options={"mode": "fast", "tags": ["x", "y"], "deep": {"on": False}}), get_location()]"##
    );
    reads_back(&format, &ours, &calls);
}

/// mistral-common 1.13.1, tokenizer v3, set up as above: the calls as one
/// JSON list after `[TOOL_CALLS] `, each with its id.
#[test]
fn mistral_calls_are_mistral_common_s_v3() {
    let calls = edit_call(IDS);
    let renderer = r##"[TOOL_CALLS] [{"name": "edit", "arguments": {"path": "docs/naïve \"q\".md", "content": "line 1\n  \"two\" — ü\n", "append": true, "count": 3, "ratio": -0.5, "limit": null, "options": {"mode": "fast", "tags": ["x", "y"], "deep": {"on": false}}}, "id": "abcDEF123"}, {"name": "get_location", "arguments": {}, "id": "xyzXYZ789"}]"##;
    let format = TextFormat::mistral();
    assert_eq!(format.render_calls(&calls), renderer);
    assert_eq!(reads_back(&format, renderer, &calls), IDS);
}

/// mistral-common 1.13.1, tokenizers v11 (with `[CALL_ID]`) and v13 (no
/// ids), set up as above.
#[test]
fn mistral_v11_calls_are_mistral_common_s_v11_and_v13() {
    let format = TextFormat::mistral_v11();
    let calls = edit_call(IDS);
    let v11 = r##"[TOOL_CALLS]edit[CALL_ID]abcDEF123[ARGS]{"path": "docs/naïve \"q\".md", "content": "line 1\n  \"two\" — ü\n", "append": true, "count": 3, "ratio": -0.5, "limit": null, "options": {"mode": "fast", "tags": ["x", "y"], "deep": {"on": false}}}[TOOL_CALLS]get_location[CALL_ID]xyzXYZ789[ARGS]{}"##;
    assert_eq!(format.render_calls(&calls), v11);
    assert_eq!(reads_back(&format, v11, &calls), IDS);
    let calls = edit_call(["text-call-0", "text-call-1"]);
    let v13 = r##"[TOOL_CALLS]edit[ARGS]{"path": "docs/naïve \"q\".md", "content": "line 1\n  \"two\" — ü\n", "append": true, "count": 3, "ratio": -0.5, "limit": null, "options": {"mode": "fast", "tags": ["x", "y"], "deep": {"on": false}}}[TOOL_CALLS]get_location[ARGS]{}"##;
    assert_eq!(format.render_calls(&calls), v13);
    reads_back(&format, v13, &calls);
}

/// vLLM's `examples/tool_chat_template_deepseekv3.jinja` (commit
/// 7531ada7), its assistant branch rendered with jinja2 3.1.6 as above
/// (DeepSeek V3's own template writes no tools), less the template's
/// indentation whitespace between its `{{ ... }}` and the
/// `<｜end▁of▁sentence｜>` that ends the turn.
#[test]
fn deepseek_v3_calls_are_its_template_s() {
    let calls = edit_call(KIMI_IDS_EDIT);
    let template = r##"<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>edit
```json
{"path": "docs/naïve \"q\".md", "content": "line 1\n  \"two\" — ü\n", "append": true, "count": 3, "ratio": -0.5, "limit": null, "options": {"mode": "fast", "tags": ["x", "y"], "deep": {"on": false}}}
```<｜tool▁call▁end｜>
<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_location
```json
{}
```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"##;
    let format = TextFormat::deepseek_v3();
    assert_eq!(format.render_calls(&calls), template);
    reads_back(&format, template, &calls);
}

/// DeepSeek V3.1's own template as llama.cpp keeps it
/// (`models/templates/deepseek-ai-DeepSeek-V3.1.jinja`, commit 0374c5b6;
/// vLLM's `examples/tool_chat_template_deepseekv31.jinja` at 71742a80 has
/// the same assistant branch), rendered with jinja2 3.1.6 as above, less
/// the `<｜end▁of▁sentence｜>` that ends the turn.
#[test]
fn deepseek_v31_calls_are_its_template_s() {
    let calls = edit_call(KIMI_IDS_EDIT);
    let template = r##"<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>edit<｜tool▁sep｜>{"path": "docs/naïve \"q\".md", "content": "line 1\n  \"two\" — ü\n", "append": true, "count": 3, "ratio": -0.5, "limit": null, "options": {"mode": "fast", "tags": ["x", "y"], "deep": {"on": false}}}<｜tool▁call▁end｜><｜tool▁call▁begin｜>get_location<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>"##;
    let format = TextFormat::deepseek_v31();
    assert_eq!(format.render_calls(&calls), template);
    reads_back(&format, template, &calls);
}

/// Kimi K2's template as llama.cpp keeps it
/// (`models/templates/moonshotai-Kimi-K2-Thinking.jinja`, commit
/// 0c3c896e), rendered with jinja2 3.1.6 as above: what follows the
/// assistant's `<think></think>` and content.
#[test]
fn kimi_k2_calls_are_its_template_s() {
    let calls = edit_call(KIMI_IDS_EDIT);
    let template = r##"<|tool_calls_section_begin|><|tool_call_begin|>functions.edit:0<|tool_call_argument_begin|>{"path": "docs/naïve \"q\".md", "content": "line 1\n  \"two\" — ü\n", "append": true, "count": 3, "ratio": -0.5, "limit": null, "options": {"mode": "fast", "tags": ["x", "y"], "deep": {"on": false}}}<|tool_call_end|><|tool_call_begin|>functions.get_location:1<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>"##;
    let format = TextFormat::kimi_k2();
    assert_eq!(format.render_calls(&calls), template);
    assert_eq!(reads_back(&format, template, &calls), KIMI_IDS_EDIT);
}

/// openai/harmony's format document (`docs/format.md` at v0.0.8, its tool
/// call and conversation examples) writes the recipient after the channel,
/// `<|channel|>commentary to=functions.NAME <|constrain|>json`, as gpt-oss
/// writes its calls; ours writes that. openai-harmony 0.0.8's
/// `render_conversation` (below, set up as above) writes it in the role
/// part instead; the document allows both, and both read back as the same
/// calls.
#[test]
fn harmony_calls_are_the_format_document_s_and_read_as_openai_harmony_writes_them() {
    let calls = edit_call(KIMI_IDS_EDIT);
    let format = TextFormat::harmony();
    let document = r##"<|start|>assistant<|channel|>commentary to=functions.edit <|constrain|>json<|message|>{"path": "docs/naïve \"q\".md", "content": "line 1\n  \"two\" — ü\n", "append": true, "count": 3, "ratio": -0.5, "limit": null, "options": {"mode": "fast", "tags": ["x", "y"], "deep": {"on": false}}}<|call|><|start|>assistant<|channel|>commentary to=functions.get_location <|constrain|>json<|message|>{}<|call|>"##;
    assert_eq!(format.render_calls(&calls), document);
    reads_back(&format, document, &calls);
    let renderer = r##"<|start|>assistant to=functions.edit<|channel|>commentary <|constrain|>json<|message|>{"path": "docs/naïve \"q\".md", "content": "line 1\n  \"two\" — ü\n", "append": true, "count": 3, "ratio": -0.5, "limit": null, "options": {"mode": "fast", "tags": ["x", "y"], "deep": {"on": false}}}<|call|><|start|>assistant to=functions.get_location<|channel|>commentary <|constrain|>json<|message|>{}<|call|>"##;
    reads_back(&format, renderer, &calls);
}

/// A result with a newline, quotes and non-ASCII, where the family writes
/// results as JSON: vLLM's Llama 3.1 JSON (54522760) and Llama 4 pythonic
/// (0471aed1) templates' `tool` branches, rendered with jinja2 3.1.6 as
/// above, and mistral-common 1.13.1's tokenizers v3 and v11, set up as
/// above, for a tool message with this text.
#[test]
fn results_with_quotes_newlines_and_non_ascii_are_the_renderers_json() {
    let text = "naïve\n\"x\" — done";
    let results = [result(IDS[0], "edit", text)];
    assert_eq!(
        TextFormat::llama3_json().render_results(&results),
        r##"<|start_header_id|>ipython<|end_header_id|>

{"output": "naïve\n\"x\" — done"}<|eot_id|>"##
    );
    assert_eq!(
        TextFormat::pythonic().render_results(&results),
        r##"<|header_start|>ipython<|header_end|>

"naïve\n\"x\" — done"<|eot|>"##
    );
    assert_eq!(
        TextFormat::mistral().render_results(&results),
        r##"[TOOL_RESULTS] {"content": "naïve\n\"x\" — done", "call_id": "abcDEF123"}[/TOOL_RESULTS]"##
    );
    assert_eq!(
        TextFormat::mistral_v11().render_results(&results),
        r##"[TOOL_RESULTS]abcDEF123[TOOL_CONTENT]naïve
"x" — done[/TOOL_RESULTS]"##
    );
}
