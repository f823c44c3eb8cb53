//! Tool calls read from, and results written in, each provider's format, with
//! payloads shaped like the providers' documented examples.

use std::time::Duration;

use serde_json::{Value, json};
use tinyagents_tools::providers::{CallParseError, anthropic, gemini, mcp, openai};
use tinyagents_tools::{
    ContentBlock, RawArguments, ToolCall, ToolCallId, ToolError, ToolMessage, ToolResult,
};

fn text_result(id: &str, name: &str, text: &str) -> ToolMessage {
    ToolMessage {
        tool_call_id: ToolCallId::from(id),
        name: name.into(),
        content: vec![ContentBlock::text(text)],
        structured: None,
        is_error: false,
    }
}

fn structured_result(id: &str, name: &str, value: Value) -> ToolMessage {
    ToolMessage {
        content: Vec::new(),
        structured: Some(value),
        ..text_result(id, name, "")
    }
}

fn error_result(id: &str, name: &str) -> ToolResult {
    let error = ToolError::repair("`location` is required");
    ToolResult::from_error(ToolCallId::from(id), name, error, Duration::ZERO)
}

#[test]
fn openai_chat_tool_calls_keep_arguments_as_text_and_results_answer_by_id() {
    let response = json!({
        "id": "chatcmpl-abc123",
        "object": "chat.completion",
        "created": 1699896916,
        "model": "gpt-4o-mini",
        "choices": [{
            "index": 0,
            "message": {
                "role": "assistant",
                "content": null,
                "tool_calls": [
                    {"id": "call_abc123", "type": "function",
                     "function": {"name": "get_current_weather", "arguments": "{\n\"location\": \"Boston, MA\"\n}"}},
                    {"id": "call_def456", "type": "function",
                     "function": {"name": "get_current_weather", "arguments": "{\"location\": \"Bos"}}
                ]
            },
            "logprobs": null,
            "finish_reason": "tool_calls"
        }]
    });
    let calls = openai::parse_chat_tool_calls(&response).expect("parses");
    assert_eq!(
        calls,
        [
            ToolCall::new(
                "call_abc123",
                "get_current_weather",
                "{\n\"location\": \"Boston, MA\"\n}"
            ),
            ToolCall::new("call_def456", "get_current_weather", "{\"location\": \"Bos"),
        ]
    );
    assert_eq!(
        calls[1].arguments,
        RawArguments::Text("{\"location\": \"Bos".into())
    );
    let message = &response["choices"][0]["message"];
    assert_eq!(
        openai::parse_chat_tool_calls(message).expect("parses"),
        calls
    );
    assert_eq!(
        openai::chat_tool_message(&text_result(
            "call_abc123",
            "get_current_weather",
            "72 and sunny"
        )),
        json!({"role": "tool", "tool_call_id": "call_abc123", "content": "72 and sunny"})
    );
    assert!(
        openai::parse_chat_tool_calls(&json!({"role": "assistant", "content": "Hi"}))
            .expect("no calls")
            .is_empty()
    );
}

#[test]
fn openai_responses_function_calls_use_call_id() {
    let response = json!({
        "id": "resp_123",
        "object": "response",
        "output": [
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {"type": "function_call", "id": "fc_12345xyz", "call_id": "call_12345xyz",
             "name": "get_weather", "arguments": "{\"location\":\"Paris, France\"}", "status": "completed"}
        ]
    });
    let calls = openai::parse_responses_function_calls(&response).expect("parses");
    assert_eq!(
        calls,
        [ToolCall::new(
            "call_12345xyz",
            "get_weather",
            "{\"location\":\"Paris, France\"}"
        )]
    );
    let result = structured_result("call_12345xyz", "get_weather", json!({"temperature": 14}));
    assert_eq!(
        openai::responses_function_call_output(&result),
        json!({"type": "function_call_output", "call_id": "call_12345xyz", "output": "{\"temperature\":14}"})
    );
}

#[test]
fn anthropic_tool_use_blocks_become_calls_and_results_carry_is_error() {
    let message = json!({
        "id": "msg_01Aq9w938a90dw8q",
        "model": "claude-sonnet-4-5",
        "stop_reason": "tool_use",
        "role": "assistant",
        "content": [
            {"type": "text", "text": "I'll check the current weather in San Francisco for you."},
            {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "get_weather",
             "input": {"location": "San Francisco, CA", "unit": "celsius"}}
        ]
    });
    let calls = anthropic::parse_tool_uses(&message).expect("parses");
    assert_eq!(
        calls,
        [ToolCall::new(
            "toolu_01A09q90qw90lq917835lq9",
            "get_weather",
            json!({"location": "San Francisco, CA", "unit": "celsius"})
        )]
    );
    let ok = text_result("toolu_01A09q90qw90lq917835lq9", "get_weather", "15 degrees");
    assert_eq!(
        anthropic::tool_result_block(&ok),
        json!({"type": "tool_result", "tool_use_id": "toolu_01A09q90qw90lq917835lq9", "content": "15 degrees"})
    );
    let failed = anthropic::tool_result_block(&error_result(
        "toolu_01A09q90qw90lq917835lq9",
        "get_weather",
    ));
    assert_eq!(failed["is_error"], true);
    assert_eq!(failed["tool_use_id"], "toolu_01A09q90qw90lq917835lq9");
    let image = ToolMessage {
        content: vec![ContentBlock::Image {
            data: "iVBORw0KGgo=".into(),
            mime_type: "image/png".into(),
        }],
        ..ok.clone()
    };
    assert_eq!(
        anthropic::tool_result_block(&image)["content"],
        json!([{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}])
    );
    assert_eq!(anthropic::tool_results_message(&[ok])["role"], "user");
}

