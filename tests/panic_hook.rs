//! A tool's panic message never reaches the process's panic hook (so never
//! stderr through the default one): the call gets a `panicked` error and the
//! message, masked, goes to its `tool.failed` event. A panic outside any call
//! still reaches the hook that was there before.
//!
//! Its own binary: the panic hook is process-wide, and this test sets one.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tinyagents_tools::events::EventKind;
use tinyagents_tools::middleware::BeforeOutcome;
use tinyagents_tools::*;
use tinyagents_tools_tests::{
    BeforeTool, FnTool, Recorder, call, execute_in, kind, read_only_spec,
};

const SECRET: &str = "sk-live-panic-4d5e6f";

static SEEN: Mutex<Vec<String>> = Mutex::new(Vec::new());

struct Key;

impl AsRef<str> for Key {
    fn as_ref(&self) -> &str {
        SECRET
    }
}

/// Panics with the secret in its message: at once, after a wait, or behind
/// a middleware.
fn executor(with_middleware: bool) -> (Arc<Recorder>, ToolExecutor) {
    let spec = read_only_spec(
        "crasher",
        json!({"type": "object", "properties": {"wait": {"type": "boolean"}}}),
    );
    let crasher = FnTool::new(spec, |_, args| {
        Box::pin(async move {
            if args["wait"] == true {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            panic!("crashed holding {SECRET}");
        })
    });
    let mut registry = ToolRegistry::new();
    registry.register(crasher).unwrap();
    let recorder = Recorder::new();
    let mut builder = ToolExecutor::builder(registry, ()).subscribe(recorder.clone());
    if with_middleware {
        builder = builder.middleware(BeforeTool::new("passes", |_| Ok(BeforeOutcome::Continue)));
    }
    (recorder, builder.build().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tools_panic_message_skips_the_panic_hook_and_reaches_the_events_masked() {
    std::panic::set_hook(Box::new(|info| {
        SEEN.lock().unwrap().push(info.to_string());
    }));
    let run = RunContext::builder(()).secret(Key).build();
    for (with_middleware, wait) in [(false, false), (false, true), (true, false), (true, true)] {
        let (recorder, exec) = executor(with_middleware);
        let id = format!("c-{with_middleware}-{wait}");
        let r = execute_in(&exec, &run, call(&id, "crasher", json!({"wait": wait}))).await;
        assert_eq!(r.tool_call_id.as_str(), id);
        assert_eq!(kind(&r), "panicked");
        assert!(!r.text().contains("crashed"), "the model never sees it");
        let source = std::error::Error::source(r.error.as_ref().unwrap())
            .map(ToString::to_string)
            .unwrap();
        assert_eq!(source, "crashed holding [redacted]");
        let failed = recorder
            .events()
            .into_iter()
            .find(|e| e.kind == EventKind::Failed)
            .expect("a tool.failed event");
        assert_eq!(
            failed.data,
            Some(json!({"panic": "crashed holding [redacted]"})),
            "{id}"
        );
    }
    assert!(
        SEEN.lock().unwrap().is_empty(),
        "the hook saw: {:?}",
        SEEN.lock().unwrap()
    );

    // Outside a call, the previous hook still runs.
    let outside = std::panic::catch_unwind(|| panic!("outside any call"));
    assert!(outside.is_err());
    let seen = SEEN.lock().unwrap().clone();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert!(seen[0].contains("outside any call"), "{seen:?}");
}
