//! The invariant of the provider-stream readers, over generated responses:
//! the output collected from a response's stream, cut any way, equals the
//! whole-response parse of that response, whose calls are the provider
//! parser's calls.

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use tinyagents_tools::call::ToolCall;
use tinyagents_tools::providers::anthropic::parse_tool_uses;
use tinyagents_tools::providers::gemini::parse_function_calls;
use tinyagents_tools::providers::openai::{parse_chat_tool_calls, parse_responses_function_calls};
use tinyagents_tools::stream::OutputReader;
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

/// Argument text: compact or pretty-printed JSON.
fn argument_text(args: &Value, pretty: bool) -> String {
    if pretty {
        serde_json::to_string_pretty(args).unwrap()
    } else {
        args.to_string()
    }
}

fn responses_response() -> impl Strategy<Value = Value> {
    let reasoning = (
        prop::collection::vec(tricky_text(), 0..3),
        prop::collection::vec(tricky_text(), 0..2),
        prop::option::of("[A-Za-z0-9+/=]{4,24}"),
    )
        .prop_map(|(summary, content, encrypted)| {
            let summary: Vec<Value> = summary
                .into_iter()
                .map(|t| json!({"type": "summary_text", "text": t}))
                .collect();
            let content: Vec<Value> = content
                .into_iter()
                .map(|t| json!({"type": "reasoning_text", "text": t}))
                .collect();
            let mut item = json!({"type": "reasoning", "id": "rs_1", "summary": summary});
            if !content.is_empty() {
                item["content"] = content.into();
            }
            if let Some(encrypted) = encrypted {
                item["encrypted_content"] = encrypted.into();
            }
            item
        });
    let message =
        (prop::collection::vec(tricky_text(), 1..3), any::<bool>()).prop_map(|(texts, refusal)| {
            let mut parts: Vec<Value> = texts
                .into_iter()
                .map(|t| json!({"type": "output_text", "text": t, "annotations": []}))
                .collect();
            if refusal {
                parts.push(json!({"type": "refusal", "refusal": "I can't."}));
            }
            json!({"type": "message", "id": "msg_1", "role": "assistant",
                   "status": "completed", "content": parts})
        });
    let call = (arguments(), any::<bool>(), "[a-z_]{1,12}");
    (
        prop::option::of(reasoning),
        prop::option::of(message),
        prop::collection::vec(call, 0..4),
        prop::sample::select(vec!["completed", "incomplete"]),
        any::<bool>(),
    )
        .prop_map(|(reasoning, message, calls, status, usage)| {
            let mut output: Vec<Value> = reasoning.into_iter().chain(message).collect();
            for (i, (args, pretty, name)) in calls.into_iter().enumerate() {
                output.push(json!({"type": "function_call", "id": format!("fc_{i}"),
                    "call_id": format!("call_{i}"), "name": name,
                    "arguments": argument_text(&args, pretty), "status": "completed"}));
            }
            let mut response = json!({"id": "resp_p", "object": "response", "status": status,
                "output": output, "usage": null});
            if status == "incomplete" {
                response["incomplete_details"] = json!({"reason": "max_output_tokens"});
            }
            if usage {
                response["usage"] =
                    json!({"input_tokens": 3, "output_tokens": 4, "total_tokens": 7});
            }
            response
        })
}

fn anthropic_message() -> impl Strategy<Value = Value> {
    let block = prop_oneof![
        tricky_text().prop_map(|t| json!({"type": "text", "text": t})),
        (tricky_text(), "[A-Za-z0-9+/]{8,24}")
            .prop_map(|(t, sig)| json!({"type": "thinking", "thinking": t, "signature": sig})),
        "[A-Za-z0-9+/]{8,24}".prop_map(|data| json!({"type": "redacted_thinking", "data": data})),
        (arguments(), "[a-z_]{1,12}")
            .prop_map(|(input, name)| json!({"type": "tool_use", "name": name, "input": input})),
    ];
    (
        prop::collection::vec(block, 0..6),
        prop::sample::select(vec!["end_turn", "tool_use", "max_tokens", "stop_sequence"]),
    )
        .prop_map(|(blocks, reason)| {
            let content: Vec<Value> = blocks
                .into_iter()
                .enumerate()
                .map(|(i, mut block)| {
                    if block["type"] == "tool_use" {
                        block["id"] = format!("toolu_{i}").into();
                    }
                    block
                })
                .collect();
            json!({"id": "msg_p", "type": "message", "role": "assistant", "content": content,
                "stop_reason": reason, "stop_sequence": null,
                "usage": {"input_tokens": 10, "output_tokens": 20}})
        })
}

