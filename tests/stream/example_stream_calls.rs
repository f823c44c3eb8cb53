//! The `stream_calls` example as a person runs it (`CARGO_BIN_EXE_stream-calls`,
//! the example's own file): one model turn on stdin, one JSON object a line
//! on stdout, for every format; the same lines for every `--chunk` (the
//! text and reasoning lines may be cut differently, never their
//! concatenation); the grammars and instructions the library writes; exit 2
//! for a bad command line.
//!
//! The expected lines are written from each format's published shape (its
//! chat template, its parser's documentation, the provider's stream
//! reference), as in `text_formats.rs` and `native_*.rs`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};
use tempfile::TempDir;
use tinyagents_tools::stream::grammar::Grammar;
use tinyagents_tools::stream::text::{FORMAT_NAMES, TextFormat};
use tinyagents_tools::{ToolSchema, ToolSpec};

/// The chunk sizes every input is read with.
const CHUNKS: [&str; 4] = ["0", "1", "3", "7"];

/// The tag pair of the seed framework.
const TAGS: &str = "tags:[TOOL_CALL],[/TOOL_CALL]";

/// The tools of the turn, as a `--tools` file holds them.
fn tools_json() -> Value {
    json!([
        {
            "name": "get_weather",
            "description": "Current weather for a city.",
            "input_schema": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "days": {"type": "integer"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}
                },
                "required": ["city"],
                "additionalProperties": false
            }
        },
        {
            "name": "get_location",
            "description": "Where the user is.",
            "input_schema": {"type": "object", "properties": {}}
        }
    ])
}

/// The same tools as the library takes them.
fn tool_specs() -> Vec<ToolSpec> {
    tools_json()
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            ToolSpec::builder(
                t["name"].as_str().unwrap(),
                t["description"].as_str().unwrap(),
            )
            .input_schema(ToolSchema::from_value(t["input_schema"].clone()))
            .build()
            .unwrap()
        })
        .collect()
}

/// A directory holding `tools.json` ([`tools_json`]).
struct Files {
    dir: TempDir,
}

impl Files {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("tools.json"), tools_json().to_string()).unwrap();
        Files { dir }
    }

    fn tools(&self) -> PathBuf {
        self.dir.path().join("tools.json")
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    }
}

/// Runs the example with `args` and `stdin`.
fn run(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_stream-calls"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The example may exit before it reads (a bad command line): a closed
    // pipe is then no error of the test.
    let _ = child.stdin.take().unwrap().write_all(stdin);
    child.wait_with_output().unwrap()
}

/// The lines of a successful run, each parsed.
fn lines(out: &Output) -> Vec<Value> {
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// `lines` with each run of `text` lines joined into one, and of
/// `reasoning` lines too: what every chunking must agree on.
fn joined(lines: Vec<Value>) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for line in lines {
        for key in ["text", "reasoning"] {
            if let Some(piece) = line.get(key).and_then(Value::as_str) {
                assert!(!piece.is_empty(), "an empty {key} line");
            }
        }
        let merged = match (out.last_mut(), &line) {
            (Some(last), line) => ["text", "reasoning"].into_iter().any(|key| {
                match (last.get(key).and_then(Value::as_str), line.get(key)) {
                    (Some(before), Some(Value::String(piece))) => {
                        *last = json!({ key: format!("{before}{piece}") });
                        true
                    }
                    _ => false,
                }
            }),
            (None, _) => false,
        };
        if !merged {
            out.push(line);
        }
    }
    out
}

/// Reads `input` in `format` with the test's tools at every chunk size:
/// the joined lines of each run equal `expected`.
fn assert_reads(files: &Files, format: &str, input: &str, expected: &[Value]) {
    let tools = files.tools();
    for chunk in CHUNKS {
        let args = [
            "--format",
            format,
            "--tools",
            tools.to_str().unwrap(),
            "--chunk",
            chunk,
        ];
        let got = joined(lines(&run(&args, input.as_bytes())));
        assert_eq!(
            got, expected,
            "--format {format} --chunk {chunk} of {input:?}"
        );
    }
}

fn text(s: &str) -> Value {
    json!({ "text": s })
}

fn reasoning(s: &str) -> Value {
    json!({ "reasoning": s })
}

fn call(id: &str, name: &str, arguments: Value) -> Value {
    json!({"call": {"id": id, "name": name, "arguments": arguments}})
}

fn error(kind: &str, raw: &str) -> Value {
    json!({"error": {"kind": kind, "raw": raw}})
}

fn error_of(kind: &str, raw: &str, id: &str, name: &str) -> Value {
    json!({"error": {"kind": kind, "raw": raw, "id": id, "name": name}})
}

