//! Secrets never leave the tool: with secret values registered on the run,
//! tools that put them in their output, their errors, custom events and
//! progress, and models that send them as arguments or tool names, leave no
//! trace of them in any event, tool message, error text or `tracing` output.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tinyagents_tools::artifacts::{ArtifactStore, InMemoryArtifactStore};
use tinyagents_tools::events::{EventKind, EventSubscriber, ToolEvent};
use tinyagents_tools::middleware::{BeforeOutcome, BeforeToolCtx};
use tinyagents_tools::*;
use tinyagents_tools_tests::*;
use tracing_subscriber::fmt::format::FmtSpan;

const API_KEY: &str = "sk-live-7f3c9a1e5b2d";
const DB_PASSWORD: &str = "correct-horse-battery-staple";

/// The API key ([`API_KEY`]) a tool reads from the run's secrets.
struct ApiKey;

impl AsRef<str> for ApiKey {
    fn as_ref(&self) -> &str {
        API_KEY
    }
}

/// A second secret of another type: [`DB_PASSWORD`].
struct DbPassword;

impl AsRef<str> for DbPassword {
    fn as_ref(&self) -> &str {
        DB_PASSWORD
    }
}

/// `leaky`: reads the API key and leaks it the way `mode` says.
fn leaky() -> Arc<dyn Tool> {
    let spec = read_only_spec(
        "leaky",
        json!({
            "type": "object",
            "properties": {"mode": {"type": "string"}, "note": {"type": "string"}},
            "required": ["mode"],
            "additionalProperties": false
        }),
    );
    Arc::new(FnTool::new(spec, |rt, args| {
        Box::pin(async move { leak(rt, &args) })
    }))
}

/// What `leaky` does with the run's secrets.
fn leak(rt: &ToolRuntime, args: &Value) -> Result<ToolOutput, ToolError> {
    let key = rt.run().secrets().get::<ApiKey>().expect("the key");
    let key = key.expose().as_ref().to_owned();
    let db = rt
        .run()
        .secrets()
        .get::<DbPassword>()
        .expect("the password");
    let db = db.expose().as_ref().to_owned();
    match args["mode"].as_str().unwrap_or_default() {
        "text" => Ok(ToolOutput::text(format!(
            "the key is {key} and the password {db}"
        ))),
        "structured" => Ok(ToolOutput::structured(json!({
            "key": key,
            "nested": [{"auth": format!("Bearer {key}")}],
            key.clone(): "as a key"
        }))),
        "blocks" => Ok(ToolOutput::text("see below")
            .with_block(ContentBlock::json(json!({"token": key})))
            .with_block(ContentBlock::text(db))),
        "large" => Ok(ToolOutput::text(format!("{} {key}", "x".repeat(100_000)))),
        "error" => Err(ToolError::repair(format!("the key {key} was refused"))),
        "fatal" => Err(ToolError::fatal(format!("db login failed for {db}"))),
        "events" => {
            rt.emitter()
                .emit(format!("login-{key}"), json!({"key": key, "list": [db]}));
            rt.stream_writer()
                .progress(0.5, Some(1.0), Some(&format!("using {key}")));
            rt.stream_writer().write(&format!("still using {db}"));
            Ok(ToolOutput::text("done"))
        }
        "panic" => panic!("crashed holding {key}"),
        _ => Ok(ToolOutput::text("nothing")),
    }
}

/// Denies every call with a reason that quotes the secret.
fn leaky_policy(ctx: &mut BeforeToolCtx<'_>) -> Result<BeforeOutcome, ToolError> {
    if ctx.arguments()["mode"] == "deny" {
        let key = ctx.run().secrets().get::<ApiKey>().unwrap();
        let reason = format!("not with key {}", key.expose().as_ref());
        return Ok(BeforeOutcome::deny("leaky_policy", reason));
    }
    Ok(BeforeOutcome::Continue)
}

/// A queued subscriber that keeps every event it is handed.
#[derive(Default)]
struct QueuedLog(Mutex<Vec<String>>);

impl EventSubscriber for QueuedLog {
    fn on_event(&self, event: &ToolEvent) {
        self.0
            .lock()
            .unwrap()
            .push(serde_json::to_string(event).unwrap());
    }
}

