//! The peers' reported bugs, reproduced: each input from the issue, and
//! the output we give for it, streamed in every chunking.

use serde_json::json;
use tinyagents_tools::stream::text::TextFormat;
use tinyagents_tools::stream::{ArgumentsDelta, OutputReader, StreamEvent};
use tinyagents_tools::testkit::{Chunking, chunk_text};

use super::text_support::{argument_texts, calls, everywhere, everywhere_with, reader};

/// vLLM #10395: streamed Hermes arguments came out with brackets the
/// parser had closed itself. The fragments we stream add up to exactly the
/// arguments the model wrote (not a byte of whitespace around them), in
/// every JSON format, however the output was cut.
#[test]
fn vllm_10395_streamed_arguments_add_up_to_exactly_what_the_model_wrote() {
    let args = r#"{"lines": [["a", "]"], []], "path": "x{", "content": "[{"}"#;
    for format in [
        TextFormat::hermes(),
        TextFormat::tags("[TOOL_CALL]", "[/TOOL_CALL]"),
        TextFormat::llama3_json(),
        TextFormat::mistral(),
        TextFormat::mistral_v11(),
        TextFormat::kimi_k2(),
        TextFormat::deepseek_v3(),
        TextFormat::deepseek_v31(),
        TextFormat::harmony(),
    ] {
        let output = format.render_calls(&[tinyagents_tools::ToolCall::new(
            "functions.write_file:0",
            "write_file",
            args,
        )]);
        for chunking in Chunking::matrix(16) {
            let mut r = reader(&format);
            let mut events = Vec::new();
            for piece in chunk_text(&output, chunking) {
                r.push(piece.as_bytes(), &mut events);
            }
            r.finish(&mut events);
            let streamed: String = events
                .iter()
                .filter_map(|e| match e {
                    StreamEvent::ArgumentsDelta(ArgumentsDelta { fragment, .. }) => {
                        Some(fragment.as_str())
                    }
                    _ => None,
                })
                .collect();
            assert_eq!(streamed, args, "{} {chunking:?}", format.name);
        }
        assert_eq!(argument_texts(&everywhere(&format, &output)), [args]);
    }
}

/// vLLM #21544: a `{` inside a string argument broke the streamed Hermes
/// call.
#[test]
fn vllm_21544_a_brace_inside_a_string_argument_does_not_break_the_call() {
    let output = "<tool_call>\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"a.js\", \
                  \"content\": \"if (x) { return \\\"}\\\"; } {\"}}\n</tool_call>";
    let out = everywhere(&TextFormat::hermes(), output);
    assert_eq!(
        calls(&out),
        [(
            "write_file".to_owned(),
            json!({"path": "a.js", "content": "if (x) { return \"}\"; } {"})
        )]
    );
}

