//! Steps 5 and 7: middleware as an onion; rewrites re-validated;
//! short-circuit; deny.

use std::sync::{Arc, Mutex};

use serde_json::json;
use tinyagents_tools::error::ErrorKind;
use tinyagents_tools::events::EventKind;
use tinyagents_tools::middleware::{AfterToolCtx, BeforeOutcome, BeforeToolCtx};
use tinyagents_tools::*;
use tinyagents_tools_tests::*;

type Log = Arc<Mutex<Vec<String>>>;

/// Logs its hooks, and acts as configured in `before_tool`.
struct Layer {
    name: &'static str,
    log: Log,
    action: Action,
}

#[derive(Clone)]
enum Action {
    Pass,
    SetText(&'static str),
    SetLimit(u32),
    Respond(&'static str),
    Deny,
    Fail,
    ReplaceOutput(&'static str),
}

impl Layer {
    fn new(name: &'static str, log: &Log, action: Action) -> Self {
        Layer {
            name,
            log: Arc::clone(log),
            action,
        }
    }
}

#[async_trait]
impl Middleware for Layer {
    fn name(&self) -> &str {
        self.name
    }

    async fn before_tool(&self, ctx: &mut BeforeToolCtx<'_>) -> Result<BeforeOutcome, ToolError> {
        self.log
            .lock()
            .unwrap()
            .push(format!("before:{}", self.name));
        assert_eq!(ctx.spec().name.as_str(), "echo");
        assert_eq!(ctx.call_id().as_str(), "c1");
        match self.action.clone() {
            Action::Pass | Action::ReplaceOutput(_) => Ok(BeforeOutcome::Continue),
            Action::SetText(text) => {
                ctx.arguments_mut()["text"] = json!(text);
                Ok(BeforeOutcome::Continue)
            }
            Action::SetLimit(n) => {
                ctx.arguments_mut()["limit"] = json!(n);
                Ok(BeforeOutcome::Continue)
            }
            Action::Respond(text) => Ok(BeforeOutcome::Respond(ToolOutput::text(text))),
            Action::Deny => Ok(BeforeOutcome::deny(
                "read_only_mode",
                "this run may only read",
            )),
            Action::Fail => Err(ToolError::limit_exceeded(
                ErrorClass::Repair,
                "budget",
                "the budget is spent",
            )),
        }
    }

    async fn after_tool(&self, ctx: &mut AfterToolCtx<'_>) {
        self.log
            .lock()
            .unwrap()
            .push(format!("after:{}", self.name));
        if let Action::ReplaceOutput(text) = self.action {
            *ctx.outcome_mut() = Ok(ToolOutput::text(text));
        }
    }
}

/// What a call through the layers left: its result, the `echo` tool, the
/// events and the layers' log.
struct Ran {
    result: ToolResult,
    echo: Arc<FakeTool>,
    recorder: Arc<Recorder>,
    log: Log,
}

impl Ran {
    /// The hooks the layers logged, in order.
    fn entries(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }
}

/// Runs one `echo` call (text `original`) under a layer for each name and
/// action, outermost first.
async fn run_with(layers: &[(&'static str, Action)]) -> Ran {
    let echo = echo();
    let log = Log::default();
    let recorder = Recorder::new();
    let mut builder = executor(vec![echo.clone()]).subscribe(recorder.clone());
    for (name, action) in layers {
        builder = builder.middleware(Layer::new(name, &log, action.clone()));
    }
    let exec = builder.build().unwrap();
    let result = execute_once(&exec, call("c1", "echo", json!({"text": "original"}))).await;
    Ran {
        result,
        echo,
        recorder,
        log,
    }
}

#[tokio::test]
async fn middleware_runs_as_an_onion_in_registration_order() {
    let ran = run_with(&[("a", Action::Pass), ("b", Action::Pass)]).await;
    assert_eq!(ran.result.text(), "original");
    assert_eq!(ran.echo.runs(), 1);
    assert_eq!(
        ran.entries(),
        ["before:a", "before:b", "after:b", "after:a"]
    );
}

#[tokio::test]
async fn a_valid_argument_rewrite_reaches_the_tool() {
    let ran = run_with(&[("a", Action::SetText("rewritten"))]).await;
    assert_eq!(ran.result.text(), "rewritten");
}

#[tokio::test]
async fn an_invalid_argument_rewrite_is_validated_again_and_refused() {
    let ran = run_with(&[("approver", Action::SetLimit(500)), ("later", Action::Pass)]).await;
    assert_eq!(
        ran.result.text(),
        "invalid arguments: `limit`: 500 is greater than the maximum 50"
    );
    assert_eq!(ran.echo.runs(), 0);
    assert_eq!(ran.entries(), ["before:approver"]);
    let rejected = ran.recorder.events().pop().unwrap();
    assert_eq!(rejected.kind, EventKind::Rejected);
    assert_eq!(rejected.policy.as_deref(), Some("approver"));
}

#[tokio::test]
async fn a_short_circuit_answers_without_the_tool_and_only_outer_layers_see_it() {
    let ran = run_with(&[
        ("outer", Action::Pass),
        ("cache", Action::Respond("cached")),
        ("inner", Action::Pass),
    ])
    .await;
    assert_eq!(ran.result.text(), "cached");
    assert!(!ran.result.is_error);
    assert_eq!(ran.echo.runs(), 0);
    assert_eq!(
        ran.entries(),
        ["before:outer", "before:cache", "after:outer"]
    );
    // The tool's body never ran: no `tool.started`.
    assert_eq!(ran.recorder.steps(), [("tool.completed", 1)]);
}

#[tokio::test]
async fn a_deny_refuses_the_call_with_the_policy_name_in_the_event() {
    let ran = run_with(&[("outer", Action::Pass), ("policy", Action::Deny)]).await;
    assert_eq!(ran.result.text(), "this run may only read");
    assert_eq!(
        ran.result.error.as_ref().unwrap().kind(),
        &ErrorKind::Denied {
            policy: "read_only_mode".into()
        }
    );
    assert_eq!(ran.echo.runs(), 0);
    assert_eq!(ran.entries(), ["before:outer", "before:policy"]);
    // Refused before its body: `tool.rejected` alone, never `tool.started`.
    assert_eq!(ran.recorder.steps(), [("tool.rejected", 1)]);
    assert_eq!(
        ran.recorder.events()[0].policy.as_deref(),
        Some("read_only_mode")
    );
}

#[tokio::test]
async fn an_error_from_before_tool_refuses_the_call_in_the_middlewares_name() {
    let ran = run_with(&[("budget", Action::Fail)]).await;
    assert_eq!(kind(&ran.result), "limit_exceeded");
    assert_eq!(ran.echo.runs(), 0);
    assert_eq!(ran.recorder.steps(), [("tool.rejected", 1)]);
    assert_eq!(ran.recorder.events()[0].policy.as_deref(), Some("budget"));
}

#[tokio::test]
async fn after_tool_may_replace_the_result() {
    let ran = run_with(&[("redact", Action::ReplaceOutput("[redacted]"))]).await;
    assert_eq!(ran.echo.runs(), 1);
    assert_eq!(ran.result.text(), "[redacted]");
}

#[tokio::test]
async fn a_panicking_middleware_still_answers_the_call() {
    let boom = BeforeTool::new("boom", |_| panic!("middleware bug"));
    let exec = executor(vec![echo()]).middleware(boom).build().unwrap();
    let r = execute_once(&exec, call("c9", "echo", r#"{"text":"x"}"#)).await;
    assert_eq!(r.tool_call_id.as_str(), "c9");
    assert_eq!(kind(&r), "panicked");
}

#[tokio::test]
async fn after_tool_sees_the_arguments_the_tool_ran_with_whether_events_are_observed_or_not() {
    for observed in [true, false] {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let echo = echo();
        let mut builder = executor(vec![echo.clone()])
            .middleware(SeesArguments(Arc::clone(&seen)))
            .middleware(Layer::new("b", &Log::default(), Action::SetText("changed")));
        if observed {
            builder = builder.subscribe(Recorder::new());
        }
        let exec = builder.build().unwrap();
        let r = execute_once(&exec, call("c1", "echo", json!({"text": "original"}))).await;
        assert_eq!(r.text(), "changed", "observed: {observed}");
        assert_eq!(*seen.lock().unwrap(), [json!({"text": "changed"})]);
    }
}
