//! [`Escalation`]: where a call declared `escalates` becomes an MCP task,
//! between the body that asks ([`McpPeer::escalate`](super::McpPeer::escalate))
//! and the request that creates the task.

use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

use super::McpPeerError;
use crate::sync::lock;

/// Where a call declared `escalates` becomes a task: its body asks
/// ([`escalate`](Self::escalate)), the request that runs it creates the
/// task and answers with it, and the body goes on as the task.
pub(crate) struct Escalation {
    ask: Mutex<Option<oneshot::Sender<oneshot::Sender<bool>>>>,
}

impl Escalation {
    /// A new escalation point, and what the request waits on: the body's
    /// ask, carrying where to say whether the task was created.
    pub(crate) fn new() -> (Arc<Self>, oneshot::Receiver<oneshot::Sender<bool>>) {
        let (ask, asked) = oneshot::channel();
        let escalation = Escalation {
            ask: Mutex::new(Some(ask)),
        };
        (Arc::new(escalation), asked)
    }

    /// Asks the request for the task and waits until it exists; at once
    /// when the call escalated before.
    pub(crate) async fn escalate(&self) -> Result<(), McpPeerError> {
        let Some(ask) = lock(&self.ask).take() else {
            return Ok(());
        };
        let (created, answer) = oneshot::channel();
        if ask.send(created).is_err() {
            return Err(McpPeerError::TaskNotCreated);
        }
        match answer.await {
            Ok(true) => Ok(()),
            _ => Err(McpPeerError::TaskNotCreated),
        }
    }
}
