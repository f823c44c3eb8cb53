//! `#[tool]`'s side of answering at once: a plain `fn` gives a tool whose
//! calls run in line (`Tool::__inline`), from borrowed arguments; an `async
//! fn` always answers through its future, whatever its body; a `blocking`
//! fn through the blocking pool. Every kind answers alike.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tinyagents_tools::tool_macro::InlineRuntime;
use tinyagents_tools::*;
use tinyagents_tools_tests::*;

#[derive(Debug, Deserialize, JsonSchema)]
struct Numbers {
    /// A number.
    n: i64,
}

/// Doubles `n`, labelled with the call id; a plain fn.
#[tool(read_only, idempotent)]
fn double(args: Numbers, #[inject] call_id: ToolCallId) -> Value {
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

/// Doubles `n`; an `async fn` whose body never waits.
#[tool(read_only)]
async fn double_async(args: Numbers) -> Value {
    json!({"double": args.n * 2})
}

/// Doubles `n` on the blocking pool.
#[tool(read_only, blocking)]
fn double_blocking(args: Numbers) -> Value {
    json!({"double": args.n * 2})
}

/// Labels `n` with its call and run; a plain fn that injects twice.
#[tool(read_only)]
fn labelled(args: Numbers, #[inject] call_id: ToolCallId, #[inject] run_id: RunId) -> String {
    format!("{}/{}:{}", run_id.as_str(), call_id.as_str(), args.n)
}

/// Halves `n`; a plain fn that injects nothing.
#[tool(read_only)]
fn halve(args: Numbers) -> Value {
    json!({"half": args.n / 2})
}

/// Scales `n` by `by`; plain parameters, a plain fn.
#[tool(read_only)]
fn scale(
    /// A number.
    n: i64,
    /// The factor.
    by: i64,
    /// A label to repeat.
    label: String,
) -> Value {
    json!({"scaled": n * by, "label": label})
}

/// A counter of its own, with a plain and an `async` tool method.
#[derive(Default)]
struct Counter {
    base: i64,
}

#[tools]
impl Counter {
    /// Adds `n` to the base; a plain method.
    #[tool(read_only)]
    fn add(
        &self,
        /// A number.
        n: i64,
    ) -> i64 {
        self.base + n
    }

    /// Adds `n` to the base; an `async` method.
    #[tool(read_only)]
    async fn add_later(
        &self,
        /// A number.
        n: i64,
    ) -> i64 {
        self.base + n
    }
}

fn runtime(id: &str) -> ToolRuntime {
    ToolRuntime::new(RunContext::empty(), id, "double")
}

/// `tool`'s answer to `arguments` at once, and through `call`: they must be
/// the same, output or error message.
async fn both_ways(
    tool: &dyn Tool,
    rt: &ToolRuntime,
    arguments: Value,
) -> Result<ToolOutput, String> {
    let inline = tool.__inline().expect("a plain fn's tool answers at once");
    let now = inline.call_inline(&(), &rt.into(), &arguments);
    let later = tool.call(&(), rt, arguments).await;
    match (now, later) {
        (Ok(now), Ok(later)) => {
            assert_eq!(now, later);
            Ok(now)
        }
        (Err(now), Err(later)) => {
            assert_eq!(now.kind().as_str(), later.kind().as_str());
            assert_eq!(now.message(), later.message());
            Err(now.kind().as_str().to_owned())
        }
        (now, later) => panic!("at once {now:?}, through call {later:?}"),
    }
}

#[tokio::test]
async fn a_plain_fn_answers_at_once_and_an_async_fn_through_its_future() {
    assert!(Tool::<(), ()>::__inline(&DoubleTool).is_some());
    assert!(Tool::<(), ()>::__inline(&HalveTool).is_some());
    assert!(Tool::<(), ()>::__inline(&ScaleTool).is_some());
    // Whatever its body: the `async` in the signature decides, not a scan of
    // the body for `.await`.
    assert!(Tool::<(), ()>::__inline(&DoubleLaterTool).is_none());
    assert!(Tool::<(), ()>::__inline(&DoubleAsyncTool).is_none());
    assert!(Tool::<(), ()>::__inline(&DoubleBlockingTool).is_none());
    assert!(DoubleBlockingTool::spec().blocking);
    assert!(!DoubleTool::spec().blocking);

    let output = both_ways(&DoubleTool, &runtime("c7"), json!({"n": 4}))
        .await
        .unwrap();
    assert_eq!(
        output.structured,
        Some(json!({"double": 8, "label": "c7:4"}))
    );
    let bad = both_ways(&DoubleTool, &runtime("c7"), json!({"n": "x"})).await;
    assert_eq!(bad.unwrap_err(), "invalid_arguments");
}

#[tokio::test]
async fn a_plain_fn_that_injects_nothing_answers_alike_for_any_state_and_context() {
    let args = json!({"n": 9});
    let typed_runtime = ToolRuntime::new(RunContext::builder(7u8).build(), "c9", "halve");
    let state = String::from("state");
    let inline = Tool::<String, u8>::__inline(&HalveTool).unwrap();
    let now = inline
        .call_inline(&state, &(&typed_runtime).into(), &args)
        .unwrap();
    assert_eq!(now.structured, Some(json!({"half": 4})));
    let called = Tool::<String, u8>::call(&HalveTool, &state, &typed_runtime, args)
        .await
        .unwrap();
    assert_eq!(called, now);
}

#[tokio::test]
async fn every_kind_of_plain_fn_tool_answers_alike_from_borrowed_arguments() {
    // Plain parameters (decoded through the generated struct), an argument
    // struct with an injection, and an argument struct alone: at once and
    // through `call`, for good arguments and for bad ones.
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
        both_ways(tool, &rt, good).await.expect(name);
        let refused = both_ways(tool, &rt, bad).await;
        assert_eq!(refused.unwrap_err(), "invalid_arguments", "{name}");
    }
}

