//! Event delivery never slows a call: a queued subscriber that blocks or
//! panics loses only its own events, counted, on a current-thread runtime
//! and with no runtime at all.

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use serde_json::json;
use tinyagents_tools::events::{Delivery, EventBus, EventKind, EventSubscriber, ToolEvent};
use tinyagents_tools::*;
use tinyagents_tools_tests::*;

/// How long a test may take before it counts as stalled.
const STALL: Duration = Duration::from_secs(60);

/// Blocks inside its first event until released, then counts what it gets.
struct Gate {
    /// Told once the first event arrived (the subscriber is now blocked).
    blocked: Mutex<Option<mpsc::Sender<()>>>,
    release: Mutex<mpsc::Receiver<()>>,
    events: AtomicU64,
    /// The sum of `dropped` over the `tool.events_dropped` events received.
    reported: AtomicU64,
}

impl Gate {
    fn new() -> (Arc<Gate>, mpsc::Receiver<()>, mpsc::Sender<()>) {
        let (blocked_tx, blocked_rx) = mpsc::channel();
        let (release_tx, release_rx) = mpsc::channel();
        let gate = Arc::new(Gate {
            blocked: Mutex::new(Some(blocked_tx)),
            release: Mutex::new(release_rx),
            events: AtomicU64::new(0),
            reported: AtomicU64::new(0),
        });
        (gate, blocked_rx, release_tx)
    }

    /// Lifecycle events received, and drops reported.
    fn seen(&self) -> (u64, u64) {
        (
            self.events.load(Ordering::SeqCst),
            self.reported.load(Ordering::SeqCst),
        )
    }
}

impl EventSubscriber for Gate {
    fn on_event(&self, event: &ToolEvent) {
        if event.kind == EventKind::EventsDropped {
            self.reported
                .fetch_add(event.dropped.unwrap(), Ordering::SeqCst);
            return;
        }
        self.events.fetch_add(1, Ordering::SeqCst);
        if let Some(blocked) = self.blocked.lock().unwrap().take() {
            blocked.send(()).unwrap();
            let _ = self.release.lock().unwrap().recv();
        }
    }
}

/// `yields`: gives the runtime a turn before it answers `yielded`, so a
/// task that blocks the runtime's thread would stop it.
fn yields() -> Arc<dyn Tool> {
    Arc::new(FnTool::new(pure_spec("yields"), |_, _| {
        Box::pin(async {
            tokio::task::yield_now().await;
            Ok(ToolOutput::text("yielded"))
        })
    }))
}

/// An executor whose events go to a [`Gate`] (queued), with the gate and
/// its two channels.
struct Gated {
    exec: Arc<ToolExecutor>,
    gate: Arc<Gate>,
    /// Told once the gate is blocked in its first event.
    blocked: mpsc::Receiver<()>,
    /// Releases the gate.
    release: mpsc::Sender<()>,
}

/// An executor over `tool` whose events go to a new [`Gate`].
fn gated(tool: Arc<dyn Tool>) -> Gated {
    let (gate, blocked, release) = Gate::new();
    let exec = executor(vec![tool])
        .subscribe(gate.clone())
        .build()
        .unwrap();
    Gated {
        exec: Arc::new(exec),
        gate,
        blocked,
        release,
    }
}

/// A tokio runtime on the current thread only.
fn current_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// Runs `work` with `exec` on a thread of its own and waits at most
/// [`STALL`] for it: a stalled call fails the test instead of hanging it.
fn within_the_stall_bound<T: Send + 'static>(
    exec: &Arc<ToolExecutor>,
    work: impl FnOnce(&ToolExecutor) -> T + Send + 'static,
) -> T {
    let exec = Arc::clone(exec);
    let (done_tx, done_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = done_tx.send(work(&exec));
    });
    done_rx
        .recv_timeout(STALL)
        .expect("the calls finished while the subscriber was blocked")
}

