//! Relaying `tool.progress` events to the MCP request that made the call.
//!
//! The server subscribes one [`ProgressRelay`] to its executor's events. A
//! call whose request carried a progress token opens a [`Route`] under its
//! call id; the relay hands that call's progress events to the route, and
//! the call's handler sends them as `notifications/progress` before its
//! response. Events of calls without a route cost a map lookup.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use tokio::sync::mpsc;

use tinyagents_tools::events::{Delivery, EventKind, EventSubscriber, Progress, ToolEvent};
use tinyagents_tools::ids::ToolCallId;

/// Hands each call's progress events to the route its handler opened.
#[derive(Default)]
pub(crate) struct ProgressRelay {
    routes: Mutex<HashMap<ToolCallId, mpsc::UnboundedSender<Progress>>>,
}

impl ProgressRelay {
    /// Opens the route of call `id`; it closes when the route is dropped.
    pub(crate) fn route(self: &Arc<Self>, id: ToolCallId, token: ProgressToken) -> Route {
        let (tx, rx) = mpsc::unbounded_channel();
        self.routes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.clone(), tx);
        Route {
            relay: Arc::clone(self),
            id,
            rx,
            token,
            last: None,
        }
    }
}

impl EventSubscriber for ProgressRelay {
    fn on_event(&self, event: &ToolEvent) {
        if event.kind != EventKind::Progress {
            return;
        }
        let Some(progress) = &event.progress else {
            return;
        };
        let routes = self.routes.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(tx) = routes.get(&event.call_id) {
            // A closed route means the call has answered: nothing to tell.
            let _ = tx.send(progress.clone());
        }
    }

    fn delivery(&self) -> Delivery {
        // A map lookup and an unbounded send: never blocks, and keeps the
        // reports in order before the call's response.
        Delivery::Inline
    }

    fn accepts(&self, kind: EventKind) -> bool {
        // Only progress is relayed: no other event is built for it.
        kind == EventKind::Progress
    }
}

/// One call's progress, waiting to be sent as MCP notifications.
pub(crate) struct Route {
    relay: Arc<ProgressRelay>,
    id: ToolCallId,
    rx: mpsc::UnboundedReceiver<Progress>,
    token: ProgressToken,
    last: Option<f64>,
}

impl Route {
    /// The next report, when the call makes one.
    pub(crate) async fn next(&mut self) -> Option<Progress> {
        self.rx.recv().await
    }

    /// A report already made and not yet taken.
    pub(crate) fn try_next(&mut self) -> Option<Progress> {
        self.rx.try_recv().ok()
    }

    /// The notification for `progress`: its value raised just above the
    /// previous one when it would not increase, since MCP requires progress
    /// to increase with each notification. The total is passed on as
    /// reported, when finite.
    pub(crate) fn notification(&mut self, progress: Progress) -> ProgressNotificationParam {
        // A value that is not a finite number says nothing; count it as 0.
        let reported = if progress.progress.is_finite() {
            progress.progress
        } else {
            0.0
        };
        let value = match self.last {
            Some(last) if reported <= last => last.next_up(),
            _ => reported,
        };
        self.last = Some(value);
        let mut param = ProgressNotificationParam::new(self.token.clone(), value);
        if let Some(total) = progress.total.filter(|t| t.is_finite()) {
            param = param.with_total(total);
        }
        if let Some(message) = progress.message {
            param = param.with_message(message);
        }
        param
    }
}

impl Drop for Route {
    fn drop(&mut self) {
        self.relay
            .routes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::NumberOrString;

    fn route() -> Route {
        let relay = Arc::new(ProgressRelay::default());
        relay.route(
            ToolCallId::new("call-1"),
            ProgressToken(NumberOrString::Number(7)),
        )
    }

    fn report(progress: f64, total: Option<f64>, message: Option<&str>) -> Progress {
        Progress {
            progress,
            total,
            message: message.map(str::to_owned),
        }
    }

    #[test]
    fn the_relay_asks_for_progress_events_only() {
        let relay = ProgressRelay::default();
        for kind in EventKind::ALL {
            assert_eq!(relay.accepts(kind), kind == EventKind::Progress, "{kind}");
        }
    }

    #[test]
    fn increasing_progress_is_sent_as_reported() {
        let mut route = route();
        let first = route.notification(report(1.0, Some(4.0), Some("one")));
        let second = route.notification(report(2.5, Some(4.0), None));
        assert_eq!(
            first.progress_token,
            ProgressToken(NumberOrString::Number(7))
        );
        assert_eq!((first.progress, first.total), (1.0, Some(4.0)));
        assert_eq!(first.message.as_deref(), Some("one"));
        assert_eq!((second.progress, second.total), (2.5, Some(4.0)));
        assert_eq!(second.message, None);
    }

    #[test]
    fn a_report_that_does_not_increase_is_sent_just_above_the_last_one() {
        let mut route = route();
        route.notification(report(3.0, None, None));
        let same = route.notification(report(3.0, None, Some("still")));
        let lower = route.notification(report(0.0, None, Some("note")));
        assert!(same.progress > 3.0);
        assert!(lower.progress > same.progress);
        assert!(lower.progress < 3.001);
    }

    #[test]
    fn a_value_that_is_not_a_number_counts_as_zero_and_bad_totals_are_dropped() {
        let mut route = route();
        let first = route.notification(report(f64::NAN, Some(f64::INFINITY), None));
        assert_eq!((first.progress, first.total), (0.0, None));
        let next = route.notification(report(f64::NAN, None, None));
        assert!(next.progress > 0.0 && next.progress.is_finite());
    }

    #[test]
    fn the_relay_hands_progress_only_to_the_open_route_of_the_call() {
        use tinyagents_tools::ids::{RunId, ThreadId};
        let relay = Arc::new(ProgressRelay::default());
        let mut route = relay.route(
            ToolCallId::new("call-1"),
            ProgressToken(NumberOrString::Number(1)),
        );
        let event = |call: &str| {
            let mut event = ToolEvent::new(
                EventKind::Progress,
                RunId::new("run"),
                ThreadId::new("thread"),
                ToolCallId::new(call),
                "tool",
                1,
            );
            event.progress = Some(report(1.0, None, None));
            event
        };
        relay.on_event(&event("call-2"));
        relay.on_event(&event("call-1"));
        assert_eq!(route.try_next(), Some(report(1.0, None, None)));
        assert_eq!(route.try_next(), None);
        drop(route);
        assert!(relay.routes.lock().unwrap().is_empty());
    }
}
