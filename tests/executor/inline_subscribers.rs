//! In-line subscribers ([`Delivery::Inline`]): they receive each event in
//! its `on_event`, on the executor's task, before the step goes on. What
//! they read (kinds, ids, attempts, digests, policy, data, ...) is right on
//! every outcome, for a tool answered at once (a plain fn's) and for one
//! answered through its future; and an in-line and a queued subscriber of
//! one executor receive the same events.

use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};
use tinyagents_tools::events::{Delivery, EventKind, EventSubscriber, ToolEvent};
use tinyagents_tools::hash::canonical_hash;
use tinyagents_tools::middleware::BeforeOutcome;
use tinyagents_tools::runtime::CallLimits;
use tinyagents_tools::*;
use tinyagents_tools_tests::*;

/// An event, and the hex text of its digests (arguments, result) as an
/// in-line subscriber read them.
pub(crate) type ReadEvent = (ToolEvent<'static>, Option<String>, Option<String>);

/// An in-line subscriber that keeps each event with its digests as it
/// read them in line (before the call went on).
#[derive(Default)]
pub(crate) struct ReadsInLine(Mutex<Vec<ReadEvent>>);

impl ReadsInLine {
    /// The events, in order.
    fn events(&self) -> Vec<ToolEvent<'static>> {
        let seen = self.0.lock().unwrap();
        seen.iter().map(|(event, _, _)| event.clone()).collect()
    }
}

impl EventSubscriber for ReadsInLine {
    fn on_event(&self, event: &ToolEvent) {
        let args = event.args_hash.as_deref().map(str::to_owned);
        let result = event.result_hash.as_deref().map(str::to_owned);
        self.0
            .lock()
            .unwrap()
            .push((event.clone().into_owned(), args, result));
    }

    fn delivery(&self) -> Delivery {
        Delivery::Inline
    }
}

/// A queued subscriber: it sends on every event it receives.
pub(crate) struct Queued(pub(crate) Mutex<mpsc::Sender<ToolEvent<'static>>>);

impl EventSubscriber for Queued {
    fn on_event(&self, event: &ToolEvent) {
        let _ = self.0.lock().unwrap().send(event.clone().into_owned());
    }
}

/// Asserts that `a` and `b` are the same event, field by field (naming the
/// field that differs), times included.
#[track_caller]
pub(crate) fn assert_same_event(a: &ToolEvent, b: &ToolEvent, what: &str) {
    assert_eq!(a.kind, b.kind, "{what}: kind");
    assert_eq!(a.run_id, b.run_id, "{what}: run_id");
    assert_eq!(a.thread_id, b.thread_id, "{what}: thread_id");
    assert_eq!(a.call_id, b.call_id, "{what}: call_id");
    assert_eq!(a.tool, b.tool, "{what}: tool");
    assert_eq!(a.attempt, b.attempt, "{what}: attempt");
    assert_eq!(a.timestamp, b.timestamp, "{what}: timestamp");
    assert_eq!(a.elapsed, b.elapsed, "{what}: elapsed");
    assert_eq!(a.waited, b.waited, "{what}: waited");
    assert_eq!(a.error_class, b.error_class, "{what}: error_class");
    assert_eq!(a.error_kind, b.error_kind, "{what}: error_kind");
    assert_eq!(a.policy, b.policy, "{what}: policy");
    assert_eq!(a.artifact_keys, b.artifact_keys, "{what}: artifact_keys");
    assert_eq!(a.args_hash, b.args_hash, "{what}: args_hash");
    assert_eq!(a.result_hash, b.result_hash, "{what}: result_hash");
    assert_eq!(a.progress, b.progress, "{what}: progress");
    assert_eq!(a.name, b.name, "{what}: name");
    assert_eq!(a.data, b.data, "{what}: data");
    assert_eq!(a.dropped, b.dropped, "{what}: dropped");
    assert_eq!(a.bounds, b.bounds, "{what}: bounds");
    // And any field added later.
    assert_eq!(a, b, "{what}");
}

/// Asserts that two lists of events are the same events, field by field.
#[track_caller]
pub(crate) fn assert_same_events(a: &[ToolEvent<'_>], b: &[ToolEvent<'_>], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}: {a:?} {b:?}");
    for (i, (a, b)) in a.iter().zip(b).enumerate() {
        assert_same_event(a, b, &format!("{what}, event {i}"));
    }
}

/// Receives `n` events from a queued subscriber.
pub(crate) fn receive(
    rx: &mpsc::Receiver<ToolEvent<'static>>,
    n: usize,
) -> Vec<ToolEvent<'static>> {
    (0..n)
        .map(|_| {
            rx.recv_timeout(Duration::from_secs(10))
                .expect("queued event")
        })
        .collect()
}

