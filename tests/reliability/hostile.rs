//! Malformed and hostile arguments: each gets a classified refusal before
//! the tool runs, the limits bound size and depth (configurable, with safe
//! defaults), and nothing on the way (parsing, validation, hashing, dropping)
//! recurses once per level of a hostile value.

use std::sync::atomic::{AtomicUsize, Ordering};
use tinyagents_tools_tests::execute_in;

use serde_json::{Map, Value, json};
use tinyagents_tools::call::RawArguments;
use tinyagents_tools::events::EventKind;
use tinyagents_tools::executor::ExecutorConfig;
use tinyagents_tools::prelude::*;
use tinyagents_tools::{ErrorClass, ToolExecutor, ToolResult, tool};
use tinyagents_tools_tests::*;

static COUNT_RUNS: AtomicUsize = AtomicUsize::new(0);

/// Arguments with every width of integer a hostile number could overflow.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CountArgs {
    /// A 64-bit unsigned count.
    pub count: u64,
    /// A signed offset.
    #[serde(default)]
    pub offset: Option<i64>,
    /// A small number.
    #[serde(default)]
    pub small: Option<u32>,
}

/// Count up from `count` by `offset`.
#[tool(read_only, idempotent, local)]
pub async fn count_up(args: CountArgs) -> String {
    COUNT_RUNS.fetch_add(1, Ordering::SeqCst);
    format!("{} {:?} {:?}", args.count, args.offset, args.small)
}

