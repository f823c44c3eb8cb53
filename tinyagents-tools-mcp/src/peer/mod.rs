//! [`McpPeer`]: a tool's channel to the MCP client of its call, for
//! logging, sampling and elicitation.

// MCP's logging and sampling are deprecated in rmcp for a protocol to come
// (SEP-2577), and still part of 2025-11-25, which this serves.
#![allow(deprecated)]

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use rmcp::model::{
    CancelledNotificationParam, ClientCapabilities, ClientResult, CreateMessageRequest,
    CreateMessageRequestParams, ElicitRequest, ElicitRequestParams, ElicitResult,
    ElicitationSchema, InputRequest, LoggingMessageNotificationParam, ProtocolVersion, RequestId,
    ServerRequest,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleServer};
use serde_json::Value;
use tokio::task::futures::TaskLocalFuture;
use tokio_util::sync::CancellationToken;

use crate::ServerCore;

use crate::rounds::Rounds;
use tinyagents_tools::inject::{Inject, InjectError};
use tinyagents_tools::redact::Redactor;
use tinyagents_tools::runtime::RunContext;
use tinyagents_tools::runtime::ToolRuntime;
use tinyagents_tools::tool::Shared;

mod escalation;
mod roots;
mod types;

pub(crate) use escalation::Escalation;

pub(crate) use types::threshold_of;
pub use types::{ElicitAction, Elicitation, LogLevel, McpPeerError, Sampled};
use types::{checked, sampling};

/// How long a request to the client waits for its answer by default.
pub const DEFAULT_PEER_TIMEOUT: Duration = Duration::from_secs(60);

tokio::task_local! {
    /// The client of the MCP request being served, set by the session
    /// around the call's execution.
    static CURRENT: Link;
}

/// The client of one MCP request, as the session knows it.
#[derive(Clone)]
pub(crate) struct Link {
    pub(crate) peer: Peer<RoleServer>,
    pub(crate) capabilities: Option<ClientCapabilities>,
    pub(crate) protocol: Option<ProtocolVersion>,
    /// The session's logging threshold: 0 when the client set none, else
    /// the rank of [`LogLevel`] plus one.
    pub(crate) threshold: Arc<AtomicU8>,
    /// True when the request is served by a stateless HTTP server.
    pub(crate) stateless: bool,
    /// The call's input rounds, for a client on 2026-07-28 or later: what
    /// it answered, and what the call asks it now.
    pub(crate) rounds: Option<Arc<Rounds>>,
    /// Masks a value as the tool `tool`'s redaction policy and the run's
    /// secrets require (for approval questions).
    pub(crate) mask: Option<Mask>,
    /// Where the call becomes an MCP task, for a tool declared
    /// `escalates` called by a client that declared the tasks extension.
    pub(crate) escalation: Option<Arc<Escalation>>,
}

/// Masks `value` for the tool named by the first argument.
pub(crate) type Mask = Arc<dyn Fn(&str, &mut Value) + Send + Sync>;

/// Masks a value for a tool as its redaction policy and `run`'s secrets
/// require (approval questions show the arguments so).
pub(crate) fn mask_for<S: Shared, C: Shared>(
    shared: &Arc<ServerCore<S, C>>,
    run: &RunContext<C>,
) -> Mask {
    let shared = Arc::clone(shared);
    let secrets: Vec<Arc<str>> = run.secrets().redaction_forms().to_vec();
    Arc::new(move |tool: &str, value: &mut Value| {
        let policy = shared
            .executor
            .registry()
            .resolve(tool)
            .map(|t| t.spec().safety.redaction.clone())
            .unwrap_or_default();
        let redactor = Redactor::for_policy_forms(&policy, &secrets);
        if !redactor.is_noop() {
            redactor.json(value);
        }
    })
}

/// The current call's link, when the call came from an MCP request.
pub(crate) fn current() -> Option<Link> {
    CURRENT.try_with(Link::clone).ok()
}

impl Link {
    /// Runs `future` (a call's execution) with this client as the one its
    /// tools' [`McpPeer`]s reach. A plain function, not an `async` one: the
    /// returned future holds the link and `future` once, not also as
    /// arguments beside them.
    pub(crate) fn scope<F: Future>(self, future: F) -> TaskLocalFuture<Link, F> {
        CURRENT.scope(self, future)
    }

    /// Why the server cannot send this client requests or notifications of
    /// its own, if it cannot.
    fn unreachable(&self) -> Option<&'static str> {
        if self
            .protocol
            .as_ref()
            .is_some_and(|v| *v >= ProtocolVersion::V_2026_07_28)
        {
            return Some(
                "the client's protocol (2026-07-28 or later) forbids requests from the server \
                 during a call",
            );
        }
        if self.stateless || self.capabilities.is_none() {
            return Some("the request was served without a session (stateless mode)");
        }
        None
    }
}

