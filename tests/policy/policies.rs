//! Every policy through the executor: each refusal path emits
//! `tool.rejected` with the policy's name, gives a repairable message, and
//! the tool body never runs. The confirmation policy has its own module,
//! `policy_confirmation`, built on the fixtures here.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tinyagents_tools::events::EventKind;
use tinyagents_tools::policy::*;
use tinyagents_tools::redact::*;
use tinyagents_tools::runtime::CallLimits;
use tinyagents_tools::spec::{Determinism, Effect, FilesystemAccess, Reach, RedactionPolicy};
use tinyagents_tools::*;
use tinyagents_tools_tests::{Recorder, call, execute_in, execute_once, kind};

type Body = dyn Fn(&Value, &ToolRuntime) -> Result<ToolOutput, ToolError> + Send + Sync;

/// A tool with a given spec whose body is a closure; counts runs and keeps
/// the arguments it saw.
pub(crate) struct Scripted {
    spec: ToolSpec,
    body: Box<Body>,
    runs: AtomicUsize,
    pub(crate) seen: Mutex<Vec<Value>>,
}

impl Scripted {
    pub(crate) fn new(
        spec: ToolSpec,
        body: impl Fn(&Value, &ToolRuntime) -> Result<ToolOutput, ToolError> + Send + Sync + 'static,
    ) -> Arc<Self> {
        Arc::new(Scripted {
            spec,
            body: Box::new(body),
            runs: AtomicUsize::new(0),
            seen: Mutex::new(Vec::new()),
        })
    }

    pub(crate) fn echoing(spec: ToolSpec) -> Arc<Self> {
        Scripted::new(spec, |args, _| Ok(ToolOutput::structured(args.clone())))
    }

    pub(crate) fn runs(&self) -> usize {
        self.runs.load(Ordering::SeqCst)
    }
}

#[async_trait]
impl Tool for Scripted {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }
    async fn call(&self, _: &(), rt: &ToolRuntime, args: Value) -> Result<ToolOutput, ToolError> {
        self.runs.fetch_add(1, Ordering::SeqCst);
        self.seen.lock().unwrap().push(args.clone());
        (self.body)(&args, rt)
    }
}

pub(crate) fn text_schema() -> ToolSchema {
    ToolSchema::from_value(json!({
        "type": "object",
        "properties": {"text": {"type": "string", "maxLength": 100}},
        "required": ["text"],
        "additionalProperties": false
    }))
}

pub(crate) fn tool_spec(name: &str, safety: ToolSafety) -> ToolSpec {
    ToolSpec::builder(name, format!("The {name} tool."))
        .input_schema(text_schema())
        .safety(safety)
        .build()
        .unwrap()
}

pub(crate) struct Setup {
    pub(crate) executor: ToolExecutor,
    pub(crate) recorder: Arc<Recorder>,
}

pub(crate) fn setup(tools: Vec<Arc<Scripted>>, policies: Vec<Arc<dyn Middleware>>) -> Setup {
    let mut registry = ToolRegistry::new();
    for t in tools {
        registry.register(t).unwrap();
    }
    let recorder = Recorder::new();
    let mut builder = ToolExecutor::builder(registry, ()).subscribe(recorder.clone());
    for p in policies {
        builder = builder.middleware(p);
    }
    Setup {
        executor: builder.build().unwrap(),
        recorder,
    }
}

/// Asserts the result is a repairable refusal by `policy`, and the last event
/// is `tool.rejected` naming it.
pub(crate) fn assert_refused_by(s: &Setup, result: &ToolResult, policy: &str) {
    assert!(result.is_error, "{result:?}");
    let error = result.error.as_ref().unwrap();
    assert_eq!(error.class(), ErrorClass::Repair, "{error:?}");
    let last = s.recorder.events().pop().unwrap();
    assert_eq!(last.kind, EventKind::Rejected);
    assert_eq!(last.policy.as_deref(), Some(policy));
    assert_eq!(last.call_id, result.tool_call_id);
}

pub(crate) async fn run_one(s: &Setup, run: &RunContext, name: &str, args: Value) -> ToolResult {
    s.executor
        .execute(run, &Turn::new(1), call("call-1", name, args))
        .await
}

// ---- Access lists and modes ---------------------------------------------

/// `policy` refuses each of `refused` in `run`, and `lookup` still runs.
async fn assert_mode_refuses(s: &Setup, run: &RunContext, refused: [&str; 2], policy: &str) {
    for name in refused {
        let r = run_one(s, run, name, json!({"text": "x"})).await;
        assert_refused_by(s, &r, policy);
    }
    let lookup = run_one(s, run, "lookup", json!({"text": "x"})).await;
    assert!(!lookup.is_error, "{lookup:?}");
}

