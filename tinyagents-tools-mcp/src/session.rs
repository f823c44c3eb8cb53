//! [`McpSession`]: one client connection, answering `tools/list` and
//! `tools/call` through the server's executor.

use std::fmt;
use std::sync::atomic::{AtomicU8, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use rmcp::ErrorData;
use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities, GetTaskParams,
    GetTaskResult, InputRequiredResult, ListToolsResult, NumberOrString, PaginatedRequestParams,
    ProgressNotificationParam, ProtocolVersion, RequestId, ResultType, ServerConfig,
    UpdateTaskParams,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::{Map, Value};

use crate::ServerCore;
use crate::call_result::rmcp_result;
use crate::durable;
use crate::peer::{Escalation, Link, Mask, mask_for, threshold_of};
use crate::progress::Route;
use crate::rounds::{Rounds, arguments_value, missing_capability};
use crate::screen::{ARGUMENTS_KEY, REFUSAL_KEY, arguments_beside, refusal_error};
use crate::tasks::{self, NewTask};
use tinyagents_tools::approval::approval_fingerprint;
use tinyagents_tools::call::{RawArguments, ToolCall};
use tinyagents_tools::error::ErrorKind;
use tinyagents_tools::ids::{CallName, ToolCallId};
use tinyagents_tools::journal::{CallKey, Journal};
use tinyagents_tools::output::ToolResult;
use tinyagents_tools::runtime::RunContext;
use tinyagents_tools::runtime::Turn;
use tinyagents_tools::spec::{SafetyItem, TaskStart, TaskSupport};
use tinyagents_tools::tool::Shared;

/// Numbers sessions, so call ids stay unique across sessions of one process.
static SESSIONS: AtomicU64 = AtomicU64::new(1);

/// One MCP connection: the server's executor and tool list, and the
/// session's [`RunContext`].
///
/// Implements rmcp's [`ServerHandler`]. A call's id (what the tool, events
/// and middleware see) is `mcp-<session>-<request id>`.
pub struct McpSession<S = (), C = ()> {
    shared: Arc<ServerCore<S, C>>,
    run: RunContext<C>,
    number: u64,
    turns: AtomicU32,
    /// The logging level the client set (see [`Link::threshold`]).
    threshold: Arc<AtomicU8>,
    /// Serves one request of a stateless HTTP server: the client cannot be
    /// sent requests or notifications outside that request's answer.
    stateless: bool,
    /// Masks values for approval questions: every call's run shares the
    /// session run's secrets, so one mask serves the session.
    mask: Mask,
    /// 128 random bits naming the session in the journal (its calls that
    /// wait for approval), drawn when the first such call comes.
    token: OnceLock<String>,
}

impl<S: Shared, C: Shared> McpSession<S, C> {
    pub(crate) fn new(shared: Arc<ServerCore<S, C>>, run: RunContext<C>) -> Self {
        McpSession {
            mask: mask_for(&shared, &run),
            shared,
            run,
            number: SESSIONS.fetch_add(1, Ordering::Relaxed),
            turns: AtomicU32::new(0),
            threshold: Arc::new(AtomicU8::new(0)),
            stateless: false,
            token: OnceLock::new(),
        }
    }

    /// The session of one request of a stateless HTTP server.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn stateless(mut self) -> Self {
        self.stateless = true;
        self
    }

    /// The session's run: cancelling it cancels every call of the session.
    pub fn run(&self) -> &RunContext<C> {
        &self.run
    }

    /// What one call runs in: a run of its own (a child of the session's),
    /// its turn, and the link through which its tools reach the client of
    /// `context`.
    fn call_scope(
        &self,
        context: &RequestContext<RoleServer>,
        capabilities: Option<ClientCapabilities>,
        rounds: Option<Arc<Rounds>>,
        escalation: Option<Arc<Escalation>>,
        at: Option<&CallKey>,
    ) -> (RunContext<C>, Turn, Link) {
        // A call made again under the key it was first journaled with.
        let (run, turn) = match at {
            Some(key) => (
                self.run.with_run_id(key.run_id.clone()).child_scope(),
                Turn::new(key.turn),
            ),
            None => (
                self.run.child_scope(),
                Turn::new(self.turns.fetch_add(1, Ordering::Relaxed) + 1),
            ),
        };
        let link = Link {
            peer: context.peer.clone(),
            capabilities,
            protocol: context.protocol_version(),
            threshold: Arc::clone(&self.threshold),
            stateless: self.stateless,
            rounds,
            mask: Some(Arc::clone(&self.mask)),
            escalation,
        };
        (run, turn, link)
    }

    /// Runs one call through the executor (under the journal key `at`, when
    /// given), relaying its progress to `route` and cancelling it when the
    /// request is cancelled; its tools' `McpPeer`s reach the client of
    /// `context`.
    async fn execute(
        &self,
        call: ToolCall,
        context: &RequestContext<RoleServer>,
        capabilities: Option<ClientCapabilities>,
        mut route: Option<Route>,
        rounds: Option<Arc<Rounds>>,
        at: Option<&CallKey>,
    ) -> ToolResult {
        let (run, turn, link) = self.call_scope(context, capabilities, rounds, None, at);
        let executing = link.scope(self.shared.executor.execute(&run, &turn, call));
        tokio::pin!(executing);
        let mut cancelled = false;
        let result = loop {
            tokio::select! {
                biased;
                result = &mut executing => break result,
                _ = context.ct.cancelled(), if !cancelled => {
                    cancelled = true;
                    run.cancel();
                }
                Some(progress) = next_progress(&mut route) => {
                    if let Some(route) = &mut route {
                        notify(context, route.notification(progress)).await;
                    }
                }
            }
        };
        if let Some(route) = &mut route {
            while let Some(progress) = route.try_next() {
                notify(context, route.notification(progress)).await;
            }
        }
        result
    }
}

