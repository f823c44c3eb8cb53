//! Hostile depth: arguments nested far deeper than the stack allows, in
//! text, in parsed values and from a middleware, are refused by the depth
//! limit before anything recurses once per level, and dropped without
//! recursion.

use serde_json::{Map, Value, json};
use tinyagents_tools::Turn;
use tinyagents_tools::events::EventKind;
use tinyagents_tools::middleware::BeforeOutcome;
use tinyagents_tools_tests::*;

use crate::hostile::{assert_refused, echo_nested, run};

/// A value nested `depth` levels deep, built without recursion.
fn nested(depth: usize, objects: bool) -> Value {
    let mut v = Value::Null;
    for _ in 0..depth {
        v = if objects {
            let mut map = Map::new();
            map.insert("a".to_owned(), v);
            Value::Object(map)
        } else {
            Value::Array(vec![v])
        };
    }
    v
}

#[tokio::test]
async fn ten_thousand_levels_of_nesting_in_text_are_refused_before_parsing() {
    let (echo, recorder, exec) = recorded_echo();
    let arrays = echo_nested(10_000);
    let objects = format!(
        r#"{{"text": "x", "n": {}1{}}}"#,
        r#"{"a":"#.repeat(10_000),
        "}".repeat(10_000)
    );
    let unclosed = "[".repeat(10_000);
    for (id, text) in [
        ("arrays", arrays),
        ("objects", objects),
        ("unclosed", unclosed),
    ] {
        let r = execute_once(&exec, call(id, "echo", text)).await;
        assert_refused(&r, id, "limit_exceeded", &recorder);
        assert!(r.text().contains("deeper than 64 levels"), "{}", r.text());
    }
    // With the depth limit lifted, the parser's own bound still refuses
    // (classified, and without exhausting the stack).
    let lifted = executor(vec![echo.clone()])
        .configure(|c| c.max_argument_depth = 1_000_000)
        .build()
        .unwrap();
    let text = format!(r#"{{"text": "x", "n": {}}}"#, "[".repeat(10_000));
    let r = execute_once(&lifted, call("lifted", "echo", text)).await;
    assert_eq!(kind(&r), "invalid_arguments");
    assert!(r.text().contains("not valid JSON"), "{}", r.text());
    assert_eq!(echo.runs(), 0);
}

#[tokio::test]
async fn parsed_values_nested_far_deeper_than_the_stack_allows_are_refused_and_dropped_without_recursion()
 {
    let (echo, recorder, exec) = recorded_echo();
    let turn = Turn::new(1);
    // 10,000 levels as the issue asks, and 200,000, whose recursive drop
    // alone would overflow any thread's stack.
    for (i, depth) in [10_000, 200_000].into_iter().enumerate() {
        for objects in [false, true] {
            let id = format!("deep{i}{objects}");
            let mut args = Map::new();
            args.insert("text".to_owned(), json!("x"));
            args.insert("n".to_owned(), nested(depth, objects));
            let r = execute_once(&exec, call(&id, "echo", Value::Object(args))).await;
            assert_refused(&r, &id, "limit_exceeded", &recorder);
        }
        // Refused before its arguments are even looked at: the value is
        // still taken apart without recursion.
        let id = format!("unknown{i}");
        let r = execute_once(&exec, call(&id, "no_such_tool", nested(depth, true))).await;
        assert_refused(&r, &id, "unknown_tool", &recorder);
        let id = format!("batch{i}");
        let results = exec
            .execute_batch(
                &run(),
                &turn,
                vec![
                    call(&id, "echo", nested(depth, false)),
                    call("after", "echo", r#"{"text":"still fine"}"#),
                ],
            )
            .await;
        assert_eq!(kind(&results[0]), "limit_exceeded");
        assert_eq!(results[1].text(), "still fine");
    }
    assert_eq!(echo.runs(), 2);
}

#[tokio::test]
async fn a_middleware_that_rewrites_arguments_into_a_hostile_depth_is_refused_in_its_name() {
    let echo = echo();
    let recorder = Recorder::new();
    let exec = executor(vec![echo.clone()])
        .middleware(BeforeTool::new("deepens", |ctx| {
            // Rewrites the arguments into a value far deeper than the limit.
            ctx.arguments_mut()["n"] = nested(200_000, false);
            Ok(BeforeOutcome::Continue)
        }))
        .subscribe(recorder.clone())
        .build()
        .unwrap();
    let r = execute_once(&exec, call("mw", "echo", r#"{"text":"x"}"#)).await;
    assert_eq!(kind(&r), "limit_exceeded");
    let last = recorder.events().pop().unwrap();
    assert_eq!(last.kind, EventKind::Rejected);
    assert_eq!(last.policy.as_deref(), Some("deepens"));
    assert_eq!(echo.runs(), 0);
}