fn truncated(raw: &str) -> Value {
    json!({"truncated": {"raw": raw}})
}

fn done(calls: usize) -> Value {
    json!({"done": {"calls": calls}})
}

#[test]
fn hermes_reads_reasoning_text_parallel_calls_and_bad_calls() {
    let files = Files::new();
    assert_reads(
        &files,
        "hermes",
        "<think>Paris?</think>Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \
         \"arguments\": {\"city\": \"Paris\", \"days\": 2}}\n</tool_call>\n<tool_call>\n\
         {\"name\": \"get_location\", \"arguments\": {}}\n</tool_call>",
        &[
            reasoning("Paris?"),
            text("Let me check.\n"),
            call(
                "text-call-0",
                "get_weather",
                json!({"city": "Paris", "days": 2}),
            ),
            text("\n"),
            call("text-call-1", "get_location", json!({})),
            done(2),
        ],
    );
    // An unknown tool is still a call: the executor refuses it by its id.
    assert_reads(
        &files,
        "hermes",
        "<tool_call>{\"name\": \"book_flight\", \"arguments\": {\"to\": \"Oslo\"}}</tool_call>",
        &[
            call("text-call-0", "book_flight", json!({"to": "Oslo"})),
            done(1),
        ],
    );
    // A call cut off by the end of the output is neither run nor text.
    assert_reads(
        &files,
        "hermes",
        "Sure.<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Par",
        &[
            text("Sure."),
            truncated("<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Par"),
            done(0),
        ],
    );
}

#[test]
fn hermes_call_markup_inside_reasoning_or_a_string_is_not_a_call() {
    let files = Files::new();
    assert_reads(
        &files,
        "hermes",
        "<think>maybe <tool_call>{\"name\": \"get_location\", \"arguments\": {}}</tool_call>?</think>\
         <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"a</tool_call>b\"}}</tool_call>",
        &[
            reasoning(
                "maybe <tool_call>{\"name\": \"get_location\", \"arguments\": {}}</tool_call>?",
            ),
            call(
                "text-call-0",
                "get_weather",
                json!({"city": "a</tool_call>b"}),
            ),
            done(1),
        ],
    );
}

#[test]
fn tags_read_the_seed_framework_s_args() {
    let files = Files::new();
    assert_reads(
        &files,
        TAGS,
        "Ok [TOOL_CALL]{\"name\": \"get_weather\", \"args\": {\"city\": \"Paris\"}}[/TOOL_CALL] done",
        &[
            text("Ok "),
            call("text-call-0", "get_weather", json!({"city": "Paris"})),
            text(" done"),
            done(1),
        ],
    );
}

#[test]
fn qwen3_coder_reads_raw_parameters_typed_by_the_schema() {
    let files = Files::new();
    assert_reads(
        &files,
        "qwen3-coder",
        "On it.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nNew York\n</parameter>\n\
         <parameter=days>\n3\n</parameter>\n</function>\n</tool_call>",
        &[
            text("On it.\n"),
            call(
                "text-call-0",
                "get_weather",
                json!({"city": "New York", "days": 3}),
            ),
            done(1),
        ],
    );
    assert_reads(
        &files,
        "qwen3-coder",
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nNew",
        &[
            truncated("<tool_call>\n<function=get_weather>\n<parameter=city>\nNew"),
            done(0),
        ],
    );
}

#[test]
fn qwen3_coder_reads_the_calls_ollama_s_issues_quote_without_their_opener() {
    let files = Files::new();
    // Ollama's issue #16686, word for word.
    assert_reads(
        &files,
        "qwen3-coder",
        "I'll use the Glob tool to list all markdown files in the current directory.\n\n\
         <function=Glob>\n<parameter=pattern>\n*.md\n</parameter>\n</function>\n</tool_call>",
        &[
            text("I'll use the Glob tool to list all markdown files in the current directory.\n\n"),
            call("text-call-0", "Glob", json!({"pattern": "*.md"})),
            done(1),
        ],
    );
    assert_reads(
        &files,
        "qwen3-coder",
        "<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>",
        &[
            call("text-call-0", "get_weather", json!({"city": "Paris"})),
            done(1),
        ],
    );
}

#[test]
fn glm45_reads_key_value_pairs() {
    let files = Files::new();
    assert_reads(
        &files,
        "glm45",
        "<think>hm</think>\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Beijing\
         </arg_value>\n<arg_key>days</arg_key>\n<arg_value>2</arg_value>\n</tool_call>",
        &[
            reasoning("hm"),
            text("\n"),
            call(
                "text-call-0",
                "get_weather",
                json!({"city": "Beijing", "days": 2}),
            ),
            done(1),
        ],
    );
}

