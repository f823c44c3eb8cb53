//! The client side's handler: progress notifications to the calling tool's
//! progress events, and `tools/list_changed` to a flag the application reads
//! between turns.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::ClientHandler;
use rmcp::model::{ClientConfig, Implementation, ProgressNotificationParam, ProgressToken};
use rmcp::service::{MaybeSendFuture, NotificationContext, RoleClient};
use tokio::sync::Notify;

use crate::runtime::StreamWriter;
use crate::sync::lock;

/// What the handler shares with the client and its tools.
#[derive(Default)]
pub(super) struct HookState {
    /// The progress writer of each call in flight, by its progress token.
    progress: Mutex<HashMap<ProgressToken, StreamWriter>>,
    /// Set by `notifications/tools/list_changed`, cleared by the application.
    changed: AtomicBool,
    /// Wakes [`McpClient::tools_changed_notified`](super::McpClient::tools_changed_notified).
    notify: Notify,
}

impl HookState {
    pub(super) fn watch_progress(&self, token: ProgressToken, writer: StreamWriter) {
        lock(&self.progress).insert(token, writer);
    }

    pub(super) fn unwatch_progress(&self, token: &ProgressToken) {
        lock(&self.progress).remove(token);
    }

    pub(super) fn take_changed(&self) -> bool {
        self.changed.swap(false, Ordering::AcqRel)
    }

    pub(super) fn is_changed(&self) -> bool {
        self.changed.load(Ordering::Acquire)
    }

    pub(super) fn notified(&self) -> tokio::sync::futures::Notified<'_> {
        self.notify.notified()
    }
}

/// The rmcp client handler of an [`McpClient`](super::McpClient).
#[derive(Clone)]
pub(super) struct Hooks(pub(super) Arc<HookState>);

impl ClientHandler for Hooks {
    fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        let writer = lock(&self.0.progress).get(&params.progress_token).cloned();
        if let Some(writer) = writer
            && params.progress.is_finite()
        {
            let total = params.total.filter(|t| t.is_finite());
            let message = params.message.as_deref().map(|m| super::bounded(m, 200));
            writer.progress(params.progress, total, message.as_deref());
        }
        std::future::ready(())
    }

    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.0.changed.store(true, Ordering::Release);
        self.0.notify.notify_waiters();
        std::future::ready(())
    }

    fn get_info(&self) -> ClientConfig {
        let mut config = ClientConfig::default();
        config.client_info = Implementation::new("tinyagents-tools", env!("CARGO_PKG_VERSION"));
        config
    }
}
