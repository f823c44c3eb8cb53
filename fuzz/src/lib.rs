//! The harness shared by the fuzz targets: one executor over the quickstart
//! tools and a recording tool, and the properties every call must keep.
//!
//! Any panic is a finding (libFuzzer's hook aborts on panics, even those the
//! executor would catch), and so is a broken property:
//! - exactly one result per call, answering its call id, in call order;
//! - every argument value the recording tool's body received validates
//!   against its input schema;
//! - an `invalid_arguments` result comes from a refusal (`tool.rejected`,
//!   no `tool.started`), so schema and deserializer never disagree;
//! - each call ends with exactly one of `tool.completed`, `tool.failed` or
//!   `tool.rejected`.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{Value, json};
use tinyagents_tools::call::RawArguments;
use tinyagents_tools::events::{Delivery, EventKind, EventSubscriber, ToolEvent};
use tinyagents_tools::providers::{anthropic, gemini, mcp, openai};
use tinyagents_tools::registry::compile_schema;
use tinyagents_tools::spec::InjectedKind;
use tinyagents_tools::spec::SafetyItem;
use tinyagents_tools::*;
use tinyagents_tools_examples::{NoteBook, quickstart_registry, quickstart_run};

/// A tool whose body records the arguments it was given.
struct Recording {
    spec: ToolSpec,
    seen: Mutex<Vec<Value>>,
}

#[async_trait]
impl Tool for Recording {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    async fn call(&self, _: &(), _: &ToolRuntime, args: Value) -> Result<ToolOutput, ToolError> {
        self.seen.lock().unwrap().push(args);
        Ok(ToolOutput::text("recorded"))
    }
}

/// The recording tool's schema: nested objects, arrays, bounds, an enum, a
/// pattern, a required key, and (in the spec) an injected parameter.
fn recording_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "query": {"type": "string", "maxLength": 64},
            "limit": {"type": "integer", "minimum": 1, "maximum": 50},
            "mode": {"enum": ["fast", "exact"]},
            "tags": {"type": "array", "items": {"type": "string", "pattern": "^[a-z]+$"}, "maxItems": 8},
            "filter": {
                "type": "object",
                "properties": {"field": {"type": "string"}, "value": {"type": ["number", "null"]}},
                "required": ["field"],
                "additionalProperties": false
            }
        },
        "required": ["query"],
        "additionalProperties": false
    })
}

/// A tool with an open schema (any extra key accepted), so the runtime-id
/// refusal is exercised where the schema alone would not refuse.
struct Open(ToolSpec);

#[async_trait]
impl Tool for Open {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    async fn call(&self, _: &(), _: &ToolRuntime, args: Value) -> Result<ToolOutput, ToolError> {
        for key in ["call_id", "tool_call_id", "run_id", "thread_id", "cancel"] {
            assert!(
                args.get(key).is_none(),
                "a runtime key `{key}` reached the tool"
            );
        }
        Ok(ToolOutput::text("open"))
    }
}

