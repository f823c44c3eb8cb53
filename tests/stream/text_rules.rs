//! The reader's promises, one test each, across formats.

use serde_json::{Value, json};
use tinyagents_tools::call::RawArguments;
use tinyagents_tools::stream::text::TextFormat;
use tinyagents_tools::stream::{
    CallProblem, ModelOutput, OutputPart, OutputReader, StreamEvent, StreamLimits,
    StreamProblemKind,
};
use tinyagents_tools::testkit::{Chunking, FnTool, chunk_bytes};
use tinyagents_tools::{RunContext, ToolExecutor, ToolOutput, ToolRegistry, Turn};

use super::text_formats::{call, reasoning, text, typed};
use super::text_support::{
    argument_texts, calls, everywhere, everywhere_with, ids, reader, tools, whole,
};

fn events_of(format: &TextFormat, pieces: &[&str]) -> Vec<StreamEvent> {
    let mut r = reader(format);
    let mut events = Vec::new();
    for p in pieces {
        r.push(p.as_bytes(), &mut events);
    }
    events
}

fn streamed_text(events: &[StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

// ---- visible text never carries a byte of markup --------------------------

#[test]
fn a_partial_marker_is_held_back_until_the_next_piece_tells() {
    let hermes = TextFormat::hermes();
    let events = events_of(&hermes, &["Hello <tool"]);
    assert_eq!(streamed_text(&events), "Hello ");
    let events = events_of(
        &hermes,
        &["Hello <tool", "_call>{\"name\": \"get_location\""],
    );
    assert_eq!(streamed_text(&events), "Hello ");
    // It was not a marker: the held text goes out as soon as that is known.
    let events = events_of(&hermes, &["Hello <tool", "box> ok"]);
    assert_eq!(streamed_text(&events), "Hello <toolbox> ok");
}

#[test]
fn a_full_width_marker_cut_inside_its_utf8_sequences_is_never_shown() {
    let format = TextFormat::deepseek_v31();
    let output = "Looking.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_location<｜tool▁sep｜>{}\
                  <｜tool▁call▁end｜><｜tool▁calls▁end｜>";
    for chunking in [Chunking::ONE, Chunking::Fixed(2), Chunking::Fixed(5)] {
        let mut r = reader(&format);
        let mut events = Vec::new();
        for piece in chunk_bytes(output.as_bytes(), chunking) {
            r.push(piece, &mut events);
            let shown = streamed_text(&events);
            assert!(
                "Looking.".starts_with(shown.as_str()),
                "{chunking:?}: {shown:?}"
            );
        }
        r.finish(&mut events);
        assert_eq!(streamed_text(&events), "Looking.");
    }
}

#[test]
fn text_that_only_looks_like_the_start_of_a_marker_is_passed_on_as_written() {
    let out = everywhere(
        &TextFormat::hermes(),
        "a < b, <tool> and <tool_calls are not calls <",
    );
    assert_eq!(
        out.parts,
        vec![text("a < b, <tool> and <tool_calls are not calls <")]
    );
}

// ---- reasoning first -------------------------------------------------------

#[test]
fn call_markup_inside_reasoning_stays_reasoning_and_is_never_a_call() {
    let hermes = "<think>Maybe <tool_call>{\"name\": \"get_location\", \"arguments\": {}}</tool_call>? No.</think>Hi.";
    let out = everywhere(&TextFormat::hermes(), hermes);
    assert_eq!(
        out.parts,
        vec![
            reasoning(
                "Maybe <tool_call>{\"name\": \"get_location\", \"arguments\": {}}</tool_call>? No."
            ),
            text("Hi."),
        ]
    );
    let mistral = "[THINK]try [TOOL_CALLS]get_location[ARGS]{}[/THINK]ok";
    let out = everywhere(&TextFormat::mistral_v11(), mistral);
    assert_eq!(
        out.parts,
        vec![
            reasoning("try [TOOL_CALLS]get_location[ARGS]{}"),
            text("ok")
        ]
    );
    let harmony = "<|channel|>analysis<|message|>call it: to=functions.get_location <|constrain|>json<|message|>{}<|end|>\
                   <|start|>assistant<|channel|>final<|message|>done<|return|>";
    let out = everywhere(&TextFormat::harmony(), harmony);
    assert_eq!(
        out.parts,
        vec![
            reasoning("call it: to=functions.get_location <|constrain|>json<|message|>{}"),
            text("done"),
        ]
    );
}

#[test]
fn output_that_begins_inside_reasoning_is_reasoning_up_to_its_end_marker() {
    let format = TextFormat::hermes();
    let output = "plan <tool_call> later</think>\nAnswer.";
    let out = everywhere_with(|| reader(&format).starting_in_reasoning(), output, 8);
    assert_eq!(
        out.parts,
        vec![reasoning("plan <tool_call> later"), text("\nAnswer.")]
    );
    let harmony = TextFormat::harmony();
    let out = everywhere_with(
        || reader(&harmony).starting_in_reasoning(),
        "thinking<|end|><|start|>assistant<|channel|>final<|message|>4<|return|>",
        8,
    );
    assert_eq!(out.parts, vec![reasoning("thinking"), text("4")]);
}

// ---- typed by the schema -----------------------------------------------------

#[test]
fn raw_parameter_values_are_typed_by_the_tool_s_schema_and_then_validated_by_the_executor() {
    let output = "<tool_call>\n<function=get_weather>\n<parameter=city>\n1984\n</parameter>\n\
                  <parameter=days>\n3\n</parameter>\n</function>\n</tool_call>\
                  <tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n\
                  <parameter=days>\nthree\n</parameter>\n</function>\n</tool_call>";
    let out = everywhere(&TextFormat::qwen3_coder(), output);
    assert_eq!(
        calls(&out),
        vec![
            ("get_weather".to_owned(), json!({"city": "1984", "days": 3})),
            // Not an integer: kept as the string, for the executor to refuse.
            (
                "get_weather".to_owned(),
                json!({"city": "Paris", "days": "three"})
            ),
        ]
    );
    let results = run(out.calls().cloned().collect());
    assert!(!results[0].is_error, "{:?}", results[0].message);
    assert!(results[1].is_error);
    assert_eq!(results[1].message.tool_call_id.as_str(), "text-call-1");
}

/// Runs `calls` through an executor whose tools echo their arguments.
fn run(calls: Vec<tinyagents_tools::ToolCall>) -> Vec<tinyagents_tools::ToolResult> {
    let mut registry = ToolRegistry::new();
    for spec in tools() {
        registry
            .register(FnTool::new(spec, |_, args: Value| {
                Box::pin(async move { Ok(ToolOutput::structured(args)) })
            }))
            .unwrap();
    }
    let executor = ToolExecutor::builder(registry, ()).build().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(executor.execute_batch(&RunContext::builder(()).build(), &Turn::new(1), calls))
}

// ---- nothing silently dropped ----------------------------------------------

#[test]
fn an_unknown_tool_name_is_still_a_call_and_the_executor_refuses_it_with_its_id() {
    let out = everywhere(
        &TextFormat::hermes(),
        "<tool_call>{\"name\": \"rm_rf\", \"arguments\": {}}</tool_call><tool_call>{\"name\": \"get_location\", \
         \"arguments\": {}}</tool_call>",
    );
    assert_eq!(ids(&out), ["text-call-0", "text-call-1"]);
    let results = run(out.calls().cloned().collect());
    assert!(results[0].is_error);
    assert_eq!(results[0].message.tool_call_id.as_str(), "text-call-0");
    assert!(!results[1].is_error);
}

#[test]
fn a_call_cut_off_by_the_end_is_truncated_with_its_raw_text_and_never_text() {
    let cases = [
        (
            TextFormat::hermes(),
            "Hi <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Pa",
        ),
        (
            TextFormat::qwen3_coder(),
            "Hi <tool_call>\n<function=get_weather>\n<parameter=city>\nPa",
        ),
        (
            TextFormat::glm45(),
            "Hi <tool_call>get_weather<arg_key>city</arg_key><arg_value>Pa",
        ),
        (
            TextFormat::mistral_v11(),
            "Hi [TOOL_CALLS]get_weather[ARGS]{\"city\": \"Pa",
        ),
        (
            TextFormat::kimi_k2(),
            "Hi <|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"ci",
        ),
        (TextFormat::pythonic(), "[get_weather(city=\"Pa"),
        (
            TextFormat::harmony(),
            "<|start|>assistant<|channel|>commentary to=functions.get_weather json<|message|>{\"ci",
        ),
        (TextFormat::hermes(), "Hi <tool_call>"),
    ];
    for (format, output) in cases {
        let out = everywhere(&format, output);
        let cut: Vec<_> = out.truncated().collect();
        assert_eq!(cut.len(), 1, "{}: {:?}", format.name, out.parts);
        assert_eq!(out.calls().count(), 0, "{}", format.name);
        let shown = out.text();
        assert!(
            shown.is_empty() || shown == "Hi ",
            "{}: {shown:?}",
            format.name
        );
        assert_eq!(format!("{shown}{}", cut[0].raw), output, "{}", format.name);
    }
}

#[test]
fn a_malformed_call_is_failed_with_its_raw_text_and_the_other_calls_go_on() {
    let output = "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": }}</tool_call>\n\
                  <tool_call>{\"name\": \"get_location\", \"arguments\": {}}</tool_call>";
    let out = everywhere(&TextFormat::hermes(), output);
    let OutputPart::Failed(failed) = &out.parts[0] else {
        panic!("{:?}", out.parts)
    };
    assert_eq!(failed.kind, CallProblem::MalformedArguments);
    assert_eq!(
        failed.raw,
        "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": }}</tool_call>"
    );
    assert_eq!(
        &out.parts[1..],
        &[text("\n"), call("text-call-1", "get_location", "{}")]
    );
}