/// Echo's arguments with `levels` empty arrays nested under `n`, as text.
pub(crate) fn echo_nested(levels: usize) -> String {
    let (open, close) = ("[".repeat(levels), "]".repeat(levels));
    format!(r#"{{"text": "x", "n": {open}{close}}}"#)
}

pub(crate) fn run() -> RunContext {
    RunContext::empty()
}

/// Asserts `result` is a refusal of `kind` for call `id`, announced by one
/// `tool.rejected` event and nothing else.
pub(crate) fn assert_refused(result: &ToolResult, id: &str, kind_str: &str, recorder: &Recorder) {
    assert_eq!(result.tool_call_id.as_str(), id);
    assert_eq!(kind(result), kind_str, "{id}: {}", result.text());
    let error = result.error.as_ref().expect("an error");
    assert_eq!(error.class(), ErrorClass::Repair, "{id}");
    let events: Vec<EventKind> = recorder
        .events()
        .iter()
        .filter(|e| e.call_id.as_str() == id)
        .map(|e| e.kind)
        .collect();
    assert_eq!(events, [EventKind::Rejected], "{id}");
}

#[tokio::test]
async fn every_malformed_argument_text_gets_a_classified_refusal_and_runs_nothing() {
    let echo = echo();
    let send = send_email();
    let (recorder, exec) = recorded(vec![echo.clone(), send.clone()]);
    let corpus: &[(&str, &str, &str)] = &[
        ("not json at all", "echo", "not valid JSON"),
        ("", "echo", "missing"),
        ("   \n\t", "send_email", "missing"),
        ("null", "send_email", "missing"),
        ("[]", "echo", "not an array"),
        (r#"[{"text": "hi"}]"#, "echo", "not an array"),
        ("42", "echo", "not an integer"),
        ("-0.5", "echo", "not a number"),
        (r#""{\"text\": \"hi\"}""#, "echo", "not a string"),
        ("true", "send_email", "not a boolean"),
        ("{", "echo", "ends before"),
        (r#"{"text": "hi"} trailing"#, "echo", "syntax error"),
        (r#"{"text": "hi"}{"text": "again"}"#, "echo", "syntax error"),
        (r#"{text: "hi"}"#, "echo", "syntax error"),
        (r#"{"text": 'hi'}"#, "echo", "syntax error"),
        (r#"{"text": "hi",}"#, "echo", "syntax error"),
        (r#"{"text": NaN}"#, "echo", "syntax error"),
        (r#"{"text": Infinity}"#, "echo", "syntax error"),
        ("\u{feff}{\"text\": \"hi\"}", "echo", "syntax error"),
        (r#"{"text": "\ud800"}"#, "echo", "syntax error"),
        ("{\"text\": \"a\u{1}b\"}", "echo", "syntax error"),
        ("{\"text\": \"line\nbreak\"}", "echo", "syntax error"),
        (r#"{"text": null}"#, "echo", "must be a string, not null"),
        (r#"{"text": "hi", "limit": null}"#, "echo", "not null"),
        (
            r#"{"to": null}"#,
            "send_email",
            "must be a string, not null",
        ),
        (r#"{"text": 1e400}"#, "echo", "out of range"),
        (r#"{"text": "x", "limit": -1e400}"#, "echo", "out of range"),
        (
            r#"{"text": "a", "text": "b"}"#,
            "echo",
            "appears more than once",
        ),
    ];
    for (i, (text, tool, expected)) in corpus.iter().enumerate() {
        let id = format!("m{i}");
        let r = execute_once(&exec, call(&id, tool, *text)).await;
        assert_refused(&r, &id, "invalid_arguments", &recorder);
        assert!(
            r.text().contains(expected),
            "{text:?}: expected {expected:?} in {:?}",
            r.text()
        );
    }
    assert_eq!((echo.runs(), send.runs()), (0, 0));
    // Parsed values at the root that are not objects, too.
    for (i, value) in [json!([]), json!(7), json!("text"), json!(false)]
        .into_iter()
        .enumerate()
    {
        let id = format!("v{i}");
        let r = execute_once(&exec, call(&id, "echo", value)).await;
        assert_refused(&r, &id, "invalid_arguments", &recorder);
    }
    let r = execute_once(&exec, call("null", "send_email", Value::Null)).await;
    assert_refused(&r, "null", "invalid_arguments", &recorder);
    assert_eq!((echo.runs(), send.runs()), (0, 0));
    // The executor goes on as before.
    let ok = execute_once(&exec, call("ok", "echo", r#"{"text":"fine"}"#)).await;
    assert_eq!(ok.text(), "fine");
}

#[tokio::test]
async fn a_key_sent_twice_is_refused_wherever_it_is_nested_and_located_by_pointer() {
    let (echo, recorder, exec) = recorded_echo();
    let cases = [
        (r#"{"text": "safe", "text": "rm -rf /"}"#, "`text`"),
        (r#"{"text": "x", "n": {"k": 1, "k": 2}}"#, "`n.k`"),
        (
            r#"{"text": "x", "n": [{"k": 1}, {"k": 1, "k": 1}]}"#,
            "`n[1].k`",
        ),
        (r#"{"text": "x", "cancel": 1, "cancel": 2}"#, "`cancel`"),
    ];
    for (i, (text, field)) in cases.iter().enumerate() {
        let id = format!("d{i}");
        let r = execute_once(&exec, call(&id, "echo", *text)).await;
        assert_refused(&r, &id, "invalid_arguments", &recorder);
        assert_eq!(
            r.text(),
            format!(
                "invalid arguments: {field}: appears more than once in the same object; send each argument once"
            )
        );
    }
    assert_eq!(echo.runs(), 0);
}

#[tokio::test]
async fn numbers_too_large_for_the_field_are_refused_before_the_tool_decodes_them() {
    let recorder = Recorder::new();
    let mut registry = ToolRegistry::new();
    registry.register(CountUpTool).unwrap();
    let exec = ToolExecutor::builder(registry, ())
        .subscribe(recorder.clone())
        .build()
        .unwrap();
    let before = COUNT_RUNS.load(Ordering::SeqCst);
    let refused = [
        r#"{"count": 18446744073709551617}"#,
        r#"{"count": 18446744073709551616}"#,
        r#"{"count": 1e20}"#,
        r#"{"count": -1}"#,
        r#"{"count": 1.5}"#,
        r#"{"count": 1, "offset": 9223372036854775808}"#,
        r#"{"count": 1, "small": 4294967296}"#,
        r#"{"count": 1e400}"#,
    ];
    for (i, text) in refused.iter().enumerate() {
        let id = format!("n{i}");
        let r = execute_once(&exec, call(&id, "count_up", *text)).await;
        assert_refused(&r, &id, "invalid_arguments", &recorder);
    }
    assert_eq!(COUNT_RUNS.load(Ordering::SeqCst), before);
    // Just below `i64::MIN` the parser rounds to the float -2^63, which the
    // schema's minimum (`i64::MIN`) cannot tell apart: the deserializer
    // refuses it, still a classified repair error and still before the body.
    let r = execute_once(
        &exec,
        call(
            "min",
            "count_up",
            r#"{"count": 1, "offset": -9223372036854775809}"#,
        ),
    )
    .await;
    assert_eq!(kind(&r), "invalid_arguments");
    assert_eq!(r.error.as_ref().unwrap().class(), ErrorClass::Repair);
    assert_eq!(COUNT_RUNS.load(Ordering::SeqCst), before);
    // An integer written as a float is the integer JSON Schema takes it for,
    // in text and in parsed values alike.
    for (id, args) in [
        (
            "float_text",
            RawArguments::from(r#"{"count": 5.0, "small": 1e3}"#),
        ),
        (
            "float_value",
            RawArguments::from(json!({"count": 5.0, "small": 1e3})),
        ),
    ] {
        let r = execute_once(&exec, call(id, "count_up", args)).await;
        assert_eq!(r.text(), "5 None Some(1000)", "{id}");
    }
    assert_eq!(COUNT_RUNS.load(Ordering::SeqCst), before + 2);
    // The extremes that do fit are accepted.
    let ok = execute_once(&exec, call(
                "fits",
                "count_up",
                r#"{"count": 18446744073709551615, "offset": -9223372036854775808, "small": 4294967295}"#,
            )).await;
    assert_eq!(
        ok.text(),
        "18446744073709551615 Some(-9223372036854775808) Some(4294967295)"
    );
}

#[tokio::test]
async fn ten_megabyte_strings_are_refused_by_size_in_text_and_in_parsed_values() {
    let (echo, recorder, exec) = recorded_echo();
    let huge = "x".repeat(10 << 20);
    let text = format!(r#"{{"text": "{huge}"}}"#);
    let r = execute_once(&exec, call("text", "echo", text)).await;
    assert_refused(&r, "text", "limit_exceeded", &recorder);
    assert!(
        r.text().contains("the limit is 1048576 bytes"),
        "{}",
        r.text()
    );
    let value = json!({ "text": huge.clone() });
    let r = execute_once(&exec, call("value", "echo", value)).await;
    assert_refused(&r, "value", "limit_exceeded", &recorder);
    // Many small strings add up the same way.
    let many: Vec<Value> = (0..200_000).map(|i| json!(format!("item-{i}"))).collect();
    let r = execute_in(
        &exec,
        &run(),
        call("many", "echo", json!({"text": "x", "n": many})),
    )
    .await;
    assert_refused(&r, "many", "limit_exceeded", &recorder);
    assert_eq!(echo.runs(), 0);

    // Raised on purpose, the limit lets it through, and the model still sees
    // bounded content.
    let roomy = executor(vec![echo.clone()])
        .configure(|c| c.max_argument_bytes = 16 << 20)
        .build()
        .unwrap();
    let r = execute_once(
        &roomy,
        call(
            "roomy",
            "echo",
            RawArguments::Text(format!(r#"{{"text": "{huge}"}}"#)),
        ),
    )
    .await;
    assert!(!r.is_error);
    assert!(r.text().len() < (64 << 10) + 100, "{}", r.text().len());
    assert!(r.text().ends_with(&format!(
        "[output truncated: showing 65536 of {} bytes]",
        10 << 20
    )));
}

#[tokio::test]
async fn huge_keys_and_floods_of_unknown_keys_get_a_bounded_message() {
    let echo = echo();
    let exec = executor(vec![echo.clone()]).build().unwrap();
    let long_key = "k".repeat(500_000);
    let mut args = Map::new();
    args.insert("text".to_owned(), json!("x"));
    args.insert(long_key.clone(), json!(1));
    let r = execute_in(&exec, &run(), call("long", "echo", Value::Object(args))).await;
    assert_eq!(kind(&r), "invalid_arguments");
    assert!(r.text().len() < 200, "{}", r.text().len());
    assert!(r.text().contains(&format!("`{}…`", "k".repeat(64))));

    let mut flood = Map::new();
    flood.insert("text".to_owned(), json!("x"));
    for i in 0..50_000 {
        flood.insert(format!("k{i}"), json!(i));
    }
    let r = execute_in(&exec, &run(), call("flood", "echo", Value::Object(flood))).await;
    assert_eq!(kind(&r), "invalid_arguments");
    let error = r.error.as_ref().unwrap();
    assert_eq!(error.problems().len(), 21);
    assert_eq!(
        error.problems()[20].message,
        "49980 more problems not listed"
    );
    assert!(r.text().len() < 2_000, "{}", r.text().len());
    assert_eq!(echo.runs(), 0);
}

#[tokio::test]
async fn the_argument_limits_have_safe_defaults_that_hold_exactly_at_the_edge() {
    let config = ExecutorConfig::default();
    assert_eq!(config.max_argument_bytes, 1 << 20);
    assert_eq!(config.max_argument_depth, 64);
    let echo = echo();
    let exec = executor(vec![echo.clone()]).build().unwrap();
    // The root object is level 1, so 63 arrays under `n` make 64 levels.
    let at_edge = echo_nested(63);
    let over = echo_nested(64);
    let r = execute_once(&exec, call("edge", "echo", at_edge)).await;
    // Within the bounds, the schema decides (`n` is not an argument of echo).
    assert_eq!(kind(&r), "invalid_arguments");
    let r = execute_once(&exec, call("over", "echo", over)).await;
    assert_eq!(kind(&r), "limit_exceeded");
    let exact = format!(r#"{{"text": "{}"}}"#, "y".repeat((1 << 20) - 12));
    assert_eq!(exact.len(), 1 << 20);
    let r = execute_once(&exec, call("exact", "echo", exact.clone())).await;
    assert!(!r.is_error, "{}", r.text());
    let r = execute_in(&exec, &run(), call("one_more", "echo", format!("{exact} "))).await;
    assert_eq!(kind(&r), "limit_exceeded");
    assert_eq!(echo.runs(), 1);
}