/// The executor's id of request `id` in session `number`,
/// `mcp-{number}-{id}`. It is on every call's path, so it is written
/// without the formatting machinery, and on the stack when it fits (an id
/// of up to 23 bytes then costs no allocation).
fn call_id(number: u64, id: &RequestId) -> ToolCallId {
    let mut digits = (itoa::Buffer::new(), itoa::Buffer::new());
    let session = digits.0.format(number);
    let request = match id {
        NumberOrString::Number(n) => digits.1.format(*n),
        NumberOrString::String(s) => s,
    };
    let parts = ["mcp-", session, "-", request];
    let len = parts.iter().map(|part| part.len()).sum::<usize>();
    let mut inline = [0u8; 64];
    if len > inline.len() {
        return ToolCallId::from(parts.concat());
    }
    let mut at = 0;
    for part in parts {
        inline[at..at + part.len()].copy_from_slice(part.as_bytes());
        at += part.len();
    }
    ToolCallId::new(std::str::from_utf8(&inline[..len]).expect("whole strs joined end to end"))
}

/// Sends one progress notification; a closed transport only loses it. The
/// sending future is boxed: inline, it would make every call's future as
/// large as itself, progress or not.
async fn notify(context: &RequestContext<RoleServer>, note: ProgressNotificationParam) {
    let _ = Box::pin(context.peer.notify_progress(note)).await;
}

async fn next_progress(route: &mut Option<Route>) -> Option<tinyagents_tools::events::Progress> {
    match route {
        Some(route) => route.next().await,
        None => std::future::pending().await,
    }
}

impl<S: Shared, C: Shared> ServerHandler for McpSession<S, C> {
    fn get_info(&self) -> ServerConfig {
        self.shared.info.clone()
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        // The whole list is one page, so no cursor names a page of it.
        if request.is_some_and(|r| r.cursor.is_some()) {
            return Err(ErrorData::invalid_params(
                "unknown cursor: `tools/list` gives every tool on one page, without a cursor",
                None,
            ));
        }
        Ok(self.shared.tools.clone())
    }

