//! How a text output ended, as its text tells, for every format and every
//! chunking: a call last is `ToolCalls`, a call cut off is `Length`,
//! harmony's `<|return|>` (or `<|end|>` after a message that is no call)
//! is `Stop`, and plain text is `EndOfStream` (the text cannot tell a stop
//! from a cut). And every broken or cut-off call has an id and an answer.

use tinyagents_tools::ToolCall;
use tinyagents_tools::stream::text::{FORMAT_NAMES, Family, TextFormat};
use tinyagents_tools::stream::{FinishReason, ModelOutput};

use super::text_support::everywhere;

/// Every built-in format and a user-defined tag pair.
fn formats() -> Vec<TextFormat> {
    let mut all: Vec<TextFormat> = FORMAT_NAMES
        .iter()
        .map(|n| TextFormat::by_name(n).unwrap())
        .collect();
    all.push(TextFormat::tags("[TOOL_CALL]", "[/TOOL_CALL]"));
    all
}

/// One call to `get_weather` for Paris, as `format` writes it in a
/// completion (Llama after `<|python_tag|>`, pythonic in LFM2's wrapper).
fn one_call(format: &TextFormat) -> String {
    let call = ToolCall::new(
        "functions.get_weather:0",
        "get_weather",
        r#"{"city": "Paris"}"#,
    );
    let body = format.render_calls(&[call]);
    match format.family {
        Family::Llama3Json => format!("<|python_tag|>{body}"),
        Family::Pythonic => format!("<|tool_call_start|>{body}<|tool_call_end|>"),
        _ => body,
    }
}

/// Visible text in `format` (harmony writes it as a `final` message,
/// left open).
fn visible(format: &TextFormat, text: &str) -> String {
    if format.family == Family::Harmony {
        format!("<|start|>assistant<|channel|>final<|message|>{text}")
    } else {
        text.to_owned()
    }
}

fn reason(out: &ModelOutput) -> &FinishReason {
    &out.finish.as_ref().expect("a finished output").reason
}

#[test]
fn an_output_that_ends_with_a_call_finishes_for_tool_calls() {
    for format in formats() {
        let output = format!(
            "{}{}\n",
            visible(&format, "Let me check."),
            one_call(&format)
        );
        let out = everywhere(&format, &output);
        assert_eq!(out.calls().count(), 1, "{}: {output:?}", format.name);
        assert_eq!(
            reason(&out),
            &FinishReason::ToolCalls,
            "{}: {output:?}",
            format.name
        );
    }
}

