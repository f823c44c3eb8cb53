//! An agent loop against any OpenAI-compatible endpoint, streamed or not,
//! with the tools declared natively or written as text.
//!
//! Each turn sends the conversation and the advertised tools, reads the
//! model's calls, runs them through the executor (which refuses a call to a
//! tool that was not advertised, validates arguments and answers every call
//! id once) and sends the answers back. The loop ends when the model answers
//! without calling a tool, when a call fails with a fatal error, when the
//! stream breaks, or after [`AgentConfig::max_turns`] requests. The modes:
//!
//! - **Chat Completions, streamed** (the default): `stream: true`; the
//!   reply's server-sent events are read by the library's assembler
//!   ([`NativeReader`]) as they arrive, the text is handed on as it comes
//!   ([`AgentEvent::Output`]), and each call starts the moment its
//!   arguments close ([`execute_streamed`]), while the model is still
//!   writing the next one. The assistant message that goes back holds the
//!   calls as they were assembled;
//! - **Chat Completions, whole** ([`AgentConfig::stream`] off): the reply's
//!   `tool_calls` are read at once and run as a batch
//!   ([`ToolExecutor::execute_batch`]); the assistant message goes back as
//!   sent;
//! - **a text format** ([`AgentConfig::text_format`]): for a model served
//!   raw, without a tool parser. Each turn POSTs `/completions` with a
//!   prompt in the family's chat template ([`TextPrompt`]: the format's
//!   instruction, the conversation, the tool results in the family's form)
//!   and reads the calls out of the text with the format's [`TextReader`],
//!   streamed (through [`CompletionReader`] and [`execute_streamed`]) or
//!   whole.
//!
//! In every mode a call whose arguments cannot be read, or that the end of
//! the output cut off, never runs: it is answered, by its id, with a
//! classified error saying so, and the other calls of the turn go on.

mod cli;
mod client;
mod completion;
mod prompt;

use std::convert::Infallible;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tinyagents_tools::call::{RawArguments, ToolCall};
use tinyagents_tools::ids::ToolCallId;
use tinyagents_tools::providers::openai::{chat_tool_message, parse_chat_tool_calls};
use tinyagents_tools::providers::{
    CallParseError, ExportCache, ExportError, ExportTarget, OpenAiOptions,
};
use tinyagents_tools::spec::ToolSpec;
use tinyagents_tools::stream::native::{NativeFormat, NativeOptions, NativeReader};
use tinyagents_tools::stream::text::{DEFAULT_ID_PREFIX, TextFormat, TextReader};
use tinyagents_tools::stream::{
    FailedCall, ModelOutput, OutputPart, StreamEvent, StreamLimits, TruncatedCall, execute_streamed,
};
use tinyagents_tools::{ErrorClass, RunContext, Secret, ToolExecutor, ToolResult, Turn};

pub use cli::{CliError, Invocation, USAGE, cli, write_report};
pub use client::{ApiClient, ApiKey, ClientError, Endpoint, MAX_ERROR_BODY};
pub use completion::CompletionReader;
pub use prompt::{TextPrompt, TextTurn};

/// Where a Chat Completions reply holds the assistant message.
const MESSAGE: &str = "/choices/0/message";

/// The endpoint used when `OPENAI_BASE_URL` is not set.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// Where a Completions reply holds the model's text.
const COMPLETION_TEXT: &str = "/choices/0/text";

/// Where to send requests, in which mode, and how long the loop may go on.
#[derive(Debug)]
pub struct AgentConfig {
    /// The API root, without `/chat/completions` or `/completions`.
    pub base_url: String,
    /// The bearer token; `None` for local servers that take none.
    pub api_key: Option<Secret<ApiKey>>,
    /// The model name.
    pub model: String,
    /// The most requests one run makes (default 8).
    pub max_turns: u32,
    /// Strict function schemas. OpenAI does not combine them with parallel
    /// tool calls, so strict requests send `parallel_tool_calls: false`.
    /// Off by default: the executor validates every call anyway.
    pub strict: bool,
    /// The system message, if any.
    pub system_prompt: Option<String>,
    /// The timeout of one request (default 120 s); a streamed request's
    /// covers the whole stream.
    pub request_timeout: Duration,
    /// Stream the replies (`stream: true`; on by default): text is handed
    /// on as it arrives and calls start as their arguments close.
    pub stream: bool,
    /// Run against the raw Completions endpoint with the model writing its
    /// calls as text in this format, instead of Chat Completions with
    /// declared tools. `None` by default.
    pub text_format: Option<TextFormat>,
    /// The most tokens one Completions request asks for (default 2048;
    /// the endpoint's own default, 16 tokens, would cut every call short).
    /// Not sent to Chat Completions.
    pub max_tokens: u32,
}