/// Waits (polling, up to [`STALL`]) until `done` holds.
fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !done() {
        assert!(start.elapsed() < STALL, "{what} never happened");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Checks the books of `calls` calls made while the gate was blocked in
/// its first event: two events a call, the gate holding one and its queue
/// the next [`EventBus::QUEUE_CAPACITY`], the rest dropped; once the gate is
/// released, every event was delivered or counted as dropped, and the
/// subscriber was told of every drop.
fn assert_every_event_accounted_for(
    exec: &ToolExecutor,
    gate: &Gate,
    release: mpsc::Sender<()>,
    calls: usize,
) {
    let emitted = 2 * calls as u64;
    let dropped = exec.events().dropped();
    assert_eq!(dropped, emitted - 1 - EventBus::QUEUE_CAPACITY as u64);
    release.send(()).unwrap();
    eventually("delivery of the queued events", || {
        let (events, reported) = gate.seen();
        events + reported == emitted
    });
    assert_eq!(gate.seen(), (emitted - dropped, dropped));
}

#[test]
fn a_blocked_subscriber_does_not_stall_calls_on_a_current_thread_runtime() {
    let g = gated(yields());
    let calls = 1_500;
    let results = within_the_stall_bound(&g.exec, move |exec| {
        current_thread().block_on(async {
            let run = RunContext::empty();
            let first = exec
                .execute_batch(&run, &Turn::new(1), calls_to("yields", 0..1))
                .await;
            g.blocked.recv().unwrap();
            let rest = exec
                .execute_batch(&run, &Turn::new(1), calls_to("yields", 1..calls))
                .await;
            [first, rest].concat()
        })
    });
    assert_eq!(results.len(), calls);
    assert!(results.iter().all(|r| r.text() == "yielded"));
    assert_every_event_accounted_for(&g.exec, &g.gate, g.release, calls);
}

/// Drives a future to its end on the current thread, with no runtime.
fn block_on<F: Future>(future: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        std::thread::park();
    }
}

#[test]
fn a_blocked_subscriber_does_not_stall_calls_made_without_any_runtime() {
    let g = gated(echo());
    let calls = 1_000;
    let results = within_the_stall_bound(&g.exec, move |exec| {
        assert!(tokio::runtime::Handle::try_current().is_err());
        let run = RunContext::empty();
        let mut results = Vec::new();
        for i in 0..calls {
            let text = json!({"text": format!("t{i}")});
            let c = call(&format!("c{i}"), "echo", text);
            results.push(block_on(exec.execute(&run, &Turn::new(1), c)));
            if i == 0 {
                g.blocked.recv().unwrap();
            }
        }
        results
    });
    assert_eq!(results.len(), calls);
    assert!(
        results
            .iter()
            .enumerate()
            .all(|(i, r)| r.text() == format!("t{i}"))
    );
    assert_every_event_accounted_for(&g.exec, &g.gate, g.release, calls);
}

#[test]
fn a_queued_subscriber_that_always_panics_loses_only_its_own_events() {
    let panics = PanickingSubscriber::new(Delivery::Queued);
    let recorder = Recorder::new();
    let exec = Arc::new(
        executor(vec![yields()])
            .subscribe(panics.clone())
            .subscribe(recorder.clone())
            .build()
            .unwrap(),
    );
    let results = within_the_stall_bound(&exec, |exec| {
        current_thread().block_on(execute_batch_once(exec, calls_to("yields", 0..20)))
    });
    assert!(results.iter().all(|r| r.text() == "yielded"));
    assert_eq!(recorder.len(), 40, "the other subscriber got every event");
    // It went on receiving after each panic.
    eventually("every event reaching the panicking subscriber", || {
        exec.events().panics() == 40
    });
    assert_eq!(panics.handed(), 40);
    assert_eq!(exec.events().dropped(), 0);
}

#[tokio::test]
async fn a_subscriber_receives_only_the_kinds_it_accepts() {
    struct Completions(Mutex<Vec<EventKind>>);
    impl EventSubscriber for Completions {
        fn on_event(&self, event: &ToolEvent) {
            self.0.lock().unwrap().push(event.kind);
        }
        fn delivery(&self) -> Delivery {
            Delivery::Inline
        }
        fn accepts(&self, kind: EventKind) -> bool {
            kind == EventKind::Completed
        }
    }
    let only = Arc::new(Completions(Mutex::new(Vec::new())));
    let exec = executor(vec![echo()])
        .subscribe(only.clone())
        .build()
        .unwrap();
    assert!(exec.events().wants(EventKind::Completed));
    assert!(!exec.events().wants(EventKind::Started));
    assert!(!exec.events().wants(EventKind::Progress));
    execute_once(&exec, call("c1", "echo", r#"{"text":"x"}"#)).await;
    execute_once(&exec, call("c2", "echo", "{oops")).await;
    assert_eq!(*only.0.lock().unwrap(), [EventKind::Completed]);
}

#[tokio::test]
async fn a_queued_subscriber_may_hand_events_to_tokio_tasks() {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<EventKind>();
    let forward = move |event: &ToolEvent| {
        let (tx, kind) = (tx.clone(), event.kind);
        tokio::spawn(async move { tx.send(kind).unwrap() });
    };
    let exec = executor(vec![echo()]).subscribe(forward).build().unwrap();
    execute_once(&exec, call("c1", "echo", r#"{"text":"x"}"#)).await;
    let mut kinds = Vec::new();
    for _ in 0..2 {
        let next = tokio::time::timeout(STALL, rx.recv()).await;
        kinds.push(next.expect("the task ran").unwrap());
    }
    assert_eq!(kinds, [EventKind::Started, EventKind::Completed]);
    assert_eq!(exec.events().panics(), 0);
}