fn mixed_tools() -> Vec<Arc<Scripted>> {
    vec![
        Scripted::echoing(tool_spec("lookup", ToolSafety::pure())),
        Scripted::echoing(tool_spec(
            "fetch_url",
            ToolSafety::pure().reach(Reach::Networked),
        )),
        Scripted::echoing(tool_spec(
            "save_file",
            ToolSafety::pure().filesystem(FilesystemAccess::Write),
        )),
        Scripted::echoing(tool_spec(
            "delete_all",
            ToolSafety::default().effect(Effect::Destructive),
        )),
    ]
}

#[tokio::test]
async fn read_only_mode_refuses_mutating_tools_and_file_writers_through_the_executor() {
    let tools = mixed_tools();
    let s = setup(tools.clone(), vec![Arc::new(AccessPolicy::read_only())]);
    // A root, so the workspace policy the executor adds lets `save_file`
    // reach the read-only check.
    let run = RunContext::builder(())
        .workspace_root(std::env::temp_dir())
        .build();
    assert_mode_refuses(&s, &run, ["delete_all", "save_file"], "read_only_mode").await;
    assert_eq!(tools[2].runs() + tools[3].runs(), 0);
}

#[tokio::test]
async fn local_only_mode_refuses_networked_tools_through_the_executor() {
    let tools = mixed_tools();
    let s = setup(tools.clone(), vec![Arc::new(AccessPolicy::local_only())]);
    let run = RunContext::empty();
    assert_mode_refuses(&s, &run, ["fetch_url", "delete_all"], "local_only_mode").await;
}

#[tokio::test]
async fn allow_and_deny_lists_refuse_through_the_executor() {
    let tools = mixed_tools();
    let mut registry = ToolRegistry::new();
    for t in &tools {
        registry.register(t.clone()).unwrap();
    }
    let allow = AccessPolicy::builder().allow(["lookup"]);
    let deny = AccessPolicy::builder().deny(["lookup"]);
    for (list, refused, rule) in [
        (allow, "fetch_url", "allow_list"),
        (deny, "lookup", "deny_list"),
    ] {
        let s = setup(
            tools.clone(),
            vec![Arc::new(list.build(&registry).unwrap())],
        );
        let r = run_one(&s, &RunContext::empty(), refused, json!({"text": "x"})).await;
        assert_refused_by(&s, &r, rule);
    }
    assert_eq!(tools[0].runs() + tools[1].runs(), 0);
}

#[tokio::test]
async fn a_refusal_is_a_hard_error_when_the_run_forbids_repair() {
    let tools = mixed_tools();
    let mut registry = ToolRegistry::new();
    for t in &tools {
        registry.register(t.clone()).unwrap();
    }
    let executor = ToolExecutor::builder(registry, ())
        .middleware(AccessPolicy::read_only())
        .configure(|c| c.repair_allowed = false)
        .build()
        .unwrap();
    let r = execute_once(&executor, call("c", "delete_all", json!({"text": "x"}))).await;
    assert_eq!(r.error.unwrap().class(), ErrorClass::Fatal);
}

// ---- Call limits ----------------------------------------------------------

#[tokio::test]
async fn at_a_call_limit_the_choice_is_a_repairable_message_or_a_hard_stop() {
    for (class, expected) in [
        (ErrorClass::Repair, ErrorClass::Repair),
        (ErrorClass::Fatal, ErrorClass::Fatal),
    ] {
        let tool = Scripted::echoing(tool_spec("lookup", ToolSafety::pure()));
        let mut registry = ToolRegistry::new();
        registry.register(tool.clone()).unwrap();
        let recorder = Recorder::new();
        let executor = ToolExecutor::builder(registry, ())
            .subscribe(recorder.clone())
            .configure(|c| c.limits = CallLimits::none().per_run(2).on_limit(class))
            .build()
            .unwrap();
        let run = RunContext::empty();
        let turn = Turn::new(1);
        let mut results = Vec::new();
        for i in 0..3 {
            let c = call(&format!("c{i}"), "lookup", json!({"text": "x"}));
            results.push(executor.execute(&run, &turn, c).await);
        }
        assert!(!results[0].is_error && !results[1].is_error);
        let over = results[2].error.as_ref().unwrap();
        assert_eq!(over.class(), expected);
        assert_eq!(over.kind().as_str(), "limit_exceeded");
        assert_eq!(tool.runs(), 2);
        assert_eq!(recorder.events().last().unwrap().kind, EventKind::Rejected);
    }
}

