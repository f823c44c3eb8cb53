//! Secrets are masked in the forms they leak in (JSON-escaped, base64, hex,
//! inside an HTTP Basic credential), in results, every provider's message,
//! error texts and events; and `ReplayCache` is scoped to the run and keeps
//! only what the model saw.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use tinyagents_tools::events::EventKind;
use tinyagents_tools::policy::*;
use tinyagents_tools::providers::{anthropic, gemini, mcp, openai};
use tinyagents_tools::redact::*;
use tinyagents_tools::testkit::FnTool;
use tinyagents_tools::*;
use tinyagents_tools_tests::{Recorder, call, execute_in, spec};

/// A secret with a quote, a backslash and a non-ASCII letter, so its JSON
/// forms differ from its text.
const SECRET: &str = "pa\"ss\\wörd-9f8e7d6c5b";

struct Key(String);

impl AsRef<str> for Key {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// [`SECRET`] in base64, in URL-safe base64 without padding, and in an HTTP
/// Basic credential (`admin:` before it), as Python's `base64` module
/// encodes them.
const SECRET_BASE64: &str = "cGEic3Ncd8O2cmQtOWY4ZTdkNmM1Yg==";
const SECRET_BASE64_URL: &str = "cGEic3Ncd8O2cmQtOWY4ZTdkNmM1Yg";
const BASIC_AUTH: &str = "YWRtaW46cGEic3Ncd8O2cmQtOWY4ZTdkNmM1Yg==";

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Every encoded form the tool leaks, with a label.
fn leaks() -> Vec<(&'static str, String)> {
    let json_escaped = serde_json::to_string(SECRET).unwrap();
    let json_escaped = json_escaped[1..json_escaped.len() - 1].to_owned();
    let ascii = json_escaped.replace('ö', "\\u00f6");
    vec![
        ("verbatim", SECRET.to_owned()),
        ("json", json_escaped.clone()),
        ("json_ascii", ascii.clone()),
        ("json_ascii_upper", ascii.replace("00f6", "00F6")),
        (
            "json_twice",
            serde_json::to_string(&json_escaped).unwrap()[1..].to_owned(),
        ),
        ("base64", SECRET_BASE64.to_owned()),
        ("base64_url_unpadded", SECRET_BASE64_URL.to_owned()),
        ("basic_auth", BASIC_AUTH.to_owned()),
        ("hex", hex(SECRET.as_bytes())),
        ("hex_upper", hex(SECRET.as_bytes()).to_uppercase()),
    ]
}

/// Leaks the run's secret in every encoded form, in text, in structured
/// output, in an error, in a custom event.
fn encoder() -> impl Tool {
    let spec = spec(
        "encoder",
        json!({"type": "object", "properties": {"mode": {"type": "string"}}}),
    )
    .safety(ToolSafety::pure())
    .build()
    .unwrap();
    FnTool::new(spec, |rt, args| {
        Box::pin(async move {
            let all: Vec<String> = leaks().into_iter().map(|(_, form)| form).collect();
            let text = all.join(" | ");
            rt.emitter().emit("leak", json!({"forms": all}));
            match args["mode"].as_str() {
                Some("error") => Err(ToolError::repair(format!("refused: {text}"))),
                Some("structured") => Ok(ToolOutput::structured(json!({"forms": all}))),
                _ => Ok(ToolOutput::text(text)),
            }
        })
    })
}

#[tokio::test]
async fn a_secret_is_masked_json_escaped_base64_and_hex_in_results_provider_messages_errors_and_events()
 {
    let mut registry = ToolRegistry::new();
    registry.register(encoder()).unwrap();
    let recorder = Recorder::new();
    let exec = ToolExecutor::builder(registry, ())
        .subscribe(recorder.clone())
        .build()
        .unwrap();
    let run = RunContext::builder(())
        .secret(Key(SECRET.to_owned()))
        .build();
    let mut shown = String::new();
    for mode in ["text", "structured", "error"] {
        let r = execute_in(&exec, &run, call(mode, "encoder", json!({"mode": mode}))).await;
        assert_eq!(r.is_error, mode == "error");
        assert!(r.text().contains(MASK), "{mode}: {}", r.text());
        for message in [
            openai::chat_tool_message(&r),
            openai::responses_function_call_output(&r),
            anthropic::tool_result_block(&r),
            gemini::function_response_part(&r),
            mcp::call_tool_result(&r),
        ] {
            shown.push_str(&message.to_string());
        }
        shown.push_str(&serde_json::to_string(&r.to_message()).unwrap());
        if let Some(e) = &r.error {
            shown.push_str(e.message());
        }
    }
    let events = recorder.events();
    assert!(events.iter().any(|e| e.kind == EventKind::Custom));
    for e in &events {
        shown.push_str(&serde_json::to_string(e).unwrap());
    }
    for (label, form) in leaks() {
        assert!(!shown.contains(&form), "{label} form leaked: {form}");
    }
    // The distinctive tail of the secret appears in no form either.
    assert!(!shown.contains("9f8e7d6c5b"));
}

/// Counts its runs and answers with the run's secret in its output.
struct Lookup {
    spec: ToolSpec,
    runs: AtomicUsize,
}

#[async_trait]
impl Tool for Lookup {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    async fn call(&self, _: &(), rt: &ToolRuntime, _: Value) -> Result<ToolOutput, ToolError> {
        let n = self.runs.fetch_add(1, Ordering::SeqCst);
        let key = rt
            .run()
            .secrets()
            .get::<Key>()
            .map(|k| k.expose().0.clone());
        Ok(ToolOutput::structured(
            json!({"run": n, "key": key.unwrap_or_default()}),
        ))
    }
}

fn replaying(scope: ReplayScope) -> (Arc<Lookup>, ToolExecutor) {
    let tool = Arc::new(Lookup {
        spec: spec("lookup", json!({"type": "object", "properties": {}}))
            .safety(ToolSafety::pure())
            .build()
            .unwrap(),
        runs: AtomicUsize::new(0),
    });
    let mut registry = ToolRegistry::new();
    registry.register(tool.clone()).unwrap();
    let exec = ToolExecutor::builder(registry, ())
        .middleware(ReplayCache::new().scope(scope))
        .build()
        .unwrap();
    (tool, exec)
}

#[tokio::test]
async fn a_replayed_result_never_crosses_runs_unless_that_scope_was_chosen() {
    let (tool, exec) = replaying(ReplayScope::Run);
    let a = RunContext::builder(()).run_id("run-a").build();
    let b = RunContext::builder(()).run_id("run-b").build();
    let first = execute_in(&exec, &a, call("1", "lookup", "{}")).await;
    let again = exec
        .execute(&a, &Turn::new(2), call("2", "lookup", "{}"))
        .await;
    assert_eq!(
        first.structured, again.structured,
        "replayed within the run"
    );
    let other = execute_in(&exec, &b, call("1", "lookup", "{}")).await;
    assert_eq!(other.structured.as_ref().unwrap()["run"], 1, "run-b ran it");
    assert_eq!(tool.runs.load(Ordering::SeqCst), 2);

    let (tool, exec) = replaying(ReplayScope::AllRuns);
    execute_in(&exec, &a, call("1", "lookup", "{}")).await;
    let shared = execute_in(&exec, &b, call("1", "lookup", "{}")).await;
    assert_eq!(shared.structured.as_ref().unwrap()["run"], 0);
    assert_eq!(tool.runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_shared_replay_stores_the_redacted_output_so_another_run_never_sees_the_secret() {
    let (_, exec) = replaying(ReplayScope::AllRuns);
    let with_secret = RunContext::builder(())
        .secret(Key(SECRET.to_owned()))
        .build();
    let without = RunContext::empty();
    execute_in(&exec, &with_secret, call("1", "lookup", "{}")).await;
    let replayed = execute_in(&exec, &without, call("1", "lookup", "{}")).await;
    assert_eq!(replayed.structured.as_ref().unwrap()["key"], MASK);
    assert!(!replayed.text().contains("9f8e7d6c5b"));
}