#[test]
fn llama3_json_reads_calls_at_the_start_and_after_the_python_tag() {
    let files = Files::new();
    assert_reads(
        &files,
        "llama3-json",
        "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}; \
         {\"name\": \"get_location\", \"parameters\": {}}",
        &[
            call("text-call-0", "get_weather", json!({"city": "Paris"})),
            call("text-call-1", "get_location", json!({})),
            done(2),
        ],
    );
    // JSON in the middle of an answer is text.
    assert_reads(
        &files,
        "llama3-json",
        "The answer is {\"name\": \"x\"}",
        &[text("The answer is {\"name\": \"x\"}"), done(0)],
    );
    assert_reads(
        &files,
        "llama3-json",
        "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Par",
        &[
            truncated("<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Par"),
            done(0),
        ],
    );
}

#[test]
fn pythonic_reads_a_bare_list_and_a_wrapped_one() {
    let files = Files::new();
    assert_reads(
        &files,
        "pythonic",
        "[get_weather(city=\"Paris\", days=2), get_location()]",
        &[
            call(
                "text-call-0",
                "get_weather",
                json!({"city": "Paris", "days": 2}),
            ),
            call("text-call-1", "get_location", json!({})),
            done(2),
        ],
    );
    assert_reads(
        &files,
        "pythonic",
        "Here: <|python_start|>[get_weather(city='Oslo')]<|python_end|> done",
        &[
            text("Here: "),
            call("text-call-0", "get_weather", json!({"city": "Oslo"})),
            text(" done"),
            done(1),
        ],
    );
    // A bare name is no Python literal: an error with the call's id and
    // name, so the executor still answers it.
    let lines = lines(&run(
        &[
            "--format",
            "pythonic",
            "--tools",
            Files::new().tools().to_str().unwrap(),
        ],
        b"[get_weather(city=Paris)]",
    ));
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0]["error"]["kind"], "malformed_arguments");
    assert_eq!(lines[0]["error"]["id"], "text-call-0");
    assert_eq!(lines[0]["error"]["name"], "get_weather");
    assert!(
        lines[0]["error"]["raw"]
            .as_str()
            .unwrap()
            .contains("get_weather(city=Paris)"),
        "{lines:?}"
    );
    assert_eq!(lines[1], done(0));
}

#[test]
fn mistral_reads_the_json_array_with_its_ids() {
    let files = Files::new();
    assert_reads(
        &files,
        "mistral",
        "[TOOL_CALLS] [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}, \"id\": \
         \"abc123def\"}, {\"name\": \"get_location\", \"arguments\": {}, \"id\": \"xyz987uvw\"}]",
        &[
            call("abc123def", "get_weather", json!({"city": "Paris"})),
            call("xyz987uvw", "get_location", json!({})),
            done(2),
        ],
    );
    assert_reads(
        &files,
        "mistral",
        "[TOOL_CALLS] [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"",
        &[
            truncated(
                "[TOOL_CALLS] [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"",
            ),
            done(0),
        ],
    );
}

#[test]
fn mistral_v11_reads_think_call_ids_and_one_call_per_marker() {
    let files = Files::new();
    assert_reads(
        &files,
        "mistral-v11",
        "[THINK]Weather first.[/THINK]Checking.[TOOL_CALLS]get_weather[CALL_ID]a1b2c3d4e[ARGS]\
         {\"city\": \"Paris\"}[TOOL_CALLS]get_location[ARGS]{}",
        &[
            reasoning("Weather first."),
            text("Checking."),
            call("a1b2c3d4e", "get_weather", json!({"city": "Paris"})),
            call("text-call-1", "get_location", json!({})),
            done(2),
        ],
    );
    let raw = "[TOOL_CALLS]get_weather[CALL_ID]a1b2c3d4e[ARGS]{\"city\": Paris}";
    assert_reads(
        &files,
        "mistral-v11",
        raw,
        &[
            error_of("malformed_arguments", raw, "a1b2c3d4e", "get_weather"),
            done(0),
        ],
    );
}

#[test]
fn deepseek_v3_reads_fenced_json() {
    let files = Files::new();
    assert_reads(
        &files,
        "deepseek-v3",
        "<think>ok</think>Let me look.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function\
         <｜tool▁sep｜>get_weather\n```json\n{\"city\": \"Paris\"}\n```<｜tool▁call▁end｜>\
         <｜tool▁calls▁end｜>",
        &[
            reasoning("ok"),
            text("Let me look."),
            call("text-call-0", "get_weather", json!({"city": "Paris"})),
            done(1),
        ],
    );
}

