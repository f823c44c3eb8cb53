//! A queued subscriber's bounded queue and the thread that drains it.
//!
//! The thread is the subscriber's own, not a task of the caller's runtime:
//! a subscriber that blocks can then hold up only itself, whatever runtime
//! (or none) the calls run on. The thread ends when the bus is dropped and
//! the queue is drained; one blocked forever stays blocked, alone. It runs
//! inside the tokio runtime of the call that emitted first, when there was
//! one, so a subscriber may still hand events to tasks (`tokio::spawn`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TryRecvError};

use super::{BusStats, EventBus, EventKind, EventSubscriber, ToolEvent, deliver};

/// The sending side of one subscriber's queue.
pub(super) struct Queue {
    tx: SyncSender<Queued>,
    /// Events dropped for this subscriber and not yet reported to it.
    unreported: Arc<AtomicU64>,
}

/// One queued event, with the number of events dropped just before it.
struct Queued {
    event: Arc<ToolEvent<'static>>,
    dropped_before: u64,
}

impl Queue {
    /// Starts the thread that feeds `subscriber`, inside `runtime` when
    /// given; `None` when the system refuses a thread. `report_drops` says
    /// whether the subscriber accepts `tool.events_dropped`.
    pub(super) fn start(
        subscriber: Arc<dyn EventSubscriber>,
        report_drops: bool,
        stats: Arc<BusStats>,
        runtime: Option<tokio::runtime::Handle>,
    ) -> Option<Queue> {
        let (tx, rx) = mpsc::sync_channel(EventBus::QUEUE_CAPACITY);
        let unreported = Arc::new(AtomicU64::new(0));
        let drain = Drain {
            subscriber,
            rx,
            unreported: Arc::clone(&unreported),
            report_drops,
            stats,
        };
        std::thread::Builder::new()
            .name("tinyagents-events".into())
            .spawn(move || {
                let _inside = runtime.as_ref().map(tokio::runtime::Handle::enter);
                drain.run()
            })
            .ok()?;
        Some(Queue { tx, unreported })
    }

    /// Queues `event` without waiting; `false` when the queue is full, the
    /// event then being dropped and kept count of for the next report.
    pub(super) fn push(&self, event: &Arc<ToolEvent<'static>>) -> bool {
        let dropped_before = match self.unreported.load(Ordering::Relaxed) {
            0 => 0,
            _ => self.unreported.swap(0, Ordering::AcqRel),
        };
        let queued = Queued {
            event: Arc::clone(event),
            dropped_before,
        };
        if self.tx.try_send(queued).is_ok() {
            return true;
        }
        self.unreported
            .fetch_add(dropped_before + 1, Ordering::AcqRel);
        false
    }
}

/// The receiving side, owned by the subscriber's thread.
struct Drain {
    subscriber: Arc<dyn EventSubscriber>,
    rx: Receiver<Queued>,
    unreported: Arc<AtomicU64>,
    report_drops: bool,
    stats: Arc<BusStats>,
}

impl Drain {
    /// Delivers events in queue order until the bus is gone. A gap is
    /// reported before the event that follows it, or when the queue runs
    /// empty after it.
    fn run(self) {
        let mut last: Option<Arc<ToolEvent<'static>>> = None;
        loop {
            let next = match self.rx.try_recv() {
                Ok(next) => next,
                Err(TryRecvError::Disconnected) => return,
                Err(TryRecvError::Empty) => {
                    if let Some(last) = &last {
                        self.report(self.unreported.swap(0, Ordering::AcqRel), last);
                    }
                    match self.rx.recv() {
                        Ok(next) => next,
                        Err(_) => return,
                    }
                }
            };
            self.report(next.dropped_before, &next.event);
            deliver(&*self.subscriber, &next.event, &self.stats);
            last = Some(next.event);
        }
    }

    /// Tells the subscriber that `dropped` events were lost, with the ids of
    /// the event `near` the gap.
    fn report(&self, dropped: u64, near: &ToolEvent) {
        if dropped == 0 || !self.report_drops {
            return;
        }
        let mut event = ToolEvent::new(
            EventKind::EventsDropped,
            near.run_id.clone(),
            near.thread_id.clone(),
            near.call_id.clone(),
            near.tool.clone(),
            near.attempt,
        );
        event.dropped = Some(dropped);
        deliver(&*self.subscriber, &event, &self.stats);
    }
}
