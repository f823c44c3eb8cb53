//! Provider-call parsers never recurse without a bound on values built in
//! memory: arguments nested 100,000 deep, handed to every parser on a thread
//! with an ordinary 2 MiB stack, are refused with a classified
//! `CallParseError::TooDeep` (no stack overflow), and a value just inside the
//! bound is read.

use serde_json::{Map, Value, json};
use tinyagents_tools::providers::{
    CallParseError, MAX_CALL_ARGUMENT_DEPTH, anthropic, gemini, mcp, openai,
};

/// An object nested `depth` levels deep (`{"a": {"a": ...}}`), built
/// without recursion.
fn nested(depth: usize) -> Value {
    let mut v = Value::Object(Map::new());
    for _ in 1..depth {
        let mut m = Map::new();
        m.insert("a".into(), v);
        v = Value::Object(m);
    }
    v
}

/// Drops a value of any depth without recursion.
fn dispose(value: Value) {
    let mut pending = vec![value];
    while let Some(v) = pending.pop() {
        pending.extend(match v {
            Value::Array(items) => items,
            Value::Object(map) => map.into_values().collect(),
            _ => Vec::new(),
        });
    }
}

/// `shape` with `args` put at `pointer`, without going through `json!`
/// (which would serialize a deep value recursively).
fn with_args(mut shape: Value, pointer: &str, args: Value) -> Value {
    *shape.pointer_mut(pointer).expect("the arguments' place") = args;
    shape
}

/// Every parser's payload with `args` as the call's arguments.
fn payloads(make: &dyn Fn() -> Value) -> Vec<(&'static str, Value)> {
    let chat = json!({"tool_calls": [{"id": "c1", "type": "function",
                                      "function": {"name": "t", "arguments": null}}]});
    let responses =
        json!([{"type": "function_call", "call_id": "c1", "name": "t", "arguments": null}]);
    let tool_use = json!([{"type": "tool_use", "id": "c1", "name": "t", "input": null}]);
    let function_call = json!([{"functionCall": {"name": "t", "args": null}}]);
    let params = json!({"name": "t", "arguments": null});
    vec![
        (
            "openai_chat",
            with_args(chat, "/tool_calls/0/function/arguments", make()),
        ),
        (
            "openai_responses",
            with_args(responses, "/0/arguments", make()),
        ),
        ("anthropic", with_args(tool_use, "/0/input", make())),
        (
            "gemini",
            with_args(function_call, "/0/functionCall/args", make()),
        ),
        ("mcp", with_args(params, "/arguments", make())),
    ]
}

fn parse(which: &str, payload: &Value) -> Result<usize, CallParseError> {
    let calls = match which {
        "openai_chat" => openai::parse_chat_tool_calls(payload)?,
        "openai_responses" => openai::parse_responses_function_calls(payload)?,
        "anthropic" => anthropic::parse_tool_uses(payload)?,
        "gemini" => gemini::parse_function_calls(payload, 1)?,
        _ => vec![mcp::parse_call_tool_params("1", payload)?],
    };
    let n = calls.len();
    for call in calls {
        if let tinyagents_tools::call::RawArguments::Json(v) = call.arguments {
            dispose(v);
        }
    }
    Ok(n)
}

#[test]
fn arguments_nested_a_hundred_thousand_deep_in_memory_are_refused_by_every_parser_on_a_2_mib_stack()
{
    let outcome = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            let mut seen = Vec::new();
            for (which, payload) in payloads(&|| nested(100_000)) {
                let result = parse(which, &payload);
                dispose(payload);
                match result {
                    Err(CallParseError::TooDeep { pointer, max }) => {
                        assert_eq!(max, MAX_CALL_ARGUMENT_DEPTH);
                        assert!(
                            pointer.ends_with("arguments")
                                || pointer.ends_with("args")
                                || pointer.ends_with("input"),
                            "{which}: {pointer}"
                        );
                        seen.push(which);
                    }
                    other => panic!("{which}: {other:?}"),
                }
            }
            seen
        })
        .unwrap()
        .join()
        .expect("no stack overflow, no panic");
    assert_eq!(outcome.len(), 5);
}

#[test]
fn arguments_at_the_depth_bound_are_read_and_one_level_more_is_refused() {
    for (which, payload) in payloads(&|| nested(MAX_CALL_ARGUMENT_DEPTH)) {
        assert_eq!(parse(which, &payload).unwrap(), 1, "{which}");
    }
    for (which, payload) in payloads(&|| nested(MAX_CALL_ARGUMENT_DEPTH + 1)) {
        let e = parse(which, &payload).unwrap_err();
        assert!(
            e.to_string()
                .contains(&format!("deeper than {MAX_CALL_ARGUMENT_DEPTH} levels")),
            "{which}: {e}"
        );
    }
}

/// The executor itself, handed a `ToolCall` whose arguments were built in
/// memory 100,000 levels deep (no parser in between), answers with the
/// classified depth error on an ordinary 2 MiB stack, and frees the value
/// without overflowing it.
#[test]
fn an_executor_call_with_arguments_nested_a_hundred_thousand_deep_in_memory_is_refused() {
    use tinyagents_tools::builtins::EchoTool;
    use tinyagents_tools::{RunContext, ToolCall, ToolExecutor, ToolRegistry, Turn};
    let answer = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            let mut registry: ToolRegistry = ToolRegistry::new();
            registry.register(EchoTool).unwrap();
            let executor = ToolExecutor::builder(registry, ()).build().unwrap();
            let run = RunContext::builder(()).build();
            let call = ToolCall::new("deep-1", "echo", nested(100_000));
            let result = tokio::runtime::Builder::new_current_thread()
                .build()
                .unwrap()
                .block_on(executor.execute(&run, &Turn::new(1), call));
            (
                result.is_error,
                result.tool_call_id.to_string(),
                result.outcome(),
                result.text().contains("deeper than"),
            )
        })
        .unwrap()
        .join()
        .expect("no stack overflow");
    assert_eq!(answer, (true, "deep-1".to_owned(), "limit_exceeded", true));
}