/// The same events with their times (which differ from run to run)
/// cleared.
pub(crate) fn timeless(mut events: Vec<ToolEvent<'static>>) -> Vec<ToolEvent<'static>> {
    for e in &mut events {
        e.timestamp = SystemTime::UNIX_EPOCH;
        e.elapsed = e.elapsed.map(|_| Duration::ZERO);
        e.waited = e.waited.map(|_| Duration::ZERO);
    }
    events
}

/// The body of `shout` and `shout_later`: fails its first `busy` attempts
/// with a retryable error, then fails, panics or answers (the text in
/// capitals) as `then` says.
fn answer(
    runtime: &ToolRuntime,
    text: &str,
    then: Option<&str>,
    busy: Option<u32>,
) -> Result<Value, ToolError> {
    if runtime.attempt() <= busy.unwrap_or(0) {
        return Err(ToolError::retry("busy"));
    }
    match then {
        Some("fail") => Err(ToolError::fatal("it failed")),
        Some("panic") => panic!("it panicked"),
        _ => Ok(json!({"shout": text.to_uppercase(), "b": 1, "a": [2]})),
    }
}

/// Shouts the text back, at once.
#[tool(read_only, idempotent, local, retry(max_attempts = 3, backoff = "1ms"))]
fn shout(
    /// The text.
    text: String,
    /// What to do: `fail`, `panic`, or answer.
    then: Option<String>,
    /// How many attempts fail with a retryable error first.
    busy: Option<u32>,
    #[inject] runtime: ToolRuntime,
) -> Result<Value, ToolError> {
    answer(&runtime, &text, then.as_deref(), busy)
}

/// Shouts the text back, through its future. It takes the arguments of
/// `shout` (the struct `#[tool]` generated for them).
#[tool(read_only, idempotent, local, retry(max_attempts = 3, backoff = "1ms"))]
async fn shout_later(args: ShoutArgs, #[inject] runtime: ToolRuntime) -> Result<Value, ToolError> {
    answer(&runtime, &args.text, args.then.as_deref(), args.busy)
}

/// An executor builder over both shouting tools.
pub(crate) fn shouting() -> tinyagents_tools::executor::ToolExecutorBuilder {
    executor(vec![Arc::new(ShoutTool), Arc::new(ShoutLaterTool)])
}

/// A hook that rewrites `"text": "rewrite"` and refuses `"text": "deny"`.
fn hook() -> impl Middleware {
    BeforeTool::new("gate", |ctx| {
        match ctx.arguments()["text"].as_str() {
            Some("rewrite") => ctx.arguments_mut()["text"] = json!("rewritten"),
            Some("deny") => return Ok(BeforeOutcome::deny("gate", "not this one")),
            _ => {}
        }
        Ok(BeforeOutcome::Continue)
    })
}

/// The run every call of these tests runs in.
pub(crate) fn run() -> RunContext {
    RunContext::builder(())
        .run_id("run-1")
        .thread_id("thread-1")
        .build()
}

/// What subscribers saw of one call.
struct Seen {
    /// The events, as an in-line subscriber received them.
    events: Vec<ToolEvent<'static>>,
    /// The digests of each event (arguments, result), as an in-line
    /// subscriber read them in line.
    read_in_line: Vec<(Option<String>, Option<String>)>,
}

/// The events of one call of `tool`: on an executor with in-line
/// subscribers only, and on one that also has a queued subscriber, whose
/// in-line and queued subscribers must receive the same events (times
/// included: they are the same events), as the first executor's (times
/// aside).
async fn seen(tool: &str, limits: CallLimits, with_hook: bool, arguments: &str) -> Seen {
    let run = run();
    let build = |queued: Option<Queued>| {
        let recorder = Recorder::new();
        let reader = Arc::new(ReadsInLine::default());
        let mut builder = shouting()
            .configure(|c| c.limits = limits.clone())
            .subscribe(recorder.clone())
            .subscribe(reader.clone());
        if with_hook {
            builder = builder.middleware(hook());
        }
        if let Some(queued) = queued {
            builder = builder.subscribe(queued);
        }
        (recorder, reader, builder.build().unwrap())
    };

    let (recorder, reader, in_line) = build(None);
    execute_in(&in_line, &run, call("c1", tool, arguments)).await;
    let events = recorder.events();
    assert_same_events(&events, &reader.events(), "two in-line subscribers");
    assert_eq!(in_line.events().panics(), 0, "no subscriber panicked");
    let read_in_line = reader
        .0
        .lock()
        .unwrap()
        .iter()
        .map(|(_, args, result)| (args.clone(), result.clone()))
        .collect();

    let (tx, rx) = mpsc::channel();
    let (recorder, reader, both) = build(Some(Queued(Mutex::new(tx))));
    execute_in(&both, &run, call("c1", tool, arguments)).await;
    let queued = receive(&rx, recorder.len());
    assert_same_events(&recorder.events(), &queued, "in line and queued");
    assert_same_events(&reader.events(), &queued, "in line and queued");
    assert_eq!(both.events().panics(), 0, "no subscriber panicked");
    assert_eq!(
        timeless(events.clone()),
        timeless(queued),
        "with and without a queued subscriber"
    );
    Seen {
        events,
        read_in_line,
    }
}

/// One outcome to try.
struct Case {
    name: &'static str,
    limits: CallLimits,
    with_hook: bool,
    arguments: String,
    kinds: &'static [&'static str],
}

