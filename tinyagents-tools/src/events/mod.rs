//! Lifecycle events and their delivery.
//!
//! The executor emits a [`ToolEvent`] at each step of a call
//! (`tool.started`, `tool.completed`, ...). Events carry ids, timing, error
//! class and *hashes* of the canonical arguments and result, never the values;
//! a hash is computed only when a subscriber reads it ([`Digest`]).
//!
//! Delivery is built so that observers cannot hurt execution:
//! - an event no subscriber [accepts](EventSubscriber::accepts) is never
//!   built; with no subscriber, emitting is a branch on an empty mask;
//! - a [`Delivery::Queued`] subscriber (the default) gets its own bounded
//!   queue ([`EventBus::QUEUE_CAPACITY`] events) drained by a thread of its
//!   own, so it works the same on every tokio runtime flavour and with no
//!   runtime at all, and a subscriber that is slow, blocks forever or panics
//!   never slows a call. When its queue is full the *newest* event is
//!   dropped for that subscriber only; drops are counted in
//!   [`EventBus::dropped`] and reported to the subscriber itself by a
//!   `tool.events_dropped` event ([`EventKind::EventsDropped`]);
//! - a panic in a subscriber is caught and counted ([`EventBus::panics`]);
//!   the subscriber keeps receiving later events.

mod digest;
mod queue;

use std::borrow::Cow;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime};

use serde::Serialize;
use serde_json::Value;

use crate::error::ErrorClass;
use crate::ids::{CallName, RunId, ThreadId, ToolCallId};
use crate::spec::ResourceBounds;
pub use digest::Digest;

/// Which step of a call an event reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[non_exhaustive]
pub enum EventKind {
    /// `tool.started`: the call passed every check and is about to run.
    #[serde(rename = "tool.started")]
    Started,
    /// `tool.completed`: the call produced a result.
    #[serde(rename = "tool.completed")]
    Completed,
    /// `tool.failed`: the call ran and failed.
    #[serde(rename = "tool.failed")]
    Failed,
    /// `tool.rejected`: the call was refused before it ran.
    #[serde(rename = "tool.rejected")]
    Rejected,
    /// `tool.retrying`: an attempt failed and another follows.
    #[serde(rename = "tool.retrying")]
    Retrying,
    /// `tool.progress`: the tool reported progress through its stream writer.
    #[serde(rename = "tool.progress")]
    Progress,
    /// `tool.custom`: the tool emitted an event of its own.
    #[serde(rename = "tool.custom")]
    Custom,
    /// `tool.events_dropped`: events were dropped for this subscriber because
    /// its queue was full; [`ToolEvent::dropped`] says how many. Delivered
    /// only to the subscriber that lost them, before the next event it
    /// receives or as soon as its queue runs empty. Its ids are those of a
    /// neighbouring event of that subscriber; the lost events may belong to
    /// other calls.
    #[serde(rename = "tool.events_dropped")]
    EventsDropped,
}

impl EventKind {
    /// Every kind, in declaration order.
    pub const ALL: [EventKind; 8] = [
        EventKind::Started,
        EventKind::Completed,
        EventKind::Failed,
        EventKind::Rejected,
        EventKind::Retrying,
        EventKind::Progress,
        EventKind::Custom,
        EventKind::EventsDropped,
    ];

    /// The event's wire name (`tool.started`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Started => "tool.started",
            EventKind::Completed => "tool.completed",
            EventKind::Failed => "tool.failed",
            EventKind::Rejected => "tool.rejected",
            EventKind::Retrying => "tool.retrying",
            EventKind::Progress => "tool.progress",
            EventKind::Custom => "tool.custom",
            EventKind::EventsDropped => "tool.events_dropped",
        }
    }

    /// This kind's bit in a subscriber's interest mask.
    const fn bit(self) -> u16 {
        1 << self as u16
    }
}

impl fmt::Display for EventKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Progress reported by a running tool.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Progress {
    /// Work done so far.
    pub progress: f64,
    /// Total work, when known.
    pub total: Option<f64>,
    /// A short message.
    pub message: Option<String>,
}