#[test]
fn a_malformed_call_ends_at_its_end_marker_or_at_the_next_call_s_start() {
    // The object never closes: `</tool_call>` outside its strings ends it.
    let out = everywhere(
        &TextFormat::hermes(),
        "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}</tool_call>\
         <tool_call>{\"name\": \"get_location\", \"arguments\": {}}</tool_call>",
    );
    assert_eq!(out.failed().count(), 1);
    assert_eq!(
        out.failed().next().unwrap().raw,
        "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}</tool_call>"
    );
    assert_eq!(calls(&out), vec![("get_location".to_owned(), json!({}))]);
    // Mistral v11 has no end marker: the next `[TOOL_CALLS]` ends the bad one.
    let out = everywhere(
        &TextFormat::mistral_v11(),
        "[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Paris\"[TOOL_CALLS]get_location[ARGS]{}",
    );
    let failed = out.failed().next().unwrap();
    assert_eq!(
        failed.raw,
        "[TOOL_CALLS]get_weather[ARGS]{\"city\": \"Paris\""
    );
    assert_eq!(
        (failed.name.as_ref().unwrap().as_str(), failed.index),
        ("get_weather", Some(0))
    );
    assert_eq!(calls(&out), vec![("get_location".to_owned(), json!({}))]);
}

#[test]
fn arguments_under_a_key_the_format_does_not_know_fail_the_call_rather_than_vanish() {
    // Hermes takes Llama's `parameters` as well as `arguments`.
    let out = everywhere(
        &TextFormat::hermes(),
        "<tool_call>\n{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}\n</tool_call>",
    );
    assert_eq!(
        calls(&out),
        vec![("get_weather".to_owned(), json!({"city": "Paris"}))]
    );
    // Under any other key, the call would run on `{}`: it fails instead,
    // with its name and id, and the next call goes on.
    let output = "<tool_call>\n{\"name\": \"get_weather\", \"args\": {\"city\": \"Paris\"}}\n</tool_call>\n\
                  <tool_call>\n{\"name\": \"get_location\", \"type\": \"function\"}\n</tool_call>";
    let out = everywhere(&TextFormat::hermes(), output);
    let OutputPart::Failed(failed) = &out.parts[0] else {
        panic!("{:?}", out.parts)
    };
    assert_eq!(failed.kind, CallProblem::MalformedArguments);
    assert_eq!(failed.name.as_ref().unwrap().as_str(), "get_weather");
    assert_eq!(
        failed.raw,
        "<tool_call>\n{\"name\": \"get_weather\", \"args\": {\"city\": \"Paris\"}}\n</tool_call>"
    );
    let answer = failed.answer().unwrap();
    assert_eq!(answer.outcome(), "invalid_arguments");
    assert_eq!(answer.message.tool_call_id.as_str(), "text-call-0");
    // A call with no object beside its name has no arguments.
    assert_eq!(calls(&out), vec![("get_location".to_owned(), json!({}))]);
}

