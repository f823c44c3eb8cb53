//! Lent events ([`EventRef`]): an in-line subscriber reads the executor's
//! lifecycle events from what the call holds; every field, digests
//! included, is what a queued subscriber receives for the same step, on
//! every outcome, whether or not the tool reads its arguments borrowed.

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};
use tinyagents_tools::events::{Delivery, EventKind, EventRef, EventSubscriber, ToolEvent};
use tinyagents_tools::executor::CallLimits;
use tinyagents_tools::hash::canonical_hash;
use tinyagents_tools::middleware::BeforeOutcome;
use tinyagents_tools::retry::Jitter;
use tinyagents_tools::*;
use tinyagents_tools_tests::*;

/// Rebuilds each lent event from its accessors alone (not `to_event`).
#[derive(Default)]
struct Accessors(Mutex<Vec<ToolEvent>>);

impl EventSubscriber for Accessors {
    fn on_event(&self, _: &ToolEvent) {
        panic!("an in-line subscriber receives events through on_event_ref");
    }

    fn on_event_ref(&self, e: &EventRef<'_>) {
        let mut event = ToolEvent::new(
            e.kind(),
            e.run_id().clone(),
            e.thread_id().clone(),
            e.call_id().clone(),
            e.tool().clone(),
            e.attempt(),
        );
        event.timestamp = e.timestamp();
        event.elapsed = e.elapsed();
        event.waited = e.waited();
        event.error_class = e.error_class();
        event.error_kind = e.error_kind();
        event.policy = e.policy().map(|p| p.to_owned().into());
        event.artifact_keys = e.artifact_keys().map(str::to_owned).collect();
        event.args_hash = e.args_hash().cloned();
        event.result_hash = e.result_hash().cloned();
        event.progress = e.progress().cloned();
        event.name = e.name().map(str::to_owned);
        event.data = e.data().map(|d| d.into_owned());
        event.dropped = e.dropped();
        event.bounds = e.bounds();
        self.0.lock().unwrap().push(event);
    }

    fn delivery(&self) -> Delivery {
        Delivery::Inline
    }
}

/// A queued subscriber: its events are built as owned ones.
struct Queued(Mutex<mpsc::Sender<ToolEvent>>);

impl EventSubscriber for Queued {
    fn on_event(&self, event: &ToolEvent) {
        let _ = self.0.lock().unwrap().send(event.clone());
    }
}

/// The same event with its times (which differ from run to run) cleared.
fn timeless(mut events: Vec<ToolEvent>) -> Vec<ToolEvent> {
    for e in &mut events {
        e.timestamp = SystemTime::UNIX_EPOCH;
        e.elapsed = e.elapsed.map(|_| Duration::ZERO);
        e.waited = e.waited.map(|_| Duration::ZERO);
    }
    events
}

/// `shout`: a tool that never waits; it answers its arguments (upper-cased
/// text), fails when asked to, panics when asked to, and fails its first
/// `flaky` attempts with a retryable error.
struct Shout {
    spec: ToolSpec,
    flaky: AtomicU32,
}

#[async_trait]
impl Tool for Shout {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(
        &self,
        state: &(),
        runtime: &ToolRuntime,
        args: Value,
    ) -> Result<ToolOutput, ToolError> {
        self.call_now(state, runtime, args)
    }

    fn never_waits(&self) -> bool {
        true
    }

    fn call_now(&self, state: &(), rt: &ToolRuntime, args: Value) -> Result<ToolOutput, ToolError> {
        self.call_now_ref(state, rt, &args)
    }

    fn call_now_ref(&self, _: &(), _: &ToolRuntime, args: &Value) -> Result<ToolOutput, ToolError> {
        let retry = self
            .flaky
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok();
        match args["then"].as_str() {
            _ if retry => Err(ToolError::retry("busy")),
            Some("fail") => Err(ToolError::fatal("it failed")),
            Some("panic") => panic!("it panicked"),
            _ => {
                let text = args["text"].as_str().unwrap_or_default().to_uppercase();
                Ok(ToolOutput::structured(
                    json!({"shout": text, "b": 1, "a": [2]}),
                ))
            }
        }
    }
}