impl AgentConfig {
    /// A configuration for `model` at `base_url` with the defaults above.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        AgentConfig {
            base_url: base_url.into(),
            api_key: None,
            model: model.into(),
            max_turns: 8,
            strict: false,
            system_prompt: Some(
                "You are a helpful assistant. Use the tools when they help; answer briefly.".into(),
            ),
            request_timeout: Duration::from_secs(120),
            stream: true,
            text_format: None,
            max_tokens: 2048,
        }
    }
}

/// Why a run stopped early, or could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    /// An advertised name is not a registered tool (the agent cannot start).
    #[error("`{0}` is advertised but is not a registered tool")]
    UnknownTool(String),
    /// An advertised tool cannot be declared to OpenAI (the agent cannot
    /// start).
    #[error("a tool cannot be declared: {0}")]
    Export(#[from] ExportError),
    /// A request failed, or the client could not be built.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// The reply has no `choices[0].message`, or its `tool_calls` are malformed.
    #[error("the reply is not a Chat Completions response: {0}")]
    Protocol(#[from] CallParseError),
    /// A Completions reply has no `choices[0].text`.
    #[error("the reply is not a Completions response: `/choices/0/text` is missing")]
    NoCompletionText,
}

/// Why a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    /// The model answered without calling a tool.
    Answered,
    /// The model still called tools after the last allowed turn.
    MaxTurns,
    /// A call failed with a fatal error; the loop does not ask the model to
    /// go on.
    FatalToolError {
        /// The call.
        call_id: String,
        /// Its error kind (`timeout`, `panicked`, ...).
        kind: &'static str,
    },
    /// The streamed reply broke off (the connection was lost or timed
    /// out). The calls that had started ran to their end and are in the
    /// trace; those still open were cut off and answered so.
    StreamBroken {
        /// What broke it.
        error: String,
    },
}

/// What a run tells its caller as it goes.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum AgentEvent<'a> {
    /// A piece of a streamed reply, as the reader told it: text to show as
    /// it comes, reasoning, a call that started, became ready (it starts
    /// now), failed or was cut off, a problem with the stream.
    Output(&'a StreamEvent),
    /// A call was answered (after its turn's calls have all run).
    Answered(&'a TraceEntry),
}

/// One tool call of a run, as the model made it and as it was answered.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceEntry {
    /// The turn (1 for the first request).
    pub turn: u32,
    /// The provider's call id.
    pub call_id: String,
    /// The tool name as called.
    pub tool: String,
    /// The arguments as the model sent them.
    pub arguments: String,
    /// The error kind, when the call failed or was refused.
    pub error: Option<&'static str>,
    /// What the model was sent back (bounded and redacted by the executor).
    pub answer: String,
}

/// What a run produced.
#[derive(Debug, Clone)]
pub struct AgentOutcome {
    /// The model's final text, when it answered.
    pub answer: Option<String>,
    /// Why the run ended.
    pub stop: StopReason,
    /// How many requests were made.
    pub turns: u32,
    /// Every tool call, in order.
    pub trace: Vec<TraceEntry>,
    /// The whole conversation, as it would be sent next (Chat
    /// Completions; empty in a text format's run).
    pub messages: Vec<Value>,
    /// The prompt as it would be sent next (a text format's run).
    pub prompt: Option<String>,
}

/// An agent: a client, an executor and the tools advertised to the model.
pub struct Agent<S = (), C = ()> {
    client: ApiClient,
    executor: Arc<ToolExecutor<S, C>>,
    config: AgentConfig,
    advertised: Vec<String>,
    exports: ExportCache,
}