#[test]
fn deepseek_v31_reads_bare_json() {
    let files = Files::new();
    assert_reads(
        &files,
        "deepseek-v31",
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"city\": \"Paris\"}\
         <｜tool▁call▁end｜><｜tool▁call▁begin｜>get_location<｜tool▁sep｜>{}<｜tool▁call▁end｜>\
         <｜tool▁calls▁end｜>",
        &[
            call("text-call-0", "get_weather", json!({"city": "Paris"})),
            call("text-call-1", "get_location", json!({})),
            done(2),
        ],
    );
    let cut =
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"city\": \"Par";
    assert_reads(&files, "deepseek-v31", cut, &[truncated(cut), done(0)]);
}

#[test]
fn kimi_k2_takes_functions_name_index_as_the_id() {
    let files = Files::new();
    assert_reads(
        &files,
        "kimi-k2",
        "Checking.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0\
         <|tool_call_argument_begin|>{\"city\": \"Paris\"}<|tool_call_end|><|tool_call_begin|>\
         functions.get_location:1<|tool_call_argument_begin|>{}<|tool_call_end|>\
         <|tool_calls_section_end|>",
        &[
            text("Checking."),
            call(
                "functions.get_weather:0",
                "get_weather",
                json!({"city": "Paris"}),
            ),
            call("functions.get_location:1", "get_location", json!({})),
            done(2),
        ],
    );
    // A bad call keeps its id and name; the good one after it still runs.
    let lines = joined(lines(&run(
        &[
            "--format",
            "kimi-k2",
            "--tools",
            files.tools().to_str().unwrap(),
        ],
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0\
         <|tool_call_argument_begin|>{\"city\" \"Paris\"}<|tool_call_end|><|tool_call_begin|>\
         functions.get_location:1<|tool_call_argument_begin|>{}<|tool_call_end|>\
         <|tool_calls_section_end|>"
            .as_bytes(),
    )));
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_eq!(lines[0]["error"]["kind"], "malformed_arguments");
    assert_eq!(lines[0]["error"]["id"], "functions.get_weather:0");
    assert_eq!(lines[0]["error"]["name"], "get_weather");
    assert!(
        lines[0]["error"]["raw"]
            .as_str()
            .unwrap()
            .contains("{\"city\" \"Paris\"}"),
        "{lines:?}"
    );
    assert_eq!(
        lines[1],
        call("functions.get_location:1", "get_location", json!({}))
    );
    assert_eq!(lines[2], done(1));
}

#[test]
fn harmony_reads_the_format_document_s_messages() {
    let files = Files::new();
    // The recipient after the channel, `<|constrain|>json`.
    assert_reads(
        &files,
        "harmony",
        "<|channel|>analysis<|message|>Need the weather.<|end|><|start|>assistant<|channel|>\
         commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\":\"San Francisco\"}\
         <|call|>",
        &[
            reasoning("Need the weather."),
            call(
                "text-call-0",
                "get_weather",
                json!({"city": "San Francisco"}),
            ),
            done(1),
        ],
    );
    // A final answer is text.
    assert_reads(
        &files,
        "harmony",
        "<|channel|>analysis<|message|>Easy.<|end|><|start|>assistant<|channel|>final\
         <|message|>4<|return|>",
        &[reasoning("Easy."), text("4"), done(0)],
    );
    // The recipient in the role part, `json` without `<|constrain|>`, cut.
    let cut = "<|start|>assistant to=functions.get_weather<|channel|>commentary json<|message|>\
               {\"city\": \"Paris\"";
    assert_reads(&files, "harmony", cut, &[truncated(cut), done(0)]);
}

/// One provider event a line.
fn event_lines(events: &[Value]) -> String {
    events.iter().map(|e| format!("{e}\n")).collect()
}

#[test]
fn openai_chat_reads_reasoning_content_text_and_calls() {
    let files = Files::new();
    let input = event_lines(&[
        json!({"choices": [{"index": 0, "delta": {"role": "assistant", "reasoning_content": "Think "}}]}),
        json!({"choices": [{"index": 0, "delta": {"reasoning_content": "twice."}}]}),
        json!({"choices": [{"index": 0, "delta": {"content": "Hi "}}]}),
        json!({"choices": [{"index": 0, "delta": {"content": "there."}}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_1",
            "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":"}}]}}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0,
            "function": {"arguments": " \"Paris\"}"}}]}}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 1, "id": "call_2",
            "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": Par}"}}]}}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
    ]) + "data: [DONE]\n";
    assert_reads(
        &files,
        "openai-chat",
        &input,
        &[
            reasoning("Think twice."),
            text("Hi there."),
            call("call_1", "get_weather", json!({"city": "Paris"})),
            error_of(
                "malformed_arguments",
                "{\"city\": Par}",
                "call_2",
                "get_weather",
            ),
            done(1),
        ],
    );
}