pub(crate) fn shout(flaky: u32) -> Arc<dyn Tool> {
    let schema = closed_object(
        json!({"text": {"type": "string"}, "then": {"type": "string"}}),
        &["text"],
    );
    let spec = spec("shout", schema)
        .safety(ToolSafety::pure())
        .retry(RetryPolicy::attempts(3, Duration::from_millis(1)).with_jitter(Jitter::None))
        .build()
        .unwrap();
    Arc::new(Shout {
        spec,
        flaky: AtomicU32::new(flaky),
    })
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

/// The events of one call, as seen by an in-line subscriber's `on_event`
/// (the default `on_event_ref`), by one reading the accessors, and, on an
/// executor that also has a queued subscriber, by that one.
async fn seen(
    flaky: u32,
    limits: CallLimits,
    with_hook: bool,
    arguments: &str,
) -> [Vec<ToolEvent>; 3] {
    let run = RunContext::builder(())
        .run_id("run-1")
        .thread_id("thread-1")
        .build();
    let build = |queued: Option<Queued>| {
        let recorder = Recorder::new();
        let accessors = Arc::new(Accessors::default());
        let mut builder = executor(vec![shout(flaky)])
            .configure(|c| c.limits = limits.clone())
            .subscribe_arc(recorder.clone())
            .subscribe_arc(accessors.clone());
        if with_hook {
            builder = builder.middleware(hook());
        }
        if let Some(queued) = queued {
            builder = builder.subscribe(queued);
        }
        (recorder, accessors, builder.build().unwrap())
    };

    let (recorder, accessors, lent) = build(None);
    execute_in(&lent, &run, call("c1", "shout", arguments)).await;
    let (by_on_event, by_accessors) = (recorder.events(), accessors.0.lock().unwrap().clone());
    assert_eq!(by_on_event, by_accessors, "in line, the same times too");
    assert_eq!(lent.events().panics(), 0, "no subscriber panicked");

    let (tx, rx) = mpsc::channel();
    let (recorder, _, owned) = build(Some(Queued(Mutex::new(tx))));
    execute_in(&owned, &run, call("c1", "shout", arguments)).await;
    let expected = recorder.len();
    let queued: Vec<ToolEvent> = (0..expected)
        .map(|_| {
            rx.recv_timeout(Duration::from_secs(10))
                .expect("queued event")
        })
        .collect();
    assert_eq!(queued, recorder.events(), "shared: the very same events");
    assert_eq!(owned.events().panics(), 0, "no subscriber panicked");
    [by_on_event, by_accessors, queued].map(timeless)
}

/// One outcome to try.
struct Case {
    name: &'static str,
    flaky: u32,
    limits: CallLimits,
    with_hook: bool,
    arguments: String,
    kinds: &'static [&'static str],
}