/// A tool's channel to the MCP client whose request it is serving: send it
/// log messages, ask its model for a completion (sampling) or its user for
/// input (elicitation).
///
/// Take it with `#[inject] client: McpPeer`. It never fails to inject;
/// outside an MCP call (or in stateless mode, or when the client did not
/// declare the capability) every method returns a classified
/// [`McpPeerError`] at once instead of waiting. A request waits at most
/// [`DEFAULT_PEER_TIMEOUT`] (see [`with_timeout`](Self::with_timeout)) and
/// never past the call's own cancellation (its timeout or the run's
/// cancellation): then the client is sent `notifications/cancelled`. What
/// the tool sends (log data, prompts, elicitation messages) is redacted by
/// the executor's redaction policy, like its output.
///
/// ```
/// use tinyagents_tools_mcp::{LogLevel, McpPeer};
/// use tinyagents_tools::prelude::*;
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Args {
///     /// What to ask the client's model.
///     question: String,
/// }
///
/// /// Asks the client's model.
/// #[tool]
/// async fn ask(args: Args, #[inject] client: McpPeer) -> Result<String, ToolError> {
///     client.log(LogLevel::Info, "asking the client's model").await?;
///     let answer = client.sample(&args.question, 200).await?;
///     Ok(answer.text)
/// }
/// ```
#[derive(Clone)]
pub struct McpPeer {
    link: Option<Link>,
    logger: String,
    cancel: CancellationToken,
    redactor: Option<Arc<Redactor>>,
    timeout: Duration,
}

impl<S, C> Inject<S, C> for McpPeer {
    fn inject(_: &S, runtime: &ToolRuntime<C>) -> Result<Self, InjectError> {
        Ok(McpPeer {
            link: CURRENT.try_with(Link::clone).ok(),
            logger: runtime.tool_name().to_owned(),
            cancel: runtime.cancellation().clone(),
            redactor: runtime.redactor().cloned(),
            timeout: DEFAULT_PEER_TIMEOUT,
        })
    }
}

impl McpPeer {
    /// A handle that reaches no client (what a tool called outside MCP
    /// gets): every method fails with [`McpPeerError::NotConnected`].
    pub fn detached() -> Self {
        McpPeer {
            link: None,
            logger: String::new(),
            cancel: CancellationToken::new(),
            redactor: None,
            timeout: DEFAULT_PEER_TIMEOUT,
        }
    }

    /// The handle with `timeout` as the longest wait for an answer.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// True when the call came from an MCP client the server can send
    /// messages to (an initialized session).
    pub fn is_connected(&self) -> bool {
        self.link
            .as_ref()
            .is_some_and(|l| l.rounds.is_some() || l.unreachable().is_none())
    }

    /// True when the client declared sampling.
    pub fn can_sample(&self) -> bool {
        self.capabilities().is_some_and(|c| c.sampling.is_some())
    }

    /// True when the client declared form elicitation.
    pub fn can_elicit(&self) -> bool {
        self.capabilities()
            .and_then(|c| c.elicitation.as_ref())
            .is_some_and(|e| e.form.is_some() || e.url.is_none())
    }

    fn capabilities(&self) -> Option<&ClientCapabilities> {
        let link = self.link.as_ref()?;
        if link.rounds.is_some() {
            return link.capabilities.as_ref();
        }
        self.link().ok()?.capabilities.as_ref()
    }

    /// The call's input rounds, when its client is asked through
    /// `input_required` results (protocol 2026-07-28 or later).
    fn rounds(&self) -> Option<&Rounds> {
        self.link.as_ref()?.rounds.as_deref()
    }

    /// True when the client declared `roots`.
    pub fn can_list_roots(&self) -> bool {
        self.capabilities().is_some_and(|c| c.roots.is_some())
    }

    /// Why a request needing `capability`, which the client did not
    /// declare, is not sent: unsupported, unless the client cannot be
    /// reached at all. In input rounds, the call records the need.
    fn lacking(&self, capability: &'static str) -> McpPeerError {
        if let Some(rounds) = self.rounds() {
            rounds.need(capability);
        }
        match self.link() {
            Ok(_) => McpPeerError::Unsupported(capability),
            Err(unreachable) => unreachable,
        }
    }

    fn link(&self) -> Result<&Link, McpPeerError> {
        let link = self.link.as_ref().ok_or(McpPeerError::NotConnected)?;
        match link.unreachable() {
            Some(why) => Err(McpPeerError::Unreachable(why)),
            None => Ok(link),
        }
    }

    /// Sends the client a log message (`notifications/message`) at `level`,
    /// named after the tool. Returns `false` when the message is below the
    /// level the client asked for with `logging/setLevel` and was not sent
    /// (until it asks, every level is sent).
    pub async fn log(&self, level: LogLevel, data: impl Into<Value>) -> Result<bool, McpPeerError> {
        let link = self.link()?;
        let threshold = link.threshold.load(Ordering::Relaxed);
        if threshold > 0 && level.rank() + 1 < threshold {
            return Ok(false);
        }
        let mut data = data.into();
        if let Some(redactor) = &self.redactor {
            redactor.json(&mut data);
        }
        let note = LoggingMessageNotificationParam::new(level.into(), data)
            .with_logger(self.logger.clone());
        link.peer
            .notify_logging_message(note)
            .await
            .map_err(|e| McpPeerError::from_service(e, self.timeout))?;
        Ok(true)
    }

    /// Asks the client's model to answer `prompt` (one user message, at
    /// most `max_tokens` tokens): `sampling/createMessage`.
    pub async fn sample(&self, prompt: &str, max_tokens: u32) -> Result<Sampled, McpPeerError> {
        let answer = self.create_message(sampling(prompt, max_tokens)).await?;
        Ok(Sampled::from_result(&answer))
    }

    /// [`sample`](Self::sample), asked under `key` when the client is asked
    /// in input rounds (2026-07-28: the key of the `inputRequests` entry).
    pub async fn sample_as(
        &self,
        key: &str,
        prompt: &str,
        max_tokens: u32,
    ) -> Result<Sampled, McpPeerError> {
        let answer = self
            .create_message_keyed(Some(key), sampling(prompt, max_tokens))
            .await?;
        Ok(Sampled::from_result(&answer))
    }

    /// Sends `sampling/createMessage` with `params` as MCP defines them
    /// (`messages`, `maxTokens`, `systemPrompt`, ...) and returns the
    /// client's result as JSON. Params that are not a valid request fail
    /// with [`McpPeerError::InvalidRequest`] before anything is sent.
    pub async fn create_message(&self, params: Value) -> Result<Value, McpPeerError> {
        self.create_message_keyed(None, params).await
    }

    async fn create_message_keyed(
        &self,
        key: Option<&str>,
        mut params: Value,
    ) -> Result<Value, McpPeerError> {
        if !self.can_sample() {
            return Err(self.lacking("sampling"));
        }
        if let Some(redactor) = &self.redactor {
            for key in ["messages", "systemPrompt"] {
                if let Some(part) = params.get_mut(key) {
                    redactor.json(part);
                }
            }
        }
        let params: CreateMessageRequestParams = serde_json::from_value(params)
            .map_err(|e| McpPeerError::InvalidRequest(e.to_string()))?;
        params.validate().map_err(McpPeerError::InvalidRequest)?;
        if let Some(rounds) = self.rounds() {
            return answered_in(rounds, key, "sample", || {
                InputRequest::CreateMessage(CreateMessageRequest::new(params))
            });
        }
        let link = self.link()?;
        let request = ServerRequest::CreateMessageRequest(CreateMessageRequest::new(params));
        match self.request(link, request).await? {
            ClientResult::CreateMessageResult(result) => {
                serde_json::to_value(*result).map_err(|_| McpPeerError::UnexpectedAnswer)
            }
            _ => Err(McpPeerError::UnexpectedAnswer),
        }
    }

    /// Asks the client's user for input (`elicitation/create`, form mode):
    /// `message` says what is wanted, `requested_schema` is the form (a flat
    /// object schema of primitive properties, as MCP allows). A schema MCP
    /// does not allow fails with [`McpPeerError::InvalidRequest`] before
    /// anything is sent.
    pub async fn elicit(
        &self,
        message: &str,
        requested_schema: Value,
    ) -> Result<Elicitation, McpPeerError> {
        self.elicit_keyed(None, message, requested_schema).await
    }

    /// [`elicit`](Self::elicit), asked under `key` when the client is asked
    /// in input rounds (2026-07-28: the key of the `inputRequests` entry).
    pub async fn elicit_as(
        &self,
        key: &str,
        message: &str,
        requested_schema: Value,
    ) -> Result<Elicitation, McpPeerError> {
        self.elicit_keyed(Some(key), message, requested_schema)
            .await
    }

    async fn elicit_keyed(
        &self,
        key: Option<&str>,
        message: &str,
        schema: Value,
    ) -> Result<Elicitation, McpPeerError> {
        if !self.can_elicit() {
            return Err(self.lacking("elicitation"));
        }
        let requested_schema: ElicitationSchema = serde_json::from_value(schema.clone())
            .map_err(|e| McpPeerError::InvalidRequest(e.to_string()))?;
        let message = match &self.redactor {
            Some(redactor) => redactor.text(message).into_owned(),
            None => message.to_owned(),
        };
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message,
            requested_schema,
        };
        if let Some(rounds) = self.rounds() {
            let answer = answered_in(rounds, key, "elicit", || {
                InputRequest::Elicitation(ElicitRequest::new(params))
            })?;
            let result: ElicitResult = serde_json::from_value(answer).map_err(|e| {
                McpPeerError::InvalidAnswer(format!("not an elicitation result: {e}"))
            })?;
            return checked(Elicitation::from_result(&result), &schema);
        }
        let link = self.link()?;
        let request = ServerRequest::ElicitRequest(ElicitRequest::new(params));
        match self.request(link, request).await? {
            ClientResult::ElicitResult(result) => {
                checked(Elicitation::from_result(&result), &schema)
            }
            _ => Err(McpPeerError::UnexpectedAnswer),
        }
    }

    /// Makes the rest of the call an MCP task, for a tool declared
    /// `escalates` (`#[tool(task = "...", escalates)]`): what the tool asked
    /// its client before came in input rounds, and from here on the client
    /// holds a task handle and polls it while the body goes on in the
    /// background. A question asked after this parks the task in
    /// `input_required`; the body then runs again from its start with
    /// every answer, and this returns at once in that run.
    ///
    /// Returns at once, changing nothing, when the call is a task already,
    /// its client did not declare the tasks extension (it is answered in
    /// its request), or it did not come from MCP. Fails with
    /// [`McpPeerError::TaskNotCreated`] when the task could not be stored.
    pub async fn escalate(&self) -> Result<(), McpPeerError> {
        match self.link.as_ref().and_then(|l| l.escalation.as_ref()) {
            Some(escalation) => escalation.escalate().await,
            None => Ok(()),
        }
    }

    /// Sends `request` and waits for the answer, the timeout or the call's
    /// cancellation, whichever comes first.
    async fn request(
        &self,
        link: &Link,
        request: ServerRequest,
    ) -> Result<ClientResult, McpPeerError> {
        if self.cancel.is_cancelled() {
            return Err(McpPeerError::Cancelled);
        }
        let options = PeerRequestOptions::with_timeout(self.timeout);
        let handle = link
            .peer
            .send_request_with_option(request, options)
            .await
            .map_err(|e| McpPeerError::from_service(e, self.timeout))?;
        let mut pending = Pending {
            peer: link.peer.clone(),
            id: Some(handle.id.clone()),
        };
        let answer = tokio::select! {
            biased;
            answer = handle.await_response() => answer,
            () = self.cancel.cancelled() => return Err(McpPeerError::Cancelled),
        };
        // Answered, or timed out (rmcp then tells the client itself).
        pending.id = None;
        answer.map_err(|e| McpPeerError::from_service(e, self.timeout))
    }
}