/// One lifecycle event.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ToolEvent {
    /// The step.
    pub kind: EventKind,
    /// The run.
    pub run_id: RunId,
    /// The thread.
    pub thread_id: ThreadId,
    /// The call.
    pub call_id: ToolCallId,
    /// The tool name as called (kept inline, with no allocation, up to 24
    /// bytes; compares with and prints as a string).
    pub tool: CallName,
    /// The attempt (1 for the first).
    pub attempt: u32,
    /// When the event was made.
    pub timestamp: SystemTime,
    /// The call's own time so far: since it was received, less
    /// [`waited`](Self::waited) (the same measure as
    /// [`ToolResult::elapsed`](crate::ToolResult::elapsed)). Set on the
    /// executor's lifecycle events.
    pub elapsed: Option<Duration>,
    /// Time the call spent waiting so far: in its batch's queue, for a
    /// concurrency permit and in `before_tool` middleware such as an
    /// approver (as [`ToolResult::waited`](crate::ToolResult::waited)). Set
    /// on the executor's lifecycle events.
    pub waited: Option<Duration>,
    /// The error class, for failures and refusals.
    pub error_class: Option<ErrorClass>,
    /// The error kind (`invalid_arguments`, `timeout`, ...).
    pub error_kind: Option<&'static str>,
    /// The policy that refused the call, for refusals.
    pub policy: Option<Cow<'static, str>>,
    /// Keys of artifacts the call stored.
    pub artifact_keys: Vec<String>,
    /// SHA-256 of the canonical arguments (stable key order), hex, computed
    /// when first read.
    pub args_hash: Option<Digest>,
    /// SHA-256 of the canonical result, hex, computed when first read.
    pub result_hash: Option<Digest>,
    /// Progress, for `tool.progress`.
    pub progress: Option<Progress>,
    /// A custom event's name, for `tool.custom`.
    pub name: Option<String>,
    /// A custom event's payload (redacted before delivery).
    pub data: Option<Value>,
    /// How many events this subscriber lost, for `tool.events_dropped`.
    pub dropped: Option<u64>,
    /// The tool's resource bounds, on `tool.started` when it declares any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bounds: Option<ResourceBounds>,
}

impl ToolEvent {
    /// An event of `kind` for one call, every optional field empty.
    pub fn new(
        kind: EventKind,
        run_id: RunId,
        thread_id: ThreadId,
        call_id: ToolCallId,
        tool: impl Into<CallName>,
        attempt: u32,
    ) -> Self {
        let now = SystemTime::now();
        ToolEvent::new_at(kind, run_id, thread_id, call_id, tool, attempt, now)
    }

    /// [`new`](Self::new), made at `timestamp`.
    pub(crate) fn new_at(
        kind: EventKind,
        run_id: RunId,
        thread_id: ThreadId,
        call_id: ToolCallId,
        tool: impl Into<CallName>,
        attempt: u32,
        timestamp: SystemTime,
    ) -> Self {
        ToolEvent {
            kind,
            run_id,
            thread_id,
            call_id,
            tool: tool.into(),
            attempt,
            timestamp,
            elapsed: None,
            waited: None,
            error_class: None,
            error_kind: None,
            policy: None,
            artifact_keys: Vec::new(),
            args_hash: None,
            result_hash: None,
            progress: None,
            name: None,
            data: None,
            dropped: None,
            bounds: None,
        }
    }
}

/// How a subscriber receives events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Delivery {
    /// Through a bounded queue ([`EventBus::QUEUE_CAPACITY`] events) drained
    /// by a thread of its own: never slows a call, on any tokio runtime
    /// flavour (current-thread included) or with none, even when the
    /// subscriber blocks forever. When the queue is full the newest event is
    /// dropped for this subscriber, counted in [`EventBus::dropped`] and
    /// reported to it by a `tool.events_dropped` event. The thread runs
    /// inside the tokio runtime of the first call that emitted, when there
    /// was one, so the subscriber may hand events to tasks
    /// (`tokio::spawn`). The default.
    #[default]
    Queued,
    /// Called in line, on the executor's task, before the step goes on, so
    /// nothing is ever dropped. Only for subscribers that never block
    /// (in-memory recorders, counters): an in-line subscriber that blocks
    /// stalls the call that emits. A panic is still caught.
    Inline,
}

