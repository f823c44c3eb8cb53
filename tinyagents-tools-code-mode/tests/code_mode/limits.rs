//! Bad programs: each stopped at its limit with a classified error naming
//! it, the process unharmed and the next call answered.

use std::time::{Duration, Instant};

use serde_json::json;
use tinyagents_tools::error::ErrorKind;
use tinyagents_tools_code_mode::SandboxLimits;

use crate::model::{answer, assert_repair_error, program_result, run_code_reply, turn};
use crate::tools::{Setup, setup_with};

/// Small bounds (8 MiB of heap, 4 KiB of output, 5 tool calls) and
/// `max_time` of running time: the time limit's own test sets it short;
/// the others leave the default, so that a loaded machine filling the
/// heap slowly still meets the limit under test first.
fn small(max_time: Duration) -> Setup {
    setup_with(
        SandboxLimits {
            max_time,
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
    let r = answer(&s.outer, &s.run("r"), code).await;
    assert_repair_error(&r, "resource_exhausted", &format!("ran out of {resource}"));
    match r.error.as_ref().unwrap().kind() {
        ErrorKind::ResourceExhausted { resource: got } => assert_eq!(got, resource, "{code}"),
        other => panic!("{code}: {other:?}"),
    }
    let next = turn(
        &s.outer,
        &s.run("r"),
        2,
        &run_code_reply("next", "return tools.lookup({ id: 2 }).price;"),
    )
    .await;
    assert_eq!(program_result(&next.results[0]), json!(250));
}

#[tokio::test]
async fn a_program_that_does_not_parse_gets_the_parsers_line_and_column() {
    let s = small(SandboxLimits::default().max_time);
    let code = "const a = 1;\nconst b = (a +;\nreturn b;";
    let r = answer(&s.outer, &s.run("r"), code).await;
    let expected = "the program does not parse: line 2, column 15";
    assert_repair_error(&r, "invalid_arguments", expected);
}

#[tokio::test]
async fn an_endless_loop_is_stopped_at_the_time_limit() {
    let s = small(Duration::from_millis(200));
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

/// Programs that never end on their own, each with the resource it runs
/// out of: memory, stack, output and tool calls.
const UNBOUNDED: [(&str, &str); 5] = [
    (
        "const a = []; for (;;) a.push('x'.repeat(1000) + a.length);",
        "memory",
    ),
    (
        "function f(n) { return f(n + 1) + 1; } return f(0);",
        "stack",
    ),
    ("for (;;) print('spam spam spam');", "output"),
    // A returned value counts too.
    ("return 'x'.repeat(100000);", "output"),
    (
        "for (let i = 1; ; i++) { try { tools.lookup({ id: i }); } catch (e) {} }",
        "calls",
    ),
];

#[tokio::test]
async fn unbounded_programs_are_stopped_at_the_memory_stack_output_and_call_limits() {
    let s = small(SandboxLimits::default().max_time);
    for (code, resource) in UNBOUNDED {
        stopped_for(&s, code, resource).await;
    }
}

#[tokio::test]
async fn printed_lines_come_back_with_the_value() {
    let s = small(SandboxLimits::default().max_time);
    let r = answer(&s.outer, &s.run("r"), "print('a', 1, {b: 2}); return null;").await;
    let structured = r.message.structured.unwrap();
    assert_eq!(structured["printed"], json!("a 1 {\"b\":2}\n"));
    assert_eq!(structured["result"], json!(null));
}