#[test]
fn an_output_that_ends_with_a_broken_call_finishes_for_tool_calls() {
    let cases = [
        ("hermes", "<tool_call>{\"nam\": oops}</tool_call>"),
        (
            "tags:[TOOL_CALL],[/TOOL_CALL]",
            "[TOOL_CALL]{\"nam\": oops}[/TOOL_CALL]",
        ),
        ("qwen3-coder", "<tool_call><functio oops</tool_call>"),
        (
            "glm45",
            "<tool_call>get_weather<arg_key>city</arg_key>oops</tool_call>",
        ),
        ("llama3-json", "<|python_tag|>{\"name\": 3}"),
        (
            "pythonic",
            "<|tool_call_start|>[get_weather(city=)]<|tool_call_end|>",
        ),
        ("mistral", "[TOOL_CALLS] [{\"nam\": oops}]"),
        (
            "mistral-v11",
            "[TOOL_CALLS]get_weather[ARGS]{\"city\": Paris}",
        ),
        (
            "deepseek-v3",
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>oops<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        ),
        (
            "deepseek-v31",
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{\"city\": }<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        ),
        (
            "kimi-k2",
            "<|tool_calls_section_begin|><|tool_call_begin|><|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>",
        ),
        (
            "harmony",
            "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\": }<|call|>",
        ),
    ];
    assert_eq!(cases.len(), formats().len(), "one case per format");
    for (name, broken) in cases {
        let format = TextFormat::by_name(name).unwrap();
        let output = format!("{}{broken}", visible(&format, "Let me check."));
        let out = everywhere(&format, &output);
        assert!(out.failed().count() >= 1, "{name}: {out:?}");
        assert_eq!(out.calls().count(), 0, "{name}: {out:?}");
        assert_eq!(reason(&out), &FinishReason::ToolCalls, "{name}: {out:?}");
    }
}

#[test]
fn an_output_cut_off_inside_a_call_finishes_for_length() {
    for format in formats() {
        let call = one_call(&format);
        // Cut inside the city's value: the arguments never closed.
        let cut = &call[..call.find("Par").unwrap() + 3];
        let output = format!("{}{cut}", visible(&format, "Let me check."));
        let out = everywhere(&format, &output);
        assert_eq!(out.truncated().count(), 1, "{}: {out:?}", format.name);
        assert_eq!(
            reason(&out),
            &FinishReason::Length,
            "{}: {output:?}",
            format.name
        );
    }
}

#[test]
fn plain_text_and_text_after_the_last_call_finish_at_the_end_of_the_stream() {
    for format in formats() {
        for output in [
            visible(&format, "Paris is sunny."),
            format!(
                "{}{}",
                one_call(&format),
                visible(&format, "\nIt is sunny.")
            ),
            // End-of-sequence tokens are text to the reader, not stops.
            visible(&format, "Paris is sunny.</s><|eot_id|>"),
            String::new(),
        ] {
            let out = everywhere(&format, &output);
            assert_eq!(
                reason(&out),
                &FinishReason::EndOfStream,
                "{}: {output:?}",
                format.name
            );
        }
    }
}

#[test]
fn harmony_s_call_return_and_end_markers_say_why_the_turn_ended() {
    let harmony = TextFormat::harmony();
    let call = "<|channel|>commentary to=functions.get_weather <|constrain|>json\
                <|message|>{\"city\": \"Paris\"}<|call|>";
    let analysis = "<|channel|>analysis<|message|>Look it up.<|end|>";
    let cases = [
        (
            format!("{analysis}<|start|>assistant{call}"),
            FinishReason::ToolCalls,
        ),
        // A call closed by `<|end|>` is still the call the turn ends with.
        (call.replace("<|call|>", "<|end|>"), FinishReason::ToolCalls),
        (
            "<|channel|>final<|message|>Sunny.<|return|>".to_owned(),
            FinishReason::Stop,
        ),
        (
            "<|channel|>final<|message|>Sunny.<|end|>".to_owned(),
            FinishReason::Stop,
        ),
        (
            format!("{call}<|start|>assistant<|channel|>final<|message|>Sunny.<|return|>"),
            FinishReason::Stop,
        ),
        (
            "<|channel|>final<|message|>Sunny.".to_owned(),
            FinishReason::EndOfStream,
        ),
    ];
    for (output, expected) in cases {
        let out = everywhere(&harmony, &output);
        assert_eq!(reason(&out), &expected, "{output:?}");
    }
}

#[test]
fn every_broken_or_cut_off_call_has_an_id_and_is_answered_by_it() {
    let cases = [
        // Broken before its name (the id is the generated one).
        ("hermes", "<tool_call>{\"nam\": oops}</tool_call>"),
        // A marker inside an open string is string: this one is cut off.
        ("hermes", "<tool_call>{\"nam oops</tool_call>"),
        ("hermes", "<tool_call>{\"nam"),
        (
            "tags:[TOOL_CALL],[/TOOL_CALL]",
            "[TOOL_CALL]{\"nam\": oops}[/TOOL_CALL]",
        ),
        ("qwen3-coder", "<tool_call><functio oops</tool_call>"),
        (
            "qwen3-coder",
            "<tool_call><function=get_weather><parameter=city>Par",
        ),
        (
            "glm45",
            "<tool_call>get_weather<arg_key>city</arg_key>oops</tool_call>",
        ),
        ("llama3-json", "<|python_tag|>{\"name\": 3}"),
        ("llama3-json", "<|python_tag|>{\"nam"),
        (
            "pythonic",
            "<|tool_call_start|>[get_weather(city=)]<|tool_call_end|>",
        ),
        ("pythonic", "<|tool_call_start|>[get_wea"),
        ("mistral", "[TOOL_CALLS] [{\"nam\": oops}]"),
        ("mistral", "[TOOL_CALLS] [{\"nam"),
        ("mistral-v11", "[TOOL_CALLS][ARGS]{}"),
        ("mistral-v11", "[TOOL_CALLS]get_wea"),
        (
            "deepseek-v3",
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>oops<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        ),
        (
            "deepseek-v31",
            "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_",
        ),
        (
            "kimi-k2",
            "<|tool_calls_section_begin|><|tool_call_begin|><|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>",
        ),
        (
            "kimi-k2",
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_",
        ),
        (
            "harmony",
            "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\"city\": }<|call|>",
        ),
        (
            "harmony",
            "<|channel|>commentary to=functions.get_weather <|constrain|>js",
        ),
    ];
    for (name, output) in cases {
        let format = TextFormat::by_name(name).unwrap();
        let out = everywhere(&format, output);
        let mut answered = 0;
        for failed in out.failed() {
            let id = failed.id.as_ref().expect("a failed call has an id");
            let answer = failed.answer().expect("a failed call is answered");
            assert_eq!(&answer.tool_call_id, id, "{name}: {output:?}");
            assert!(answer.is_error, "{name}: {output:?}");
            answered += 1;
        }
        for cut in out.truncated() {
            let id = cut.id.as_ref().expect("a cut-off call has an id");
            let answer = cut.answer().expect("a cut-off call is answered");
            assert_eq!(&answer.tool_call_id, id, "{name}: {output:?}");
            assert_eq!(answer.outcome(), "invalid_arguments");
            answered += 1;
        }
        assert_eq!(answered, 1, "{name}: one broken call in {out:?}");
    }
}

#[test]
fn a_harmony_call_whose_header_broke_keeps_its_recipient_s_name() {
    let out = everywhere(
        &TextFormat::harmony(),
        "<|channel|>commentary to=functions.get_weather <|constrain|>json<|end|>",
    );
    let failed = out.failed().next().expect("a failed call");
    assert_eq!(failed.name.as_ref().unwrap().as_str(), "get_weather");
    assert_eq!(failed.answer().unwrap().name.as_str(), "get_weather");
}