#[tokio::test]
async fn a_plain_tool_method_answers_at_once_on_its_service() {
    let service = Arc::new(Counter { base: 40 });
    let add = CounterAddTool::new(Arc::clone(&service));
    let later = CounterAddLaterTool::new(service);
    assert!(Tool::<(), ()>::__inline(&later).is_none());
    let output = both_ways(&add, &runtime("c12"), json!({"n": 2}))
        .await
        .unwrap();
    assert_eq!(output.structured, Some(json!(42)));
    let waited = Tool::<(), ()>::call(&later, &(), &runtime("c13"), json!({"n": 2}))
        .await
        .unwrap();
    assert_eq!(waited, output);
}

#[tokio::test]
async fn plain_async_and_blocking_tools_run_alike_through_the_executor() {
    let mut registry = ToolRegistry::new();
    registry.register(DoubleTool).unwrap();
    registry.register(DoubleLaterTool).unwrap();
    registry.register(DoubleAsyncTool).unwrap();
    registry.register(DoubleBlockingTool).unwrap();
    let exec = ToolExecutor::builder(registry, ()).build().unwrap();
    let names = ["double", "double_later", "double_async", "double_blocking"];
    let calls = names
        .iter()
        .enumerate()
        .map(|(i, name)| call(&format!("c{i}"), name, json!({"n": 5})))
        .collect();
    let results = execute_batch_once(&exec, calls).await;
    let doubles: Vec<Value> = results
        .iter()
        .map(|r| r.structured.as_ref().expect("succeeded")["double"].clone())
        .collect();
    assert_eq!(doubles, [json!(10), json!(10), json!(10), json!(10)]);
    assert_eq!(
        results[0].structured.as_ref().unwrap()["label"],
        json!("c0:5")
    );
}

#[test]
fn a_plain_fn_tool_reads_borrowed_arguments_without_copying_them() {
    // Decoding from the reference allocates less than a copy of the
    // arguments and a decoding of the copy.
    let args = json!({"n": 9, "by": 2, "label": "a label"});
    let rt = runtime("c10");
    let inline = Tool::<(), ()>::__inline(&ScaleTool).unwrap();
    let (borrowed, by_ref) =
        crate::allocations::counted(|| inline.call_inline(&(), &(&rt).into(), &args));
    let (copied, by_copy) = crate::allocations::counted(|| {
        let copy = args.clone();
        inline.call_inline(&(), &(&rt).into(), &copy)
    });
    assert_eq!(borrowed.unwrap(), copied.unwrap());
    assert!(
        by_ref < by_copy,
        "{by_ref} allocations borrowed, {by_copy} with a copy"
    );
}

#[test]
fn a_plain_fn_tool_gets_one_runtime_and_only_when_it_injects_something() {
    let made = std::cell::Cell::new(0);
    let make = || {
        made.set(made.get() + 1);
        ToolRuntime::new(RunContext::builder(()).run_id("r1").build(), "c12", "x")
    };
    let args = json!({"n": 4});

    let halve = Tool::<(), ()>::__inline(&HalveTool).unwrap();
    let out = halve.call_inline(&(), &InlineRuntime::lazy(&make), &args);
    assert_eq!(out.unwrap().structured, Some(json!({"half": 2})));
    assert_eq!(
        made.get(),
        0,
        "a tool that injects nothing makes no runtime"
    );

    let labelled = Tool::<(), ()>::__inline(&LabelledTool).unwrap();
    let out = labelled.call_inline(&(), &InlineRuntime::lazy(&make), &args);
    assert_eq!(out.unwrap().structured, Some(json!("r1/c12:4")));
    assert_eq!(made.get(), 1, "both injections read the one runtime");
}
