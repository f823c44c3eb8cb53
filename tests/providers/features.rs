//! Provider features of today's APIs: Gemini thought signatures kept and
//! written back, cache-friendly tool selection, deferred tools (`defer_loading`
//! and the built-in `search_tools`), provider limits at export.

use serde_json::json;
use tinyagents_tools::providers::{
    AllowedMode, ExportError, Limit, Provider, allowed_tools_choice, export_declarations, gemini,
    request_tools_deferred,
};
use tinyagents_tools::tool::ToolSearch;
use tinyagents_tools::{RunContext, ToolCall, ToolExecutor, ToolSpec, Turn};
use tinyagents_tools_tests::{FakeTool, call, echo, kind, registry, send_email};

/// Gemini's documented shape for parallel calls: only the first
/// `functionCall` part of a turn carries the `thoughtSignature`.
fn parallel_reply() -> serde_json::Value {
    json!({
        "candidates": [{
            "content": {"role": "model", "parts": [
                {"functionCall": {"name": "check_flight", "args": {"flight": "AA100"}},
                 "thoughtSignature": "<Signature_A>"},
                {"functionCall": {"name": "check_flight", "args": {"flight": "AA101"}}}
            ]},
            "finishReason": "STOP"
        }]
    })
}

#[test]
fn gemini_thought_signature_of_a_single_call_is_kept_and_written_back() {
    let reply = json!({"role": "model", "parts": [
        {"functionCall": {"id": "fc-1", "name": "get_weather", "args": {"city": "Paris"}},
         "thoughtSignature": "CiQBcsjafQ=="}
    ]});
    let calls = gemini::parse_function_calls(&reply, 1).expect("parses");
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].thought_signature.as_deref(), Some("CiQBcsjafQ=="));
    assert_eq!(gemini::function_calls_content(&calls), reply);
}

#[test]
fn gemini_parallel_calls_write_back_the_signature_on_the_first_part_only() {
    let calls = gemini::parse_function_calls(&parallel_reply(), 2).expect("parses");
    assert_eq!(calls[0].thought_signature.as_deref(), Some("<Signature_A>"));
    assert_eq!(calls[1].thought_signature, None);
    assert_eq!(
        gemini::function_calls_content(&calls),
        json!({"role": "model", "parts": [
            {"functionCall": {"name": "check_flight", "args": {"flight": "AA100"}},
             "thoughtSignature": "<Signature_A>"},
            {"functionCall": {"name": "check_flight", "args": {"flight": "AA101"}}}
        ]})
    );
}

