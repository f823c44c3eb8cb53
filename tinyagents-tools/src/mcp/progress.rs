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

use crate::events::{Delivery, EventKind, EventSubscriber, Progress, ToolEvent};
use crate::ids::ToolCallId;

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
    /// to increase with each notification.
    pub(crate) fn notification(&mut self, progress: Progress) -> ProgressNotificationParam {
        let value = match self.last {
            Some(last) if !(progress.progress > last) => last.next_up(),
            _ => progress.progress,
        };
        self.last = Some(value);
        let mut param = ProgressNotificationParam::new(self.token.clone(), value);
        if let Some(total) = progress.total {
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