// ---- Workspace root -------------------------------------------------------

/// What a tool reading files under the run's workspace root declares.
pub(crate) fn workspace_reader() -> ToolSafety {
    ToolSafety::pure()
        .filesystem(FilesystemAccess::Read)
        .workspace(true)
}

fn file_tool() -> Arc<Scripted> {
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Args {
        path: WorkspacePath,
        copies: Vec<WorkspacePath>,
    }
    let spec = ToolSpec::builder("read_it", "Read files.")
        .input_schema(ToolSchema::for_input::<Args>())
        .safety(workspace_reader())
        .build()
        .unwrap();
    Scripted::echoing(spec)
}

/// Calls `read_it` (the [`file_tool`]) with `args` in `run`.
async fn read_it(s: &Setup, run: &RunContext, args: Value) -> ToolResult {
    run_one(s, run, "read_it", args).await
}

#[tokio::test]
async fn workspace_escapes_are_refused_before_the_tool_runs() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("a.txt"), "a").unwrap();
    let tool = file_tool();
    let s = setup(vec![tool.clone()], vec![Arc::new(WorkspacePolicy)]);
    let run = RunContext::builder(()).workspace_root(ws.path()).build();
    let good = read_it(&s, &run, json!({"path": "a.txt", "copies": ["b/c.txt"]})).await;
    assert!(!good.is_error, "{good:?}");
    for (args, field) in [
        (json!({"path": "../etc/passwd", "copies": []}), "`path`"),
        (
            json!({"path": "a.txt", "copies": ["ok.txt", "/etc/shadow"]}),
            "`copies[1]`",
        ),
        (json!({"path": "~/.ssh/id_rsa", "copies": []}), "`path`"),
    ] {
        let r = read_it(&s, &run, args.clone()).await;
        assert_refused_by(&s, &r, "workspace_root");
        // Said as a policy refusal, not as a schema problem.
        let prefix = format!("the workspace policy refuses {field}: ");
        assert!(r.text().starts_with(&prefix), "{args}: {}", r.text());
    }
    let both = read_it(&s, &run, json!({"path": "../x", "copies": ["/etc/shadow"]})).await;
    assert_refused_by(&s, &both, "workspace_root");
    assert!(
        both.text()
            .starts_with("the workspace policy refuses 2 paths:\n- ")
            && both
                .text()
                .contains("\n- `path`: the path leaves the workspace root")
            && both.text().contains("\n- `copies[0]`: absolute paths"),
        "{}",
        both.text()
    );
    assert_eq!(tool.runs(), 1);
}

#[tokio::test]
async fn a_filesystem_tool_is_refused_in_a_run_without_a_workspace() {
    let tool = file_tool();
    let s = setup(vec![tool.clone()], vec![Arc::new(WorkspacePolicy)]);
    let r = read_it(
        &s,
        &RunContext::empty(),
        json!({"path": "a.txt", "copies": []}),
    )
    .await;
    assert_refused_by(&s, &r, "workspace_root");
    assert!(r.text().contains("no workspace"), "{}", r.text());
    assert_eq!(tool.runs(), 0);
}

// ---- Redaction ------------------------------------------------------------