#[test]
fn arguments_written_as_a_string_holding_an_object_are_that_object() {
    // Models trained on OpenAI's wire format write the arguments as a
    // JSON string; llama.cpp reads them so. Refused as a string, the call
    // was lost.
    for (format, output) in [
        (
            TextFormat::hermes(),
            "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": \"{\\\"city\\\": \\\"Paris\\\"}\"}\n</tool_call>",
        ),
        (
            TextFormat::llama3_json(),
            "{\"name\": \"get_weather\", \"parameters\": \" {\\\"city\\\": \\\"Paris\\\"} \"}",
        ),
    ] {
        let out = everywhere(&format, output);
        assert_eq!(
            calls(&out),
            vec![("get_weather".to_owned(), json!({"city": "Paris"}))],
            "{}",
            format.name
        );
    }
    // A string that holds no object stays a string, which the executor
    // refuses as it refuses any arguments that are not an object.
    let out = everywhere(
        &TextFormat::hermes(),
        "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": \"Paris\"}\n</tool_call>",
    );
    let ready: Vec<_> = out.calls().collect();
    assert_eq!(ready.len(), 1);
    assert_eq!(ready[0].arguments, RawArguments::Text("\"Paris\"".into()));
}

#[test]
fn a_failed_call_keeps_the_id_and_name_its_format_gave() {
    let out = everywhere(
        &TextFormat::kimi_k2(),
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>\
         {\"city\": Paris}<|tool_call_end|><|tool_calls_section_end|>",
    );
    let failed = out.failed().next().unwrap();
    assert_eq!(failed.kind, CallProblem::MalformedArguments);
    assert_eq!(
        failed.id.as_ref().unwrap().as_str(),
        "functions.get_weather:0"
    );
    // Answered by that id, without running.
    let answer = failed.answer().unwrap();
    assert!(answer.is_error);
    assert_eq!(answer.outcome(), "invalid_arguments");
    assert_eq!(
        answer.message.tool_call_id.as_str(),
        "functions.get_weather:0"
    );
}

// ---- text byte for byte ------------------------------------------------------

#[test]
fn text_outside_markup_is_passed_through_byte_for_byte_whitespace_included() {
    let output = "  a\n\n<tool_call>\n{\"name\": \"get_location\", \"arguments\": {}}\n</tool_call>\n \t\n\
                  <tool_call>{\"name\": \"get_location\", \"arguments\": {}}</tool_call>\r\n end é ";
    let out = everywhere(&TextFormat::hermes(), output);
    assert_eq!(out.text(), "  a\n\n\n \t\n\r\n end é ");
    assert_eq!(out.parts[1], call("text-call-0", "get_location", "{}"));
    assert_eq!(out.parts[2], text("\n \t\n"));
}

#[test]
fn whitespace_inside_a_call_section_is_markup() {
    let output = "<｜tool▁calls▁begin｜>\n<｜tool▁call▁begin｜>get_location<｜tool▁sep｜> {} <｜tool▁call▁end｜>\n\n\
                  <｜tool▁call▁begin｜>get_location<｜tool▁sep｜>{}<｜tool▁call▁end｜>\n<｜tool▁calls▁end｜>after";
    let out = everywhere(&TextFormat::deepseek_v31(), output);
    assert_eq!(out.text(), "after");
    assert_eq!(out.calls().count(), 2);
}

// ---- one event per run ---------------------------------------------------------

/// Every event of `format` reading `pieces` into one `Vec`, the end included.
fn all_events<'p>(
    format: &TextFormat,
    pieces: impl IntoIterator<Item = &'p [u8]>,
) -> Vec<StreamEvent> {
    let mut r = reader(format);
    let mut events = Vec::new();
    for piece in pieces {
        r.push(piece, &mut events);
    }
    r.finish(&mut events);
    events
}

