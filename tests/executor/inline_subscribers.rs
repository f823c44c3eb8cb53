//! In-line subscribers ([`Delivery::Inline`]): they receive each event in
//! its `on_event`, on the executor's task, before the step goes on. What
//! they read (kinds, ids, attempts, digests, policy, data, ...) is right on
//! every outcome, for a tool answered at once (a plain fn's) and for one
//! answered through its future; and an in-line and a queued subscriber of
//! one executor receive the same events.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};
use tinyagents_tools::artifacts::InMemoryArtifactStore;
use tinyagents_tools::events::{Delivery, EventKind, EventSubscriber, Progress, ToolEvent};
use tinyagents_tools::hash::canonical_hash;
use tinyagents_tools::middleware::BeforeOutcome;
use tinyagents_tools::runtime::CallLimits;
use tinyagents_tools::*;
use tinyagents_tools_tests::*;

/// An event, and the hex text of its digests (arguments, result) as an
/// in-line subscriber read them.
type ReadEvent = (ToolEvent<'static>, Option<String>, Option<String>);

/// An in-line subscriber that keeps each event with its digests as it
/// read them in line (before the call went on).
#[derive(Default)]
struct ReadsInLine(Mutex<Vec<ReadEvent>>);

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
struct Queued(Mutex<mpsc::Sender<ToolEvent<'static>>>);

impl EventSubscriber for Queued {
    fn on_event(&self, event: &ToolEvent) {
        let _ = self.0.lock().unwrap().send(event.clone().into_owned());
    }
}

/// Asserts that `a` and `b` are the same event, field by field (naming the
/// field that differs), times included.
#[track_caller]
fn assert_same_event(a: &ToolEvent, b: &ToolEvent, what: &str) {
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
fn assert_same_events(a: &[ToolEvent<'_>], b: &[ToolEvent<'_>], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}: {a:?} {b:?}");
    for (i, (a, b)) in a.iter().zip(b).enumerate() {
        assert_same_event(a, b, &format!("{what}, event {i}"));
    }
}

/// Receives `n` events from a queued subscriber.
fn receive(rx: &mpsc::Receiver<ToolEvent<'static>>, n: usize) -> Vec<ToolEvent<'static>> {
    (0..n)
        .map(|_| {
            rx.recv_timeout(Duration::from_secs(10))
                .expect("queued event")
        })
        .collect()
}

/// The same events with their times (which differ from run to run)
/// cleared.
fn timeless(mut events: Vec<ToolEvent<'static>>) -> Vec<ToolEvent<'static>> {
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

/// Shouts the text back, through its future.
#[tool(read_only, idempotent, local, retry(max_attempts = 3, backoff = "1ms"))]
async fn shout_later(
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

/// An executor builder over both shouting tools.
fn shouting() -> tinyagents_tools::executor::ToolExecutorBuilder {
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
fn run() -> RunContext {
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
            .subscribe_arc(recorder.clone())
            .subscribe_arc(reader.clone());
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

/// Reads each event's argument digest twice, and notes where its text
/// lives.
#[derive(Default)]
struct DigestReader(Mutex<Vec<(usize, String)>>);

impl EventSubscriber for DigestReader {
    fn on_event(&self, event: &ToolEvent) {
        if let Some(digest) = &event.args_hash {
            let hex = digest.as_str();
            assert!(std::ptr::eq(hex, digest.as_str()), "computed once");
            let at = hex.as_ptr() as usize;
            self.0.lock().unwrap().push((at, hex.to_owned()));
        }
    }

    fn delivery(&self) -> Delivery {
        Delivery::Inline
    }
}

#[tokio::test]
async fn a_digest_is_computed_once_for_every_subscriber_of_the_event() {
    let (first, second) = (
        Arc::new(DigestReader::default()),
        Arc::new(DigestReader::default()),
    );
    let exec = shouting()
        .subscribe_arc(first.clone())
        .subscribe_arc(second.clone())
        .build()
        .unwrap();
    let args = json!({"text": "hi"});
    for tool in ["shout", "shout_later"] {
        first.0.lock().unwrap().clear();
        second.0.lock().unwrap().clear();
        execute_once(&exec, call("c1", tool, args.to_string())).await;
        let (first, second) = (
            first.0.lock().unwrap().clone(),
            second.0.lock().unwrap().clone(),
        );
        assert_eq!(first.len(), 2, "{tool}: started and completed");
        assert_eq!(
            first, second,
            "{tool}: the second subscriber read the first one's digest"
        );
        for (_, hex) in &first {
            assert_eq!(*hex, canonical_hash(&args), "{tool}");
        }
    }
}

/// Panics on every event.
struct Panics(AtomicUsize);

impl EventSubscriber for Panics {
    fn on_event(&self, _: &ToolEvent) {
        self.0.fetch_add(1, Ordering::SeqCst);
        panic!("subscriber bug");
    }

    fn delivery(&self) -> Delivery {
        Delivery::Inline
    }
}

#[tokio::test]
async fn a_panic_in_an_in_line_on_event_is_caught_and_counted_and_the_call_goes_on() {
    for tool in ["shout", "shout_later"] {
        let panics = Arc::new(Panics(AtomicUsize::new(0)));
        let recorder = Recorder::new();
        let exec = shouting()
            .subscribe_arc(panics.clone())
            .subscribe_arc(recorder.clone())
            .build()
            .unwrap();
        let r = execute_once(&exec, call("c1", tool, r#"{"text": "hi"}"#)).await;
        assert!(!r.is_error, "{tool}: {:?}", r.error);
        assert_eq!(panics.0.load(Ordering::SeqCst), 2, "{tool}");
        assert_eq!(exec.events().panics(), 2, "{tool}");
        assert_eq!(
            recorder.kinds(),
            [EventKind::Started, EventKind::Completed],
            "{tool}"
        );
    }
}

/// Reports its progress and a phase, then answers with a text long enough
/// to go to the artifact store.
#[tool(read_only, local)]
fn report(#[inject] progress: StreamWriter, #[inject] events: EventEmitter) -> String {
    progress.progress(1.0, Some(2.0), Some("half"));
    events.emit("phase", json!({"step": 1}));
    "abcdefghij".repeat(2_000)
}

#[tokio::test]
async fn a_tool_s_own_events_and_artifact_keys_reach_in_line_and_queued_subscribers_alike() {
    let recorder = Recorder::new();
    let (tx, rx) = mpsc::channel();
    let exec = executor(vec![Arc::new(ReportTool)])
        .artifact_store_arc(Arc::new(InMemoryArtifactStore::new()))
        .subscribe_arc(recorder.clone())
        .subscribe(Queued(Mutex::new(tx)))
        .build()
        .unwrap();
    let r = execute_in(&exec, &run(), call("c1", "report", "{}")).await;
    assert!(!r.is_error, "{:?}", r.error);
    let keys: Vec<String> = r.artifacts.iter().map(|a| a.key.clone()).collect();
    assert_eq!(keys.len(), 1, "the answer went to the store");

    let events = recorder.events();
    assert_same_events(&events, &receive(&rx, events.len()), "in line and queued");
    let kinds: Vec<&str> = events.iter().map(|e| e.kind.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "tool.started",
            "tool.progress",
            "tool.custom",
            "tool.completed"
        ]
    );
    for event in &events {
        assert_eq!(event.call_id.as_str(), "c1");
        assert_eq!(event.tool, "report");
        assert_eq!(event.attempt, 1);
        assert_eq!(event.run_id.as_str(), "run-1");
    }
    assert_eq!(
        events[1].progress,
        Some(Progress {
            progress: 1.0,
            total: Some(2.0),
            message: Some("half".into())
        })
    );
    assert_eq!(events[2].name.as_deref(), Some("phase"));
    assert_eq!(events[2].data, Some(json!({"step": 1})));
    assert_eq!(events[3].artifact_keys, keys);
    assert!(events[..3].iter().all(|e| e.artifact_keys.is_empty()));
}

#[tokio::test]
async fn a_batch_s_in_line_and_queued_events_are_the_same_call_by_call() {
    let run = run();
    let calls = |tool: &str| {
        vec![
            call("a", tool, r#"{"text": "one"}"#),
            call("b", tool, "{oops"),
            call("c", tool, r#"{"text": "two", "then": "fail"}"#),
            call("d", tool, r#"{"text": "three", "then": "panic"}"#),
        ]
    };
    for tool in ["shout", "shout_later"] {
        let mut seen = Vec::new();
        for queued in [false, true] {
            let recorder = Recorder::new();
            let mut builder = shouting()
                .configure(|c| c.max_concurrency = std::num::NonZeroUsize::new(2).unwrap())
                .subscribe_arc(recorder.clone());
            let (tx, rx) = mpsc::channel();
            if queued {
                builder = builder.subscribe(Queued(Mutex::new(tx)));
            }
            let exec = builder.build().unwrap();
            let results = exec.execute_batch(&run, &Turn::new(1), calls(tool)).await;
            assert_eq!(results.len(), 4);
            if queued {
                let queued = receive(&rx, recorder.len());
                for id in ["a", "b", "c", "d"] {
                    let of_call: Vec<ToolEvent<'static>> = queued
                        .iter()
                        .filter(|e| e.call_id.as_str() == id)
                        .cloned()
                        .collect();
                    let what = format!("{tool}, call {id}: in line and queued");
                    assert_same_events(&recorder.for_call(id), &of_call, &what);
                }
            }
            let per_call: Vec<Vec<ToolEvent<'static>>> = ["a", "b", "c", "d"]
                .map(|id| timeless(recorder.for_call(id)))
                .into();
            seen.push(per_call);
        }
        assert_eq!(
            seen[0], seen[1],
            "{tool}: with and without a queued subscriber"
        );
        let kinds = |events: &[ToolEvent<'_>]| events.last().map(|e| e.kind);
        assert_eq!(kinds(&seen[0][0]), Some(EventKind::Completed));
        assert_eq!(kinds(&seen[0][1]), Some(EventKind::Rejected));
        assert_eq!(kinds(&seen[0][2]), Some(EventKind::Failed));
        assert_eq!(kinds(&seen[0][3]), Some(EventKind::Failed));
        assert!(seen[0][0].iter().all(|e| e.args_hash.is_some()));
    }
}

/// Counts the events it receives, reading their kind and tool name and
/// nothing else.
#[derive(Default)]
struct Counter(AtomicUsize);

impl EventSubscriber for Counter {
    fn on_event(&self, event: &ToolEvent) {
        std::hint::black_box((event.kind, &event.tool, event.elapsed));
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    fn delivery(&self) -> Delivery {
        Delivery::Inline
    }
}

/// Counts the events it receives, reading their digests too.
#[derive(Default)]
struct DigestCounter(AtomicUsize);

impl EventSubscriber for DigestCounter {
    fn on_event(&self, event: &ToolEvent) {
        std::hint::black_box((event.args_hash.as_deref(), event.result_hash.as_deref()));
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    fn delivery(&self) -> Delivery {
        Delivery::Inline
    }
}

/// The allocations one call of `shout` makes on this thread (after a few
/// calls to warm up), through an executor with `subscriber`.
fn allocations_per_call(subscriber: Arc<dyn EventSubscriber>) -> usize {
    let exec = shouting().subscribe_arc(subscriber).build().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let (run, turn) = (RunContext::empty(), Turn::new(1));
    let args = json!({"text": "hi"});
    let one = || {
        let call = call("c1", "shout", args.clone());
        let r = runtime.block_on(exec.execute(&run, &turn, call));
        assert!(!r.is_error, "{:?}", r.error);
    };
    (0..3).for_each(|_| one());
    crate::allocations::counted(one).1
}

#[test]
fn digests_are_computed_only_for_a_subscriber_that_reads_them() {
    let counter = Arc::new(Counter::default());
    let unread = allocations_per_call(counter.clone());
    assert!(counter.0.load(Ordering::Relaxed) >= 8, "it saw every event");
    let reader = Arc::new(DigestCounter::default());
    let read = allocations_per_call(reader.clone());
    assert!(reader.0.load(Ordering::Relaxed) >= 8, "it saw every event");
    // Reading computes the digests' hex text (arguments and result).
    assert!(
        read >= unread + 2,
        "{read} allocations reading the digests, {unread} without"
    );
}