struct ApiKey(&'static str);
impl AsRef<str> for ApiKey {
    fn as_ref(&self) -> &str {
        self.0
    }
}

const SECRET: &str = "sk-live-4f9a8b7c";

#[tokio::test]
async fn secrets_and_patterns_are_masked_in_content_errors_and_events() {
    let leaky = Scripted::new(tool_spec("leaky", ToolSafety::pure()), |args, rt| {
        rt.stream_writer().write(&format!("using {SECRET}"));
        rt.emitter().emit("debug", json!({"key": SECRET}));
        if args["text"] == "fail" {
            return Err(ToolError::retry(format!("auth failed for {SECRET}")));
        }
        Ok(ToolOutput::structured(
            json!({"token": SECRET, "note": "internal.corp"}),
        ))
    });
    let mut redaction = RedactionPolicy::default();
    redaction.patterns.push("internal.corp".into());
    redaction.fields.push("password".into());
    let fields = Scripted::new(
        ToolSpec::builder("fields", "Returns a password field.")
            .input_schema(text_schema())
            .safety(ToolSafety::pure().redaction(redaction))
            .build()
            .unwrap(),
        |_, _| {
            Ok(ToolOutput::structured(
                json!({"user": "ada", "password": "hunter2", "host": "internal.corp"}),
            ))
        },
    );
    let s = setup(vec![leaky, fields], vec![]);
    let run = RunContext::builder(()).secret(ApiKey(SECRET)).build();
    let ok = run_one(&s, &run, "leaky", json!({"text": "ok"})).await;
    let failed = run_one(&s, &run, "leaky", json!({"text": "fail"})).await;
    let named = execute_in(&s.executor, &run, call("c9", SECRET, json!({}))).await;
    let masked = run_one(&s, &run, "fields", json!({"text": "x"})).await;
    tokio::task::yield_now().await;
    let mut everything = String::new();
    for r in [&ok, &failed, &named, &masked] {
        everything.push_str(&format!("{:?}", r));
        everything.push_str(&serde_json::to_string(&r.to_message()).unwrap());
    }
    for e in s.recorder.events() {
        everything.push_str(&serde_json::to_string(&e).unwrap());
    }
    assert!(!everything.contains(SECRET), "{everything}");
    assert!(ok.text().contains(MASK));
    assert!(failed.text().contains(MASK), "{}", failed.text());
    assert_eq!(
        masked.structured,
        Some(json!({"user": "ada", "password": MASK, "host": MASK}))
    );
    // Without a secret in the run, the same output is left alone.
    let plain = run_one(&s, &RunContext::empty(), "leaky", json!({"text": "ok"})).await;
    assert!(plain.text().contains(SECRET));
}

// ---- Dynamic exposure -------------------------------------------------------

#[tokio::test]
async fn a_tool_the_selector_did_not_advertise_is_refused_this_turn() {
    let tools = vec![
        Scripted::echoing(
            ToolSpec::builder("get_weather", "Current weather for a city.")
                .input_schema(text_schema())
                .safety(ToolSafety::pure())
                .build()
                .unwrap(),
        ),
        Scripted::echoing(
            ToolSpec::builder("send_email", "Send an email.")
                .input_schema(text_schema())
                .build()
                .unwrap(),
        ),
    ];
    let s = setup(tools.clone(), vec![]);
    let run = RunContext::empty();
    let selector = ToolSelector::builder()
        .rank_by_relevance(1)
        .build(s.executor.registry())
        .unwrap();
    let turn = selector.turn(
        s.executor.registry(),
        &run,
        "what is the weather in Oslo",
        3,
    );
    let refused = s
        .executor
        .execute(&run, &turn, call("c1", "send_email", json!({"text": "x"})))
        .await;
    assert_eq!(kind(&refused), "not_advertised");
    assert_eq!(
        s.recorder.events().last().unwrap().kind,
        EventKind::Rejected
    );
    let allowed = s
        .executor
        .execute(
            &run,
            &turn,
            call("c2", "get_weather", json!({"text": "Oslo"})),
        )
        .await;
    assert!(!allowed.is_error);
    assert_eq!(tools[1].runs(), 0);
}

// ---- Determinism --------------------------------------------------------------

#[tokio::test]
async fn only_deterministic_tools_are_replayed_from_the_cache() {
    let pure = Scripted::echoing(tool_spec("square", ToolSafety::pure()));
    let clock = Scripted::echoing(tool_spec(
        "now",
        ToolSafety::pure().determinism(Determinism::NonDeterministic),
    ));
    let seeded = Scripted::echoing(tool_spec(
        "dice",
        ToolSafety::pure().determinism(Determinism::GivenInjected),
    ));
    let cache = Arc::new(ReplayCache::new());
    let s = setup(
        vec![pure.clone(), clock.clone(), seeded.clone()],
        vec![cache.clone()],
    );
    let run = RunContext::empty();
    for _ in 0..3 {
        for name in ["square", "now", "dice"] {
            assert!(!run_one(&s, &run, name, json!({"text": "4"})).await.is_error);
        }
    }
    assert_eq!(pure.runs(), 1, "a deterministic tool is replayed");
    assert_eq!(clock.runs(), 3, "a non-deterministic tool always runs");
    assert_eq!(seeded.runs(), 3, "injected randomness is not assumed fixed");
    // Other arguments are not a replay.
    run_one(&s, &run, "square", json!({"text": "5"})).await;
    assert_eq!(pure.runs(), 2);

    let fixed = Arc::new(ReplayCache::new().assume_fixed_inputs(true));
    let seeded = Scripted::echoing(tool_spec(
        "dice",
        ToolSafety::pure().determinism(Determinism::GivenInjected),
    ));
    let s = setup(vec![seeded.clone()], vec![fixed]);
    for _ in 0..2 {
        run_one(&s, &run, "dice", json!({"text": "4"})).await;
    }
    assert_eq!(seeded.runs(), 1);
}
