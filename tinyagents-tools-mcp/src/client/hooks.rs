//! The client side's handler: progress notifications to the calling tool's
//! progress events; `tools/list_changed` to a flag the application reads
//! between turns and a fresh comparison of the imported definitions; the
//! server's own requests for input to the application's handler.

#![allow(deprecated)] // sampling and roots, deprecated by rmcp but still in MCP

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    ClientConfig, CreateMessageRequest, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequest, ElicitRequestParams, ElicitResult, ErrorData, Implementation, JsonObject,
    ListRootsResult, ProgressNotificationParam, ProgressToken, TASKS_EXTENSION_ID,
};
use rmcp::service::{MaybeSendFuture, NotificationContext, RequestContext, RoleClient};
use rmcp::{ClientHandler, model::InputRequest};
use serde::de::DeserializeOwned;
use tokio::sync::Notify;

use crate::sync::lock;
use tinyagents_tools::runtime::StreamWriter;

use super::definitions::Definitions;
use super::input::{McpInputContext, McpInputError, McpInputHandler, ask};

/// The application's handler for requests for input, and how many rounds
/// of them one call answers.
pub(super) struct InputSettings {
    pub(super) handler: Arc<dyn McpInputHandler>,
    pub(super) max_rounds: usize,
}

/// What the handler shares with the client and its tools.
pub(super) struct HookState {
    /// The progress writer of each call in flight, by its progress token.
    progress: Mutex<HashMap<ProgressToken, StreamWriter>>,
    /// Set by `notifications/tools/list_changed`, cleared by the application.
    changed: AtomicBool,
    /// Wakes [`McpClient::tools_changed_notified`](super::McpClient::tools_changed_notified).
    notify: Notify,
    /// The imported tools' definitions.
    pub(super) definitions: Arc<Definitions>,
    pub(super) input: InputSettings,
}

impl HookState {
    pub(super) fn new(input: InputSettings) -> Self {
        HookState {
            progress: Mutex::default(),
            changed: AtomicBool::new(false),
            notify: Notify::new(),
            definitions: Arc::default(),
            input,
        }
    }

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
        context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        let definitions = &self.0.definitions;
        definitions.notice();
        self.0.changed.store(true, Ordering::Release);
        self.0.notify.notify_waiters();
        if !definitions.is_empty() && definitions.schedule() {
            // Compared now, so `changed_tools` shows the change before a
            // call owes the comparison.
            let definitions = Arc::clone(definitions);
            tokio::spawn(async move {
                let timeout = super::DEFAULT_CONNECT_TIMEOUT;
                let _ = super::relist_if_owed(&context.peer, &definitions, timeout).await;
            });
        }
        std::future::ready(())
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.answer(InputRequest::Elicitation(ElicitRequest::new(request)))
            .await
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let request = CreateMessageRequest::new(params);
        self.answer(InputRequest::CreateMessage(request)).await
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        self.answer(InputRequest::ListRoots(Default::default()))
            .await
    }

    fn get_info(&self) -> ClientConfig {
        let mut config = ClientConfig::default();
        config.client_info = Implementation::new("tinyagents-tools", env!("CARGO_PKG_VERSION"));
        super::input::declare(self.0.input.handler.as_ref(), &mut config.capabilities);
        config
            .capabilities
            .extensions
            .get_or_insert_with(Default::default)
            .insert(TASKS_EXTENSION_ID.to_owned(), JsonObject::new());
        config
    }
}

impl Hooks {
    /// A request the server sent on its own (protocols before 2026-07-28),
    /// answered by the application's handler, with the result it asks for.
    async fn answer<T: DeserializeOwned>(&self, request: InputRequest) -> Result<T, ErrorData> {
        let context = McpInputContext {
            tool: None,
            call_id: None,
        };
        let answer = ask(self.0.input.handler.as_ref(), &context, &request)
            .await
            .map_err(|error| match error {
                McpInputError::Unsupported(_) => ErrorData::new(
                    rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                    "this client does not answer such requests",
                    None,
                ),
                _ => unanswerable(),
            })?;
        serde_json::from_value(answer).map_err(|_| unanswerable())
    }
}

/// The error a server is answered when the application gave no answer.
fn unanswerable() -> ErrorData {
    ErrorData::internal_error("the client could not answer the request", None)
}
