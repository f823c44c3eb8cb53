//! [`JournalRecorder`]: an event subscriber that logs every lifecycle
//! event into the journal, to be read back with
//! [`Journal::events`](super::Journal::events).

use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;

use super::record::JournalEvent;
use super::store::JournalStore;
use crate::events::{EventSubscriber, ToolEvent};
use crate::util::sync::lock;

/// Logs events into a journal's event log, in the order they were made.
/// Queued: a call never waits for the database. Events are appended in
/// batches by a task on the tokio runtime of the first event; an event
/// that cannot be stored is reported as a `tracing` warning.
///
/// Made by [`Journal::recorder`](super::Journal::recorder); add it with
/// `ToolExecutorBuilder::subscribe`.
pub struct JournalRecorder {
    store: Arc<dyn JournalStore>,
    sender: Mutex<Option<mpsc::UnboundedSender<JournalEvent>>>,
}

impl JournalRecorder {
    pub(super) fn new(store: Arc<dyn JournalStore>) -> Self {
        JournalRecorder {
            store,
            sender: Mutex::new(None),
        }
    }

    /// The channel to the appending task, started on first use.
    fn sender(&self) -> Option<mpsc::UnboundedSender<JournalEvent>> {
        let mut sender = lock(&self.sender);
        if let Some(tx) = sender.as_ref().filter(|tx| !tx.is_closed()) {
            return Some(tx.clone());
        }
        let handle = tokio::runtime::Handle::try_current().ok()?;
        let (tx, mut rx) = mpsc::unbounded_channel::<JournalEvent>();
        let store = Arc::clone(&self.store);
        handle.spawn(async move {
            let mut batch = Vec::new();
            while rx.recv_many(&mut batch, 256).await > 0 {
                if let Err(e) = store.append_events(&batch).await {
                    tracing::warn!(error = %e, events = batch.len(), "journal events were not stored");
                }
                batch.clear();
            }
        });
        *sender = Some(tx.clone());
        Some(tx)
    }
}

impl std::fmt::Debug for JournalRecorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JournalRecorder")
            .field("location", &self.store.location())
            .finish()
    }
}

impl EventSubscriber for JournalRecorder {
    fn on_event(&self, event: &ToolEvent) {
        match self.sender() {
            Some(tx) => {
                let _ = tx.send(JournalEvent::from(event));
            }
            None => tracing::warn!("a journal event was made outside a tokio runtime; not stored"),
        }
    }
}