#[test]
fn a_call_without_a_signature_is_written_back_without_one() {
    let call = ToolCall::new("fc-2", "get_time", r#"{"tz": "UTC"}"#);
    assert_eq!(
        gemini::function_call_part(&call),
        json!({"functionCall": {"id": "fc-2", "name": "get_time", "args": {"tz": "UTC"}}})
    );
}

#[test]
fn a_thought_signature_that_is_not_a_string_is_refused_with_its_pointer() {
    let reply = json!({"parts": [
        {"functionCall": {"name": "get_time"}, "thoughtSignature": 7}
    ]});
    let err = gemini::parse_function_calls(&reply, 1).unwrap_err();
    assert!(
        err.to_string().contains("/parts/0/thoughtSignature"),
        "{err}"
    );
}

#[test]
fn a_signed_call_round_trips_through_serde_and_unsigned_calls_serialize_as_before() {
    let calls = gemini::parse_function_calls(&parallel_reply(), 2).expect("parses");
    let text = serde_json::to_string(&calls).unwrap();
    let back: Vec<ToolCall> = serde_json::from_str(&text).unwrap();
    assert_eq!(back, calls);
    let plain = serde_json::to_value(ToolCall::new("c", "t", json!({}))).unwrap();
    assert_eq!(plain, json!({"id": "c", "name": "t", "arguments": {}}));
}

fn tool(name: &str) -> ToolSpec {
    ToolSpec::builder(name, format!("The {name} tool."))
        .build()
        .unwrap()
}

#[test]
fn allowed_tools_go_in_each_providers_tool_choice_while_the_list_stays_whole() {
    let specs = [tool("get_weather"), tool("get_time"), tool("send_email")];
    let allowed = ["get_weather", "get_time"];
    // The full list is exported whatever the subset: the same text turn
    // after turn.
    let full = export_declarations(Provider::OpenAiChat.default_target(), &specs);
    assert_eq!(full.declarations.len(), 3);

    // Each provider's published form of "only these tools this turn".
    let expected = [
        (
            Provider::OpenAiChat,
            AllowedMode::Auto,
            Some(json!({
                "type": "allowed_tools",
                "allowed_tools": {"mode": "auto", "tools": [
                    {"type": "function", "function": {"name": "get_weather"}},
                    {"type": "function", "function": {"name": "get_time"}}
                ]}
            })),
        ),
        (
            Provider::OpenAiResponses,
            AllowedMode::Required,
            Some(json!({
                "type": "allowed_tools", "mode": "required", "tools": [
                    {"type": "function", "name": "get_weather"},
                    {"type": "function", "name": "get_time"}
                ]
            })),
        ),
        (
            Provider::Gemini,
            AllowedMode::Auto,
            Some(json!({"functionCallingConfig": {
                "mode": "VALIDATED", "allowedFunctionNames": ["get_weather", "get_time"]
            }})),
        ),
        (
            Provider::Gemini,
            AllowedMode::Required,
            Some(json!({"functionCallingConfig": {
                "mode": "ANY", "allowedFunctionNames": ["get_weather", "get_time"]
            }})),
        ),
        (Provider::Anthropic, AllowedMode::Auto, None),
    ];
    for (provider, mode, choice) in expected {
        assert_eq!(
            allowed_tools_choice(provider.default_target(), allowed, mode),
            choice,
            "{provider:?} {mode:?}"
        );
    }
}

#[tokio::test]
async fn the_executor_still_refuses_a_call_outside_the_allowed_subset() {
    let send = send_email();
    let registry = registry(vec![echo(), send.clone()]);
    let executor = ToolExecutor::builder(registry, ()).build().unwrap();
    let turn = Turn::new(1).advertising(["echo"]);
    let run = RunContext::empty();
    let email = call("c-1", "send_email", json!({"to": "a@b.c"}));
    let refused = executor.execute(&run, &turn, email).await;
    assert_eq!(kind(&refused), "not_advertised");
    assert_eq!(refused.tool_call_id.as_str(), "c-1");
    assert_eq!(send.runs(), 0);
    let echo = call("c-2", "echo", json!({"text": "hi"}));
    let ok = executor.execute(&run, &turn, echo).await;
    assert_eq!(kind(&ok), "ok");
}

#[test]
fn a_description_over_openai_chats_limit_is_refused_naming_the_limit() {
    let long = ToolSpec::builder("wordy", "x".repeat(1025))
        .build()
        .unwrap();
    let just = ToolSpec::builder("fits", "é".repeat(1024)).build().unwrap();
    let out = export_declarations(Provider::OpenAiChat.default_target(), [&long, &just]);
    assert_eq!(out.declarations.len(), 1, "{:?}", out.errors);
    assert_eq!(out.declarations[0].json()["function"]["name"], "fits");
    match &out.errors[..] {
        [
            ExportError::LimitExceeded {
                tool,
                limit: Limit::DescriptionChars,
                max: 1024,
                pointer,
                ..
            },
        ] => {
            assert_eq!(tool, "wordy");
            assert_eq!(pointer, "/description");
        }
        other => panic!("{other:?}"),
    }
    assert!(
        out.errors[0]
            .to_string()
            .contains("1024 characters of a tool description"),
        "{}",
        out.errors[0]
    );
    // Other providers take it.
    let anthropic = export_declarations(Provider::Anthropic.default_target(), [&long]);
    assert!(anthropic.errors.is_empty());
}

#[test]
fn gemini_takes_at_most_128_function_declarations_per_request() {
    let specs: Vec<ToolSpec> = (0..130).map(|i| tool(&format!("tool_{i}"))).collect();
    let out = export_declarations(Provider::Gemini.default_target(), &specs);
    assert_eq!(out.declarations.len(), 128);
    assert_eq!(out.errors.len(), 2);
    assert!(out.errors.iter().all(|e| matches!(
        e,
        ExportError::RequestLimit {
            limit: Limit::ToolsPerRequest,
            max: 128,
            ..
        }
    )));
    assert_eq!(out.errors[0].tool(), "tool_128");
}

fn tagged(name: &str, description: &str, tag: &str) -> ToolSpec {
    ToolSpec::builder(name, description)
        .tag(tag)
        .build()
        .unwrap()
}

#[test]
fn deferred_tools_carry_defer_loading_and_the_providers_search_tool() {
    let specs = [tool("get_weather"), tool("issue_refund")];
    let responses = export_declarations(Provider::OpenAiResponses.default_target(), &specs);
    assert_eq!(
        request_tools_deferred(&responses, ["issue_refund"]),
        Some(json!([
            {"type": "function", "name": "get_weather", "description": "The get_weather tool.",
             "parameters": {"type": "object", "properties": {}, "required": [], "additionalProperties": false},
             "strict": true},
            {"type": "function", "name": "issue_refund", "description": "The issue_refund tool.",
             "parameters": {"type": "object", "properties": {}, "required": [], "additionalProperties": false},
             "strict": true, "defer_loading": true},
            {"type": "tool_search"}
        ]))
    );
    let anthropic = export_declarations(Provider::Anthropic.default_target(), &specs);
    assert_eq!(
        request_tools_deferred(&anthropic, ["issue_refund"]),
        Some(json!([
            {"name": "get_weather", "description": "The get_weather tool.",
             "input_schema": {"type": "object", "properties": {}, "additionalProperties": false}},
            {"name": "issue_refund", "description": "The issue_refund tool.",
             "input_schema": {"type": "object", "properties": {}, "additionalProperties": false},
             "defer_loading": true},
            {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}
        ]))
    );
    for provider in [Provider::OpenAiChat, Provider::Gemini, Provider::Mcp] {
        let out = export_declarations(provider.default_target(), &specs);
        assert_eq!(
            request_tools_deferred(&out, ["issue_refund"]),
            None,
            "{provider}"
        );
    }
}

#[test]
fn search_tools_ranks_by_name_then_tags_then_description_words() {
    let refund = tagged("issue_refund", "Refund an order to the card.", "billing");
    let invoice = tagged("send_invoice", "Email the invoice of an order.", "billing");
    let weather = tagged("get_weather", "Current weather for a city.", "travel");
    let search = ToolSearch::new([&refund, &invoice, &weather]);
    // "refund": name word (3) and description word (1) for issue_refund only.
    assert_eq!(search.rank("refund"), ["issue_refund"]);
    // "billing order": tags (2 each) and description (1 each): a tie, by name.
    assert_eq!(
        search.rank("billing order"),
        ["issue_refund", "send_invoice"]
    );
    // The whole name wins.
    assert_eq!(search.rank("send_invoice")[0], "send_invoice");
    assert!(search.rank("quantum").is_empty());
    let few = ToolSearch::with_limit([&refund, &invoice, &weather], 1);
    assert_eq!(few.rank("billing"), ["issue_refund"]);
    assert!(search.enabled().is_empty(), "ranking enables nothing");
}

#[tokio::test]
async fn a_tool_found_by_search_tools_is_callable_from_the_next_turn_only() {
    let send = send_email();
    let search = ToolSearch::new([FakeTool::spec(&send)]);
    let mut registry = registry(vec![echo(), send.clone()]);
    registry.register(search.clone()).unwrap();
    let executor = ToolExecutor::builder(registry, ()).build().unwrap();
    let run = RunContext::empty();
    let always = ["echo", ToolSearch::NAME];
    let email = |id: &str| call(id, "send_email", json!({"to": "a@b.c"}));

    let turn1 = Turn::new(1).advertising(always);
    let early = executor.execute(&run, &turn1, email("c-1")).await;
    assert_eq!(kind(&early), "not_advertised");
    let found = executor
        .execute(
            &run,
            &turn1,
            call("c-2", ToolSearch::NAME, json!({"query": "send an email"})),
        )
        .await;
    assert_eq!(kind(&found), "ok", "{found:?}");
    assert_eq!(
        found.structured.as_ref().unwrap()["tools"],
        json!([{"name": "send_email", "description": FakeTool::spec(&send).description}])
    );
    assert_eq!(search.enabled(), ["send_email"]);

    let names = always.iter().map(|n| n.to_string()).chain(search.enabled());
    let turn2 = Turn::new(2).advertising(names);
    let sent = executor.execute(&run, &turn2, email("c-3")).await;
    assert_eq!(kind(&sent), "ok");
    assert_eq!(send.runs(), 1);
}