#[test]
fn openai_chat_cut_at_the_token_limit_is_truncated() {
    let files = Files::new();
    let input = event_lines(&[
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_1",
            "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Pa"}}]}}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]}),
    ]);
    assert_reads(
        &files,
        "openai-chat",
        &input,
        &[truncated("{\"city\": \"Pa"), done(0)],
    );
}

#[test]
fn openai_responses_reads_the_reasoning_summary_text_and_calls() {
    let files = Files::new();
    let call_item = json!({"type": "function_call", "id": "fc_1", "call_id": "call_1",
        "name": "get_weather", "arguments": "{\"city\":\"Paris\"}", "status": "completed"});
    let input = event_lines(&[
        json!({"type": "response.created", "sequence_number": 0,
            "response": {"id": "resp_1", "object": "response", "status": "in_progress", "output": []}}),
        json!({"type": "response.output_item.added", "sequence_number": 1, "output_index": 0,
            "item": {"type": "reasoning", "id": "rs_1", "summary": []}}),
        json!({"type": "response.reasoning_summary_text.delta", "sequence_number": 2,
            "item_id": "rs_1", "output_index": 0, "summary_index": 0, "delta": "Plan: "}),
        json!({"type": "response.reasoning_summary_text.delta", "sequence_number": 3,
            "item_id": "rs_1", "output_index": 0, "summary_index": 0, "delta": "look it up."}),
        json!({"type": "response.output_item.done", "sequence_number": 4, "output_index": 0,
            "item": {"type": "reasoning", "id": "rs_1",
                "summary": [{"type": "summary_text", "text": "Plan: look it up."}]}}),
        json!({"type": "response.output_item.added", "sequence_number": 5, "output_index": 1,
            "item": {"type": "message", "id": "msg_1", "role": "assistant", "status": "in_progress", "content": []}}),
        json!({"type": "response.content_part.added", "sequence_number": 6, "item_id": "msg_1",
            "output_index": 1, "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}}),
        json!({"type": "response.output_text.delta", "sequence_number": 7, "item_id": "msg_1",
            "output_index": 1, "content_index": 0, "delta": "Sure."}),
        json!({"type": "response.output_item.done", "sequence_number": 8, "output_index": 1,
            "item": {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": "Sure.", "annotations": []}]}}),
        json!({"type": "response.output_item.added", "sequence_number": 9, "output_index": 2,
            "item": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather",
                "arguments": "", "status": "in_progress"}}),
        json!({"type": "response.function_call_arguments.delta", "sequence_number": 10,
            "item_id": "fc_1", "output_index": 2, "delta": "{\"city\":"}),
        json!({"type": "response.function_call_arguments.delta", "sequence_number": 11,
            "item_id": "fc_1", "output_index": 2, "delta": "\"Paris\"}"}),
        json!({"type": "response.function_call_arguments.done", "sequence_number": 12,
            "item_id": "fc_1", "output_index": 2, "arguments": "{\"city\":\"Paris\"}"}),
        json!({"type": "response.output_item.done", "sequence_number": 13, "output_index": 2, "item": call_item}),
        json!({"type": "response.completed", "sequence_number": 14,
            "response": {"id": "resp_1", "object": "response", "status": "completed", "output": []}}),
    ]);
    assert_reads(
        &files,
        "openai-responses",
        &input,
        &[
            reasoning("Plan: look it up."),
            text("Sure."),
            call("call_1", "get_weather", json!({"city": "Paris"})),
            done(1),
        ],
    );
}

#[test]
fn anthropic_reads_thinking_without_its_signature_text_and_tool_use() {
    let files = Files::new();
    let input = event_lines(&[
        json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
            "content": [], "stop_reason": null, "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "Paris, "}}),
        json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "thinking_delta", "thinking": "then."}}),
        json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "signature_delta", "signature": "EqQBCgIYAhIM"}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
        json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Checking."}}),
        json!({"type": "content_block_stop", "index": 1}),
        json!({"type": "content_block_start", "index": 2,
            "content_block": {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}}),
        json!({"type": "content_block_delta", "index": 2,
            "delta": {"type": "input_json_delta", "partial_json": "{\"city\": \"Pa"}}),
        json!({"type": "content_block_delta", "index": 2,
            "delta": {"type": "input_json_delta", "partial_json": "ris\"}"}}),
        json!({"type": "content_block_stop", "index": 2}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 30}}),
        json!({"type": "message_stop"}),
    ]);
    let expected = [
        reasoning("Paris, then."),
        text("Checking."),
        call("toolu_1", "get_weather", json!({"city": "Paris"})),
        done(1),
    ];
    assert_reads(&files, "anthropic", &input, &expected);
    // The signature is nowhere in the output.
    let out = run(&["--format", "anthropic"], input.as_bytes());
    assert!(!String::from_utf8_lossy(&out.stdout).contains("EqQBCgIYAhIM"));
}

