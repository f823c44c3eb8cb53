//! Item 2: every call of a program goes through the executor, as if the
//! model had made it, with ids derived from the `run_code` call's id.

use std::sync::atomic::Ordering;

use serde_json::json;
use tinyagents_tools::events::EventKind;
use tinyagents_tools_code_mode::SandboxLimits;

use crate::model::{answer, assert_repair_error, program_result, run_code_reply, turn};
use crate::tools::{setup, setup_with};

const TWENTY_ITEMS: &str = r#"
const names = [];
for (let id = 1; id <= 20; id++) {
  const item = tools.lookup({ id });
  names.push(tools.tag({ name: item.name }));
}
return names.join(",");
"#;

#[tokio::test]
async fn one_program_makes_forty_calls_with_ids_derived_from_its_call_id() {
    let s = setup();
    let run = s.run("run-1");
    let log = turn(&s.outer, &run, 1, &run_code_reply("call_7", TWENTY_ITEMS)).await;
    let value = program_result(&log.results[0]);
    let expected: Vec<String> = (1..=20).map(|i| format!("#item-{i}")).collect();
    assert_eq!(value, json!(expected.join(",")));
    assert_eq!(
        log.results[0].message.structured.as_ref().unwrap()["calls"],
        40
    );
    // The side effect ran once per item, each under its derived id.
    let ledger = s.ledger.lines();
    assert_eq!(ledger.len(), 20);
    assert_eq!(ledger[0], "tag item-1 call_7/2");
    assert_eq!(ledger[19], "tag item-20 call_7/40");
    // Each inner call emitted its own events, under its own id.
    let completed: Vec<String> = s
        .recorder
        .events()
        .iter()
        .filter(|e| e.kind == EventKind::Completed)
        .map(|e| e.call_id.as_str().to_owned())
        .collect();
    let ids: Vec<String> = (1..=40).map(|n| format!("call_7/{n}")).collect();
    assert_eq!(completed, ids);
    // The model got the whole answer in one tool message.
    assert_eq!(log.messages.len(), 1);
}

#[tokio::test]
async fn arguments_the_schema_refuses_reach_the_program_as_a_typed_error() {
    let s = setup();
    let code = r#"
try { tools.lookup({ id: 5000 }); return "ran"; }
catch (e) { return [e instanceof ToolError, e.kind, e.errorClass, e.tool, e.callId, e.message]; }
"#;
    let value = program_result(&answer(&s.outer, &s.run("r"), code).await);
    assert_eq!(value[0], true);
    assert_eq!(value[1], "invalid_arguments");
    assert_eq!(value[2], "repair");
    assert_eq!(value[3], "lookup");
    assert_eq!(value[4], "c1/1");
    assert!(
        value[5]
            .as_str()
            .unwrap()
            .contains("`id`: 5000 is greater than the maximum"),
        "{value}"
    );
}

#[tokio::test]
async fn a_forged_hidden_key_is_refused_before_the_tool_runs() {
    let s = setup();
    let code = r#"
try { tools.tag({ name: "x", ledger: "forged" }); return "ran"; }
catch (e) { return e.kind; }
"#;
    let value = program_result(&answer(&s.outer, &s.run("r"), code).await);
    assert_eq!(value, json!("invalid_arguments"));
    assert!(s.ledger.lines().is_empty());
    // The forged runtime id too.
    let code = r#"try { tools.tag({ name: "x", call_id: "evil" }); return "ran"; } catch (e) { return e.kind; }"#;
    let log = turn(&s.outer, &s.run("r"), 2, &run_code_reply("c2", code)).await;
    assert_eq!(program_result(&log.results[0]), json!("invalid_arguments"));
    assert!(s.ledger.lines().is_empty());
}

#[tokio::test]
async fn a_tool_not_offered_to_the_program_is_refused_like_a_direct_call() {
    let s = setup_with(SandboxLimits::default(), Some(&["lookup"]), None);
    let code = r#"
const seen = [tools.lookup({ id: 1 }).name];
try { tools.tag({ name: "x" }); } catch (e) { seen.push(e.kind); }
try { tools.no_such_tool({}); } catch (e) { seen.push(e.kind); }
return seen;
"#;
    let seen = program_result(&answer(&s.outer, &s.run("r"), code).await);
    assert_eq!(seen, json!(["item-1", "not_advertised", "unknown_tool"]));
    assert!(s.ledger.lines().is_empty());
    // The stubs declare only what is offered.
    let spec = s.outer.registry().get("run_code").unwrap().spec();
    let code = spec.input_schema.as_value()["properties"]["code"]["description"]
        .as_str()
        .unwrap();
    assert!(code.contains("lookup(args"));
    assert!(!code.contains("tag(args"));
}

#[tokio::test]
async fn retries_happen_only_for_the_idempotent_tool() {
    let s = setup();
    let code = r#"
const out = [tools.flaky({})];
try { tools.flaky_effect({}); } catch (e) { out.push(e.kind + "/" + e.errorClass); }
return out;
"#;
    let out = program_result(&answer(&s.outer, &s.run("r"), code).await);
    assert_eq!(out, json!(["ok", "tool/retry"]));
    // flaky: 2 attempts; flaky_effect: 1 attempt, not retried.
    assert_eq!(s.attempts.flaky.load(Ordering::SeqCst), 2);
    assert_eq!(s.attempts.flaky_effect.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_uncaught_tool_error_fails_the_program_with_a_repair_error() {
    let s = setup();
    let r = answer(&s.outer, &s.run("r"), "tools.lookup({ id: 0 }); return 1;").await;
    let expected = "the program threw an error it did not catch: ToolError";
    assert_repair_error(&r, "tool", expected);
}
