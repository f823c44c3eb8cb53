//! Qwen3-Coder's calls written without their `<tool_call>` opener: a bare
//! `<function=NAME>...</function>` is a call (an orphan `</tool_call>`
//! after it is markup), read whole and in every chunking, fail closed as
//! every call; the outputs quoted in Ollama's issues #16686, #17353 and
//! #18530 and the pull requests #16693 and #17742.

use serde_json::json;
use tinyagents_tools::stream::text::TextFormat;
use tinyagents_tools::stream::{CallProblem, FailedCall, OutputPart, StreamEvent, TruncatedCall};

use super::text_formats::{reasoning, text, typed};
use super::text_support::{everywhere, reader};
use tinyagents_tools::stream::OutputReader;

fn qwen() -> TextFormat {
    TextFormat::qwen3_coder()
}

const WEATHER: &str = "<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n\
                       <parameter=days>\n2\n</parameter>\n</function>";

fn weather(id: &str) -> OutputPart {
    typed(id, "get_weather", json!({"city": "Paris", "days": 2}))
}

#[test]
fn the_outputs_of_ollama_s_issues_read_as_calls_without_a_byte_of_markup_in_the_text() {
    let cases = [
        (
            "I'll use the Glob tool to list all markdown files in the current directory.\n\n",
            "<function=Glob>\n<parameter=pattern>\n*.md\n</parameter>\n</function>\n</tool_call>",
            "Glob",
            json!({"pattern": "*.md"}),
        ),
        (
            "I'll fetch the example.com webpage...\n\n",
            "<function=WebFetch>\n<parameter=url>\nhttps://example.com\n</parameter>\n</function>\n</tool_call>",
            "WebFetch",
            json!({"url": "https://example.com"}),
        ),
        (
            "",
            "<function=exec_command>\n<parameter=cmd>\necho LEAK_TEST\n</parameter>\n</function>\n</tool_call>",
            "exec_command",
            json!({"cmd": "echo LEAK_TEST"}),
        ),
    ];
    for (before, call, name, args) in cases {
        let out = everywhere(&qwen(), &format!("{before}{call}"));
        let mut expected = Vec::new();
        if !before.is_empty() {
            expected.push(text(before));
        }
        expected.push(typed("text-call-0", name, args));
        assert_eq!(out.parts, expected, "{call:?}");
        assert!(out.problems.is_empty());
    }
}

#[test]
fn a_bare_call_reads_typed_values_with_or_without_the_orphan_closer_and_its_newline() {
    for (after, rest) in [
        ("", ""),
        ("</tool_call>", ""),
        ("\n</tool_call>", ""),
        (" \n\t</tool_call> Done.", " Done."),
        ("\n", "\n"),
        ("\nDone.", "\nDone."),
        ("</tool_call>\n\nDone.", "\n\nDone."),
    ] {
        let out = everywhere(&qwen(), &format!("Checking.\n{WEATHER}{after}"));
        let mut expected = vec![text("Checking.\n"), weather("text-call-0")];
        if !rest.is_empty() {
            expected.push(text(rest));
        }
        assert_eq!(out.parts, expected, "{after:?}");
    }
}

#[test]
fn bare_and_wrapped_calls_follow_each_other_in_any_order() {
    let wrapped = format!("<tool_call>\n{WEATHER}\n</tool_call>");
    let closed = format!("{WEATHER}\n</tool_call>");
    for (output, between) in [
        (format!("{WEATHER}{WEATHER}"), ""),
        (format!("{WEATHER}\n{WEATHER}"), "\n"),
        (format!("{closed}\n{closed}"), "\n"),
        (format!("{wrapped}\n{WEATHER}"), "\n"),
        (format!("{wrapped}{closed}"), ""),
        (format!("{WEATHER}\n{wrapped}"), "\n"),
        (format!("{closed}{wrapped}"), ""),
    ] {
        let out = everywhere(&qwen(), &output);
        let mut expected = vec![weather("text-call-0")];
        if !between.is_empty() {
            expected.push(text(between));
        }
        expected.push(weather("text-call-1"));
        assert_eq!(out.parts, expected, "{output:?}");
    }
}