/// Keeps every event, in line.
#[derive(Default)]
struct Events(Mutex<Vec<ToolEvent<'static>>>);

impl EventSubscriber for Events {
    fn on_event(&self, event: &ToolEvent) {
        self.0.lock().unwrap().push(event.clone().into_owned());
    }
    fn delivery(&self) -> Delivery {
        Delivery::Inline
    }
}

struct Harness {
    runtime: tokio::runtime::Runtime,
    executor: ToolExecutor,
    recording: Arc<Recording>,
    /// The recording tool's input check, compiled as the registry compiles
    /// it.
    accepts: Box<dyn Fn(&Value) -> bool + Send + Sync>,
    events: Arc<Events>,
    names: Vec<String>,
    workspace: PathBuf,
}

fn harness() -> &'static Harness {
    static HARNESS: OnceLock<Harness> = OnceLock::new();
    HARNESS.get_or_init(|| {
        let mut registry = quickstart_registry().expect("the quickstart registry");
        let recording = Arc::new(Recording {
            spec: ToolSpec::builder("record", "Record the arguments.")
                .input_schema(ToolSchema::from_value(recording_schema()))
                .injected("cancel", "CancellationToken", InjectedKind::Cancellation)
                .safety(ToolSafety::pure())
                .build()
                .expect("a valid spec"),
            seen: Mutex::new(Vec::new()),
        });
        registry.register(recording.clone()).expect("registers");
        let open = ToolSpec::builder("open", "Take any keys.")
            .input_schema(ToolSchema::from_value(json!({"type": "object"})))
            .injected("cancel", "CancellationToken", InjectedKind::Cancellation)
            .safety(ToolSafety::pure())
            .build()
            .expect("a valid spec");
        registry.register(Open(open)).expect("registers");
        registry.add_alias("record", "record-alias").expect("alias");
        let names = registry.names().map(str::to_owned).collect();
        let validator = compile_schema(recording.spec.input_schema.as_value())
            .expect("the recording schema compiles");
        let accepts = Box::new(move |value: &Value| validator.is_valid(value));
        let events = Arc::new(Events::default());
        let executor = ToolExecutor::builder(registry, ())
            .subscribe(events.clone())
            // The properties are about arguments and answers, not approvals:
            // `write_note` runs without an approver, by choice.
            .unenforced(SafetyItem::Confirmation)
            .configure(|c| {
                c.max_argument_bytes = 64 << 10;
                c.max_argument_depth = 32;
                c.default_timeout = std::time::Duration::from_secs(5);
            })
            .build()
            .expect("builds");
        let workspace =
            std::env::temp_dir().join(format!("tinyagents-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(workspace.join("notes")).expect("workspace");
        std::fs::write(workspace.join("notes/today.md"), "hello").expect("workspace file");
        Harness {
            runtime: tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .build()
                .expect("runtime"),
            executor,
            recording,
            accepts,
            events,
            names,
            workspace,
        }
    })
}

/// One input for one call: the first byte picks the tool (or a name no tool
/// has), the second how the arguments arrive (text, parsed value, or parsed
/// value under a key), the rest is the argument text.
pub fn fuzz_arguments(data: &[u8]) {
    let [pick, mode, rest @ ..] = data else {
        return;
    };
    let h = harness();
    let name = match h.names.get(usize::from(*pick) % (h.names.len() + 2)) {
        Some(name) => name.clone(),
        None if pick % 2 == 0 => "record-alias".to_owned(),
        None => String::from_utf8_lossy(&rest[..rest.len().min(8)]).into_owned(),
    };
    let text = String::from_utf8_lossy(rest).into_owned();
    let arguments = match mode % 3 {
        0 => RawArguments::Text(text),
        1 => match serde_json::from_str::<Value>(&text) {
            Ok(value) => RawArguments::Json(value),
            Err(_) => RawArguments::Text(text),
        },
        _ => match serde_json::from_str::<Value>(&text) {
            Ok(value) => RawArguments::Json(json!({"query": "q", "filter": value})),
            Err(_) => RawArguments::Text(text),
        },
    };
    check_batch(vec![ToolCall::new("fuzz-call", name, arguments)]);
}

/// One input for the provider parsers: the bytes as a JSON payload, read by
/// every parser; whatever calls come out run as one batch.
pub fn fuzz_provider_calls(data: &[u8]) {
    let Ok(payload) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let parsed = [
        openai::parse_chat_tool_calls(&payload),
        openai::parse_responses_function_calls(&payload),
        anthropic::parse_tool_uses(&payload),
        gemini::parse_function_calls(&payload, 0),
        mcp::parse_call_tool_params("rpc-1", &payload).map(|c| vec![c]),
        mcp::parse_call_tool_request(&payload).map(|c| vec![c]),
    ];
    for outcome in parsed {
        match outcome {
            Ok(calls) => check_batch(calls),
            Err(e) => {
                // The error renders, and never at unbounded length.
                let text = e.to_string();
                assert!(text.len() <= 64 + 4 * data.len(), "{}", text.len());
            }
        }
    }
}

fn check_batch(calls: Vec<ToolCall>) {
    let h = harness();
    h.events.0.lock().unwrap().clear();
    h.recording.seen.lock().unwrap().clear();
    let ids: Vec<ToolCallId> = calls.iter().map(|c| c.id.clone()).collect();
    let run = quickstart_run(&h.workspace, Arc::new(NoteBook::default()));
    let results = h
        .runtime
        .block_on(h.executor.execute_batch(&run, &Turn::new(1), calls));

    assert_eq!(results.len(), ids.len(), "one result per call");
    for (result, id) in results.iter().zip(&ids) {
        assert_eq!(&result.tool_call_id, id, "results in call order");
    }
    for seen in h.recording.seen.lock().unwrap().iter() {
        assert!(
            (h.accepts)(seen),
            "the body ran with invalid arguments: {seen}"
        );
    }
    let events = h.events.0.lock().unwrap();
    // Ids may repeat in a provider payload; check each distinct id once.
    for (i, id) in ids.iter().enumerate() {
        if ids[..i].contains(id) {
            continue;
        }
        let of_id: Vec<&ToolEvent> = events.iter().filter(|e| &e.call_id == id).collect();
        let calls_with_id = ids.iter().filter(|x| *x == id).count();
        let terminal = of_id
            .iter()
            .filter(|e| {
                matches!(
                    e.kind,
                    EventKind::Completed | EventKind::Failed | EventKind::Rejected
                )
            })
            .count();
        assert_eq!(terminal, calls_with_id, "one terminal event per call");
        for result in results.iter().filter(|r| &r.tool_call_id == id) {
            let invalid = result
                .error
                .as_ref()
                .is_some_and(|e| e.kind().as_str() == "invalid_arguments");
            if invalid && calls_with_id == 1 {
                assert!(
                    of_id.iter().all(|e| e.kind != EventKind::Started),
                    "invalid arguments were found after the call started (schema and deserializer disagree)"
                );
            }
        }
    }
}