#[tokio::test]
async fn lent_events_equal_the_owned_ones_on_every_outcome() {
    let text = |text: &str, then: &str| json!({"text": text, "then": then}).to_string();
    let case = |name, flaky, with_hook, arguments, kinds| Case {
        name,
        flaky,
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
    let cases = [
        case("success", 0, false, text("hi", ""), RAN),
        case("failure", 0, false, text("hi", "fail"), FAILED),
        case("panic", 0, false, text("hi", "panic"), FAILED),
        case("retried", 2, false, text("hi", ""), RETRIED),
        case("invalid", 0, false, "{oops".to_owned(), REJECTED),
        Case {
            limits: CallLimits::none().per_turn(0),
            ..case("over the limit", 0, false, text("hi", ""), REJECTED)
        },
        case("rewritten", 0, true, text("rewrite", ""), RAN),
        // Refused by a hook before its body: no `tool.started`.
        case("denied", 0, true, text("deny", ""), REJECTED),
    ];
    for Case {
        name: case,
        flaky,
        limits,
        with_hook,
        arguments,
        kinds,
    } in cases
    {
        let [by_on_event, by_accessors, queued] = seen(flaky, limits, with_hook, &arguments).await;
        let seen_kinds: Vec<&str> = by_on_event.iter().map(|e| e.kind.as_str()).collect();
        assert_eq!(seen_kinds, kinds, "{case}");
        assert_eq!(by_on_event, queued, "{case}: lent and owned events differ");
        assert_eq!(by_accessors, queued, "{case}: the accessors differ");

        let parsed: Option<Value> = serde_json::from_str(&arguments).ok();
        for event in &by_on_event {
            let args = match (event.kind, case) {
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
        }
        let last = by_on_event.last().unwrap();
        assert!(
            last.result_hash.is_some(),
            "{case}: the last event digests the result"
        );
        if case == "success" {
            let result = json!({"shout": "HI", "b": 1, "a": [2]});
            assert_eq!(
                last.result_hash.as_deref(),
                Some(canonical_hash(&result).as_str())
            );
        }
        if case == "panic" {
            assert_eq!(last.data, Some(json!({"panic": "it panicked"})));
        }
        if case == "denied" {
            assert_eq!(last.policy.as_deref(), Some("gate"));
        }
    }
}

/// Reads a lent event's argument digest twice, and notes where it lives.
#[derive(Default)]
struct DigestReader(Mutex<Vec<(usize, String)>>);

impl EventSubscriber for DigestReader {
    fn on_event(&self, _: &ToolEvent) {}

    fn on_event_ref(&self, event: &EventRef<'_>) {
        if let Some(digest) = event.args_hash() {
            assert!(std::ptr::eq(digest, event.args_hash().unwrap()));
            let at = std::ptr::from_ref(digest) as usize;
            self.0.lock().unwrap().push((at, digest.to_string()));
        }
    }

    fn delivery(&self) -> Delivery {
        Delivery::Inline
    }
}

#[tokio::test]
async fn a_lent_digest_is_computed_once_for_every_subscriber_of_the_event() {
    let (first, second) = (
        Arc::new(DigestReader::default()),
        Arc::new(DigestReader::default()),
    );
    let exec = executor(vec![shout(0)])
        .subscribe_arc(first.clone())
        .subscribe_arc(second.clone())
        .build()
        .unwrap();
    let args = json!({"text": "hi"});
    execute_once(&exec, call("c1", "shout", args.to_string())).await;
    let (first, second) = (
        first.0.lock().unwrap().clone(),
        second.0.lock().unwrap().clone(),
    );
    assert_eq!(first.len(), 2, "started and completed");
    assert_eq!(
        first, second,
        "the second subscriber read the first one's digest"
    );
    for (_, hex) in &first {
        assert_eq!(*hex, canonical_hash(&args));
    }
}

/// Panics on every lent event.
struct PanicsOnRef(AtomicUsize);

impl EventSubscriber for PanicsOnRef {
    fn on_event(&self, _: &ToolEvent) {}

    fn on_event_ref(&self, _: &EventRef<'_>) {
        self.0.fetch_add(1, Ordering::SeqCst);
        panic!("subscriber bug");
    }

    fn delivery(&self) -> Delivery {
        Delivery::Inline
    }
}

#[tokio::test]
async fn a_panic_in_on_event_ref_is_caught_and_counted_and_the_call_goes_on() {
    let panics = Arc::new(PanicsOnRef(AtomicUsize::new(0)));
    let recorder = Recorder::new();
    let exec = executor(vec![shout(0)])
        .subscribe_arc(panics.clone())
        .subscribe_arc(recorder.clone())
        .build()
        .unwrap();
    let r = execute_once(&exec, call("c1", "shout", r#"{"text": "hi"}"#)).await;
    assert!(!r.is_error, "{:?}", r.error);
    assert_eq!(panics.0.load(Ordering::SeqCst), 2);
    assert_eq!(exec.events().panics(), 2);
    assert_eq!(recorder.kinds(), [EventKind::Started, EventKind::Completed]);
}

#[test]
fn an_owned_event_reads_the_same_through_its_ref() {
    let mut event = ToolEvent::new(
        EventKind::Custom,
        RunId::from("r"),
        ThreadId::from("t"),
        "c".into(),
        "tool",
        2,
    );
    event.name = Some("phase".into());
    event.data = Some(json!({"step": 1}));
    event.artifact_keys = vec!["k1".into(), "k2".into()];
    event.policy = Some("p".into());
    let lent = EventRef::from(&event);
    assert_eq!(lent.kind(), EventKind::Custom);
    assert_eq!(lent.call_id().as_str(), "c");
    assert_eq!(lent.attempt(), 2);
    assert_eq!(lent.name(), Some("phase"));
    assert_eq!(lent.data().as_deref(), Some(&json!({"step": 1})));
    assert_eq!(lent.artifact_keys().collect::<Vec<_>>(), ["k1", "k2"]);
    assert_eq!(lent.artifact_keys().len(), 2);
    assert_eq!(lent.policy(), Some("p"));
    assert!(
        std::ptr::eq(&*lent.to_event(), &event),
        "no copy of an owned event"
    );
}

#[tokio::test]
async fn a_batch_s_lent_events_equal_its_owned_ones_call_by_call() {
    let run = RunContext::builder(())
        .run_id("run-1")
        .thread_id("thread-1")
        .build();
    let calls = || {
        vec![
            call("a", "shout", r#"{"text": "one"}"#),
            call("b", "shout", "{oops"),
            call("c", "shout", r#"{"text": "two", "then": "fail"}"#),
            call("d", "shout", r#"{"text": "three", "then": "panic"}"#),
        ]
    };
    let mut seen = Vec::new();
    for queued in [false, true] {
        let recorder = Recorder::new();
        let mut builder = executor(vec![shout(0)])
            .configure(|c| c.max_concurrency = std::num::NonZeroUsize::new(2).unwrap())
            .subscribe_arc(recorder.clone());
        let (tx, rx) = mpsc::channel();
        if queued {
            builder = builder.subscribe(Queued(Mutex::new(tx)));
        }
        let exec = builder.build().unwrap();
        let results = exec.execute_batch(&run, &Turn::new(1), calls()).await;
        assert_eq!(results.len(), 4);
        if queued {
            for _ in 0..recorder.len() {
                rx.recv_timeout(Duration::from_secs(10))
                    .expect("queued event");
            }
        }
        let per_call: Vec<Vec<ToolEvent>> = ["a", "b", "c", "d"]
            .map(|id| timeless(recorder.for_call(id)))
            .into();
        seen.push(per_call);
    }
    assert_eq!(
        seen[0], seen[1],
        "lent (first) and owned (second) events differ"
    );
    let kinds = |events: &[ToolEvent]| events.last().map(|e| e.kind);
    assert_eq!(kinds(&seen[0][0]), Some(EventKind::Completed));
    assert_eq!(kinds(&seen[0][1]), Some(EventKind::Rejected));
    assert_eq!(kinds(&seen[0][2]), Some(EventKind::Failed));
    assert_eq!(kinds(&seen[0][3]), Some(EventKind::Failed));
    assert!(seen[0][0].iter().all(|e| e.args_hash.is_some()));
}
