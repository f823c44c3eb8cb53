//! [`EventRecorder`]: an in-line subscriber that keeps every event, with
//! assertions on their order.

use std::fmt::Write as _;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;

use crate::events::{Delivery, EventKind, EventSubscriber, ToolEvent};

/// Keeps every event it receives, in delivery order.
///
/// It subscribes with [`Delivery::Inline`], so an event is recorded before
/// the executor goes on to the next step: once `execute` returns, every
/// event of that call is here, and the order is the order of the steps.
///
/// ```
/// use tinyagents_tools::events::EventKind;
/// use tinyagents_tools::testkit::EventRecorder;
///
/// let recorder = EventRecorder::new();
/// // give `recorder.clone()` to `ToolExecutorBuilder::subscribe`, run calls, then:
/// assert!(recorder.is_empty());
/// recorder.assert_kinds(&[]);
/// ```
#[derive(Debug, Default)]
pub struct EventRecorder {
    events: Mutex<Vec<ToolEvent<'static>>>,
}

impl EventRecorder {
    /// A new, empty, shared recorder.
    pub fn new() -> Arc<Self> {
        Arc::new(EventRecorder::default())
    }

    fn lock(&self) -> MutexGuard<'_, Vec<ToolEvent<'static>>> {
        // A panic while holding the lock cannot leave the list half-written
        // (a push either happened or not), so a poisoned lock is still usable.
        self.events
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Every event so far, oldest first.
    pub fn events(&self) -> Vec<ToolEvent<'static>> {
        self.lock().clone()
    }

    /// The number of events so far.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// True when nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    /// Forgets every event recorded so far.
    pub fn clear(&self) {
        self.lock().clear();
    }

    /// The kind of every event so far, oldest first.
    pub fn kinds(&self) -> Vec<EventKind> {
        self.lock().iter().map(|e| e.kind).collect()
    }

    /// The events of one call, oldest first.
    pub fn for_call(&self, call_id: &str) -> Vec<ToolEvent<'static>> {
        self.lock()
            .iter()
            .filter(|e| e.call_id.as_str() == call_id)
            .cloned()
            .collect()
    }

    /// The kinds of one call's events, oldest first.
    pub fn kinds_for(&self, call_id: &str) -> Vec<EventKind> {
        self.lock()
            .iter()
            .filter(|e| e.call_id.as_str() == call_id)
            .map(|e| e.kind)
            .collect()
    }

    /// `(wire name, attempt)` of every lifecycle event so far (progress and
    /// custom events left out), oldest first: `[("tool.started", 1), ...]`.
    pub fn steps(&self) -> Vec<(&'static str, u32)> {
        self.lock()
            .iter()
            .filter(|e| !matches!(e.kind, EventKind::Progress | EventKind::Custom))
            .map(|e| (e.kind.as_str(), e.attempt))
            .collect()
    }

    /// The messages the tools reported through their stream writer, oldest
    /// first.
    pub fn progress_messages(&self) -> Vec<String> {
        self.lock()
            .iter()
            .filter_map(|e| e.progress.as_ref()?.message.clone())
            .collect()
    }

    /// The custom events the tools emitted, as `(name, payload)`, oldest
    /// first.
    pub fn custom_events(&self) -> Vec<(String, Value)> {
        self.lock()
            .iter()
            .filter(|e| e.kind == EventKind::Custom)
            .map(|e| {
                (
                    e.name.clone().unwrap_or_default(),
                    e.data.clone().unwrap_or(Value::Null),
                )
            })
            .collect()
    }

    /// Panics unless the recorded kinds are exactly `expected`, in order.
    ///
    /// The panic message lists both sequences, with each event's call id,
    /// tool, attempt and error kind.
    #[track_caller]
    pub fn assert_kinds(&self, expected: &[EventKind]) {
        let events = self.events();
        let actual: Vec<EventKind> = events.iter().map(|e| e.kind).collect();
        if actual != expected {
            panic!(
                "the recorded events are not the expected ones\n  expected: {}\n  recorded:\n{}",
                names(expected),
                describe(&events)
            );
        }
    }

    /// Panics unless `expected` occurs in the recorded kinds in this order;
    /// other events (progress, custom events, other calls') may come between.
    ///
    /// Use [`assert_kinds`](Self::assert_kinds) to require the exact
    /// sequence.
    #[track_caller]
    pub fn assert_order(&self, expected: &[EventKind]) {
        let events = self.events();
        let mut wanted = expected.iter().peekable();
        for event in &events {
            if wanted.peek() == Some(&&event.kind) {
                wanted.next();
            }
        }
        if let Some(missing) = wanted.next() {
            panic!(
                "the recorded events do not contain {} in this order (first missing: {missing})\n  recorded:\n{}",
                names(expected),
                describe(&events)
            );
        }
    }
}

fn names(kinds: &[EventKind]) -> String {
    let names: Vec<&str> = kinds.iter().map(|k| k.as_str()).collect();
    format!("[{}]", names.join(", "))
}

fn describe(events: &[ToolEvent<'_>]) -> String {
    if events.is_empty() {
        return "    (no events)".to_owned();
    }
    let mut out = String::new();
    for (i, e) in events.iter().enumerate() {
        let _ = write!(
            out,
            "    {i}: {} call={} tool={} attempt={}",
            e.kind,
            e.call_id.as_str(),
            e.tool,
            e.attempt
        );
        if let Some(kind) = e.error_kind {
            let _ = write!(out, " error={kind}");
        }
        out.push('\n');
    }
    out
}

impl EventSubscriber for EventRecorder {
    fn on_event(&self, event: &ToolEvent<'_>) {
        self.lock().push(event.clone().into_owned());
    }

    fn delivery(&self) -> Delivery {
        Delivery::Inline
    }
}