#[test]
fn gemini_reads_thought_parts_text_and_function_calls() {
    let files = Files::new();
    let input = event_lines(&[
        json!({"candidates": [{"content": {"role": "model", "parts": [
            {"text": "Two cities.", "thought": true}]}, "index": 0}]}),
        json!({"candidates": [{"content": {"role": "model", "parts": [
            {"text": "Looking "}]}, "index": 0}]}),
        json!({"candidates": [{"content": {"role": "model", "parts": [
            {"text": "up."},
            {"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}},
            {"functionCall": {"name": "get_location", "args": {}}}]}, "index": 0}]}),
        json!({"candidates": [{"content": {"role": "model", "parts": [{"text": ""}]},
            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 9}}),
    ]);
    assert_reads(
        &files,
        "gemini",
        &input,
        &[
            reasoning("Two cities."),
            text("Looking up."),
            call(
                "gemini-call-0-0-get_weather",
                "get_weather",
                json!({"city": "Paris"}),
            ),
            call("gemini-call-0-1-get_location", "get_location", json!({})),
            done(2),
        ],
    );
}

#[test]
fn bad_provider_lines_are_error_lines_and_the_good_ones_still_count() {
    let files = Files::new();
    let input = format!(
        "not json\n{}\n",
        json!({"type": "content_block_delta", "index": 7,
            "delta": {"type": "text_delta", "text": "lost"}})
    ) + &event_lines(&[
        json!({"type": "message_start", "message": {"id": "msg_1", "content": [], "usage": {}}}),
        json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "tool_use", "id": "toolu_1", "name": "get_location", "input": {}}}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}}),
        json!({"type": "message_stop"}),
    ]);
    for chunk in CHUNKS {
        let lines = lines(&run(
            &[
                "--format",
                "anthropic",
                "--tools",
                files.tools().to_str().unwrap(),
                "--chunk",
                chunk,
            ],
            input.as_bytes(),
        ));
        assert_eq!(lines.len(), 4, "--chunk {chunk}: {lines:?}");
        assert_eq!(
            lines[0],
            error("malformed_event", "not json"),
            "--chunk {chunk}"
        );
        assert!(
            lines[1]["error"]["kind"].is_string(),
            "--chunk {chunk}: {lines:?}"
        );
        assert!(
            lines[1]["error"]["raw"].as_str().unwrap().contains("lost"),
            "--chunk {chunk}: {lines:?}"
        );
        assert_eq!(
            lines[2],
            call("toolu_1", "get_location", json!({})),
            "--chunk {chunk}"
        );
        assert_eq!(lines[3], done(1), "--chunk {chunk}");
    }
}

#[test]
fn bad_text_bytes_are_error_lines_not_a_failure() {
    let files = Files::new();
    let mut input = b"caf\xc3".to_vec();
    input.extend_from_slice(
        b"<tool_call>{\"name\": \"get_location\", \"arguments\": {}}</tool_call>\xff!",
    );
    let mut seen = None;
    for chunk in CHUNKS {
        let got = joined(lines(&run(
            &[
                "--format",
                "hermes",
                "--tools",
                files.tools().to_str().unwrap(),
                "--chunk",
                chunk,
            ],
            &input,
        )));
        let kinds: Vec<&str> = got
            .iter()
            .filter_map(|l| l["error"]["kind"].as_str())
            .collect();
        assert!(
            !kinds.is_empty() && kinds.iter().all(|k| *k == "invalid_utf8"),
            "{got:?}"
        );
        assert!(
            got.contains(&call("text-call-0", "get_location", json!({}))),
            "{got:?}"
        );
        assert_eq!(got.last(), Some(&done(1)));
        // A problem of the stream is tied to no place in the output: the
        // calls, the problems and the whole text must agree, each apart.
        let text: String = got.iter().filter_map(|l| l["text"].as_str()).collect();
        assert_eq!(text, "caf\u{fffd}\u{fffd}!", "--chunk {chunk}");
        let others: (Vec<Value>, Vec<Value>) = got
            .into_iter()
            .filter(|l| l.get("text").is_none())
            .partition(|l| l.get("error").is_some());
        match &seen {
            None => seen = Some(others),
            Some(first) => assert_eq!(&others, first, "--chunk {chunk}"),
        }
    }
}

