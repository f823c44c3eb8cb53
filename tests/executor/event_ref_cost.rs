//! What a subscriber of lent events ([`EventRef`]) costs a call: no
//! allocation (counted by this binary's allocator), where a subscriber of
//! owned events gets them built.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use tinyagents_tools::events::{Delivery, EventRef, EventSubscriber, ToolEvent};
use tinyagents_tools::*;
use tinyagents_tools_tests::*;

use crate::event_ref::shout;

/// Counts the events it is lent, reading their kind and tool name.
#[derive(Default)]
struct Counter(AtomicUsize);

impl EventSubscriber for Counter {
    fn on_event(&self, _: &ToolEvent) {}

    fn on_event_ref(&self, event: &EventRef<'_>) {
        std::hint::black_box((event.kind(), event.tool(), event.elapsed()));
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    fn delivery(&self) -> Delivery {
        Delivery::Inline
    }
}

/// Counts the events it receives as owned ones.
#[derive(Default)]
struct OwnedCounter(AtomicUsize);

impl EventSubscriber for OwnedCounter {
    fn on_event(&self, _: &ToolEvent) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }

    fn delivery(&self) -> Delivery {
        Delivery::Inline
    }
}

/// The allocations one call of `shout` makes on this thread (after a few
/// calls to warm up), through an executor with `subscriber`.
fn allocations_per_call(subscriber: Option<Arc<dyn EventSubscriber>>) -> usize {
    let mut builder = executor(vec![shout(0)]);
    if let Some(subscriber) = subscriber {
        builder = builder.subscribe_arc(subscriber);
    }
    let exec = builder.build().unwrap();
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
fn a_subscriber_of_lent_events_costs_a_call_no_allocation() {
    let bare = allocations_per_call(None);
    let counter = Arc::new(Counter::default());
    let lent = allocations_per_call(Some(counter.clone()));
    assert!(counter.0.load(Ordering::Relaxed) >= 8, "it saw every event");
    assert_eq!(lent, bare, "lent events allocate nothing");
    // A subscriber of owned events gets them built (digests included).
    let owned = allocations_per_call(Some(Arc::new(OwnedCounter::default())));
    assert!(
        owned > bare,
        "{owned} allocations, {bare} without a subscriber"
    );
}
