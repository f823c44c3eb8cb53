//! Each built-in format reads the output its models write (the shapes of
//! their chat templates and of outputs quoted in the peers' tests and
//! issues), whole and in every chunking.

use serde_json::{Value, json};
use tinyagents_tools::ToolCall;
use tinyagents_tools::call::RawArguments;
use tinyagents_tools::stream::OutputPart;
use tinyagents_tools::stream::text::{RunStart, TextFormat};

use super::text_support::{everywhere, everywhere_with, reader};

pub fn text(s: &str) -> OutputPart {
    OutputPart::Text(s.to_owned())
}

pub fn reasoning(s: &str) -> OutputPart {
    OutputPart::Reasoning {
        text: s.to_owned(),
        signature: None,
    }
}

/// A ready call with its exact argument text.
pub fn call(id: &str, name: &str, arguments: &str) -> OutputPart {
    OutputPart::Call(ToolCall::new(id, name, arguments))
}

/// A ready call with typed arguments.
pub fn typed(id: &str, name: &str, arguments: Value) -> OutputPart {
    OutputPart::Call(ToolCall::new(id, name, RawArguments::Json(arguments)))
}

#[test]
fn hermes_reads_qwen3_s_reasoning_text_and_parallel_calls() {
    let out = everywhere(
        &TextFormat::hermes(),
        "<think>\nThe user wants Paris and Tokyo.\n</think>\n\nI'll check both cities.\n\
         <tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n\
         <tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Tokyo\", \"days\": 2}}\n</tool_call>",
    );
    assert_eq!(
        out.parts,
        vec![
            reasoning("\nThe user wants Paris and Tokyo.\n"),
            text("\n\nI'll check both cities.\n"),
            call("text-call-0", "get_weather", r#"{"city": "Paris"}"#),
            text("\n"),
            call(
                "text-call-1",
                "get_weather",
                r#"{"city": "Tokyo", "days": 2}"#
            ),
        ]
    );
    assert!(out.problems.is_empty());
}

#[test]
fn tags_read_the_seed_framework_s_args_and_also_arguments() {
    let format = TextFormat::tags("[TOOL_CALL]", "[/TOOL_CALL]");
    let out = everywhere(
        &format,
        "Sure.[TOOL_CALL]{\"name\": \"get_weather\", \"args\": {\"city\": \"Paris\"}}[/TOOL_CALL]\
         [TOOL_CALL]{\"name\": \"get_location\", \"arguments\": {}}[/TOOL_CALL] Done.",
    );
    assert_eq!(
        out.parts,
        vec![
            text("Sure."),
            call("text-call-0", "get_weather", r#"{"city": "Paris"}"#),
            call("text-call-1", "get_location", "{}"),
            text(" Done."),
        ]
    );
}

#[test]
fn qwen3_coder_reads_raw_parameters_typed_by_the_schema() {
    let out = everywhere(
        &TextFormat::qwen3_coder(),
        "I'll write the file.\n<tool_call>\n<function=write_file>\n<parameter=path>\n/tmp/a.txt\n</parameter>\n\
         <parameter=content>\nline one\nline two\n\n</parameter>\n<parameter=append>\nfalse\n</parameter>\n\
         </function>\n</tool_call>",
    );
    assert_eq!(
        out.parts,
        vec![
            text("I'll write the file.\n"),
            typed(
                "text-call-0",
                "write_file",
                json!({"path": "/tmp/a.txt", "content": "line one\nline two\n", "append": false})
            ),
        ]
    );
}

#[test]
fn glm45_reads_key_value_pairs_with_and_without_glm47_s_newlines() {
    let glm45 = "<think>Need the weather.</think>\n<tool_call>get_weather\n<arg_key>city</arg_key>\n\
                 <arg_value>Beijing</arg_value>\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>";
    let glm47 = "<think>Need the weather.</think>\n<tool_call>get_weather<arg_key>city</arg_key>\
                 <arg_value>Beijing</arg_value><arg_key>days</arg_key><arg_value>3</arg_value></tool_call>";
    for output in [glm45, glm47] {
        let out = everywhere(&TextFormat::glm45(), output);
        assert_eq!(
            out.parts,
            vec![
                reasoning("Need the weather."),
                text("\n"),
                typed(
                    "text-call-0",
                    "get_weather",
                    json!({"city": "Beijing", "days": 3})
                ),
            ]
        );
    }
}

#[test]
fn llama3_json_reads_a_bare_call_and_python_tag_calls_joined_by_semicolons() {
    let format = TextFormat::llama3_json();
    let out = everywhere(
        &format,
        "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}",
    );
    assert_eq!(
        out.parts,
        vec![call("text-call-0", "get_weather", r#"{"city": "Paris"}"#)]
    );

    let out = everywhere(
        &format,
        "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}; \
         {\"name\": \"get_location\", \"parameters\": {}}",
    );
    assert_eq!(
        out.parts,
        vec![
            call("text-call-0", "get_weather", r#"{"city": "Paris"}"#),
            call("text-call-1", "get_location", "{}"),
        ]
    );
}

#[test]
fn pythonic_reads_a_bare_list_and_llama4_and_lfm2_wrappers() {
    let format = TextFormat::pythonic();
    let out = everywhere(
        &format,
        "[get_weather(city=\"Paris\", days=3), get_location()]",
    );
    assert_eq!(
        out.parts,
        vec![
            typed(
                "text-call-0",
                "get_weather",
                json!({"city": "Paris", "days": 3})
            ),
            typed("text-call-1", "get_location", json!({})),
        ]
    );
    let out = everywhere(
        &format,
        "Checking.<|python_start|>[get_weather(city='SF')]<|python_end|>",
    );
    assert_eq!(
        out.parts,
        vec![
            text("Checking."),
            typed("text-call-0", "get_weather", json!({"city": "SF"}))
        ]
    );
    // LFM2's own example output.
    let out = everywhere(
        &format,
        "<|tool_call_start|>[get_weather(location=\"Paris\")]<|tool_call_end|>The weather in Paris is sunny.",
    );
    assert_eq!(
        out.parts,
        vec![
            typed("text-call-0", "get_weather", json!({"location": "Paris"})),
            text("The weather in Paris is sunny."),
        ]
    );
}

#[test]
fn mistral_before_v11_reads_the_json_array_and_its_ids() {
    let out = everywhere(
        &TextFormat::mistral(),
        "[TOOL_CALLS] [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}, \"id\": \"abc123def\"}, \
         {\"name\": \"get_location\", \"arguments\": {}}]",
    );
    assert_eq!(
        out.parts,
        vec![
            call("abc123def", "get_weather", r#"{"city": "Paris"}"#),
            call("text-call-1", "get_location", "{}"),
        ]
    );
}

#[test]
fn mistral_v11_reads_think_call_ids_and_one_call_per_marker() {
    let out = everywhere(
        &TextFormat::mistral_v11(),
        "[THINK]Need the weather.[/THINK]Checking.[TOOL_CALLS]get_weather[CALL_ID]a1b2c3d4e[ARGS]{\"city\": \"Paris\"}\
         [TOOL_CALLS]get_location[ARGS]{}",
    );
    assert_eq!(
        out.parts,
        vec![
            reasoning("Need the weather."),
            text("Checking."),
            call("a1b2c3d4e", "get_weather", r#"{"city": "Paris"}"#),
            call("text-call-1", "get_location", "{}"),
        ]
    );
}

#[test]
fn deepseek_v3_reads_fenced_json_calls() {
    let out = everywhere(
        &TextFormat::deepseek_v3(),
        "Let me look.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n\
         {\"city\": \"Paris\"}\n```<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_location\n\
         ```json\n{}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
    );
    assert_eq!(
        out.parts,
        vec![
            text("Let me look."),
            call("text-call-0", "get_weather", r#"{"city": "Paris"}"#),
            call("text-call-1", "get_location", "{}"),
        ]
    );
}

#[test]
fn deepseek_v31_reads_bare_json_and_output_that_begins_inside_thinking() {
    let body = "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"city\": \"Paris\"}\
                <｜tool▁call▁end｜><｜tool▁call▁begin｜>get_location<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>";
    let format = TextFormat::deepseek_v31();
    let out = everywhere(&format, body);
    assert_eq!(
        out.parts,
        vec![
            call("text-call-0", "get_weather", r#"{"city": "Paris"}"#),
            call("text-call-1", "get_location", "{}"),
        ]
    );
    let thinking = format!("The user wants the weather.</think>Checking.{body}");
    let out = everywhere_with(|| reader(&format).starting_in_reasoning(), &thinking, 8);
    assert_eq!(out.parts[0], reasoning("The user wants the weather."));
    assert_eq!(out.parts[1], text("Checking."));
    assert_eq!(out.calls().count(), 2);
}

#[test]
fn kimi_k2_reads_its_section_and_takes_functions_name_index_as_the_id() {
    let out = everywhere(
        &TextFormat::kimi_k2(),
        "I'll check.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>\
         {\"city\": \"Paris\"}<|tool_call_end|><|tool_call_begin|>functions.get_weather:1\
         <|tool_call_argument_begin|>{\"city\": \"Tokyo\"}<|tool_call_end|><|tool_calls_section_end|>",
    );
    assert_eq!(
        out.parts,
        vec![
            text("I'll check."),
            call(
                "functions.get_weather:0",
                "get_weather",
                r#"{"city": "Paris"}"#
            ),
            call(
                "functions.get_weather:1",
                "get_weather",
                r#"{"city": "Tokyo"}"#
            ),
        ]
    );
}

#[test]
fn harmony_reads_the_format_document_s_examples() {
    let format = TextFormat::harmony();
    // "Receiving tool calls".
    let out = everywhere(
        &format,
        "<|channel|>analysis<|message|>Need to use function get_weather.<|end|><|start|>assistant<|channel|>\
         commentary to=functions.get_weather <|constrain|>json<|message|>{\"location\":\"San Francisco\"}<|call|>",
    );
    assert_eq!(
        out.parts,
        vec![
            reasoning("Need to use function get_weather."),
            call(
                "text-call-0",
                "get_weather",
                r#"{"location":"San Francisco"}"#
            ),
        ]
    );
    // "Reasoning": analysis then final.
    let out = everywhere(
        &format,
        "<|channel|>analysis<|message|>User asks: \"What is 2 + 2?\" Simple arithmetic. Provide answer.<|end|>\
         <|start|>assistant<|channel|>final<|message|>2 + 2 = 4.<|return|>",
    );
    assert_eq!(
        out.parts,
        vec![
            reasoning("User asks: \"What is 2 + 2?\" Simple arithmetic. Provide answer."),
            text("2 + 2 = 4."),
        ]
    );
    // "Preambles": a commentary message without a recipient is visible
    // text; the recipient may be in the role part, `json` without
    // `<|constrain|>`.
    let out = everywhere(
        &format,
        "<|channel|>analysis<|message|>plan<|end|><|start|>assistant<|channel|>commentary<|message|>**Action plan**:\n\
         1. Generate an HTML file<|end|><|start|>assistant to=functions.write_file<|channel|>commentary json<|message|>\
         {\"path\": \"index.html\", \"content\": \"<html>\"}<|call|>",
    );
    assert_eq!(
        out.parts,
        vec![
            reasoning("plan"),
            text("**Action plan**:\n1. Generate an HTML file"),
            call(
                "text-call-0",
                "write_file",
                r#"{"path": "index.html", "content": "<html>"}"#
            ),
        ]
    );
}

#[test]
fn readers_of_two_formats_made_in_turn_each_read_their_own_markers() {
    // Hermes with other markers, under the same name: equal names do not
    // make equal formats.
    let hermes = TextFormat::hermes();
    let mut other = TextFormat::hermes();
    other.runs[0].start = RunStart::Marker("<call>".into());
    other.runs[0].end = Some("</call>".into());
    let output = "<call>{\"name\": \"get_weather\", \"arguments\": {}}</call>\n\
                  <tool_call>{\"name\": \"get_location\", \"arguments\": {}}</tool_call>";
    let hermes_reads = [
        text("<call>{\"name\": \"get_weather\", \"arguments\": {}}</call>\n"),
        call("text-call-0", "get_location", "{}"),
    ];
    let other_reads = [
        call("text-call-0", "get_weather", "{}"),
        text("\n<tool_call>{\"name\": \"get_location\", \"arguments\": {}}</tool_call>"),
    ];
    for _ in 0..2 {
        assert_eq!(everywhere(&hermes, output).parts, hermes_reads);
        assert_eq!(everywhere(&other, output).parts, other_reads);
    }
}