#[test]
fn the_recorded_provider_streams_read_the_same_at_every_chunk_size() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/streams");
    for (format, file, calls) in [
        ("openai-chat", "openai_chat.sse", 2),
        ("openai-responses", "openai_responses.sse", 2),
        ("anthropic", "anthropic.sse", 3),
        ("gemini", "gemini.sse", 2),
    ] {
        let input = std::fs::read(fixtures.join(file)).unwrap();
        let whole = joined(lines(&run(&["--format", format], &input)));
        assert_eq!(whole.last(), Some(&done(calls)), "{file}: {whole:?}");
        let call_lines = whole.iter().filter(|l| l.get("call").is_some()).count();
        assert_eq!(call_lines, calls, "{file}");
        assert!(
            whole.iter().all(|l| l.get("error").is_none()),
            "{file}: {whole:?}"
        );
        for chunk in &CHUNKS[1..] {
            let got = joined(lines(&run(&["--format", format, "--chunk", chunk], &input)));
            assert_eq!(got, whole, "{file} --chunk {chunk}");
        }
    }
}

#[test]
fn without_tools_the_quickstart_s_tools_type_the_values() {
    // `calculate`'s `a` and `b` are numbers: a raw `6` is the number 6.
    let input = "<tool_call>\n<function=calculate>\n<parameter=a>\n6\n</parameter>\n\
                 <parameter=op>\nmultiply\n</parameter>\n<parameter=b>\n7\n</parameter>\n\
                 </function>\n</tool_call>";
    let got = lines(&run(&["--format", "qwen3-coder"], input.as_bytes()));
    assert_eq!(
        got,
        [
            call(
                "text-call-0",
                "calculate",
                json!({"a": 6, "op": "multiply", "b": 7})
            ),
            done(1)
        ]
    );
}

fn exit_2(args: &[&str]) -> String {
    let out = run(args, b"");
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    assert!(out.stdout.is_empty(), "{args:?}");
    String::from_utf8(out.stderr).unwrap()
}

#[test]
fn a_bad_command_line_exits_2_saying_why() {
    let files = Files::new();
    let tools = files.tools();
    let tools = tools.to_str().unwrap();
    let stderr = exit_2(&["--format", "llama5"]);
    assert!(stderr.contains("llama5"), "{stderr}");
    assert!(exit_2(&[]).contains("--format"));
    assert!(exit_2(&["--format"]).contains("--format needs a value"));
    assert!(exit_2(&["--format", "tags:<a>"]).contains("tags:START,END"));
    for chunk in ["-1", "x", "1.5", ""] {
        let stderr = exit_2(&["--format", "hermes", "--chunk", chunk]);
        assert!(stderr.contains("--chunk"), "{chunk:?}: {stderr}");
    }
    assert!(exit_2(&["--format", "hermes", "--grammar", "regex"]).contains("regex"));
    assert!(exit_2(&["--format", "hermes", "--verbose"]).contains("--verbose"));
    assert!(exit_2(&["--format", "hermes", "--format", "glm45"]).contains("twice"));
    assert!(
        exit_2(&["--format", "hermes", "--instruction", "--grammar", "lark"]).contains("one of")
    );
    // Native formats have no system-prompt instruction, and their calls are
    // constrained by the provider.
    let stderr = exit_2(&["--format", "anthropic", "--instruction"]);
    assert!(stderr.contains("anthropic"), "{stderr}");
    let stderr = exit_2(&["--format", "gemini", "--tools", tools, "--grammar", "gbnf"]);
    assert!(stderr.contains("gemini"), "{stderr}");
}

#[test]
fn a_tools_file_that_cannot_be_read_or_is_not_the_array_exits_2() {
    let files = Files::new();
    let missing = files.dir.path().join("missing.json");
    let stderr = exit_2(&["--format", "hermes", "--tools", missing.to_str().unwrap()]);
    assert!(stderr.contains("missing.json"), "{stderr}");
    for (name, text) in [
        ("not_json.json", "[{\"name\": "),
        ("object.json", "{\"name\": \"get_weather\"}"),
        ("strings.json", "[\"get_weather\"]"),
        ("no_name.json", "[{\"description\": \"x\"}]"),
        ("typo.json", "[{\"name\": \"f\", \"inputSchema\": {}}]"),
        ("bad_name.json", "[{\"name\": \"has space\"}]"),
        ("twice.json", "[{\"name\": \"f\"}, {\"name\": \"f\"}]"),
    ] {
        let path = files.write(name, text);
        let stderr = exit_2(&["--format", "hermes", "--tools", path.to_str().unwrap()]);
        assert!(stderr.contains(name), "{name}: {stderr}");
    }
    // The same checks hold whatever is asked.
    let path = files.write("object2.json", "{}");
    exit_2(&[
        "--format",
        "hermes",
        "--tools",
        path.to_str().unwrap(),
        "--instruction",
    ]);
    exit_2(&["--format", "openai-chat", "--tools", path.to_str().unwrap()]);
}

