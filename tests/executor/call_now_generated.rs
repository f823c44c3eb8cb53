//! `#[tool]` implements `Tool::call_now` (and `call_now_ref`, which decodes
//! borrowed arguments) only for a body that cannot wait; generated tools
//! answer alike either way.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tinyagents_tools::*;
use tinyagents_tools_tests::*;

#[derive(Debug, Deserialize, JsonSchema)]
struct Numbers {
    /// A number.
    n: i64,
}

/// Doubles `n`; never waits.
#[tool(read_only, idempotent)]
async fn double(args: Numbers, #[inject] call_id: ToolCallId) -> Value {
    let label = format!("{}:{}", call_id.as_str(), args.n);
    if !(args.n >= 0 && label.len() < 100) {
        return json!({"negative": true});
    }
    json!({"double": args.n * 2, "label": label})
}

/// Doubles `n` after yielding once.
#[tool(read_only)]
async fn double_later(args: Numbers) -> Value {
    tokio::task::yield_now().await;
    json!({"double": args.n * 2})
}

/// Halves `n`; never waits and injects nothing.
#[tool(read_only)]
async fn halve(args: Numbers) -> Value {
    json!({"half": args.n / 2})
}

/// Scales `n` by `by`; plain parameters, never waits.
#[tool(read_only)]
async fn scale(
    /// A number.
    n: i64,
    /// The factor.
    by: i64,
    /// A label to repeat.
    label: String,
) -> Value {
    json!({"scaled": n * by, "label": label})
}

macro_rules! later {
    ($e:expr) => {
        $e
    };
}

/// Doubles `n` through a macro the check does not know.
#[tool(read_only)]
async fn double_through_a_macro(args: Numbers) -> Value {
    later!(json!({"double": args.n * 2}))
}

fn runtime(id: &str) -> ToolRuntime {
    ToolRuntime::new(RunContext::empty(), id, "double")
}

#[tokio::test]
async fn tool_implements_call_now_only_for_a_body_that_cannot_wait() {
    let args = json!({"n": 4});
    assert!(Tool::<(), ()>::never_waits(&DoubleTool));
    let now = Tool::<(), ()>::call_now(&DoubleTool, &(), &runtime("c7"), args.clone());
    let output = now.expect("doubled");
    assert_eq!(
        output.structured,
        Some(json!({"double": 8, "label": "c7:4"}))
    );
    // `call` gives the same answer.
    let called = Tool::<(), ()>::call(&DoubleTool, &(), &runtime("c7"), args.clone())
        .await
        .unwrap();
    assert_eq!(called.structured, output.structured);
    // And so does `call_now_ref`, reading them borrowed.
    let borrowed = Tool::<(), ()>::call_now_ref(&DoubleTool, &(), &runtime("c7"), &args).unwrap();
    assert_eq!(borrowed.structured, output.structured);
    // A decoding failure is the same error every way.
    let bad =
        Tool::<(), ()>::call_now(&DoubleTool, &(), &runtime("c7"), json!({"n": "x"})).unwrap_err();
    assert_eq!(bad.kind().as_str(), "invalid_arguments");
    let bad_ref =
        Tool::<(), ()>::call_now_ref(&DoubleTool, &(), &runtime("c7"), &json!({"n": "x"}))
            .unwrap_err();
    assert_eq!(bad_ref.message(), bad.message());

    assert!(!Tool::<(), ()>::never_waits(&DoubleLaterTool));
    assert!(!Tool::<(), ()>::never_waits(&DoubleThroughAMacroTool));
    // A tool that waits does not run through `call_now`.
    let refused =
        Tool::<(), ()>::call_now(&DoubleLaterTool, &(), &runtime("c8"), args.clone()).unwrap_err();
    assert_eq!(refused.class(), ErrorClass::Fatal);
}

#[tokio::test]
async fn a_tool_that_injects_nothing_answers_alike_for_any_state_and_context() {
    // Its plain fn reads only the arguments (it is not generic over the
    // state and context); `call` and `call_now` give the same answer under
    // any state and context types, and the same error for bad arguments.
    let args = json!({"n": 9});
    assert!(Tool::<(), ()>::never_waits(&HalveTool));
    assert!(Tool::<String, u8>::never_waits(&HalveTool));
    let now = Tool::<(), ()>::call_now(&HalveTool, &(), &runtime("c9"), args.clone()).unwrap();
    assert_eq!(now.structured, Some(json!({"half": 4})));
    let typed_runtime = ToolRuntime::new(RunContext::builder(7u8).build(), "c9", "halve");
    let state = String::from("state");
    let called = Tool::<String, u8>::call(&HalveTool, &state, &typed_runtime, args.clone())
        .await
        .unwrap();
    assert_eq!(called.structured, now.structured);
    let now_typed = Tool::<String, u8>::call_now(&HalveTool, &state, &typed_runtime, args).unwrap();
    assert_eq!(now_typed.structured, now.structured);
    for bad in [
        Tool::<(), ()>::call_now(&HalveTool, &(), &runtime("c9"), json!({"n": "x"})).unwrap_err(),
        Tool::<(), ()>::call(&HalveTool, &(), &runtime("c9"), json!({"n": "x"}))
            .await
            .unwrap_err(),
    ] {
        assert_eq!(bad.kind().as_str(), "invalid_arguments");
    }
}