#[tokio::test]
async fn no_secret_reaches_an_event_a_tool_message_an_error_or_tracing_output() {
    let captured = LogCapture::default();
    let _guard = captured.set_default(tracing::Level::TRACE, FmtSpan::FULL);

    let recorder = Recorder::new();
    let queued = Arc::new(QueuedLog::default());
    let store = Arc::new(InMemoryArtifactStore::new());
    let exec = executor(vec![leaky(), echo()])
        .middleware(BeforeTool::new("leaky_policy", leaky_policy))
        .subscribe(recorder.clone())
        .subscribe(queued.clone())
        .artifact_store(store.clone())
        .build()
        .unwrap();
    let run = RunContext::builder(())
        .secret(ApiKey)
        .secret(DbPassword)
        .build();

    let modes = [
        "text",
        "structured",
        "blocks",
        "large",
        "error",
        "fatal",
        "events",
        "panic",
        "deny",
    ];
    let mut calls: Vec<ToolCall> = modes
        .iter()
        .map(|m| call(&format!("call-{m}"), "leaky", json!({"mode": m})))
        .collect();
    // What a model might send: the secret as an argument value, as a key, as
    // a forged hidden key, and as a tool name.
    calls.push(call(
        "forged-value",
        "echo",
        json!({"text": "x", "limit": API_KEY}),
    ));
    calls.push(call("forged-key", "echo", json!({"text": "x", API_KEY: 1})));
    calls.push(call(
        "forged-hidden",
        "echo",
        json!({"text": "x", "cancel": API_KEY}),
    ));
    calls.push(call(
        "forged-dup",
        "echo",
        format!(r#"{{"text":"x","{API_KEY}":1,"{API_KEY}":2}}"#),
    ));
    calls.push(call(
        "echoed",
        "echo",
        json!({"text": format!("my key is {API_KEY}")}),
    ));
    calls.push(call("named", API_KEY, "{}"));
    calls.push(call("named-dup", &format!("run_{DB_PASSWORD}"), "{}"));
    let count = calls.len();
    let mut results = exec.execute_batch(&run, &Turn::new(1), calls).await;
    // Sequential calls too, and the single-call path.
    results.push(
        exec.execute(
            &run,
            &Turn::new(2),
            call("single", "leaky", json!({"mode": "events"})),
        )
        .await,
    );
    assert_eq!(results.len(), count + 1);
    // Let the queued subscriber (on a thread of its own) catch up with the
    // in-line recorder: a few yields are not always enough on a busy machine.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while queued.0.lock().unwrap().len() < recorder.events().len()
        && std::time::Instant::now() < deadline
    {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }

    let mut shown = String::new();
    for r in &results {
        shown.push_str(&serde_json::to_string(&r.to_message()).unwrap());
        shown.push_str(&r.text());
        if let Some(structured) = &r.structured {
            shown.push_str(&structured.to_string());
        }
        shown.push_str(&r.name);
        for artifact in &r.artifacts {
            let bytes = store.get(&artifact.key).await.unwrap().unwrap();
            shown.push_str(&String::from_utf8(bytes).unwrap());
        }
        if let Some(e) = &r.error {
            shown.push_str(&e.to_string());
            shown.push_str(e.message());
            for p in e.problems() {
                shown.push_str(&p.to_string());
                shown.push_str(&p.pointer);
            }
        }
    }
    let events = recorder.events();
    for e in &events {
        shown.push_str(&serde_json::to_string(e).unwrap());
    }
    let queued_events = queued.0.lock().unwrap().join("\n");
    shown.push_str(&queued_events);
    let traced = captured.text();
    shown.push_str(&traced);

    // The scenarios happened: the capture is not empty, the events are there.
    assert!(traced.contains("tool.call"), "tracing captured nothing");
    assert!(events.iter().any(|e| e.kind == EventKind::Custom));
    assert!(events.iter().any(|e| e.kind == EventKind::Progress));
    assert!(queued_events.contains("tool.custom"), "{queued_events}");
    let by_id = |id: &str| {
        results
            .iter()
            .find(|r| r.tool_call_id.as_str() == id)
            .unwrap()
    };
    assert_eq!(kind(by_id("call-panic")), "panicked");
    assert_eq!(kind(by_id("call-deny")), "denied");
    assert_eq!(kind(by_id("named")), "unknown_tool");
    assert!(by_id("call-text").text().contains("[redacted]"));
    assert!(!by_id("call-large").artifacts.is_empty());

    for secret in [API_KEY, DB_PASSWORD] {
        let hits = shown.matches(secret).count();
        assert_eq!(hits, 0, "{secret} leaked {hits} times:\n{shown}");
    }
}