#[test]
fn pieces_pushed_into_one_vec_give_the_events_of_the_whole_text() {
    for (format, output) in [
        (
            TextFormat::hermes(),
            "<think>Which city?</think>Checking é.\n<tool_call>\n{\"name\": \"get_weather\", \
             \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\nDone.",
        ),
        (
            TextFormat::kimi_k2(),
            "Checking.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0\
             <|tool_call_argument_begin|>{\"city\": \"Paris\"}<|tool_call_end|>\
             <|tool_calls_section_end|> Done.",
        ),
        (
            TextFormat::harmony(),
            "<|channel|>analysis<|message|>Which city?<|end|><|start|>assistant<|channel|>commentary \
             to=functions.get_weather <|constrain|>json<|message|>{\"city\": \"Paris\"}<|call|>",
        ),
    ] {
        let expected = all_events(&format, [output.as_bytes()]);
        for chunking in [Chunking::ONE, Chunking::Fixed(4)] {
            let got = all_events(&format, chunk_bytes(output.as_bytes(), chunking));
            assert_eq!(got, expected, "{} in {chunking:?}", format.name);
        }
    }
}

#[test]
fn pieces_taken_out_after_each_push_are_each_an_event_of_their_own() {
    let output = "Checking.<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0\
                  <|tool_call_argument_begin|>{\"city\": \"Paris\"}<|tool_call_end|>\
                  <|tool_calls_section_end|> Done.";
    let mut r = reader(&TextFormat::kimi_k2());
    let (mut texts, mut fragments) = (Vec::new(), Vec::new());
    let mut events = Vec::new();
    for piece in chunk_bytes(output.as_bytes(), Chunking::ONE) {
        r.push(piece, &mut events);
        for event in events.drain(..) {
            match event {
                StreamEvent::Text(t) => texts.push(t),
                StreamEvent::ArgumentsDelta(d) => fragments.push(d.fragment),
                _ => {}
            }
        }
    }
    assert_eq!(texts.len(), "Checking. Done.".len());
    assert_eq!(texts.concat(), "Checking. Done.");
    assert_eq!(fragments.len(), "{\"city\": \"Paris\"}".len());
    assert_eq!(fragments.concat(), "{\"city\": \"Paris\"}");
}