    /// No resource is served: reading one is `-32602` with the URI in
    /// the error's data (SEP-2164), as for any resource that does not exist.
    async fn read_resource(
        &self,
        request: rmcp::model::ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ReadResourceResponse, ErrorData> {
        Err(ErrorData::invalid_params(
            format!(
                "no resource `{}`: this server serves tools only",
                request.uri
            ),
            Some(serde_json::json!({"uri": request.uri})),
        ))
    }

    /// No prompt is served, though `prompts` is declared (so clients may
    /// list them, empty): getting one is `-32602` with the name in the
    /// error's data, as for any prompt that does not exist, never `-32601`
    /// (which would say the declared capability is absent).
    async fn get_prompt(
        &self,
        request: rmcp::model::GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetPromptResponse, ErrorData> {
        Err(ErrorData::invalid_params(
            format!(
                "no prompt `{}`: this server serves tools only",
                request.name
            ),
            Some(serde_json::json!({"name": request.name})),
        ))
    }

    #[allow(deprecated)] // MCP logging, still in 2025-11-25
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.threshold
            .store(threshold_of(request.level), Ordering::Relaxed);
        Ok(())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        mut context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if let Some(refusal) = context.meta.get(REFUSAL_KEY) {
            return Err(refusal_error(refusal));
        }
        let id = call_id(self.number, &context.id);
        // The screened transports pass the arguments as the text the client
        // sent; others hand them over parsed. MCP makes `arguments` optional:
        // absent reads as `{}`, which the input schema then judges like any
        // other arguments.
        let arguments = match context.meta.remove(ARGUMENTS_KEY) {
            Some(Value::String(text)) => RawArguments::Text(text),
            _ => match arguments_beside(&mut context.extensions) {
                Some(text) => RawArguments::Text(text),
                None => RawArguments::Json(
                    request
                        .arguments
                        .map_or_else(|| Value::Object(Map::new()), Value::Object),
                ),
            },
        };
        let name = CallName::from(request.name);
        let tool = name.as_str();
        // A tool that may run as a task is one for a client that declared
        // the tasks extension; a required one refuses any other client.
        let (support, start) = self.task_declaration(tool);
        let client = context.client_capabilities();
        let tasks_declared = client.as_ref().is_some_and(|c| c.supports_tasks());
        if support == TaskSupport::Required && !tasks_declared {
            return Err(ErrorData::missing_required_client_capability(
                ClientCapabilities::builder().enable_tasks().build(),
            ));
        }
        let as_task = tasks_declared && !support.is_forbidden();
        // A client on 2026-07-28 or later is asked for input in rounds, and
        // the arguments' fingerprint binds a task or a round's state to this
        // call; a call that makes neither has no use for it (left empty).
        let rounds_protocol = context
            .protocol_version()
            .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
        let fingerprint = if as_task || rounds_protocol {
            approval_fingerprint(tool, &arguments_value(&arguments))
        } else {
            String::new()
        };
        if as_task && start == TaskStart::Immediately {
            let new = NewTask {
                tool: tool.to_owned(),
                arguments,
                fingerprint,
                client_capabilities: client,
                answers: Map::new(),
            };
            // Boxed, as the rare paths below: the future of every call is
            // the size of its largest path, and rmcp moves it into a task.
            let record = Box::pin(tasks::create(&self.shared, new)).await?;
            tasks::start(&self.shared, &record, context.peer.clone(), None);
            return Ok(tasks::handle(&record).into());
        }
        // A rounds client's state is opened (refused when it is not this
        // server's, for this call) before anything runs.
        let rounds = if rounds_protocol {
            let opened = Box::pin(self.shared.sealer.open_once(
                tool,
                &fingerprint,
                request.request_state.as_deref(),
                request.input_responses,
            ))
            .await?;
            Some(Arc::new(opened))
        } else {
            None
        };
        let call = ToolCall::new(id.clone(), name.clone(), arguments);
        if let Some(approver) = &self.shared.approver {
            approver.start(&id, &context, rounds.is_some(), self.stateless);
        }
        let result = if as_task {
            // It escalates: it runs here until its body makes it a task.
            let task = NewTask {
                tool: tool.to_owned(),
                arguments: call.arguments.clone(),
                fingerprint: fingerprint.clone(),
                client_capabilities: client,
                answers: Map::new(),
            };
            match Box::pin(self.escalating(call, &context, rounds.clone(), task)).await? {
                Escalated::Task(created) => return Ok(created.into()),
                Escalated::Done(result) => result,
            }
        } else {
            let route = context
                .meta
                .get_progress_token()
                .map(|token| self.shared.relay.route(id.clone(), token));
            match self.waits_in_journal(tool) {
                // Boxed, as the executor's future below.
                Some(journal) => {
                    let fingerprint = if fingerprint.is_empty() {
                        approval_fingerprint(tool, &arguments_value(&call.arguments))
                    } else {
                        fingerprint.clone()
                    };
                    let waiting = self.execute_waiting(
                        journal,
                        &fingerprint,
                        call,
                        &context,
                        client,
                        route,
                        rounds.clone(),
                    );
                    Box::pin(waiting).await
                }
                // Boxed: rmcp moves the request's future into a task of its
                // own, and the executor's future would make every move a
                // large copy.
                None => {
                    Box::pin(self.execute(call, &context, client, route, rounds.clone(), None))
                        .await
                }
            }
        };
        if let Some(approver) = &self.shared.approver {
            approver.finish(&id);
        }
        self.answer(tool, &fingerprint, rounds.as_deref(), result)
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        // Boxed, as the rare paths of `call_tool`: rmcp moves every
        // request's future (the largest of its handlers') into a task.
        Box::pin(tasks::get(
            &self.shared,
            &request.task_id,
            context.peer.clone(),
        ))
        .await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let peer = context.peer.clone();
        Box::pin(tasks::update(
            &self.shared,
            &request.task_id,
            request.input_responses,
            peer,
        ))
        .await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Box::pin(tasks::cancel(&self.shared, &request.task_id)).await
    }
}

/// How a call that may escalate ended in its request.
enum Escalated {
    /// Its body made it a task: the client is answered with the task.
    Task(rmcp::model::CreateTaskResult),
    /// Its body ended without escalating.
    Done(ToolResult),
}

impl<S: Shared, C: Shared> McpSession<S, C> {
    /// The task support of `tool` and where its task begins (an unknown
    /// tool never runs as a task).
    fn task_declaration(&self, tool: &str) -> (TaskSupport, TaskStart) {
        self.shared.executor.registry().resolve(tool).map_or(
            (TaskSupport::Forbidden, TaskStart::Immediately),
            |t| {
                let spec = t.spec();
                (spec.task_support, spec.task_start)
            },
        )
    }

