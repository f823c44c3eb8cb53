//! Values across the sandbox's boundary: a program's arguments reach the
//! tool as `JSON.stringify` would send them, and a tool's answer reaches
//! the program as `JSON.parse` would make it, though neither is written
//! out as text on the way. And the time a call waits is not the program's.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tinyagents_tools::prelude::*;
use tinyagents_tools::testkit::FnTool;
use tinyagents_tools::{ToolSafety, ToolSchema};
use tinyagents_tools_code_mode::{CodeMode, SandboxLimits};

use crate::model::{answer, program_result};

/// `echo` answers with the arguments it received; `slow` waits 100 ms
/// (counting its calls) and answers `done`.
fn setup(limits: SandboxLimits) -> (ToolExecutor, Arc<AtomicU32>) {
    let object = ToolSchema::from_value(json!({"type": "object"}));
    let echo = ToolSpec::builder("echo", "Answer with the arguments received.")
        .input_schema(object.clone())
        .safety(ToolSafety::pure())
        .build()
        .unwrap();
    let slow = ToolSpec::builder("slow", "Wait 100 ms, then answer `done`.")
        .input_schema(object)
        .safety(ToolSafety::pure())
        .build()
        .unwrap();
    let count = Arc::new(AtomicU32::new(0));
    let counted = Arc::clone(&count);
    let mut registry = ToolRegistry::new();
    registry
        .register(FnTool::new(echo, |_, args: Value| {
            Box::pin(async move { Ok(ToolOutput::structured(args)) })
        }))
        .unwrap();
    registry
        .register(FnTool::new(slow, move |_, _| {
            let counted = Arc::clone(&counted);
            Box::pin(async move {
                counted.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(100)).await;
                Ok(ToolOutput::text("done"))
            })
        }))
        .unwrap();
    let inner = Arc::new(ToolExecutor::builder(registry, ()).build().unwrap());
    let mut model_facing = ToolRegistry::new();
    model_facing
        .register(CodeMode::new(inner).limits(limits).tool())
        .unwrap();
    (
        ToolExecutor::builder(model_facing, ()).build().unwrap(),
        count,
    )
}

/// Sorts object keys, so that values compare whatever their key order.
const CANON: &str = r#"
const canon = (v) => Array.isArray(v) ? v.map(canon)
  : v !== null && typeof v === "object"
    ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canon(v[k])]))
    : v;
const same = (a, b) => JSON.stringify(canon(a)) === JSON.stringify(canon(b));
"#;

#[tokio::test]
async fn arguments_reach_the_tool_as_json_stringify_sends_them() {
    let (outer, _) = setup(SandboxLimits::default());
    let code = format!(
        r#"{CANON}
class Point {{ constructor() {{ this.x = 1; this.y = 2; }} get sum() {{ return 3; }} }}
const nested = (depth) => {{
  const root = [];
  let cursor = root;
  for (let i = 0; i < depth; i++) {{ const next = {{}}; cursor.push(next, i); cursor = next.in = []; }}
  return root;
}};
const deep = nested(12);  // deeper than the walk goes: the engine writes the rest
const hidden = {{ shown: 1 }};
Object.defineProperty(hidden, "hidden", {{ value: 2, enumerable: false }});
hidden[Symbol("s")] = 3;
const holes = [1, , 3];
holes.length = 5;
const bare = Object.create(null);
bare.k = "v";
const cases = [
  {{ id: 7, name: "x", ok: true, none: null }},
  {{ skipped: undefined, fn: () => 1, sym: Symbol("s"), kept: 1 }},
  {{ list: [1, undefined, () => 1, Symbol("s"), null] }},
  {{ nan: NaN, inf: -Infinity, zero: -0, half: 0.5, big: 1e21, huge: 2 ** 53 + 2, neg: -(2 ** 40) }},
  {{ text: "é ✓ 🦀 \n \" \\ \u0001" }},
  {{ boxed: [new Number(5), new String("s"), new Boolean(false)] }},
  {{ point: new Point() }},
  {{ map: new Map([[1, 2]]), bytes: new Uint8Array([1, 2]) }},
  {{ at: {{ toJSON(key) {{ return "key:" + key; }} }} }},
  {{ raw: JSON.rawJSON("12345678901234567890") }},
  {{ bare }},
  {{ hidden }},
  {{ holes }},
  {{ deep }},
  {{ "0": "zero", "10": "ten", "__proto__x": 1 }},
  JSON.parse('{{"__proto__": {{"polluted": true}}}}'),
];
return cases.map((c, i) => same(tools.echo(c), JSON.parse(JSON.stringify(c))) || i);
"#
    );
    let value = program_result(&answer(&outer, &RunContext::empty(), &code).await);
    let all: Vec<bool> = vec![true; 16];
    assert_eq!(value, json!(all));
}