#[tokio::test]
async fn in_line_subscribers_see_every_field_right_on_every_outcome() {
    let text = |text: &str, then: &str| json!({"text": text, "then": then}).to_string();
    let case = |name, with_hook, arguments, kinds| Case {
        name,
        limits: CallLimits::none(),
        with_hook,
        arguments,
        kinds,
    };
    const RAN: &[&str] = &["tool.started", "tool.completed"];
    const FAILED: &[&str] = &["tool.started", "tool.failed"];
    const REJECTED: &[&str] = &["tool.rejected"];
    const RETRIED: &[&str] = &[
        "tool.started",
        "tool.retrying",
        "tool.retrying",
        "tool.completed",
    ];
    let cases = || {
        [
            case("success", false, text("hi", ""), RAN),
            case("failure", false, text("hi", "fail"), FAILED),
            case("panic", false, text("hi", "panic"), FAILED),
            case(
                "retried",
                false,
                json!({"text": "hi", "busy": 2}).to_string(),
                RETRIED,
            ),
            case("invalid", false, "{oops".to_owned(), REJECTED),
            Case {
                limits: CallLimits::none().per_turn(0),
                ..case("over the limit", false, text("hi", ""), REJECTED)
            },
            case("rewritten", true, text("rewrite", ""), RAN),
            // Refused by a hook before its body: no `tool.started`.
            case("denied", true, text("deny", ""), REJECTED),
        ]
    };
    // Answered at once, and through a future.
    for tool in ["shout", "shout_later"] {
        for Case {
            name,
            limits,
            with_hook,
            arguments,
            kinds,
        } in cases()
        {
            let case = format!("{tool}, {name}");
            let Seen {
                events,
                read_in_line,
            } = seen(tool, limits, with_hook, &arguments).await;
            let seen_kinds: Vec<&str> = events.iter().map(|e| e.kind.as_str()).collect();
            assert_eq!(seen_kinds, kinds, "{case}");
            for (i, event) in events.iter().enumerate() {
                assert_eq!(event.run_id.as_str(), "run-1", "{case}");
                assert_eq!(event.thread_id.as_str(), "thread-1", "{case}");
                assert_eq!(event.call_id.as_str(), "c1", "{case}");
                assert_eq!(event.tool, tool, "{case}");
                let attempt = match event.kind {
                    EventKind::Retrying => i as u32,
                    EventKind::Completed if name == "retried" => 3,
                    _ => 1,
                };
                assert_eq!(event.attempt, attempt, "{case} {event:?}");
                assert!(event.elapsed.is_some() && event.waited.is_some(), "{case}");
            }

            let parsed: Option<Value> = serde_json::from_str(&arguments).ok();
            for (event, (args_read, _)) in events.iter().zip(&read_in_line) {
                let args = match (event.kind, name) {
                    (_, "invalid") => None,
                    // `tool.started` comes after the hooks: it shows the
                    // arguments the body runs with.
                    (EventKind::Started | EventKind::Completed, "rewritten") => {
                        Some(json!({"text": "rewritten", "then": ""}))
                    }
                    _ => parsed.clone(),
                };
                let expected = args.as_ref().map(canonical_hash);
                assert_eq!(
                    event.args_hash.as_deref(),
                    expected.as_deref(),
                    "{case} {event:?}"
                );
                assert_eq!(
                    args_read.as_deref(),
                    expected.as_deref(),
                    "{case}: read in line"
                );
            }
            let last = events.last().unwrap();
            assert!(
                last.result_hash.is_some(),
                "{case}: the last event digests the result"
            );
            let (_, result_read) = read_in_line.last().unwrap();
            assert_eq!(
                result_read.as_deref(),
                last.result_hash.as_deref(),
                "{case}: read in line"
            );
            match name {
                "success" | "retried" | "rewritten" => {
                    let shouted = if name == "rewritten" {
                        "REWRITTEN"
                    } else {
                        "HI"
                    };
                    let result = json!({"shout": shouted, "b": 1, "a": [2]});
                    assert_eq!(
                        last.result_hash.as_deref(),
                        Some(canonical_hash(&result).as_str()),
                        "{case}"
                    );
                    assert_eq!(last.error_class, None, "{case}");
                }
                "failure" => {
                    assert_eq!(last.error_class, Some(ErrorClass::Fatal), "{case}");
                    assert_eq!(last.data, None, "{case}");
                }
                "panic" => {
                    assert_eq!(last.error_kind, Some("panicked"), "{case}");
                    assert_eq!(last.data, Some(json!({"panic": "it panicked"})), "{case}");
                }
                "invalid" => {
                    assert_eq!(last.error_kind, Some("invalid_arguments"), "{case}")
                }
                "denied" => assert_eq!(last.policy.as_deref(), Some("gate"), "{case}"),
                _ => {}
            }
            if name == "retried" {
                for event in &events[1..3] {
                    assert_eq!(event.error_class, Some(ErrorClass::Retry), "{case}");
                }
            }
        }
    }
}