#[test]
fn gemini_function_calls_without_ids_get_stable_ids_from_turn_position_and_name() {
    let response = json!({
        "candidates": [{
            "content": {"role": "model", "parts": [
                {"text": "Setting the lights."},
                {"functionCall": {"name": "set_light_values", "args": {"brightness": 25, "color_temp": "warm"}}},
                {"functionCall": {"name": "power_disco_ball"}}
            ]},
            "finishReason": "STOP"
        }]
    });
    let calls = gemini::parse_function_calls(&response, 3).expect("parses");
    assert_eq!(
        calls,
        [
            ToolCall::new(
                "gemini-call-3-0-set_light_values",
                "set_light_values",
                json!({"brightness": 25, "color_temp": "warm"})
            ),
            ToolCall::new(
                "gemini-call-3-1-power_disco_ball",
                "power_disco_ball",
                json!({})
            ),
        ]
    );
    assert_eq!(
        gemini::parse_function_calls(&response, 3).expect("parses"),
        calls,
        "ids are stable"
    );
    let result = structured_result(
        calls[0].id.as_str(),
        "set_light_values",
        json!({"brightness": 25, "colorTemperature": "warm"}),
    );
    assert_eq!(
        gemini::function_response_part(&result),
        json!({"functionResponse": {"name": "set_light_values", "response": {"output": {"brightness": 25, "colorTemperature": "warm"}}}})
    );
}

#[test]
fn gemini_ids_sent_by_the_provider_are_kept_and_echoed() {
    let content = json!({"role": "model", "parts": [
        {"functionCall": {"id": "fc-7", "name": "get_weather", "args": {"city": "Paris"}}}
    ]});
    let calls = gemini::parse_function_calls(&content, 1).expect("parses");
    assert_eq!(calls[0].id.as_str(), "fc-7");
    let failed = gemini::function_response_part(&error_result("fc-7", "get_weather"));
    assert_eq!(failed["functionResponse"]["id"], "fc-7");
    assert!(failed["functionResponse"]["response"]["error"].is_string());
    assert_eq!(
        gemini::function_responses_content::<ToolMessage>(&[]),
        json!({"role": "user", "parts": []})
    );
}

#[test]
fn mcp_tools_call_requests_use_the_json_rpc_id_and_results_copy_structured_content() {
    let request = json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "get_weather", "arguments": {"location": "New York"}}
    });
    let call = mcp::parse_call_tool_request(&request).expect("parses");
    assert_eq!(
        call,
        ToolCall::new("2", "get_weather", json!({"location": "New York"}))
    );
    let bare = mcp::parse_call_tool_params("req-9", &json!({"name": "ping"})).expect("parses");
    assert_eq!(bare, ToolCall::new("req-9", "ping", json!({})));
    let weather = json!({"temperature": 22.5, "conditions": "Partly cloudy", "humidity": 65});
    assert_eq!(
        mcp::call_tool_result(&structured_result("2", "get_weather", weather.clone())),
        json!({
            "content": [{"type": "text", "text": weather.to_string()}],
            "structuredContent": weather,
            "isError": false
        })
    );
    let failed = mcp::call_tool_result(&error_result("2", "get_weather"));
    assert_eq!(failed["isError"], true);
    assert_eq!(failed["content"][0]["type"], "text");
    assert!(failed.get("structuredContent").is_none());
}

#[test]
fn malformed_payloads_give_typed_errors_with_pointers() {
    let missing_id =
        json!({"tool_calls": [{"type": "function", "function": {"name": "f", "arguments": "{}"}}]});
    assert_eq!(
        openai::parse_chat_tool_calls(&missing_id),
        Err(CallParseError::Missing {
            pointer: "/tool_calls/0/id".into()
        })
    );
    assert_eq!(
        anthropic::parse_tool_uses(
            &json!({"content": [{"type": "tool_use", "id": "t", "name": 3, "input": {}}]})
        ),
        Err(CallParseError::WrongType {
            pointer: "/content/0/name".into(),
            expected: "a string"
        })
    );
    assert_eq!(
        mcp::parse_call_tool_request(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})),
        Err(CallParseError::WrongMethod {
            method: "tools/list".into()
        })
    );
    assert_eq!(
        mcp::parse_call_tool_request(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {}})
        ),
        Err(CallParseError::Missing {
            pointer: "/params/name".into()
        })
    );
}

#[test]
fn no_json_input_makes_a_parser_panic() {
    let odd = [
        json!(null),
        json!(1),
        json!("text"),
        json!([]),
        json!([null, 1, "x"]),
        json!({}),
        json!({"choices": []}),
        json!({"choices": [{"message": {"tool_calls": "nope"}}]}),
        json!({"tool_calls": [{"id": 1, "function": []}]}),
        json!({"output": {"a": 1}}),
        json!({"content": [{"type": "tool_use"}]}),
        json!({"candidates": [{}]}),
        json!({"parts": [{"functionCall": null}]}),
        json!({"parts": [{"functionCall": {"name": 5}}]}),
        json!({"method": "tools/call", "id": [], "params": 1}),
    ];
    for value in odd {
        let _ = openai::parse_chat_tool_calls(&value);
        let _ = openai::parse_responses_function_calls(&value);
        let _ = anthropic::parse_tool_uses(&value);
        let _ = gemini::parse_function_calls(&value, 0);
        let _ = mcp::parse_call_tool_request(&value);
        let _ = mcp::parse_call_tool_params("1", &value);
    }
    assert!(openai::parse_chat_tool_calls(&json!({"choices": []})).is_err());
}
