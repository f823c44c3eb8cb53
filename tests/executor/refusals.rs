//! Step 1 to 3 of the lifecycle: every refusal keeps the call id, emits
//! `tool.rejected`, runs nothing and gives a classified error.

use std::sync::Arc;

use serde_json::json;
use tinyagents_tools::error::ErrorKind;
use tinyagents_tools::runtime::CallLimits;
use tinyagents_tools::*;
use tinyagents_tools_tests::*;

fn run() -> RunContext {
    RunContext::empty()
}

#[tokio::test]
async fn an_unknown_tool_is_refused_with_its_call_id_and_an_event() {
    let (recorder, exec) = recorded(vec![echo()]);
    let r = execute_in(&exec, &run(), call("c-7", "delete_everything", "{}")).await;
    assert_eq!(r.tool_call_id.as_str(), "c-7");
    assert!(r.is_error);
    assert_eq!(kind(&r), "unknown_tool");
    assert_eq!(r.error.as_ref().unwrap().class(), ErrorClass::Repair);
    assert_eq!(recorder.steps(), [("tool.rejected", 1)]);
}

#[tokio::test]
async fn a_registered_tool_that_was_not_advertised_this_turn_is_refused() {
    let echo = echo();
    let exec = executor(vec![echo.clone(), no_args("listing", true)])
        .build()
        .unwrap();
    let turn = Turn::new(2).advertising(["listing"]);
    let r = exec
        .execute(&run(), &turn, call("c1", "echo", r#"{"text":"hi"}"#))
        .await;
    assert_eq!(kind(&r), "not_advertised");
    assert_eq!(echo.runs(), 0);
    let ok = exec
        .execute(&run(), &turn, call("c2", "listing", "{}"))
        .await;
    assert_eq!(kind(&ok), "ok");
}

#[tokio::test]
async fn malformed_json_for_a_mutating_tool_is_refused_and_never_read_as_empty() {
    let tool = send_email();
    let exec = executor(vec![tool.clone()]).build().unwrap();
    let r = execute_in(&exec, &run(), call("c1", "send_email", r#"{"to": "a@b.c""#)).await;
    assert_eq!(kind(&r), "invalid_arguments");
    assert!(r.text().contains("not valid JSON"), "{}", r.text());
    assert_eq!(tool.runs(), 0);
}

#[tokio::test]
async fn an_empty_argument_string_counts_as_empty_only_for_a_read_only_tool_without_required_arguments()
 {
    let reader = no_args("listing", true);
    let writer = no_args("reset", false);
    let echo = echo();
    let exec = executor(vec![reader.clone(), writer.clone(), echo.clone()])
        .build()
        .unwrap();
    let turn = Turn::new(1);
    let ok = exec.execute(&run(), &turn, call("a", "listing", "")).await;
    assert_eq!(ok.text(), "listed");
    let refused = exec.execute(&run(), &turn, call("b", "reset", "  ")).await;
    assert_eq!(kind(&refused), "invalid_arguments");
    assert!(refused.text().contains("missing"), "{}", refused.text());
    let required = exec.execute(&run(), &turn, call("c", "echo", "")).await;
    assert_eq!(kind(&required), "invalid_arguments");
    assert_eq!((reader.runs(), writer.runs(), echo.runs()), (1, 0, 0));
}

#[tokio::test]
async fn a_forged_injected_key_is_refused_by_name_its_value_never_shown_and_the_body_never_runs() {
    let (echo, recorder, exec) = recorded_echo();
    let args = json!({"text": "hi", "cancel": "FORGED-TOKEN-VALUE"});
    let r = exec
        .execute(&run(), &Turn::new(1), call("c1", "echo", args))
        .await;
    assert_eq!(kind(&r), "invalid_arguments");
    assert_eq!(
        r.text(),
        "invalid arguments: `cancel`: is supplied by the runtime and cannot be passed as an argument"
    );
    assert_eq!(echo.runs(), 0);
    let events = format!("{:?}", recorder.events());
    assert!(!events.contains("FORGED-TOKEN-VALUE"));
    assert!(!format!("{r:?}").contains("FORGED-TOKEN-VALUE"));
}

#[tokio::test]
async fn every_schema_problem_is_listed_in_one_repair_message_without_echoing_strings() {
    let echo = echo();
    let exec = executor(vec![echo.clone()]).build().unwrap();
    let args = json!({"limit": 500, "admin": "SECRET-ISH"});
    let r = exec
        .execute(&run(), &Turn::new(1), call("c1", "echo", args))
        .await;
    let message = r.text();
    assert!(
        message.starts_with("invalid arguments (3 problems):"),
        "{message}"
    );
    assert_contains_all(
        &message,
        &[
            "- `limit`: 500 is greater than the maximum 50",
            "- `text`: is required",
            "- `admin`: is not an accepted argument",
        ],
    );
    assert!(!message.contains("SECRET-ISH"));
    assert_eq!(r.error.as_ref().unwrap().problems().len(), 3);
    assert_eq!(echo.runs(), 0);

    let typed = execute_in(
        &exec,
        &run(),
        call("c2", "echo", json!({"text": "ok", "limit": "PRIVATE"})),
    )
    .await;
    assert_eq!(
        typed.text(),
        "invalid arguments: `limit`: must be an integer, not a string"
    );
}

#[tokio::test]
async fn arguments_that_are_not_an_object_are_refused() {
    let exec = executor(vec![echo()]).build().unwrap();
    let r = exec
        .execute(&run(), &Turn::new(1), call("c1", "echo", "[1, 2]"))
        .await;
    assert_eq!(
        r.text(),
        "invalid arguments: `arguments`: must be a JSON object of named arguments, not an array"
    );
}

#[tokio::test]
async fn oversized_and_overdeep_arguments_are_refused_before_they_are_parsed() {
    let echo = echo();
    let exec = executor(vec![echo.clone()])
        .configure(|c| {
            c.max_argument_bytes = 1000;
            c.max_argument_depth = 8;
        })
        .build()
        .unwrap();
    let turn = Turn::new(1);
    let long = format!(r#"{{"text": "{}"}}"#, "x".repeat(2000));
    let r = exec.execute(&run(), &turn, call("a", "echo", long)).await;
    assert_eq!(kind(&r), "limit_exceeded");
    assert!(r.text().contains("the limit is 1000 bytes"), "{}", r.text());

    let deep_text = format!(
        r#"{{"text": "x", "n": {}{}}}"#,
        "[".repeat(50),
        "]".repeat(50)
    );
    let r = exec
        .execute(&run(), &turn, call("b", "echo", deep_text))
        .await;
    assert_eq!(kind(&r), "limit_exceeded");
    assert!(r.text().contains("deeper than 8 levels"), "{}", r.text());

    let mut deep = json!("leaf");
    for _ in 0..20 {
        deep = json!([deep]);
    }
    let r = exec
        .execute(
            &run(),
            &turn,
            call("c", "echo", json!({"text": "x", "n": deep})),
        )
        .await;
    assert_eq!(kind(&r), "limit_exceeded");
    assert_eq!(echo.runs(), 0);
}

#[tokio::test]
async fn call_limits_per_turn_per_run_and_per_tool_refuse_the_call_over_the_limit() {
    let echo = echo();
    let listing = no_args("listing", true);
    let exec = executor(vec![echo.clone(), listing.clone()])
        .configure(|c| {
            c.limits = CallLimits::none()
                .per_turn(2)
                .per_run(4)
                .per_tool("listing", 1)
        })
        .build()
        .unwrap();
    let run = run();
    let hi = r#"{"text":"hi"}"#;
    let turn = Turn::new(1);
    assert_eq!(
        kind(&exec.execute(&run, &turn, call("1", "echo", hi)).await),
        "ok"
    );
    assert_eq!(
        kind(&exec.execute(&run, &turn, call("2", "echo", hi)).await),
        "ok"
    );
    let third = exec.execute(&run, &turn, call("3", "echo", hi)).await;
    assert_eq!(
        third.error.as_ref().unwrap().kind(),
        &ErrorKind::LimitExceeded {
            limit: "calls_per_turn".into()
        }
    );
    let turn2 = Turn::new(2);
    assert_eq!(
        kind(&exec.execute(&run, &turn2, call("4", "listing", "")).await),
        "ok"
    );
    let per_tool = exec.execute(&run, &turn2, call("5", "listing", "")).await;
    assert!(
        per_tool.text().contains("the tool `listing`"),
        "{}",
        per_tool.text()
    );
    let turn3 = Turn::new(3);
    assert_eq!(
        kind(&exec.execute(&run, &turn3, call("6", "echo", hi)).await),
        "ok"
    );
    let per_run = exec.execute(&run, &turn3, call("7", "echo", hi)).await;
    assert!(per_run.text().contains("this run"), "{}", per_run.text());
    assert_eq!((echo.runs(), listing.runs()), (3, 1));
    assert_eq!(run.call_counts().total(), 4);
    assert_eq!(run.call_counts().of_tool("listing"), 1);
}

#[test]
fn a_call_limit_naming_an_unknown_tool_fails_the_build() {
    let err = executor(vec![echo()])
        .configure(|c| c.limits = CallLimits::none().per_tool("ecko", 1))
        .build()
        .unwrap_err();
    assert_eq!(
        err,
        ExecutorBuildError::UnknownToolInLimits {
            name: "ecko".into()
        }
    );
}

#[tokio::test]
async fn when_repair_is_not_allowed_a_repairable_refusal_comes_back_fatal() {
    let exec = executor(vec![echo()])
        .configure(|c| c.repair_allowed = false)
        .build()
        .unwrap();
    let r = execute_in(&exec, &run(), call("c1", "echo", json!({"limit": 3}))).await;
    let error = r.error.unwrap();
    assert_eq!(error.class(), ErrorClass::Fatal);
    assert_eq!(error.kind().as_str(), "invalid_arguments");
}

#[tokio::test]
async fn calls_of_a_cancelled_run_come_back_cancelled_without_running() {
    let echo = echo();
    let exec = executor(vec![echo.clone() as Arc<dyn Tool>])
        .build()
        .unwrap();
    let run = run();
    run.cancel();
    let r = execute_in(&exec, &run, call("c1", "echo", r#"{"text":"hi"}"#)).await;
    assert_eq!(kind(&r), "cancelled");
    assert_eq!(echo.runs(), 0);
}
