//! Property tests: batches of calls with arbitrary names, ids and arguments
//! (arbitrary JSON values, objects over the tools' own keys, valid and
//! broken JSON text) against every example tool and the shared test tools.
//!
//! For every batch: no panic, exactly one result per call in call order,
//! every argument value a tool body received validates against its schema,
//! and an `invalid_arguments` result is always a refusal before the call
//! started (schema and deserializer never disagree). 256 cases by default;
//! `PROPTEST_CASES` overrides.

use std::cell::Cell;
use std::sync::Arc;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Map, Value};
use tinyagents_tools::call::RawArguments;
use tinyagents_tools::events::EventKind;
use tinyagents_tools::registry::compile_schema;
use tinyagents_tools::spec::SafetyItem;
use tinyagents_tools::*;
use tinyagents_tools_examples::{
    CalculateTool, DocIndex, NoteBook, ReadFileTool, SearchDocsTool, WriteNoteTool,
};
use tinyagents_tools_tests::*;

/// Keys the tools know, keys the runtime owns, and a few others.
const KEYS: &[&str] = &[
    "text",
    "limit",
    "to",
    "page",
    "query",
    "title",
    "body",
    "path",
    "a",
    "b",
    "op",
    "cancel",
    "index",
    "notebook",
    "root",
    "call_id",
    "tool_call_id",
    "run_id",
    "thread_id",
    "extra",
    "",
];
const WORDS: &[&str] = &[
    "tools",
    "add",
    "divide",
    "power",
    "notes/today.md",
    "../etc/passwd",
    "/abs",
    "~",
    "a.txt",
    "",
    "x",
];

fn config() -> Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256);
    Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    }
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-100i64..100).prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        (-10.0f64..10.0).prop_map(Value::from),
        prop::sample::select(WORDS).prop_map(Value::from),
        "\\PC{0,12}".prop_map(Value::from),
    ]
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(KEYS).prop_map(str::to_owned),
        1 => "\\PC{0,8}",
    ]
}