#[test]
fn text_that_spells_no_bare_call_stays_text_byte_for_byte() {
    for output in [
        "a < b, <b>bold</b>, <func> and <function x> are not calls",
        "a stray </tool_call> with no call before it",
        "</function> alone, then </tool_call>",
        "held back, then released: <functi",
        "<function",
        "<",
    ] {
        let out = everywhere(&qwen(), output);
        assert_eq!(out.parts, vec![text(output)], "{output:?}");
    }
}

#[test]
fn a_bare_call_inside_reasoning_stays_reasoning() {
    let out = everywhere(
        &qwen(),
        &format!("<think>I could write {WEATHER} here.</think>\nNo call."),
    );
    assert_eq!(
        out.parts,
        vec![
            reasoning(&format!("I could write {WEATHER} here.")),
            text("\nNo call."),
        ]
    );
}

#[test]
fn a_bare_call_cut_off_by_the_end_of_the_output_is_truncated_never_text() {
    for (raw, name) in [
        ("<function=", None),
        ("<function=get_wea", None),
        (
            "<function=get_weather>\n<parameter=city>\nPar",
            Some("get_weather"),
        ),
        (
            "<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n",
            Some("get_weather"),
        ),
    ] {
        let out = everywhere(&qwen(), &format!("Sure.\n{raw}"));
        assert_eq!(
            out.parts,
            vec![
                text("Sure.\n"),
                OutputPart::Truncated(TruncatedCall {
                    index: Some(0),
                    id: Some("text-call-0".into()),
                    name: name.map(Into::into),
                    raw: raw.to_owned(),
                }),
            ],
            "{raw:?}"
        );
    }
}

#[test]
fn a_bare_opening_that_does_not_read_fails_with_its_raw_text_and_what_follows_goes_on() {
    let failed = |raw: &str, name: Option<&str>| {
        OutputPart::Failed(FailedCall {
            index: Some(0),
            id: Some("text-call-0".into()),
            name: name.map(Into::into),
            kind: CallProblem::MalformedMarkup,
            raw: raw.to_owned(),
        })
    };
    let cases = [
        // Ends at its `</function>`: the text after it stays text.
        (
            "Write <function=get_weather>no parameters</function> to call it.",
            vec![
                text("Write "),
                failed(
                    "<function=get_weather>no parameters</function>",
                    Some("get_weather"),
                ),
                text(" to call it."),
            ],
        ),
        // Prose that never closes it: everything after the opening is the
        // failed call's raw text, nothing of it is lost.
        (
            "Use <function=NAME> like this.\nThanks.",
            vec![
                text("Use "),
                failed("<function=NAME> like this.\nThanks.", Some("NAME")),
            ],
        ),
        // An orphan closer ends it, as it ends a wrapped call.
        (
            "<function=get_weather>x\n</tool_call>ok",
            vec![
                failed("<function=get_weather>x\n</tool_call>", Some("get_weather")),
                text("ok"),
            ],
        ),
    ];
    for (output, expected) in cases {
        let out = everywhere(&qwen(), output);
        assert_eq!(out.parts, expected, "{output:?}");
    }
    // The next call's opening ends it too, and that call reads.
    let out = everywhere(&qwen(), &format!("<function=oops>x {WEATHER}"));
    assert_eq!(
        out.parts,
        vec![
            failed("<function=oops>x ", Some("oops")),
            weather("text-call-1"),
        ]
    );
}

#[test]
fn a_bare_call_is_ready_at_its_closing_function_before_the_output_goes_on() {
    let mut r = reader(&qwen());
    let mut events = Vec::new();
    r.push(format!("Checking.\n{WEATHER}").as_bytes(), &mut events);
    let ready: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::CallReady(c) => Some(c.call.name.as_str().to_owned()),
            _ => None,
        })
        .collect();
    assert_eq!(ready, vec!["get_weather".to_owned()], "{events:?}");
}

#[test]
fn a_partial_opening_at_the_end_of_a_piece_is_held_back_then_released_as_text() {
    let mut r = reader(&qwen());
    let mut events = Vec::new();
    r.push(b"See <functi", &mut events);
    assert_eq!(events, vec![StreamEvent::Text("See ".into())]);
    events.clear();
    r.finish(&mut events);
    assert_eq!(events[0], StreamEvent::Text("<functi".into()), "{events:?}");
}