impl<S, C> Agent<S, C>
where
    S: Send + Sync + 'static,
    C: Send + Sync + 'static,
{
    /// An agent that advertises every tool of `executor`'s registry.
    pub fn new(config: AgentConfig, executor: Arc<ToolExecutor<S, C>>) -> Result<Self, AgentError> {
        let client = ApiClient::new(
            &config.base_url,
            config.api_key.clone(),
            config.request_timeout,
        )?;
        let advertised = executor
            .registry()
            .specs()
            .map(|s| s.name.to_string())
            .collect();
        let agent = Agent {
            client,
            executor,
            config,
            advertised,
            exports: ExportCache::new(),
        };
        agent.declarations()?;
        Ok(agent)
    }

    /// Advertises only the tools named; a call to any other is refused by
    /// the executor as `not_advertised`.
    pub fn advertising<I, N>(mut self, names: I) -> Result<Self, AgentError>
    where
        I: IntoIterator<Item = N>,
        N: Into<String>,
    {
        self.advertised = names.into_iter().map(Into::into).collect();
        self.declarations()?;
        Ok(self)
    }

    /// The names of the advertised tools.
    pub fn advertised(&self) -> &[String] {
        &self.advertised
    }

    /// The request's `tools` value. Fails on the first tool OpenAI cannot
    /// take, rather than silently advertising fewer tools.
    fn declarations(&self) -> Result<Value, AgentError> {
        let registry = self.executor.registry();
        let specs = self
            .advertised
            .iter()
            .map(|name| {
                registry
                    .get(name)
                    .map(|t| t.spec())
                    .ok_or_else(|| AgentError::UnknownTool(name.clone()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let target = ExportTarget::OpenAiChat(OpenAiOptions {
            strict: self.config.strict,
        });
        let mut exported = self.exports.export_declarations(target, specs);
        if !exported.errors.is_empty() {
            return Err(exported.errors.swap_remove(0).into());
        }
        Ok(exported.request_tools())
    }

    fn request(&self, messages: &[Value], tools: &Value) -> Value {
        let mut body = json!({
            "model": self.config.model,
            "messages": messages,
        });
        if self.config.stream {
            body["stream"] = json!(true);
        }
        if tools.as_array().is_some_and(|t| !t.is_empty()) {
            body["tools"] = tools.clone();
            body["tool_choice"] = json!("auto");
            if self.config.strict {
                body["parallel_tool_calls"] = json!(false);
            }
        }
        body
    }

    /// Runs the loop for one user `prompt` in `run`.
    pub async fn run(&self, run: &RunContext<C>, prompt: &str) -> Result<AgentOutcome, AgentError> {
        self.run_with(run, prompt, &mut |_| {}).await
    }

    /// Runs the loop for one user `prompt` in `run`, telling `on_event`
    /// what happens as it happens: the streamed output as it arrives, and
    /// each call's answer.
    pub async fn run_with(
        &self,
        run: &RunContext<C>,
        prompt: &str,
        on_event: &mut dyn FnMut(AgentEvent<'_>),
    ) -> Result<AgentOutcome, AgentError> {
        match &self.config.text_format {
            None => self.chat_loop(run, prompt, on_event).await,
            Some(format) => self.text_loop(run, prompt, format, on_event).await,
        }
    }

    /// The turns against Chat Completions.
    async fn chat_loop(
        &self,
        run: &RunContext<C>,
        prompt: &str,
        on_event: &mut dyn FnMut(AgentEvent<'_>),
    ) -> Result<AgentOutcome, AgentError> {
        let mut messages = Vec::new();
        if let Some(system) = &self.config.system_prompt {
            messages.push(json!({"role": "system", "content": system}));
        }
        messages.push(json!({"role": "user", "content": prompt}));
        let mut trace = Vec::new();
        let tools = self.declarations()?;
        let outcome = |answer, stop, turns, trace, messages| AgentOutcome {
            answer,
            stop,
            turns,
            trace,
            messages,
            prompt: None,
        };

        for turn_index in 1..=self.config.max_turns {
            let body = self.request(&messages, &tools);
            let turn = Turn::new(turn_index).advertising(self.advertised.iter().cloned());
            let (results, arguments) = if self.config.stream {
                let pieces = self.client.stream(Endpoint::Chat, &body).await?;
                let options = NativeOptions {
                    limits: StreamLimits::from(self.executor.config()),
                    turn: turn_index,
                    ..NativeOptions::default()
                };
                let reader = NativeReader::with_options(NativeFormat::OpenAiChat, options);
                let streamed =
                    execute_streamed(&self.executor, run, &turn, reader, pieces, |event| {
                        on_event(AgentEvent::Output(event))
                    })
                    .await;
                let calls = answerable_calls(&streamed.output);
                let text = streamed.output.text();
                if calls.is_empty() && streamed.error.is_none() {
                    messages.push(json!({"role": "assistant", "content": text}));
                    return Ok(outcome(
                        Some(text),
                        StopReason::Answered,
                        turn_index,
                        trace,
                        messages,
                    ));
                }
                // The assistant message as the stream assembled it; a call
                // that cannot run goes back with its arguments only when
                // they are JSON (servers that render the history through a
                // chat template parse them), answered by its error.
                if calls.is_empty() {
                    messages.push(json!({"role": "assistant", "content": text}));
                } else {
                    messages.push(json!({
                    "role": "assistant",
                    "content": if text.is_empty() { Value::Null } else { Value::String(text) },
                    "tool_calls": calls.iter().map(|(call, _)| json!({
                        "id": call.id.as_str(),
                        "type": "function",
                        "function": {"name": call.name.as_str(), "arguments": raw_text(&call.arguments)},
                    })).collect::<Vec<_>>(),
                    }));
                }
                if let Some(error) = streamed.error {
                    let stop = self.answer(
                        turn_index,
                        &streamed.results,
                        &calls,
                        &mut messages,
                        &mut trace,
                        on_event,
                    );
                    let stop = stop.unwrap_or(StopReason::StreamBroken {
                        error: error.to_string(),
                    });
                    return Ok(outcome(None, stop, turn_index, trace, messages));
                }
                (streamed.results, calls)
            } else {
                let reply = self.client.complete(Endpoint::Chat, &body).await?;
                // The library reads the calls (and checks `choices[0].message`
                // when `choices` is there); the loop also needs the message's text.
                let calls = parse_chat_tool_calls(&reply)?;
                let Some(message) = reply.pointer(MESSAGE) else {
                    let pointer = MESSAGE.into();
                    return Err(CallParseError::Missing { pointer }.into());
                };
                let content = message.get("content").and_then(Value::as_str);
                if calls.is_empty() {
                    let answer = content
                        .or_else(|| message.get("refusal").and_then(Value::as_str))
                        .unwrap_or_default()
                        .to_owned();
                    messages.push(json!({"role": "assistant", "content": answer}));
                    return Ok(outcome(
                        Some(answer),
                        StopReason::Answered,
                        turn_index,
                        trace,
                        messages,
                    ));
                }
                // The assistant message goes back as sent (its tool calls are what
                // the tool messages answer), without response-only fields.
                messages.push(json!({
                    "role": "assistant",
                    "content": content,
                    "tool_calls": message["tool_calls"],
                }));
                let arguments = calls
                    .iter()
                    .map(|c| (c.clone(), raw_text(&c.arguments)))
                    .collect();
                (
                    self.executor.execute_batch(run, &turn, calls).await,
                    arguments,
                )
            };
            if let Some(stop) = self.answer(
                turn_index,
                &results,
                &arguments,
                &mut messages,
                &mut trace,
                on_event,
            ) {
                return Ok(outcome(None, stop, turn_index, trace, messages));
            }
        }
        Ok(outcome(
            None,
            StopReason::MaxTurns,
            self.config.max_turns,
            trace,
            messages,
        ))
    }

    /// Appends one `role: tool` message per answer (Chat Completions only:
    /// `messages` is left alone when it is empty), traces the answers, and
    /// returns the stop reason when one of them is a fatal error.
    fn answer(
        &self,
        turn_index: u32,
        results: &[ToolResult],
        calls: &[(ToolCall, String)],
        messages: &mut Vec<Value>,
        trace: &mut Vec<TraceEntry>,
        on_event: &mut dyn FnMut(AgentEvent<'_>),
    ) -> Option<StopReason> {
        let mut fatal = None;
        for result in results {
            let message = chat_tool_message(result);
            if !messages.is_empty() {
                messages.push(message.clone());
            }
            let error = result.error.as_ref().filter(|_| result.is_error);
            if let Some(e) = error
                && e.class() == ErrorClass::Fatal
                && fatal.is_none()
            {
                fatal = Some(StopReason::FatalToolError {
                    call_id: result.tool_call_id.to_string(),
                    kind: e.kind().as_str(),
                });
            }
            let arguments = calls
                .iter()
                .find(|(call, _)| call.id == result.tool_call_id)
                .map(|(_, raw)| raw.clone())
                .unwrap_or_default();
            let entry = TraceEntry {
                turn: turn_index,
                call_id: result.tool_call_id.to_string(),
                tool: result.name.to_string(),
                arguments,
                error: error.map(|e| e.kind().as_str()),
                answer: message_text(&message),
            };
            on_event(AgentEvent::Answered(&entry));
            trace.push(entry);
        }
        fatal
    }

    /// The advertised tools' specs, in the advertised order.
    fn advertised_specs(&self) -> Result<Vec<ToolSpec>, AgentError> {
        let registry = self.executor.registry();
        self.advertised
            .iter()
            .map(|name| {
                registry
                    .get(name)
                    .map(|t| t.spec().clone())
                    .ok_or_else(|| AgentError::UnknownTool(name.clone()))
            })
            .collect()
    }

    /// The turns against the Completions endpoint, the calls written as
    /// text in `format`.
    async fn text_loop(
        &self,
        run: &RunContext<C>,
        prompt: &str,
        format: &TextFormat,
        on_event: &mut dyn FnMut(AgentEvent<'_>),
    ) -> Result<AgentOutcome, AgentError> {
        let specs = self.advertised_specs()?;
        let mut transcript = TextPrompt::new(
            format.clone(),
            self.config.system_prompt.clone(),
            &specs,
            prompt,
        );
        let mut trace = Vec::new();
        let outcome = |answer, stop, turns, trace, transcript: &TextPrompt| AgentOutcome {
            answer,
            stop,
            turns,
            trace,
            messages: Vec::new(),
            prompt: Some(transcript.render()),
        };
        let limits = StreamLimits::from(self.executor.config());

        for turn_index in 1..=self.config.max_turns {
            let mut body = json!({
                "model": self.config.model,
                "prompt": transcript.render(),
                "max_tokens": self.config.max_tokens,
                "stop": transcript.stop(),
            });
            if format.special_tokens {
                // The markers are special tokens: a server that drops them
                // from the text (vLLM's and SGLang's default) would hide
                // every call.
                body["skip_special_tokens"] = json!(false);
            }
            let turn = Turn::new(turn_index).advertising(self.advertised.iter().cloned());
            let reader: TextReader = format
                .reader(&specs)
                .for_turn(turn_index)
                .with_limits(limits);
            let on_output = |event: &StreamEvent| on_event(AgentEvent::Output(event));
            let (streamed, raw) = if self.config.stream {
                body["stream"] = json!(true);
                let pieces = self.client.stream(Endpoint::Completions, &body).await?;
                let mut reader = CompletionReader::new(reader);
                let streamed =
                    execute_streamed(&self.executor, run, &turn, &mut reader, pieces, on_output)
                        .await;
                let raw = reader.raw().to_owned();
                ((streamed.output, streamed.results, streamed.error), raw)
            } else {
                let reply = self.client.complete(Endpoint::Completions, &body).await?;
                let text = reply
                    .pointer(COMPLETION_TEXT)
                    .and_then(Value::as_str)
                    .ok_or(AgentError::NoCompletionText)?
                    .to_owned();
                let pieces = futures_util::stream::iter([Ok::<_, Infallible>(text.clone())]);
                let streamed =
                    execute_streamed(&self.executor, run, &turn, reader, pieces, on_output).await;
                // A stream of one ready piece cannot fail.
                let error: Option<ClientError> = streamed.error.map(|e| match e {});
                ((streamed.output, streamed.results, error), text)
            };
            let (output, results, error) = streamed;
            let (results, calls) = in_place_answers(&output, results, turn_index);
            let called = !calls.is_empty();
            transcript.push(TextTurn {
                output: raw,
                called,
                results: results.clone(),
            });
            if !called && error.is_none() {
                let answer = output.text().trim().to_owned();
                return Ok(outcome(
                    Some(answer),
                    StopReason::Answered,
                    turn_index,
                    trace,
                    &transcript,
                ));
            }
            let stop = self.answer(
                turn_index,
                &results,
                &calls,
                &mut Vec::new(),
                &mut trace,
                on_event,
            );
            if let Some(stop) = stop.or_else(|| {
                error.map(|e| StopReason::StreamBroken {
                    error: e.to_string(),
                })
            }) {
                return Ok(outcome(None, stop, turn_index, trace, &transcript));
            }
        }
        Ok(outcome(
            None,
            StopReason::MaxTurns,
            self.config.max_turns,
            trace,
            &transcript,
        ))
    }
}

impl<S, C> fmt::Debug for Agent<S, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Agent")
            .field("client", &self.client)
            .field("config", &self.config)
            .field("advertised", &self.advertised)
            .finish_non_exhaustive()
    }
}

/// Every call of `output` that gets an answer (one with an id and a name),
/// in order, with its arguments as the model wrote them (see
/// [`answerable_call`]).
fn answerable_calls(output: &ModelOutput) -> Vec<(ToolCall, String)> {
    output.parts.iter().filter_map(answerable_call).collect()
}

/// The call `part` is, when it gets an answer (it has an id and a name),
/// with its arguments as the model wrote them: a ready call's, or the raw
/// text of one that failed or was cut off. A call that did not come ready
/// carries, as its arguments, its raw text when that is JSON and `{}`
/// otherwise.
fn answerable_call(part: &OutputPart) -> Option<(ToolCall, String)> {
    let (id, name, raw) = match part {
        OutputPart::Call(call) => return Some((call.clone(), raw_text(&call.arguments))),
        OutputPart::Failed(f) => (f.id.clone()?, f.name.clone()?, &f.raw),
        OutputPart::Truncated(t) => (t.id.clone()?, t.name.clone()?, &t.raw),
        _ => return None,
    };
    let json = if serde_json::from_str::<Value>(raw).is_ok() {
        raw.clone()
    } else {
        "{}".to_owned()
    };
    Some((ToolCall::new(id, name, json), raw.clone()))
}

/// The name given to a call whose name could not be read, in the answer
/// that holds its place.
const UNREADABLE_NAME: &str = "unreadable_call";

/// The answers of a text format's turn, one per call the model wrote, in
/// order, with the calls they answer (as [`answerable_calls`] gives them).
///
/// Text formats answer calls by position (Hermes' `<tool_response>` blocks
/// follow the calls in order), so a call that failed before its name could
/// be read (its JSON broken before the reader could tell the name) still
/// gets an answer in its place: its refusal, under the id the reader gives
/// calls of this turn (`text-call-<turn>-<index>`) and the name
/// [`UNREADABLE_NAME`]. Without it the answer to the next call would be
/// read as this one's.
fn in_place_answers(
    output: &ModelOutput,
    results: Vec<ToolResult>,
    turn: u32,
) -> (Vec<ToolResult>, Vec<(ToolCall, String)>) {
    let mut given = results.into_iter();
    let mut answers = Vec::new();
    let mut calls = Vec::new();
    let id = |index: Option<usize>, position: usize| -> ToolCallId {
        format!("{DEFAULT_ID_PREFIX}{turn}-{}", index.unwrap_or(position)).into()
    };
    let positioned = output.parts.iter().filter(|p| {
        matches!(
            p,
            OutputPart::Call(_) | OutputPart::Failed(_) | OutputPart::Truncated(_)
        )
    });
    for (position, part) in positioned.enumerate() {
        let made = match part {
            OutputPart::Failed(f) if f.id.is_none() || f.name.is_none() => {
                // A call with an id was answered by the streamed turn (with
                // an empty name): this answer, under the readable name,
                // takes its place.
                if f.id.is_some() {
                    given.next();
                }
                FailedCall {
                    id: Some(f.id.clone().unwrap_or_else(|| id(f.index, position))),
                    name: Some(f.name.clone().unwrap_or_else(|| UNREADABLE_NAME.into())),
                    ..f.clone()
                }
                .answer()
            }
            OutputPart::Truncated(t) if t.id.is_none() || t.name.is_none() => {
                if t.id.is_some() {
                    given.next();
                }
                TruncatedCall {
                    id: Some(t.id.clone().unwrap_or_else(|| id(t.index, position))),
                    name: Some(t.name.clone().unwrap_or_else(|| UNREADABLE_NAME.into())),
                    ..t.clone()
                }
                .answer()
            }
            _ => None,
        };
        let answer = match made {
            Some(made) => {
                let raw = match part {
                    OutputPart::Failed(f) => f.raw.clone(),
                    OutputPart::Truncated(t) => t.raw.clone(),
                    _ => String::new(),
                };
                let call = ToolCall::new(made.tool_call_id.clone(), made.name.clone(), "{}");
                calls.push((call, raw));
                made
            }
            None => {
                let (Some(call), Some(given)) = (answerable_call(part), given.next()) else {
                    break;
                };
                calls.push(call);
                given
            }
        };
        answers.push(answer);
    }
    (answers, calls)
}

fn raw_text(arguments: &RawArguments) -> String {
    match arguments {
        RawArguments::Text(text) => text.clone(),
        RawArguments::Json(value) => value.to_string(),
    }
}

fn message_text(message: &Value) -> String {
    message["content"].as_str().unwrap_or_default().to_owned()
}
