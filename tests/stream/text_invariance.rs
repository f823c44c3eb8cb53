//! Generated outputs mixing text, reasoning and calls, for every format:
//! read whole and in every chunking they give the same output, and that
//! output is what was written.

use proptest::prelude::*;
use serde_json::{Value, json};
use tinyagents_tools::ToolCall;
use tinyagents_tools::stream::text::{Family, TextFormat};

use super::text_support::{bare_call, calls, everywhere_with, reader, whole};

#[derive(Debug, Clone)]
enum Segment {
    Text(String),
    Reasoning(String),
    Calls(Vec<(String, i64)>),
}

/// Text that never spells a marker (no letters past `b`, no `|`, no `;`).
fn plain() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just("a"),
            Just("b"),
            Just(" "),
            Just("\n"),
            Just("<"),
            Just(">"),
            Just("["),
            Just("]"),
            Just("{"),
            Just("}"),
            Just("\""),
            Just("é"),
            Just("🦀"),
            Just("/"),
            Just(",")
        ],
        1..12,
    )
    .prop_map(|parts| parts.concat())
}

fn segment() -> impl Strategy<Value = Segment> {
    prop_oneof![
        plain().prop_map(Segment::Text),
        plain().prop_map(Segment::Reasoning),
        proptest::collection::vec((plain(), 0i64..1000), 1..3).prop_map(Segment::Calls),
    ]
}

/// `t` as text written after `out`: Llama reads a bare JSON call at the
/// very start, so text there that opens an object is not plain text and
/// gets a letter before it.
fn plain_at(format: &TextFormat, out: &str, t: &str) -> String {
    if out.is_empty() && format.family == Family::Llama3Json {
        format!("a{t}")
    } else {
        t.to_owned()
    }
}

/// The `k`th call `wrapped` (one run) as a format with a
/// `RunStart::BodyOpening` run may also write it: wrapped, bare with
/// its run's end marker, or bare without it, in turn.
fn bare(format: &TextFormat, wrapped: &str, k: usize) -> Option<String> {
    let (call, end) = bare_call(format, wrapped)?;
    match k % 3 {
        0 => None,
        1 => Some(format!("{call}\n{end}")),
        _ => Some(call.to_owned()),
    }
}

/// The output `segments` make in `format`, with what it should read as.
fn write(
    format: &TextFormat,
    segments: &[Segment],
) -> (String, String, String, Vec<(String, Value)>) {
    let (mut out, mut text, mut reasoning, mut expected) =
        (String::new(), String::new(), String::new(), Vec::new());
    let harmony = format.family == Family::Harmony;
    let mut n = 0;
    for seg in segments {
        match seg {
            Segment::Text(t) if harmony => {
                out.push_str(&format!(
                    "<|start|>assistant<|channel|>final<|message|>{t}<|end|>"
                ));
                text.push_str(t);
            }
            Segment::Text(t) => {
                let t = plain_at(format, &out, t);
                out.push_str(&t);
                text.push_str(&t);
            }
            Segment::Reasoning(r) if harmony => {
                out.push_str(&format!(
                    "<|start|>assistant<|channel|>analysis<|message|>{r}<|end|>"
                ));
                reasoning.push_str(r);
            }
            Segment::Reasoning(r) => match &format.reasoning {
                Some(d) => {
                    out.push_str(&format!("{}{r}{}", d.start, d.end));
                    reasoning.push_str(r);
                }
                None => {
                    let r = plain_at(format, &out, r);
                    out.push_str(&r);
                    text.push_str(&r);
                }
            },
            Segment::Calls(cs) => {
                let written: Vec<ToolCall> = cs
                    .iter()
                    .map(|(city, days)| {
                        n += 1;
                        let args = json!({"city": city, "days": days});
                        expected.push(("get_weather".to_owned(), args.clone()));
                        ToolCall::new(
                            format!("functions.get_weather:{n}"),
                            "get_weather",
                            args.to_string(),
                        )
                    })
                    .collect();
                // Families that write one call per run join them with
                // text (a newline); written one by one, nothing is between.
                // Qwen3-Coder's calls are also written without their
                // `<tool_call>`, with and without the orphan closer.
                let body = match format.family {
                    Family::Hermes | Family::Qwen3Coder | Family::Glm45 | Family::Tags => written
                        .iter()
                        .enumerate()
                        .map(|(i, c)| {
                            let wrapped = format.render_calls(std::slice::from_ref(c));
                            bare(format, &wrapped, n + i).unwrap_or(wrapped)
                        })
                        .collect(),
                    _ => format.render_calls(&written),
                };
                out.push_str(&match format.family {
                    Family::Llama3Json => format!("<|python_tag|>{body}"),
                    Family::Pythonic => format!("<|tool_call_start|>{body}<|tool_call_end|>"),
                    _ => body,
                });
            }
        }
    }
    (out, text, reasoning, expected)
}

/// `segments` written in `format` read the same in every chunking, and as
/// written.
fn reads_as_written(format: &TextFormat, segments: &[Segment]) -> Result<(), TestCaseError> {
    let (output, text, reasoning, expected) = write(format, segments);
    let out = everywhere_with(|| reader(format), &output, 3);
    prop_assert_eq!(
        &whole(format, &output),
        &out,
        "parse: {}: {:?}",
        format.name,
        output
    );
    prop_assert_eq!(calls(&out), expected, "{}: {:?}", format.name, output);
    prop_assert_eq!(out.text(), text, "{}: {:?}", format.name, output);
    prop_assert_eq!(out.reasoning(), reasoning, "{}: {:?}", format.name, output);
    prop_assert_eq!(out.failed().count() + out.truncated().count(), 0);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn mixed_outputs_read_the_same_in_every_chunking_and_as_written(
        segments in proptest::collection::vec(segment(), 1..6),
        which in 0usize..12,
    ) {
        let mut names: Vec<String> = tinyagents_tools::stream::text::FORMAT_NAMES.iter().map(|s| s.to_string()).collect();
        names.push("tags:[TOOL_CALL],[/TOOL_CALL]".into());
        let format = TextFormat::by_name(&names[which]).unwrap();
        reads_as_written(&format, &segments)?;
    }

    #[test]
    fn qwen3_coder_outputs_with_bare_calls_read_the_same_in_every_chunking_and_as_written(
        segments in proptest::collection::vec(segment(), 1..6),
    ) {
        reads_as_written(&TextFormat::qwen3_coder(), &segments)?;
    }
}