fn gemini_response() -> impl Strategy<Value = Value> {
    let signature = prop::option::of("[A-Za-z0-9+/]{8,24}");
    let part = prop_oneof![
        (tricky_text(), any::<bool>(), signature.clone()).prop_map(|(text, thought, sig)| {
            let mut part = json!({"text": text});
            if thought {
                part["thought"] = true.into();
            }
            if let Some(sig) = sig {
                part["thoughtSignature"] = sig.into();
            }
            part
        }),
        (arguments(), "[a-z_]{1,12}", any::<bool>(), signature).prop_map(
            |(args, name, with_id, sig)| {
                let mut call = json!({"name": name, "args": args});
                if with_id {
                    call["id"] = format!("fc-{name}").into();
                }
                let mut part = json!({"functionCall": call});
                if let Some(sig) = sig {
                    part["thoughtSignature"] = sig.into();
                }
                part
            }
        ),
    ];
    (
        prop::collection::vec(part, 0..6),
        prop::sample::select(vec!["STOP", "MAX_TOKENS"]),
    )
        .prop_map(|(parts, reason)| {
            // Given ids are unique in a response.
            let mut seen = std::collections::HashSet::new();
            let parts: Vec<Value> = parts
                .into_iter()
                .filter(|p| {
                    p.pointer("/functionCall/id")
                        .and_then(Value::as_str)
                        .is_none_or(|id| seen.insert(id.to_owned()))
                })
                .collect();
            json!({"candidates": [{"content": {"role": "model", "parts": parts},
                "finishReason": reason, "index": 0}],
                "usageMetadata": {"promptTokenCount": 5, "totalTokenCount": 9}})
        })
}

/// The calls the provider's own parser reads from `response`.
fn provider_calls(format: NativeFormat, response: &Value) -> Vec<ToolCall> {
    match format {
        NativeFormat::OpenAiChat => parse_chat_tool_calls(response),
        NativeFormat::OpenAiResponses => parse_responses_function_calls(response),
        NativeFormat::Anthropic => parse_tool_uses(response),
        NativeFormat::Gemini => parse_function_calls(response, 0),
        other => panic!("no parser for {other}"),
    }
    .unwrap()
}

/// Any response of any format.
fn any_response() -> impl Strategy<Value = (NativeFormat, Value)> {
    prop_oneof![
        chat_completion().prop_map(|r| (NativeFormat::OpenAiChat, r)),
        responses_response().prop_map(|r| (NativeFormat::OpenAiResponses, r)),
        anthropic_message().prop_map(|r| (NativeFormat::Anthropic, r)),
        gemini_response().prop_map(|r| (NativeFormat::Gemini, r)),
    ]
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
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn every_format_s_stream_cut_any_way_collects_to_the_whole_response(
        (format, response) in any_response(),
        deltas in chunking(),
        bytes in chunking(),
    ) {
        check(format, &response, deltas, bytes);
        let whole = parse_response(format, &response, &NativeOptions::default());
        let calls: Vec<_> = whole.calls().cloned().collect();
        prop_assert_eq!(calls, provider_calls(format, &response));
    }

    #[test]
    fn every_format_s_stream_read_one_byte_at_a_time_collects_to_the_whole_response(
        (format, response) in any_response(),
        deltas in chunking(),
    ) {
        check(format, &response, deltas, Chunking::ONE);
    }

    #[test]
    fn a_stream_cut_off_anywhere_readies_only_calls_of_the_whole_response(
        (format, response) in any_response(),
        deltas in chunking(),
        cut in any::<prop::sample::Index>(),
    ) {
        let whole = parse_response(format, &response, &NativeOptions::default());
        let stream = ScriptedStream::from_response_with(format, &response, deltas);
        let bytes = stream.as_bytes();
        let cut = cut.index(bytes.len() + 1);
        let mut reader = NativeReader::new(format);
        let out = reader.read_all([&bytes[..cut]]);
        // Every call that is ready is a call of the whole response, exactly;
        // the calls it lacks are truncated or failed, never dropped.
        let all: Vec<&ToolCall> = whole.calls().collect();
        for call in out.calls() {
            prop_assert!(all.contains(&call), "{call:?} is not one of {all:?}");
        }
        let started = out.calls().count() + out.failed().count() + out.truncated().count();
        prop_assert!(started <= all.len());
        prop_assert!(out.finish.is_some());
    }
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
