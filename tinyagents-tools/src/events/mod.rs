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
//!   the subscriber keeps receiving later events;
//! - an [in-line](Delivery::Inline) subscriber borrows each event where it
//!   was built (its digests are made from the call's values, only if
//!   read); queued subscribers share one copy of it, kept
//!   ([`ToolEvent::into_owned`]).

mod digest;
mod event;
mod lifecycle;
mod queue;

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

pub use digest::Digest;
pub(crate) use event::wall_clock_at;
pub use event::{EventKind, Progress, ToolEvent};
pub(crate) use lifecycle::panic_data;

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
    /// Receives one event (an in-line subscriber borrows it for the time of
    /// the call; [`ToolEvent::into_owned`] keeps it).
    fn on_event(&self, event: &ToolEvent<'_>);

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

/// A shared subscriber: an application keeps one handle (to read what it
/// recorded) and gives the executor another.
impl<T: EventSubscriber + ?Sized> EventSubscriber for Arc<T> {
    fn on_event(&self, event: &ToolEvent<'_>) {
        (**self).on_event(event)
    }

    fn delivery(&self) -> Delivery {
        (**self).delivery()
    }

    fn accepts(&self, kind: EventKind) -> bool {
        (**self).accepts(kind)
    }
}

impl<F> EventSubscriber for F
where
    F: Fn(&ToolEvent<'_>) + Send + Sync + 'static,
{
    fn on_event(&self, event: &ToolEvent<'_>) {
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

/// The kinds of event that carry the digest of the call's arguments.
const DIGEST_KINDS: u16 = EventKind::Started.bit()
    | EventKind::Completed.bit()
    | EventKind::Failed.bit()
    | EventKind::Rejected.bit()
    | EventKind::Retrying.bit();

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

    /// Adds a subscriber (an `Arc<T>` of one, to keep a handle on it).
    pub fn subscribe(&mut self, subscriber: impl EventSubscriber) {
        let subscriber: Arc<dyn EventSubscriber> = Arc::new(subscriber);
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
        self.kinds & DIGEST_KINDS != 0
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
    /// In-line subscribers borrow it where it was built; when a queued
    /// subscriber accepts its kind, it is kept ([`ToolEvent::into_owned`])
    /// and shared behind an `Arc` by every subscriber that accepts it.
    #[inline]
    pub fn emit(&self, event: ToolEvent<'_>) {
        let bit = event.kind.bit();
        if self.kinds & bit == 0 {
            return;
        }
        if self.queued_kinds & bit == 0 {
            self.deliver_in_line(bit, &event);
            return;
        }
        let event = Arc::new(event.into_owned());
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

    /// True when some queued subscriber accepts events of `kind`: an
    /// event of it is kept ([`ToolEvent::into_owned`]) for them.
    #[inline]
    pub(crate) fn queues(&self, kind: EventKind) -> bool {
        self.queued_kinds & kind.bit() != 0
    }

    /// [`emit`](Self::emit) of an event of a kind no queued subscriber
    /// accepts ([`queues`](Self::queues) is false), kept by its maker (a
    /// call's lifecycle event, made where the call holds its parts):
    /// in-line subscribers borrow it there.
    #[inline]
    pub(crate) fn emit_in_line(&self, event: &ToolEvent<'_>) {
        debug_assert!(!self.queues(event.kind), "a queued subscriber's kind");
        self.deliver_in_line(event.kind.bit(), event);
    }

    /// Hands `event`, of the kind `bit`, to the subscribers that accept
    /// it, all of them in-line.
    #[inline]
    fn deliver_in_line(&self, bit: u16, event: &ToolEvent<'_>) {
        for slot in &self.slots {
            if slot.kinds & bit != 0 {
                deliver(&*slot.subscriber, event, &self.stats);
            }
        }
    }

    /// True when some queued subscriber accepts a lifecycle event that
    /// carries the digest of the call's arguments.
    #[inline]
    pub(crate) fn queued_wants_digests(&self) -> bool {
        self.queued_kinds & DIGEST_KINDS != 0
    }

    fn enqueue(&self, slot: &Slot, event: &Arc<ToolEvent<'static>>) {
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
#[inline]
fn deliver(subscriber: &dyn EventSubscriber, event: &ToolEvent<'_>, stats: &BusStats) {
    guarded(stats, || subscriber.on_event(event));
}

/// Runs a subscriber's code, catching and counting a panic.
#[inline]
fn guarded(stats: &BusStats, subscriber: impl FnOnce()) {
    if catch_unwind(AssertUnwindSafe(subscriber)).is_err() {
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
    use crate::ids::{RunId, ThreadId};

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