/// Something that observes events.
pub trait EventSubscriber: Send + Sync + 'static {
    /// Receives one event.
    fn on_event(&self, event: &ToolEvent);

    /// How events are delivered (queued by default).
    fn delivery(&self) -> Delivery {
        Delivery::Queued
    }

    /// Whether this subscriber wants events of `kind` (all kinds by
    /// default). Asked once per kind when the subscriber is added; an event
    /// of a kind no subscriber accepts is never built, and a subscriber
    /// never receives (nor queues) a kind it refused.
    fn accepts(&self, kind: EventKind) -> bool {
        let _ = kind;
        true
    }
}

impl<F> EventSubscriber for F
where
    F: Fn(&ToolEvent) + Send + Sync + 'static,
{
    fn on_event(&self, event: &ToolEvent) {
        self(event)
    }
}

struct Slot {
    subscriber: Arc<dyn EventSubscriber>,
    delivery: Delivery,
    /// The kinds it accepts, one bit each.
    kinds: u16,
    /// Its queue and thread, started with its first event; `None` when the
    /// thread could not be started (every event is then counted dropped).
    queue: OnceLock<Option<queue::Queue>>,
}

/// The subscribers of an executor, and the counters of what went wrong in
/// delivery.
#[derive(Default)]
pub struct EventBus {
    slots: Vec<Slot>,
    /// The union of the subscribers' kinds.
    kinds: u16,
    /// The union of the queued subscribers' kinds: an event of any other
    /// kind is delivered in line only and never shared behind an `Arc`.
    queued_kinds: u16,
    stats: Arc<BusStats>,
}

#[derive(Default)]
struct BusStats {
    dropped: AtomicU64,
    panics: AtomicU64,
}

impl EventBus {
    /// How many events each queued subscriber's queue holds.
    pub const QUEUE_CAPACITY: usize = 1024;

    /// A bus with no subscriber.
    pub fn new() -> Self {
        EventBus::default()
    }

    /// Adds a subscriber.
    pub fn subscribe(&mut self, subscriber: impl EventSubscriber) {
        self.subscribe_arc(Arc::new(subscriber));
    }

    /// Adds a shared subscriber.
    pub fn subscribe_arc(&mut self, subscriber: Arc<dyn EventSubscriber>) {
        let delivery = subscriber.delivery();
        let kinds = EventKind::ALL
            .into_iter()
            .filter(|kind| subscriber.accepts(*kind))
            .fold(0, |mask, kind| mask | kind.bit());
        self.kinds |= kinds;
        if delivery == Delivery::Queued {
            self.queued_kinds |= kinds;
        }
        self.slots.push(Slot {
            subscriber,
            delivery,
            kinds,
            queue: OnceLock::new(),
        });
    }

    /// True when someone listens to some kind of event.
    #[inline]
    pub fn is_active(&self) -> bool {
        self.kinds != 0
    }

    /// True when some subscriber accepts events of `kind`: an event nobody
    /// wants need not be built.
    #[inline]
    pub fn wants(&self, kind: EventKind) -> bool {
        self.kinds & kind.bit() != 0
    }

    /// True when some subscriber accepts a lifecycle event that carries the
    /// digest of the call's arguments (`tool.started`, `tool.completed`,
    /// `tool.failed`, `tool.rejected`, `tool.retrying`): with none, the
    /// call keeps no copy of its arguments for a digest.
    #[inline]
    pub fn wants_digests(&self) -> bool {
        const CARRY: u16 = EventKind::Started.bit()
            | EventKind::Completed.bit()
            | EventKind::Failed.bit()
            | EventKind::Rejected.bit()
            | EventKind::Retrying.bit();
        self.kinds & CARRY != 0
    }

    /// Events dropped, over all queued subscribers, because a subscriber's
    /// queue was full (or its thread could not be started).
    pub fn dropped(&self) -> u64 {
        self.stats.dropped.load(Ordering::Relaxed)
    }

    /// Panics caught in subscribers.
    pub fn panics(&self) -> u64 {
        self.stats.panics.load(Ordering::Relaxed)
    }