    /// Runs a call declared `escalates` in the background while the
    /// request waits: for its end, or for its body to escalate, which
    /// makes it the task `task` (with the answers gathered so far) and
    /// leaves the body running as that task.
    async fn escalating(
        &self,
        call: ToolCall,
        context: &RequestContext<RoleServer>,
        rounds: Option<Arc<Rounds>>,
        mut task: NewTask,
    ) -> Result<Escalated, ErrorData> {
        let (escalation, asked) = Escalation::new();
        let capabilities = context.client_capabilities();
        let (run, turn, link) = self.call_scope(
            context,
            capabilities,
            rounds.clone(),
            Some(escalation),
            None,
        );
        let mut body = tasks::spawn_body(&self.shared, run, turn, call, link);
        tokio::pin!(asked);
        let mut cancelled = false;
        let created = loop {
            tokio::select! {
                biased;
                result = body.join() => {
                    return result.map(Escalated::Done).map_err(|_| {
                        ErrorData::internal_error("the call stopped without an answer", None)
                    });
                }
                created = &mut asked => match created {
                    Ok(created) => break created,
                    // The body dropped its escalation point: it is ending.
                    Err(_) => {
                        let result = body.join().await;
                        return result.map(Escalated::Done).map_err(|_| {
                            ErrorData::internal_error("the call stopped without an answer", None)
                        });
                    }
                },
                _ = context.ct.cancelled(), if !cancelled => {
                    cancelled = true;
                    body.cancel();
                }
            }
        };
        if let Some(rounds) = &rounds {
            task.answers = rounds.answers().clone();
        }
        match tasks::create(&self.shared, task).await {
            Ok(record) => {
                let _ = created.send(true);
                tasks::spawn_followed(&self.shared, record.task_id.clone(), body);
                Ok(Escalated::Task(tasks::handle(&record)))
            }
            Err(e) => {
                let _ = created.send(false);
                body.cancel();
                Err(e)
            }
        }
    }