/// In input rounds: the client's answer to the request under `key` (the
/// next key made from `prefix` when `None`), or, not answered yet,
/// [`McpPeerError::InputRequired`] with `request` asked under that key.
fn answered_in(
    rounds: &Rounds,
    key: Option<&str>,
    prefix: &str,
    request: impl FnOnce() -> InputRequest,
) -> Result<Value, McpPeerError> {
    let key = key.map_or_else(|| rounds.next_key(prefix), str::to_owned);
    if let Some(answer) = rounds.answer(&key) {
        return Ok(answer.clone());
    }
    rounds.ask(key, request());
    Err(McpPeerError::InputRequired)
}

/// A request to the client that is still waiting: dropped unanswered (the
/// call cancelled or timed out), it tells the client the request is
/// cancelled.
struct Pending {
    peer: Peer<RoleServer>,
    id: Option<RequestId>,
}

impl Drop for Pending {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let peer = self.peer.clone();
        runtime.spawn(async move {
            let note = CancelledNotificationParam::new(
                Some(id),
                Some("the tool call that asked was cancelled".to_owned()),
            );
            // A closed transport only loses the notification.
            let _ = peer.notify_cancelled(note).await;
        });
    }
}

impl fmt::Debug for McpPeer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpPeer")
            .field("connected", &self.is_connected())
            .field("tool", &self.logger)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}