#[tokio::test]
async fn tools_that_wait_and_tools_that_do_not_run_alike_through_the_executor() {
    let mut registry = ToolRegistry::new();
    registry.register(DoubleTool).unwrap();
    registry.register(DoubleLaterTool).unwrap();
    registry.register(DoubleThroughAMacroTool).unwrap();
    let exec = ToolExecutor::builder(registry, ()).build().unwrap();
    let calls = ["double", "double_later", "double_through_a_macro"]
        .iter()
        .enumerate()
        .map(|(i, name)| call(&format!("c{i}"), name, json!({"n": 5})))
        .collect();
    let results = execute_batch_once(&exec, calls).await;
    let doubles: Vec<Value> = results
        .iter()
        .map(|r| r.structured.as_ref().expect("succeeded")["double"].clone())
        .collect();
    assert_eq!(doubles, [json!(10), json!(10), json!(10)]);
    assert_eq!(
        results[0].structured.as_ref().unwrap()["label"],
        json!("c0:5")
    );
}

#[test]
fn a_call_that_waits_after_all_fails_with_a_fatal_error_instead_of_hanging() {
    let mut polled = false;
    let waits = std::future::poll_fn(|cx| {
        if polled {
            return std::task::Poll::Ready(ToolOutput::text("late"));
        }
        polled = true;
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    });
    let err = tool_macro::poll_once("sneaky", waits).unwrap_err();
    assert_eq!(err.class(), ErrorClass::Fatal);
    assert!(
        err.message().contains("`sneaky` waited"),
        "{}",
        err.message()
    );
    let ready = tool_macro::poll_once("plain", async { ToolOutput::text("now") });
    assert_eq!(ready.unwrap().content, vec![ContentBlock::text("now")]);
}

#[tokio::test]
async fn a_generated_tool_reads_borrowed_arguments_without_copying_them() {
    // `call_now_ref` decodes from the reference: it allocates no more than
    // `call_now` given arguments it owns, and less than a copy of them and
    // `call_now` (what the trait's default does).
    let args = json!({"n": 9});
    let rt = runtime("c10");
    let (borrowed, by_ref) =
        crate::allocations::counted(|| Tool::<(), ()>::call_now_ref(&HalveTool, &(), &rt, &args));
    let owned = args.clone();
    let (taken, by_value) =
        crate::allocations::counted(|| Tool::<(), ()>::call_now(&HalveTool, &(), &rt, owned));
    let (copied, by_copy) = crate::allocations::counted(|| {
        Tool::<(), ()>::call_now(&HalveTool, &(), &rt, args.clone())
    });
    assert_eq!(borrowed.unwrap().structured, Some(json!({"half": 4})));
    assert_eq!(taken.unwrap().structured, Some(json!({"half": 4})));
    assert_eq!(copied.unwrap().structured, Some(json!({"half": 4})));
    assert_eq!(
        by_ref, by_value,
        "decoding borrowed arguments copies nothing"
    );
    assert!(
        by_ref < by_copy,
        "{by_ref} allocations borrowed, {by_copy} with a copy"
    );
}

#[tokio::test]
async fn every_kind_of_generated_tool_answers_alike_from_borrowed_arguments() {
    // Plain parameters (decoded through the generated struct), an argument
    // struct with an injection, and an argument struct alone: `call_now_ref`
    // gives what `call_now` gives, for good arguments and for bad ones.
    let rt = runtime("c11");
    let cases: [(&dyn Tool, Value, Value); 3] = [
        (
            &ScaleTool,
            json!({"n": 3, "by": 4, "label": "x"}),
            json!({"n": 3, "by": "four", "label": "x"}),
        ),
        (&DoubleTool, json!({"n": 5}), json!({"n": "five"})),
        (&HalveTool, json!({"n": 8}), json!({})),
    ];
    for (tool, good, bad) in cases {
        let name = tool.spec().name.as_str();
        let owned = tool.call_now(&(), &rt, good.clone()).expect(name);
        let borrowed = tool.call_now_ref(&(), &rt, &good).expect(name);
        assert_eq!(borrowed, owned, "{name}");
        let owned = tool.call_now(&(), &rt, bad.clone()).unwrap_err();
        let borrowed = tool.call_now_ref(&(), &rt, &bad).unwrap_err();
        assert_eq!(borrowed.kind().as_str(), "invalid_arguments", "{name}");
        assert_eq!(borrowed.message(), owned.message(), "{name}");
    }
}