#[tokio::test]
async fn arguments_json_cannot_carry_are_refused_as_before() {
    let (outer, _) = setup(SandboxLimits::default());
    let code = r#"
const out = [];
const nested = (depth) => {
  const root = [];
  let cursor = root;
  for (let i = 0; i < depth; i++) { const next = []; cursor.push(next); cursor = next; }
  return root;
};
const cycle = {}; cycle.self = cycle;
for (const args of [{ n: 1n }, cycle, () => 1]) {
  try { tools.echo(args); out.push("sent"); } catch (e) { out.push(e.constructor.name); }
}
for (const args of [{ s: "\ud800" }, { deep: nested(100) }, { deeper: nested(300) }]) {
  try { tools.echo(args); out.push("sent"); } catch (e) { out.push(e.kind); }
}
out.push(JSON.stringify(tools.echo()));
out.push(JSON.stringify(tools.echo(undefined)));
return out;
"#;
    let answered = answer(&outer, &RunContext::empty(), code).await;
    assert_eq!(
        program_result(&answered),
        json!([
            "TypeError",
            "TypeError",
            "TypeError",
            "invalid_arguments",
            "limit_exceeded",
            "limit_exceeded",
            "{}",
            "{}"
        ])
    );
    // The calls the engine refused to write were not made; the executor
    // refused three (each a call, with its id) and answered two.
    assert_eq!(answered.message.structured.unwrap()["calls"], 5);
}

#[tokio::test]
async fn answers_reach_the_program_as_json_parse_makes_them() {
    let (outer, _) = setup(SandboxLimits::default());
    let code = r#"
const got = tools.echo(JSON.parse('{"__proto__": {"x": 1}, "n": 12345678901234567890, "f": 0.1, "i": -7, "a": [[], {}, "s", null, true]}'));
return [
  Object.getPrototypeOf(got) === Object.prototype,
  Object.keys(got).sort(),
  got.__proto__,
  got.n === 12345678901234567890, got.f === 0.1, got.i === -7,
  got.a,
  Object.getOwnPropertyDescriptor(got, "i"),
];
"#;
    let got = program_result(&answer(&outer, &RunContext::empty(), code).await);
    assert_eq!(
        got,
        json!([
            true,
            ["__proto__", "a", "f", "i", "n"],
            {"x": 1},
            true,
            true,
            true,
            [[], {}, "s", null, true],
            {"value": -7, "writable": true, "enumerable": true, "configurable": true}
        ])
    );
}

#[tokio::test]
async fn time_spent_in_tool_calls_is_not_the_programs_time() {
    let (outer, count) = setup(SandboxLimits {
        max_time: Duration::from_millis(150),
        ..SandboxLimits::default()
    });
    // Four calls of 100 ms each: 400 ms in calls, far under 150 ms of its own.
    let code = "const out = []; for (let i = 0; i < 4; i++) out.push(tools.slow({})); return out;";
    let out = program_result(&answer(&outer, &RunContext::empty(), code).await);
    assert_eq!(out, json!(["done", "done", "done", "done"]));
    assert_eq!(count.load(Ordering::SeqCst), 4);
}

#[tokio::test]
async fn a_run_code_call_that_times_out_stops_its_program_and_its_calls() {
    let (outer, count) = setup(SandboxLimits {
        max_duration: Duration::from_millis(350),
        ..SandboxLimits::default()
    });
    let started = Instant::now();
    // Calls forever, catching every error it can.
    let r = answer(
        &outer,
        &RunContext::empty(),
        "for (;;) { try { tools.slow({}); } catch (e) {} }",
    )
    .await;
    assert_eq!(r.outcome(), "timeout", "{}", r.text());
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    let made = count.load(Ordering::SeqCst);
    assert!((1..=5).contains(&made), "{made}");
    // No call is made after the timeout.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(count.load(Ordering::SeqCst), made);
}