/// vLLM #28297: the raw `<tool_call>` JSON leaked into the visible text. At
/// every point of every chunking, what has been shown is a prefix of the
/// final text, which holds none of the call.
#[test]
fn vllm_28297_no_call_markup_ever_reaches_the_visible_text() {
    let output = "Let me check the weather.\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": \
                  {\"city\": \"Paris\"}}\n</tool_call>\nDone.";
    let format = TextFormat::hermes();
    let final_text = "Let me check the weather.\n\n\nDone.";
    for chunking in Chunking::matrix(32) {
        let mut r = reader(&format);
        let mut events = Vec::new();
        for piece in chunk_text(output, chunking) {
            r.push(piece.as_bytes(), &mut events);
            let shown: String = events
                .iter()
                .filter_map(|e| match e {
                    StreamEvent::Text(t) => Some(t.as_str()),
                    _ => None,
                })
                .collect();
            assert!(final_text.starts_with(&shown), "{chunking:?}: {shown:?}");
        }
    }
    assert_eq!(everywhere(&format, output).text(), final_text);
}

/// vLLM #48020: a call whose start and end markers arrived in one delta
/// was lost.
#[test]
fn vllm_48020_a_call_whose_markers_arrive_in_one_piece_is_kept() {
    for (format, call) in [
        (
            TextFormat::hermes(),
            "<tool_call>{\"name\": \"get_location\", \"arguments\": {}}</tool_call>",
        ),
        (
            TextFormat::kimi_k2(),
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_location:0<|tool_call_argument_begin|>{}\
             <|tool_call_end|><|tool_calls_section_end|>",
        ),
        (
            TextFormat::qwen3_coder(),
            "<tool_call><function=get_location></function></tool_call>",
        ),
    ] {
        let mut r = reader(&format);
        let mut events = Vec::new();
        r.push(b"Sure.", &mut events);
        r.push(call.as_bytes(), &mut events);
        r.push(b" Anything else?", &mut events);
        r.finish(&mut events);
        let out = tinyagents_tools::stream::ModelOutput::collect(events);
        assert_eq!(out.calls().count(), 1, "{}", format.name);
        assert_eq!(out.text(), "Sure. Anything else?");
    }
}

/// vLLM #19017: calls written inside `<think>` were executed twice or
/// lost. A call inside reasoning is reasoning; the call after it is one
/// call.
#[test]
fn vllm_19017_a_call_inside_think_is_reasoning_and_the_real_call_comes_once() {
    let call = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
    let output = format!("<think>\nI should call:\n{call}\n</think>\n\n{call}");
    let out = everywhere(&TextFormat::hermes(), &output);
    assert_eq!(out.calls().count(), 1);
    assert!(out.reasoning().contains(call));
}

/// SGLang #35564: eight detectors gave different calls token by token than
/// all at once. Every format here, one character and one byte at a time,
/// gives the whole-text parse (`everywhere` checks each chunking).
#[test]
fn sglang_35564_every_format_parses_the_same_streamed_one_unit_at_a_time_as_whole() {
    let call = |i: usize| {
        tinyagents_tools::ToolCall::new(
            format!("functions.get_weather:{i}"),
            "get_weather",
            r#"{"city": "Paris", "days": 2}"#,
        )
    };
    for name in tinyagents_tools::stream::text::FORMAT_NAMES {
        let format = TextFormat::by_name(name).unwrap();
        let output = format.render_calls(&[call(0), call(1)]);
        let out = everywhere(&format, &output);
        assert_eq!(out.calls().count(), 2, "{name}: {output}");
        assert_eq!(out.failed().count(), 0, "{name}");
    }
}

/// SGLang #31915: two parallel calls lost data under random 1 to 4
/// character chunking in most runs. Two hundred seeds, no difference.
#[test]
fn sglang_31915_two_parallel_calls_survive_random_chunking_of_1_to_4_characters() {
    let output = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"San Francisco\", \"unit\": \"celsius\"}}\n</tool_call>\n\
                  <tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"New York\", \"unit\": \"fahrenheit\"}}\n</tool_call>";
    let format = TextFormat::hermes();
    let whole = format.parse(&super::text_support::tools(), output);
    assert_eq!(whole.calls().count(), 2);
    for seed in 0..200 {
        let pieces = chunk_text(output, Chunking::Random { seed, max: 4 });
        let got = reader(&format).read_all(pieces.iter().map(|p| p.as_bytes()));
        assert_eq!(got, whole, "seed {seed}");
    }
}

/// SGLang #34677: one unknown tool name discarded the other calls of the
/// batch. Unknown names are calls like any other.
#[test]
fn sglang_34677_an_unknown_tool_name_never_discards_the_other_calls() {
    let unknown = tinyagents_tools::ToolCall::new("functions.no_such_tool:0", "no_such_tool", "{}");
    let known = tinyagents_tools::ToolCall::new("functions.get_location:1", "get_location", "{}");
    for format in [
        TextFormat::hermes(),
        TextFormat::kimi_k2(),
        TextFormat::glm45(),
        TextFormat::pythonic(),
    ] {
        let output = format.render_calls(&[unknown.clone(), known.clone()]);
        let names: Vec<String> = calls(&everywhere(&format, &output))
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(names, ["no_such_tool", "get_location"], "{}", format.name);
    }
}

/// llama.cpp #14101: only the first of parallel calls was parsed.
#[test]
fn llama_cpp_14101_every_parallel_call_is_parsed() {
    let output = "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}; \
                  {\"name\": \"get_weather\", \"parameters\": {\"city\": \"Tokyo\"}}; \
                  {\"name\": \"get_location\", \"parameters\": {}}";
    let out = everywhere(&TextFormat::llama3_json(), output);
    assert_eq!(out.calls().count(), 3);
    let qwen = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>\n\
                <tool_call>\n<function=get_weather>\n<parameter=city>\nTokyo\n</parameter>\n</function>\n</tool_call>";
    let out = everywhere_with(|| reader(&TextFormat::qwen3_coder()), qwen, 16);
    assert_eq!(
        calls(&out),
        [
            ("get_weather".to_owned(), json!({"city": "Paris"})),
            ("get_weather".to_owned(), json!({"city": "Tokyo"}))
        ]
    );
}
