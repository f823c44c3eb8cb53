//! Bad programs: each stopped at its limit with a classified error naming
//! it, the process unharmed and the next call answered.

use std::time::{Duration, Instant};

use serde_json::json;
use tinyagents_tools::ErrorClass;
use tinyagents_tools::code_mode::SandboxLimits;
use tinyagents_tools::error::ErrorKind;

use crate::model::{program_result, run_code_reply, turn};
use crate::tools::{Setup, setup_with};

fn small() -> Setup {
    setup_with(
        SandboxLimits {
            max_time: Duration::from_millis(200),
            max_memory: 8 << 20,
            max_output: 4 << 10,
            max_calls: 5,
            ..SandboxLimits::default()
        },
        None,
        None,
    )
}

/// Runs `code` and checks it was stopped for `resource`, then that the
/// same executor still answers a good program.
async fn stopped_for(s: &Setup, code: &str, resource: &str) {
    let log = turn(&s.outer, &s.run("r"), 1, &run_code_reply("bad", code)).await;
    let r = &log.results[0];
    assert_eq!(r.outcome(), "resource_exhausted", "{}", r.text());
    let e = r.error.as_ref().unwrap();
    match e.kind() {
        ErrorKind::ResourceExhausted { resource: got } => assert_eq!(got, resource),
        other => panic!("{other:?}"),
    }
    assert_eq!(e.class(), ErrorClass::Repair);
    assert!(
        r.text().contains(&format!("ran out of {resource}")),
        "{}",
        r.text()
    );
    let next = turn(
        &s.outer,
        &s.run("r"),
        2,
        &run_code_reply("next", "return tools.lookup({ id: 2 }).price;"),
    )
    .await;
    assert_eq!(program_result(&next.results[0]), json!(20));
}

#[tokio::test]
async fn a_program_that_does_not_parse_gets_the_parsers_line_and_column() {
    let s = small();
    let log = turn(
        &s.outer,
        &s.run("r"),
        1,
        &run_code_reply("c1", "const a = 1;\nconst b = (a +;\nreturn b;"),
    )
    .await;
    let r = &log.results[0];
    assert_eq!(r.outcome(), "invalid_arguments");
    assert_eq!(r.error.as_ref().unwrap().class(), ErrorClass::Repair);
    assert!(
        r.text()
            .contains("the program does not parse: line 2, column 15"),
        "{}",
        r.text()
    );
}

#[tokio::test]
async fn an_endless_loop_is_stopped_at_the_time_limit() {
    let s = small();
    let started = Instant::now();
    stopped_for(&s, "while (true) {}", "time").await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    // Catching does not help: the stop cannot be caught.
    stopped_for(
        &s,
        "for (;;) { try { while (true) {} } catch (e) {} }",
        "time",
    )
    .await;
}

#[tokio::test]
async fn unbounded_allocation_is_stopped_at_the_memory_limit() {
    let s = small();
    stopped_for(
        &s,
        "const a = []; for (;;) a.push('x'.repeat(1000) + a.length);",
        "memory",
    )
    .await;
}

#[tokio::test]
async fn unbounded_recursion_is_stopped_at_the_stack_limit() {
    let s = small();
    stopped_for(
        &s,
        "function f(n) { return f(n + 1) + 1; } return f(0);",
        "stack",
    )
    .await;
}

#[tokio::test]
async fn unbounded_printing_is_stopped_at_the_output_limit() {
    let s = small();
    stopped_for(&s, "for (;;) print('spam spam spam');", "output").await;
    // A returned value counts too.
    stopped_for(&s, "return 'x'.repeat(100000);", "output").await;
}

#[tokio::test]
async fn too_many_tool_calls_are_stopped_at_the_call_limit() {
    let s = small();
    stopped_for(
        &s,
        "for (let i = 1; ; i++) { try { tools.lookup({ id: i }); } catch (e) {} }",
        "calls",
    )
    .await;
}

#[tokio::test]
async fn printed_lines_come_back_with_the_value() {
    let s = small();
    let log = turn(
        &s.outer,
        &s.run("r"),
        1,
        &run_code_reply("c1", "print('a', 1, {b: 2}); return null;"),
    )
    .await;
    let structured = log.results[0].message.structured.clone().unwrap();
    assert_eq!(structured["printed"], json!("a 1 {\"b\":2}\n"));
    assert_eq!(structured["result"], json!(null));
}