/// Every text format's name, the tag pair included.
fn text_formats() -> Vec<String> {
    let mut names: Vec<String> = FORMAT_NAMES.iter().map(|n| (*n).to_owned()).collect();
    names.push(TAGS.to_owned());
    names
}

#[test]
fn grammar_prints_the_library_s_grammar_byte_for_byte() {
    let files = Files::new();
    let tools = files.tools();
    let specs = tool_specs();
    for name in text_formats() {
        let format = TextFormat::by_name(&name).unwrap();
        for kind in Grammar::ALL {
            let out = run(
                &[
                    "--format",
                    &name,
                    "--tools",
                    tools.to_str().unwrap(),
                    "--grammar",
                    kind.as_str(),
                ],
                b"",
            );
            assert_eq!(out.status.code(), Some(0), "{name} {kind}");
            let expected = kind.text(&format, &specs).unwrap() + "\n";
            assert_eq!(
                String::from_utf8(out.stdout).unwrap(),
                expected,
                "{name} {kind}"
            );
        }
    }
    // The required schema needs no text format.
    let out = run(
        &[
            "--format",
            "openai-chat",
            "--tools",
            tools.to_str().unwrap(),
            "--grammar",
            "required",
        ],
        b"",
    );
    let expected = Grammar::Required
        .text(&TextFormat::hermes(), &specs)
        .unwrap()
        + "\n";
    assert_eq!(String::from_utf8(out.stdout).unwrap(), expected);
}

#[test]
fn grammar_xgrammar_prints_the_golden_structural_tags() {
    // The tool of `grammar_xgrammar.rs`'s golden files.
    let files = Files::new();
    let weather = files.write(
        "weather.json",
        &json!([{
            "name": "get_weather",
            "description": "Current weather for a city.",
            "input_schema": {
                "type": "object",
                "properties": {
                    "city": {"type": "string"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}
                },
                "required": ["city"],
                "additionalProperties": false
            }
        }])
        .to_string(),
    );
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("golden/grammar");
    for name in text_formats() {
        let out = run(
            &[
                "--format",
                &name,
                "--tools",
                weather.to_str().unwrap(),
                "--grammar",
                "xgrammar",
            ],
            b"",
        );
        let file = name.replace(|c: char| !c.is_ascii_alphanumeric() && c != '-', "_");
        let expected =
            std::fs::read_to_string(golden.join(format!("{file}.structural_tag.json"))).unwrap();
        assert_eq!(String::from_utf8(out.stdout).unwrap(), expected, "{name}");
    }
}

#[test]
fn instruction_names_every_tool_for_every_text_format() {
    let files = Files::new();
    let tools = files.tools();
    for name in text_formats() {
        let out = run(
            &[
                "--format",
                &name,
                "--tools",
                tools.to_str().unwrap(),
                "--instruction",
            ],
            b"",
        );
        assert_eq!(out.status.code(), Some(0), "{name}");
        let stdout = String::from_utf8(out.stdout).unwrap();
        for tool in ["get_weather", "get_location", "Current weather for a city."] {
            assert!(stdout.contains(tool), "{name}: no {tool} in {stdout}");
        }
    }
    // Without --tools: the quickstart's four.
    let out = run(&["--format", "hermes", "--instruction"], b"");
    let stdout = String::from_utf8(out.stdout).unwrap();
    for tool in ["search_docs", "write_note", "read_file", "calculate"] {
        assert!(stdout.contains(tool), "no {tool} in {stdout}");
    }
}

#[test]
fn every_format_name_of_the_interface_is_read() {
    let names = [
        "openai-chat",
        "openai-responses",
        "anthropic",
        "gemini",
        "hermes",
        "qwen3-coder",
        "glm45",
        "llama3-json",
        "pythonic",
        "mistral",
        "mistral-v11",
        "deepseek-v3",
        "deepseek-v31",
        "kimi-k2",
        "harmony",
        TAGS,
    ];
    for name in names {
        let got = lines(&run(&["--format", name], b""));
        assert_eq!(got, [done(0)], "{name}");
    }
}