// ---- ready when the arguments close -----------------------------------------

#[test]
fn a_call_is_ready_as_soon_as_its_arguments_close_before_any_end_marker() {
    let cases = [
        (
            TextFormat::hermes(),
            "<tool_call>\n{\"name\": \"get_location\", \"arguments\": {}}",
        ),
        (
            TextFormat::qwen3_coder(),
            "<tool_call>\n<function=get_location>\n</function>",
        ),
        (
            TextFormat::kimi_k2(),
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_location:0<|tool_call_argument_begin|>{}",
        ),
        (
            TextFormat::deepseek_v31(),
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_location<｜tool▁sep｜>{}",
        ),
        (
            TextFormat::deepseek_v3(),
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_location\n```json\n{}",
        ),
        (
            TextFormat::mistral_v11(),
            "[TOOL_CALLS]get_location[ARGS]{}",
        ),
        (
            TextFormat::mistral(),
            "[TOOL_CALLS] [{\"name\": \"get_location\", \"arguments\": {}}",
        ),
        (TextFormat::pythonic(), "<|python_start|>[get_location()"),
        (
            TextFormat::harmony(),
            "<|channel|>commentary to=functions.get_location <|constrain|>json<|message|>{}",
        ),
        (
            TextFormat::tags("[TOOL_CALL]", "[/TOOL_CALL]"),
            "[TOOL_CALL]{\"name\": \"get_location\", \"args\": {}}",
        ),
    ];
    for (format, output) in cases {
        let events = events_of(&format, &[output]);
        let ready = events
            .iter()
            .any(|e| matches!(e, StreamEvent::CallReady(_)));
        assert!(ready, "{}: {events:?}", format.name);
        // And a stream cut right there still yields the call.
        assert_eq!(whole(&format, output).calls().count(), 1, "{}", format.name);
    }
}

#[test]
fn xml_parameter_values_drop_one_leading_and_one_trailing_newline_only() {
    let output = "<tool_call><function=write_file><parameter=path>a</parameter><parameter=content>\n\n  x\n\n\
                  </parameter></function></tool_call>";
    let out = everywhere(&TextFormat::qwen3_coder(), output);
    assert_eq!(calls(&out)[0].1, json!({"path": "a", "content": "\n  x\n"}));
}

#[test]
fn ids_come_from_kimi_and_mistral_markup_and_are_generated_with_the_caller_s_prefix_otherwise() {
    let hermes = TextFormat::hermes();
    let output = "<tool_call>{\"name\": \"get_location\", \"arguments\": {}}</tool_call>\
                  <tool_call>{\"name\": \"get_location\", \"arguments\": {}}</tool_call>";
    let out = everywhere_with(|| reader(&hermes).for_turn(3), output, 4);
    assert_eq!(ids(&out), ["text-call-3-0", "text-call-3-1"]);
    let out = everywhere_with(|| reader(&hermes).with_id_prefix("t7_"), output, 4);
    assert_eq!(ids(&out), ["t7_0", "t7_1"]);
}

#[test]
fn an_id_the_output_reuses_is_refused() {
    let out = everywhere(
        &TextFormat::kimi_k2(),
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_location:0<|tool_call_argument_begin|>{}\
         <|tool_call_end|><|tool_call_begin|>functions.get_location:0<|tool_call_argument_begin|>{}<|tool_call_end|>\
         <|tool_calls_section_end|>",
    );
    assert_eq!(out.calls().count(), 1);
    assert_eq!(out.failed().next().unwrap().kind, CallProblem::ReusedId);
    // A generated id is one the output may reuse too.
    let out = everywhere(
        &TextFormat::mistral(),
        "[TOOL_CALLS] [{\"name\": \"get_location\", \"arguments\": {}}, \
         {\"name\": \"get_location\", \"arguments\": {}, \"id\": \"text-call-0\"}]",
    );
    assert_eq!(ids(&out), ["text-call-0"]);
    let failed = out.failed().next().unwrap();
    assert_eq!(failed.kind, CallProblem::ReusedId);
    assert_eq!(failed.id.as_ref().unwrap().as_str(), "text-call-0");
    // However many calls came before.
    let call = |id: &str| format!("[TOOL_CALLS]get_location[CALL_ID]{id}[ARGS]{{}}");
    let mut output: String = (0..40).map(|i| call(&format!("id{i:06}"))).collect();
    output.push_str(&call("id000007"));
    let out = everywhere_with(|| reader(&TextFormat::mistral_v11()), &output, 1);
    assert_eq!(out.calls().count(), 40);
    let failed = out.failed().next().unwrap();
    assert_eq!(
        (
            failed.kind,
            failed.index,
            failed.id.as_ref().unwrap().as_str()
        ),
        (CallProblem::ReusedId, Some(40), "id000007")
    );
}

#[test]
fn llama3_json_calls_are_recognized_only_at_the_start_after_python_tag_or_after_a_semicolon() {
    let format = TextFormat::llama3_json();
    let call_text = "{\"name\": \"get_location\", \"parameters\": {}}";
    let out = everywhere(&format, &format!("Sure: {call_text}"));
    assert_eq!(out.parts, vec![text(&format!("Sure: {call_text}"))]);
    // JSON at the start that is no call is text.
    let out = everywhere(&format, "{\"answer\": 42} is the JSON you asked for");
    assert_eq!(
        out.parts,
        vec![text("{\"answer\": 42} is the JSON you asked for")]
    );
    // After a call, `; ` and another call; anything else is text.
    let out = everywhere(&format, &format!("  {call_text}; {call_text}; and done"));
    assert_eq!(out.calls().count(), 2);
    assert_eq!(out.text(), "  ; and done");
}

#[test]
fn a_bare_pythonic_list_is_a_call_only_at_the_start_and_its_wrappers_anywhere() {
    let format = TextFormat::pythonic();
    let out = everywhere(&format, "See [get_location()] and [1] notes");
    assert_eq!(out.parts, vec![text("See [get_location()] and [1] notes")]);
    let out = everywhere(
        &format,
        "[1] is a footnote, [get_location()] is not a call here",
    );
    assert_eq!(out.calls().count(), 0);
    assert_eq!(
        out.text(),
        "[1] is a footnote, [get_location()] is not a call here"
    );
    let out = everywhere(
        &format,
        "text <|tool_call_start|>[get_location()]<|tool_call_end|>",
    );
    assert_eq!(
        out.parts,
        vec![
            text("text "),
            typed("text-call-0", "get_location", json!({}))
        ]
    );
}

// ---- bounds ------------------------------------------------------------------

#[test]
fn arguments_over_the_limits_are_refused_while_they_stream() {
    let limits = StreamLimits {
        max_argument_bytes: 64,
        max_argument_depth: 4,
    };
    let hermes = TextFormat::hermes();
    let big = format!(
        "<tool_call>{{\"name\": \"write_file\", \"arguments\": {{\"path\": \"a\", \"content\": \"{}\"}}}}</tool_call>ok",
        "x".repeat(500)
    );
    // Refused before the end arrives: the first 200 bytes are enough.
    let mut r = reader(&hermes).with_limits(limits);
    let mut events = Vec::new();
    r.push(&big.as_bytes()[..200], &mut events);
    let refused = events.iter().find_map(|e| match e {
        StreamEvent::CallFailed(f) => Some(f.kind),
        _ => None,
    });
    assert_eq!(refused, Some(CallProblem::TooLarge));
    let out = everywhere_with(|| reader(&hermes).with_limits(limits), &big, 4);
    assert_eq!(out.failed().next().unwrap().kind, CallProblem::TooLarge);
    assert_eq!(out.text(), "ok");
    let deep =
        "<tool_call>{\"name\": \"write_file\", \"arguments\": {\"a\": [[[[[1]]]]]}}</tool_call>";
    let out = everywhere_with(|| reader(&hermes).with_limits(limits), deep, 4);
    assert_eq!(out.failed().next().unwrap().kind, CallProblem::TooDeep);
    let xml = format!(
        "<tool_call><function=write_file><parameter=content>{}</parameter></function></tool_call>",
        "y".repeat(500)
    );
    let coder = TextFormat::qwen3_coder();
    let out = everywhere_with(|| reader(&coder).with_limits(limits), &xml, 4);
    assert_eq!(out.failed().next().unwrap().kind, CallProblem::TooLarge);
}

#[test]
fn a_call_exactly_at_the_bounds_is_read_and_one_past_them_refused_whole_as_in_pieces() {
    let limits = StreamLimits {
        max_argument_bytes: 64,
        max_argument_depth: 4,
    };
    let hermes = TextFormat::hermes();
    let read = |object: &str| {
        let output = format!("<tool_call>{object}</tool_call>");
        everywhere_with(|| reader(&hermes).with_limits(limits), &output, 4)
    };
    // Four levels: the object, its arguments and two arrays.
    let out = read(r#"{"name": "f", "arguments": {"a": [[1]]}}"#);
    assert_eq!(argument_texts(&out), [r#"{"a": [[1]]}"#]);
    let out = read(r#"{"name": "f", "arguments": {"a": [[[1]]]}}"#);
    assert_eq!(out.failed().next().unwrap().kind, CallProblem::TooDeep);
    // An object of 64 bytes, then one of 65.
    let out = read(&format!(
        r#"{{"name": "f", "arguments": {{"c": "{}"}}}}"#,
        "x".repeat(27)
    ));
    assert_eq!(out.calls().count(), 1);
    let out = read(&format!(
        r#"{{"name": "f", "arguments": {{"c": "{}"}}}}"#,
        "x".repeat(28)
    ));
    assert_eq!(out.failed().next().unwrap().kind, CallProblem::TooLarge);
}

#[test]
fn a_tag_end_marker_that_json_may_hold_ends_the_call_where_it_is_met_whole_as_in_pieces() {
    // `]` closes the array before it ends the tag: the call's JSON is cut
    // there, read whole or in pieces.
    let format = TextFormat::tags("<c>", "]");
    let out = everywhere(
        &format,
        "<c>{\"name\": \"get_weather\", \"args\": {\"days\": [3]}}]ok",
    );
    assert_eq!(out.calls().count(), 0);
    assert_eq!(
        out.failed().next().unwrap().kind,
        CallProblem::MalformedArguments
    );
    assert_eq!(out.text(), "}}]ok");
}

// ---- bad input -----------------------------------------------------------------

#[test]
fn a_marker_inside_a_json_string_argument_is_part_of_the_string() {
    let args = r#"{"path": "a", "content": "</tool_call><tool_call>{\"name\": \"x\"}"}"#;
    let output =
        format!("<tool_call>{{\"name\": \"write_file\", \"arguments\": {args}}}</tool_call>");
    let out = everywhere(&TextFormat::hermes(), &output);
    assert_eq!(argument_texts(&out), [args]);
    let harmony = "<|channel|>commentary to=functions.write_file json<|message|>\
                   {\"path\": \"<|call|>\", \"content\": \"<|end|>\"}<|call|>";
    let out = everywhere(&TextFormat::harmony(), harmony);
    assert_eq!(
        argument_texts(&out),
        ["{\"path\": \"<|call|>\", \"content\": \"<|end|>\"}"]
    );
}

#[test]
fn a_tag_pair_of_non_ascii_markers_reads_calls_whose_strings_hold_them() {
    let format = TextFormat::tags("「", "」");
    let out = everywhere(
        &format,
        "a「{\"name\": \"get_weather\", \"args\": {\"city\": \"「x」\"}}」b",
    );
    assert_eq!(argument_texts(&out), [r#"{"city": "「x」"}"#]);
    assert_eq!(out.text(), "ab");
    // Outside a string the start marker breaks the call; nothing panics
    // on the marker's multi-byte first character.
    let out = everywhere(
        &format,
        "a「{\"name\": \"get_weather\", \"args\": {\"city\": 「{\"name\": \"get_location\"}」",
    );
    assert_eq!(
        out.failed().next().unwrap().kind,
        CallProblem::MalformedArguments
    );
    assert_eq!(out.calls().next().unwrap().name.as_str(), "get_location");
}

#[test]
fn a_pythonic_format_of_non_ascii_markers_reads_calls_whose_strings_hold_them() {
    use tinyagents_tools::stream::text::{CallBody, CallRun, Join, RunStart};
    let mut format = TextFormat::pythonic();
    format.name = "pythonic-corner-brackets".into();
    format.runs = vec![CallRun {
        start: RunStart::Marker("「".into()),
        end: Some("」".into()),
        call_start: None,
        call_end: None,
        join: Join::List {
            open: "[".into(),
            separator: ",".into(),
            close: "]".into(),
        },
    }];
    assert!(matches!(format.body, CallBody::Pythonic));
    let out = everywhere(&format, "a「[get_weather(city=\"「x」é\")]」b");
    assert_eq!(
        calls(&out),
        [("get_weather".to_owned(), json!({"city": "「x」é"}))]
    );
    assert_eq!(out.text(), "ab");
    // Outside a string the end marker breaks the call; nothing panics on
    // the marker's multi-byte first character.
    let out = everywhere(&format, "a「[get_weather(city=」b");
    assert_eq!(
        out.failed().next().unwrap().kind,
        CallProblem::MalformedArguments
    );
    assert_eq!(out.text(), "ab");
    let out = everywhere(&format, "a「[get_weather(city=\"x\", n=「)]」b");
    assert_eq!(out.calls().count(), 0);
}

#[test]
fn braces_quotes_and_non_ascii_in_strings_keep_the_exact_text_the_model_wrote() {
    let args = r#"{"path": "é/🦀/{x}", "content": "a \"quoted\" } { ] [ \\ \u00e9 \n"}"#;
    for format in [
        TextFormat::hermes(),
        TextFormat::kimi_k2(),
        TextFormat::mistral_v11(),
    ] {
        let output = TextFormat::render_calls(
            &format,
            &[tinyagents_tools::ToolCall::new(
                "functions.write_file:0",
                "write_file",
                args,
            )],
        );
        let out = everywhere(&format, &output);
        assert_eq!(argument_texts(&out), [args], "{}", format.name);
        assert_eq!(
            out.calls().next().unwrap().arguments,
            RawArguments::Text(args.to_owned())
        );
    }
}

#[test]
fn invalid_utf8_split_across_pieces_is_a_classified_problem_and_nothing_is_lost() {
    let mut output =
        b"ok \xff tail <tool_call>{\"name\": \"get_location\", \"arguments\": {}}</tool_call> "
            .to_vec();
    output.extend_from_slice("é".as_bytes());
    output.extend_from_slice(b" \xe2\x82");
    let format = TextFormat::hermes();
    let expected: ModelOutput = reader(&format).read_all([output.as_slice()]);
    for chunking in Chunking::matrix(16) {
        let got = reader(&format).read_all(chunk_bytes(&output, chunking));
        assert_eq!(got, expected, "{chunking:?}");
    }
    assert_eq!(expected.text(), "ok \u{fffd} tail  é \u{fffd}");
    assert_eq!(expected.calls().count(), 1);
    let kinds: Vec<_> = expected
        .problems
        .iter()
        .map(|p| (p.kind, p.raw.as_str()))
        .collect();
    assert_eq!(
        kinds,
        [
            (StreamProblemKind::InvalidUtf8, "\\xff"),
            (StreamProblemKind::InvalidUtf8, "\\xe2\\x82")
        ]
    );
}
