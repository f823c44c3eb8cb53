//! The invariant of the provider-stream readers, over generated responses:
//! the output collected from a response's stream, cut any way, equals the
//! whole-response parse of that response, whose calls are the provider
//! parser's calls.

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use tinyagents_tools::providers::openai::parse_chat_tool_calls;
use tinyagents_tools::stream::native::{NativeFormat, NativeOptions, NativeReader, parse_response};
use tinyagents_tools::testkit::{Chunking, ScriptedStream};

/// Text with what breaks naive readers: braces, quotes, backslashes, call
/// markup, newlines, and characters of two to four UTF-8 bytes.
fn tricky_text() -> impl Strategy<Value = String> {
    let atoms = prop::sample::select(vec![
        "a",
        "word ",
        "{",
        "}",
        "[",
        "]",
        "\"",
        "\\",
        "\\\"",
        "</tool_call>",
        "<tool_call>",
        "\n",
        "é",
        "東京",
        "🦀",
        "✓",
        ": ",
        ", ",
        "data: ",
        "[DONE]",
        "\r\n",
    ]);
    prop::collection::vec(atoms, 0..12).prop_map(|atoms| atoms.concat())
}

/// A JSON value for an argument.
fn argument_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        tricky_text().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        any::<bool>().prop_map(Value::from),
        Just(Value::Null),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map("[a-z_]{1,6}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// An arguments object.
fn arguments() -> impl Strategy<Value = Value> {
    prop::collection::btree_map("[a-zA-Z_]{1,8}", argument_value(), 0..5)
        .prop_map(|m| Value::Object(m.into_iter().collect()))
}

/// A chunking of a stream's bytes, or of its deltas.
fn chunking() -> impl Strategy<Value = Chunking> {
    prop_oneof![
        Just(Chunking::Whole),
        (1usize..9).prop_map(Chunking::Fixed),
        (any::<u64>(), 1usize..12).prop_map(|(seed, max)| Chunking::Random { seed, max }),
    ]
}

fn chat_completion() -> impl Strategy<Value = Value> {
    let call = (arguments(), any::<bool>(), "[a-z_]{1,12}");
    (
        prop::option::of(tricky_text()),
        prop::option::of(tricky_text()),
        prop::collection::vec(call, 0..4),
        prop::sample::select(vec!["stop", "tool_calls", "length", "content_filter"]),
        any::<bool>(),
    )
        .prop_map(|(reasoning, content, calls, reason, usage)| {
            let tool_calls: Vec<Value> = calls
                .into_iter()
                .enumerate()
                .map(|(i, (args, pretty, name))| {
                    let text = if pretty {
                        serde_json::to_string_pretty(&args).unwrap()
                    } else {
                        args.to_string()
                    };
                    json!({"id": format!("call_{i}"), "type": "function",
                           "function": {"name": name, "arguments": text}})
                })
                .collect();
            let mut message = json!({"role": "assistant", "content": content});
            if let Some(reasoning) = reasoning {
                message["reasoning_content"] = reasoning.into();
            }
            if !tool_calls.is_empty() {
                message["tool_calls"] = tool_calls.into();
            }
            let mut completion = json!({"id": "chatcmpl-p", "object": "chat.completion",
                "choices": [{"index": 0, "message": message, "finish_reason": reason}]});
            if usage {
                completion["usage"] =
                    json!({"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7});
            }
            completion
        })
}

/// Streams `response` with deltas cut by `deltas`, reads its bytes cut by
/// `bytes`, and checks the output against the whole parse.
fn check(format: NativeFormat, response: &Value, deltas: Chunking, bytes: Chunking) {
    let whole = parse_response(format, response, &NativeOptions::default());
    let stream = ScriptedStream::from_response_with(format, response, deltas);
    let streamed = stream.read(NativeReader::new(format), bytes);
    assert_eq!(
        streamed, whole,
        "{format} with deltas {deltas:?}, bytes {bytes:?}"
    );
    assert!(whole.problems.is_empty(), "{:?}", whole.problems);
    assert_eq!(whole.failed().count() + whole.truncated().count(), 0);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn a_chat_stream_cut_any_way_collects_to_the_whole_completion(
        completion in chat_completion(),
        deltas in chunking(),
        bytes in chunking(),
    ) {
        check(NativeFormat::OpenAiChat, &completion, deltas, bytes);
        let whole = parse_response(NativeFormat::OpenAiChat, &completion, &NativeOptions::default());
        // Pretty-printed arguments end at their closing brace: nothing
        // follows it here, so the text is the parser's.
        let calls: Vec<_> = whole.calls().cloned().collect();
        prop_assert_eq!(calls, parse_chat_tool_calls(&completion).unwrap());
    }

    #[test]
    fn a_chat_stream_read_one_byte_at_a_time_collects_to_the_whole_completion(
        completion in chat_completion(),
        deltas in chunking(),
    ) {
        check(NativeFormat::OpenAiChat, &completion, deltas, Chunking::ONE);
    }
}