    /// Delivers `event` to every subscriber that accepts its kind. Never
    /// blocks on a queued subscriber, never panics.
    ///
    /// In line: an event only in-line subscribers accept is handed to them
    /// where it was built (not moved into a call, nor shared behind an
    /// `Arc`).
    #[inline]
    pub fn emit(&self, event: ToolEvent) {
        if !self.wants(event.kind) {
            return;
        }
        let bit = event.kind.bit();
        if self.queued_kinds & bit == 0 {
            self.deliver_inline(&event, bit);
            return;
        }
        self.share(event);
    }

    /// Hands `event` (of kind `bit`) to the in-line subscribers that accept
    /// it; they borrow it.
    fn deliver_inline(&self, event: &ToolEvent, bit: u16) {
        for slot in &self.slots {
            if slot.kinds & bit != 0 {
                deliver(&*slot.subscriber, event, &self.stats);
            }
        }
    }

    /// Delivers an event some queued subscriber accepts: shared behind an
    /// `Arc` by every subscriber that accepts it.
    fn share(&self, event: ToolEvent) {
        let bit = event.kind.bit();
        let event = Arc::new(event);
        for slot in &self.slots {
            if slot.kinds & bit == 0 {
                continue;
            }
            match slot.delivery {
                Delivery::Inline => deliver(&*slot.subscriber, &event, &self.stats),
                Delivery::Queued => self.enqueue(slot, &event),
            }
        }
    }

    fn enqueue(&self, slot: &Slot, event: &Arc<ToolEvent>) {
        let queue = slot.queue.get_or_init(|| {
            queue::Queue::start(
                Arc::clone(&slot.subscriber),
                slot.kinds & EventKind::EventsDropped.bit() != 0,
                Arc::clone(&self.stats),
                tokio::runtime::Handle::try_current().ok(),
            )
        });
        let sent = queue.as_ref().is_some_and(|queue| queue.push(event));
        if !sent {
            self.stats.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Hands one event to a subscriber, counting a panic.
fn deliver(subscriber: &dyn EventSubscriber, event: &ToolEvent, stats: &BusStats) {
    if catch_unwind(AssertUnwindSafe(|| subscriber.on_event(event))).is_err() {
        stats.panics.fetch_add(1, Ordering::Relaxed);
    }
}

impl fmt::Debug for EventBus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventBus")
            .field("subscribers", &self.slots.len())
            .field("dropped", &self.dropped())
            .field("panics", &self.panics())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Only(EventKind);

    impl EventSubscriber for Only {
        fn on_event(&self, _: &ToolEvent) {}
        fn delivery(&self) -> Delivery {
            Delivery::Inline
        }
        fn accepts(&self, kind: EventKind) -> bool {
            kind == self.0
        }
    }

    #[test]
    fn digests_are_wanted_only_by_a_subscriber_of_lifecycle_events() {
        let mut bus = EventBus::new();
        assert!(!bus.wants_digests());
        bus.subscribe(Only(EventKind::Progress));
        bus.subscribe(Only(EventKind::Custom));
        assert!(bus.is_active() && !bus.wants_digests());
        bus.subscribe(Only(EventKind::Completed));
        assert!(bus.wants_digests());
    }

    #[test]
    fn in_line_subscribers_each_get_the_events_they_accept() {
        use std::sync::Mutex;
        let seen = Arc::new(Mutex::new(Vec::new()));
        let mut bus = EventBus::new();
        for name in ["all", "second"] {
            let seen = Arc::clone(&seen);
            struct Named(&'static str, Arc<Mutex<Vec<(&'static str, EventKind)>>>);
            impl EventSubscriber for Named {
                fn on_event(&self, event: &ToolEvent) {
                    self.1.lock().unwrap().push((self.0, event.kind));
                }
                fn delivery(&self) -> Delivery {
                    Delivery::Inline
                }
                fn accepts(&self, kind: EventKind) -> bool {
                    self.0 == "all" || kind == EventKind::Completed
                }
            }
            bus.subscribe(Named(name, seen));
        }
        let event = |kind| {
            ToolEvent::new(
                kind,
                RunId::from("r"),
                ThreadId::from("t"),
                "c".into(),
                "tool",
                1,
            )
        };
        bus.emit(event(EventKind::Started));
        bus.emit(event(EventKind::Completed));
        assert_eq!(
            *seen.lock().unwrap(),
            [
                ("all", EventKind::Started),
                ("all", EventKind::Completed),
                ("second", EventKind::Completed)
            ]
        );
    }
}