    /// The answer to a call that ended in its request: its result, the
    /// input it waits for (with the sealed state of its next round), or
    /// the JSON-RPC error of an unknown tool or a missing capability.
    fn answer(
        &self,
        tool: &str,
        fingerprint: &str,
        rounds: Option<&Rounds>,
        result: ToolResult,
    ) -> Result<CallToolResponse, ErrorData> {
        if let Some(rounds) = rounds {
            if let Some(capability) = rounds.missing() {
                return Err(missing_capability(capability));
            }
            if rounds.asks() {
                // The call did not finish: it waits for the client's input,
                // which the client sends with its next call.
                let state = self.shared.sealer.seal(tool, fingerprint, rounds);
                let asked = rounds.take_asked();
                return Ok(InputRequiredResult::new(Some(asked), Some(state)).into());
            }
        }
        if result
            .error
            .as_ref()
            .is_some_and(|e| matches!(e.kind(), ErrorKind::UnknownTool))
        {
            return Err(ErrorData::invalid_params(result.text(), None));
        }
        let pending = result.approval_id();
        let wrap = self.shared.wraps(&result.message);
        let mut answer = rmcp_result(result.message, self.shared.max_structured_bytes, wrap)
            .map_err(|e| {
                ErrorData::internal_error(format!("the tool result is not valid MCP: {e}"), None)
            })?;
        if let Some(approval) = pending {
            // The call has not run: never a success.
            durable::mark_pending(&mut answer, &approval);
        }
        // Required from protocol 2026-07-28 on; rmcp removes it for a client
        // that negotiated an older version.
        answer.result_type = Some(ResultType::COMPLETE);
        Ok(answer.into())
    }
}

impl<S: Shared, C: Shared> McpSession<S, C> {
    /// The journal a call to `tool` waits in for approval: the executor's,
    /// when the tool needs approval (with a deferred confirmation policy
    /// the call then ends `pending_approval` there).
    fn waits_in_journal(&self, tool: &str) -> Option<&Journal> {
        let journal = self.shared.executor.journal()?;
        let registered = self.shared.executor.registry().resolve(tool)?;
        SafetyItem::Confirmation
            .declared_by(&registered.spec().safety)
            .then_some(journal)
    }

    /// Runs a call that may wait for approval in `journal`: the same call
    /// (tool and arguments, `fingerprint`) in the same scope (this session,
    /// or the client's idempotency key) already waiting is made again under
    /// its journal key, so it finds its approval (and runs once approved);
    /// otherwise it runs as a new call, and an approval it files is noted
    /// for the scope.
    #[allow(clippy::too_many_arguments)]
    async fn execute_waiting(
        &self,
        journal: &Journal,
        fingerprint: &str,
        call: ToolCall,
        context: &RequestContext<RoleServer>,
        capabilities: Option<ClientCapabilities>,
        route: Option<Route>,
        rounds: Option<Arc<Rounds>>,
    ) -> ToolResult {
        let scope = match context.meta.get(durable::IDEMPOTENCY_META_KEY) {
            Some(Value::String(key)) => format!("key:{key}"),
            _ => format!("session:{}", self.token()),
        };
        let waits = durable::Waits::new(journal, &scope, call.name.as_str(), fingerprint);
        let found = match waits.find(journal).await {
            Ok(found) => found,
            Err(e) => return durable::unavailable(&call, &e),
        };
        match found {
            durable::Found::Waiting {
                call: key,
                revision,
            } => {
                let again = ToolCall::new(key.call_id.clone(), call.name, call.arguments);
                let result = self
                    .execute(again, context, capabilities, route, rounds, Some(&key))
                    .await;
                if durable::answered(&result)
                    && let Err(e) = waits.forget(revision).await
                {
                    tracing::warn!(error = %e, "cannot note that a call awaiting approval was answered");
                }
                result
            }
            durable::Found::Nothing { revision } => {
                // Its own id, unique across sessions, instances and restarts.
                let id = ToolCallId::new(format!("mcp-{}-{}", self.token(), context.id));
                let fresh = ToolCall::new(id, call.name, call.arguments);
                let result = self
                    .execute(fresh, context, capabilities, route, rounds, None)
                    .await;
                if let Some(approval) = result.approval_id()
                    && let Err(e) = waits.remember(&approval, revision).await
                {
                    tracing::warn!(error = %e, "cannot note the approval a call awaits");
                }
                result
            }
        }
    }

