//! The handles a tool emits its own events through: [`EventEmitter`]
//! (`tool.custom`) and [`StreamWriter`] (`tool.progress`), both tagged with
//! the call's ids and masked by the call's redactor. An event no subscriber
//! accepts is never built.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use crate::events::{EventBus, EventKind, Progress, ToolEvent};
use crate::ids::{CallName, RunId, ThreadId, ToolCallId};
use crate::redact::Redactor;

/// What a call's emit handles share: the bus, the call's ids, its redactor.
pub(super) struct EventScope {
    pub(super) bus: Arc<EventBus>,
    pub(super) run_id: RunId,
    pub(super) thread_id: ThreadId,
    pub(super) call_id: ToolCallId,
    pub(super) tool: CallName,
    pub(super) attempt: u32,
    pub(super) redactor: Option<Arc<Redactor>>,
}

impl EventScope {
    fn mask(&self, text: String) -> String {
        match &self.redactor {
            Some(r) => r.text(&text).into_owned(),
            None => text,
        }
    }

    fn event(&self, kind: EventKind) -> ToolEvent<'static> {
        ToolEvent::new(
            kind,
            self.run_id.clone(),
            self.thread_id.clone(),
            self.call_id.clone(),
            self.tool.as_str(),
            self.attempt,
        )
    }
}

/// Emits custom events (`tool.custom`) tagged with the call's ids.
///
/// Emitting when no subscriber accepts `tool.custom` costs nothing;
/// payloads go through the executor's redaction like every other event
/// field.
#[derive(Clone, Default)]
pub struct EventEmitter {
    pub(super) scope: Option<Arc<EventScope>>,
}

impl EventEmitter {
    /// Emits an event named `name` with a JSON payload.
    pub fn emit(&self, name: impl Into<String>, data: Value) {
        if let Some(scope) = &self.scope {
            if !scope.bus.wants(EventKind::Custom) {
                return;
            }
            let mut event = scope.event(EventKind::Custom);
            let mut data = data;
            if let Some(r) = &scope.redactor {
                r.json(&mut data);
            }
            event.name = Some(scope.mask(name.into()));
            event.data = Some(data);
            scope.bus.emit(event);
        }
    }
}

impl fmt::Debug for EventEmitter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("EventEmitter")
    }
}

/// Reports progress (`tool.progress` events; MCP progress notifications when
/// served over MCP).
#[derive(Clone, Default)]
pub struct StreamWriter {
    pub(super) scope: Option<Arc<EventScope>>,
}

impl StreamWriter {
    /// Reports `progress` out of `total` (when known) with an optional message.
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        if let Some(scope) = &self.scope {
            if !scope.bus.wants(EventKind::Progress) {
                return;
            }
            let mut event = scope.event(EventKind::Progress);
            event.progress = Some(Progress {
                progress,
                total,
                message: message.map(|m| scope.mask(m.to_owned())),
            });
            scope.bus.emit(event);
        }
    }

    /// Reports a message without a number.
    pub fn write(&self, message: &str) {
        self.progress(0.0, None, Some(message));
    }
}

impl fmt::Debug for StreamWriter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("StreamWriter")
    }
}