/// Any JSON value, nested up to 4 levels.
fn json_value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..6)
                .prop_map(|entries| Value::Object(entries.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// An argument object over the tools' keys: often close to valid.
fn object() -> impl Strategy<Value = Value> {
    prop::collection::vec((key(), json_value()), 0..5)
        .prop_map(|entries| Value::Object(entries.into_iter().collect::<Map<_, _>>()))
}

fn arguments() -> impl Strategy<Value = RawArguments> {
    prop_oneof![
        4 => object().prop_map(RawArguments::Json),
        2 => object().prop_map(|v| RawArguments::Text(v.to_string())),
        1 => json_value().prop_map(RawArguments::Json),
        1 => (object(), any::<prop::sample::Index>()).prop_map(|(v, cut)| {
            let text = v.to_string();
            let mut at = cut.index(text.len() + 1);
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            RawArguments::Text(text[..at].to_owned())
        }),
        1 => "\\PC{0,24}".prop_map(RawArguments::Text),
    ]
}

fn name(names: Vec<String>) -> impl Strategy<Value = String> {
    prop_oneof![
        6 => prop::sample::select(names),
        1 => "\\PC{0,16}",
        1 => Just(String::new()),
    ]
}

fn batch(names: Vec<String>) -> impl Strategy<Value = (Vec<ToolCall>, usize)> {
    let call = ("\\PC{0,10}", name(names), arguments());
    (prop::collection::vec(call, 1..10), 1usize..5).prop_map(|(calls, concurrency)| {
        let calls = calls
            .into_iter()
            .enumerate()
            // Arbitrary ids, made unique so each result can be traced.
            .map(|(i, (id, name, args))| ToolCall::new(format!("{id}#{i}"), name, args))
            .collect();
        (calls, concurrency)
    })
}

#[test]
fn arbitrary_calls_never_panic_never_run_a_body_on_invalid_arguments_and_answer_each_id_once() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(ws.path().join("notes")).unwrap();
    std::fs::write(ws.path().join("notes/today.md"), "hello").unwrap();
    std::fs::write(ws.path().join("a.txt"), "a").unwrap();
    let tools: Vec<Arc<Spy<Arc<dyn Tool>>>> = vec![
        Spy::new(Arc::new(SearchDocsTool)),
        Spy::new(Arc::new(WriteNoteTool)),
        Spy::new(Arc::new(ReadFileTool)),
        Spy::new(Arc::new(CalculateTool)),
        Spy::new(echo()),
        Spy::new(send_email()),
        Spy::new(no_args("listing", true)),
        Spy::new(open()),
    ];
    let names: Vec<String> = tools
        .iter()
        .map(|t| t.spec().name.as_str().to_owned())
        .collect();
    let mut registry = registry(tools.iter().map(|t| t.clone() as Arc<dyn Tool>).collect());
    registry.add_alias("echo", "echo-alias").unwrap();
    let registry = Arc::new(registry);
    let mut names_and_alias = names.clone();
    names_and_alias.push("echo-alias".to_owned());

    let mut runner = TestRunner::new(config());
    let totals = [Cell::new(0usize), Cell::new(0usize), Cell::new(0usize)];
    runner
        .run(&batch(names_and_alias), |(calls, concurrency)| {
            let recorder = Recorder::new();
            let exec = ToolExecutor::builder(registry.clone(), ())
                .subscribe(recorder.clone())
                // The properties are about arguments and ids, not approvals.
                .unenforced(SafetyItem::Confirmation)
                .configure(|c| {
                    c.max_concurrency = std::num::NonZeroUsize::new(concurrency).unwrap()
                })
                .build()
                .unwrap();
            let seen_before: Vec<usize> = tools.iter().map(|t| t.runs()).collect();
            let run = RunContext::builder(())
                .store(DocIndex::builtin())
                .store_arc(Arc::new(NoteBook::default()))
                .workspace_root(ws.path())
                .build();
            let ids: Vec<ToolCallId> = calls.iter().map(|c| c.id.clone()).collect();
            let results = runtime.block_on(exec.execute_batch(&run, &Turn::new(1), calls));

            prop_assert_eq!(results.len(), ids.len());
            let events = recorder.events();
            for (r, id) in results.iter().zip(&ids) {
                prop_assert_eq!(&r.tool_call_id, id);
                prop_assert_ne!(kind(r), "panicked");
                let of_call: Vec<EventKind> = events
                    .iter()
                    .filter(|e| &e.call_id == id)
                    .map(|e| e.kind)
                    .collect();
                let finals = of_call
                    .iter()
                    .filter(|k| {
                        matches!(
                            k,
                            EventKind::Completed | EventKind::Failed | EventKind::Rejected
                        )
                    })
                    .count();
                prop_assert_eq!(finals, 1, "{}: {:?}", id, of_call);
                if kind(r) == "invalid_arguments" {
                    prop_assert_eq!(&of_call, &[EventKind::Rejected], "{}: {}", id, r.text());
                    totals[1].set(totals[1].get() + 1);
                } else if kind(r) == "ok" {
                    totals[0].set(totals[0].get() + 1);
                } else {
                    totals[2].set(totals[2].get() + 1);
                }
            }
            for (tool, before) in tools.iter().zip(seen_before) {
                let schema = &registry
                    .get(tool.spec().name.as_str())
                    .unwrap()
                    .spec()
                    .input_schema;
                let validator = compile_schema(schema.as_value()).unwrap();
                for args in &tool.seen()[before..] {
                    prop_assert!(
                        validator.is_valid(args),
                        "{} ran with {}",
                        tool.spec().name.as_str(),
                        args
                    );
                }
            }
            Ok(())
        })
        .unwrap();
    // The strategies reach every outcome, not only refusals.
    let [ok, invalid, other] = totals.map(Cell::into_inner);
    assert!(
        ok > 0 && invalid > 0 && other > 0,
        "ok {ok}, invalid {invalid}, other {other}"
    );
}