    /// The session's name in the journal: 32 random hex digits.
    fn token(&self) -> &str {
        self.token.get_or_init(|| {
            let mut bytes = [0u8; 16];
            crate::rounds::fill_random(&mut bytes);
            bytes.iter().map(|b| format!("{b:02x}")).collect()
        })
    }
}

impl<S, C> fmt::Debug for McpSession<S, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpSession")
            .field("number", &self.number)
            .field("run", &self.run)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ClientRequest;
    use rmcp::service::Service;

    /// The size of the future `handler` returns for a session borrowed
    /// for `'a`, without calling it.
    fn future_size<'a, T: 'a, A, B, F, Fut>(_handler: F) -> usize
    where
        F: FnOnce(&'a T, A, B) -> Fut,
    {
        std::mem::size_of::<Fut>()
    }

    /// A server with every handler rmcp provides by default.
    struct Defaults;

    impl ServerHandler for Defaults {}

    #[test]
    fn a_call_s_id_names_its_session_and_request() {
        let long = "é".repeat(40);
        for (number, id, expected) in [
            (0, NumberOrString::Number(7), "mcp-0-7".to_owned()),
            (
                u64::MAX,
                NumberOrString::Number(i64::MIN),
                format!("mcp-{}-{}", u64::MAX, i64::MIN),
            ),
            (
                3,
                NumberOrString::String("q\"1".into()),
                "mcp-3-q\"1".to_owned(),
            ),
            (3, NumberOrString::String("".into()), "mcp-3-".to_owned()),
            (
                12,
                NumberOrString::String(long.as_str().into()),
                format!("mcp-12-{long}"),
            ),
        ] {
            assert_eq!(super::call_id(number, &id).as_str(), expected);
        }
    }

    #[test]
    fn a_request_s_future_is_no_larger_than_a_server_of_rmcp_s_defaults() {
        // rmcp moves each request's future (the largest of its handlers')
        // into a task of its own, copying it on the way: a handler whose
        // future is larger than rmcp's own dispatch makes every request,
        // `tools/call` included, copy that much more. The task handlers'
        // futures held the journal's and were 1.8 times the size.
        type Session = McpSession<(), ()>;
        type Context = RequestContext<RoleServer>;
        let ours = future_size::<Session, ClientRequest, Context, _, _>(
            <Session as Service<RoleServer>>::handle_request,
        );
        let defaults = future_size::<Defaults, ClientRequest, Context, _, _>(
            <Defaults as Service<RoleServer>>::handle_request,
        );
        assert!(
            ours <= defaults,
            "a request's future is {ours} bytes, rmcp's defaults' {defaults}"
        );
        // Each handler's own future, well under rmcp's dispatch, so that a
        // handler that grows is named before it makes the request's grow.
        macro_rules! handler {
            ($params:ty, $name:ident) => {
                (
                    stringify!($name),
                    future_size::<Session, $params, Context, _, _>(
                        <Session as ServerHandler>::$name,
                    ),
                )
            };
        }
        for (handler, size) in [
            handler!(CallToolRequestParams, call_tool),
            handler!(GetTaskParams, get_task),
            handler!(UpdateTaskParams, update_task),
            handler!(CancelTaskParams, cancel_task),
        ] {
            assert!(
                size < defaults / 2,
                "{handler}'s future is {size} bytes, rmcp's dispatch {defaults}"
            );
        }
    }
}
