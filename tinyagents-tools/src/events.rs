//! Lifecycle events and their delivery.
//!
//! The executor emits a [`ToolEvent`] at each step of a call
//! (`tool.started`, `tool.completed`, ...). Events carry ids, timing, error
//! class and *hashes* of the canonical arguments and result, never the values.
//!
//! Delivery is built so that observers cannot hurt execution:
//! - with no subscriber, emitting is a branch on an empty list;
//! - a [`Delivery::Queued`] subscriber (the default) gets its own bounded
//!   queue and task: a slow one loses events (counted in
//!   [`EventBus::dropped`]) instead of stalling calls;
//! - a panic in a subscriber is caught and counted; the subscriber keeps
//!   receiving later events.

use std::borrow::Cow;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime};

use serde::Serialize;
use serde_json::Value;
use tokio::sync::mpsc;

use crate::error::ErrorClass;
use crate::ids::{RunId, ThreadId, ToolCallId};
use crate::spec::ResourceBounds;

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
}

impl EventKind {
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
        }
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
    /// The tool name as called.
    pub tool: String,
    /// The attempt (1 for the first).
    pub attempt: u32,
    /// When the event was made.
    pub timestamp: SystemTime,
    /// Time since the call was received, for completion events.
    pub elapsed: Option<Duration>,
    /// The error class, for failures and refusals.
    pub error_class: Option<ErrorClass>,
    /// The error kind (`invalid_arguments`, `timeout`, ...).
    pub error_kind: Option<&'static str>,
    /// The policy that refused the call, for refusals.
    pub policy: Option<Cow<'static, str>>,
    /// Keys of artifacts the call stored.
    pub artifact_keys: Vec<String>,
    /// SHA-256 of the canonical arguments (stable key order), hex.
    pub args_hash: Option<String>,
    /// SHA-256 of the canonical result, hex.
    pub result_hash: Option<String>,
    /// Progress, for `tool.progress`.
    pub progress: Option<Progress>,
    /// A custom event's name, for `tool.custom`.
    pub name: Option<String>,
    /// A custom event's payload (redacted before delivery).
    pub data: Option<Value>,
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
        tool: impl Into<String>,
        attempt: u32,
    ) -> Self {
        ToolEvent {
            kind,
            run_id,
            thread_id,
            call_id,
            tool: tool.into(),
            attempt,
            timestamp: SystemTime::now(),
            elapsed: None,
            error_class: None,
            error_kind: None,
            policy: None,
            artifact_keys: Vec::new(),
            args_hash: None,
            result_hash: None,
            progress: None,
            name: None,
            data: None,
            bounds: None,
        }
    }
}

/// How a subscriber receives events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Delivery {
    /// Through a bounded queue drained by a task of its own: never slows a
    /// call; events are dropped (and counted) when the queue is full. The
    /// default.
    #[default]
    Queued,
    /// Called in line, on the executor's task, before the step goes on. Only
    /// for subscribers that never block (in-memory recorders, counters); a
    /// panic is still caught.
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
}

impl<F> EventSubscriber for F
where
    F: Fn(&ToolEvent) + Send + Sync + 'static,
{
    fn on_event(&self, event: &ToolEvent) {
        self(event)
    }
}

/// The queue length of each queued subscriber.
pub const QUEUE_CAPACITY: usize = 1024;

struct Slot {
    subscriber: Arc<dyn EventSubscriber>,
    delivery: Delivery,
    queue: OnceLock<mpsc::Sender<Arc<ToolEvent>>>,
}

/// The subscribers of an executor, and the counters of what went wrong in
/// delivery.
#[derive(Default)]
pub struct EventBus {
    slots: Vec<Slot>,
    stats: Arc<BusStats>,
}

#[derive(Default)]
struct BusStats {
    dropped: AtomicU64,
    panics: AtomicU64,
}

impl EventBus {
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
        self.slots.push(Slot {
            subscriber,
            delivery,
            queue: OnceLock::new(),
        });
    }

    /// True when someone listens.
    #[inline]
    pub fn is_active(&self) -> bool {
        !self.slots.is_empty()
    }

    /// Events dropped because a queued subscriber was behind.
    pub fn dropped(&self) -> u64 {
        self.stats.dropped.load(Ordering::Relaxed)
    }

    /// Panics caught in subscribers.
    pub fn panics(&self) -> u64 {
        self.stats.panics.load(Ordering::Relaxed)
    }

    /// Delivers `event` to every subscriber. Never blocks, never panics.
    pub fn emit(&self, event: ToolEvent) {
        if self.slots.is_empty() {
            return;
        }
        let event = Arc::new(event);
        for slot in &self.slots {
            match slot.delivery {
                Delivery::Inline => deliver(&*slot.subscriber, &event, &self.stats),
                Delivery::Queued => self.enqueue(slot, &event),
            }
        }
    }

    fn enqueue(&self, slot: &Slot, event: &Arc<ToolEvent>) {
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            // No runtime to drain a queue: deliver in line.
            deliver(&*slot.subscriber, event, &self.stats);
            return;
        };
        let tx = slot.queue.get_or_init(|| {
            let (tx, mut rx) = mpsc::channel::<Arc<ToolEvent>>(QUEUE_CAPACITY);
            let subscriber = Arc::clone(&slot.subscriber);
            let stats = Arc::clone(&self.stats);
            handle.spawn(async move {
                while let Some(event) = rx.recv().await {
                    deliver(&*subscriber, &event, &stats);
                }
            });
            tx
        });
        if tx.try_send(Arc::clone(event)).is_err() {
            self.stats.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }
}

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
