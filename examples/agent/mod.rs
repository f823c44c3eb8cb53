//! An agent loop against any OpenAI-compatible Chat Completions endpoint.
//!
//! Each turn sends the conversation and the advertised tools' declarations
//! (exported by `tinyagents_tools::providers`), reads the reply's
//! `tool_calls`, runs them through [`ToolExecutor::execute_batch`] (which
//! refuses a call to a tool that was not advertised, validates arguments and
//! answers every call id once) and appends one `role: tool` message per
//! result. The loop ends when the model answers without tool calls, when a
//! call fails with a fatal error, or after [`AgentConfig::max_turns`]
//! requests.

mod cli;
mod client;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tinyagents_tools::call::RawArguments;
use tinyagents_tools::providers::openai::{chat_tool_message, parse_chat_tool_calls};
use tinyagents_tools::providers::{
    CallParseError, ExportCache, ExportError, ExportTarget, OpenAiOptions,
};
use tinyagents_tools::{ErrorClass, RunContext, Secret, ToolExecutor, Turn};

pub use cli::{CliError, Invocation, cli, write_report};
pub use client::{ApiKey, ChatClient, ClientError, MAX_ERROR_BODY};

/// Where a Chat Completions reply holds the assistant message.
const MESSAGE: &str = "/choices/0/message";

/// The endpoint used when `OPENAI_BASE_URL` is not set.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// Where to send requests and how long the loop may go on.
#[derive(Debug)]
pub struct AgentConfig {
    /// The API root, without `/chat/completions`.
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
    /// The timeout of one request (default 120 s).
    pub request_timeout: Duration,
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
    /// The whole conversation, as it would be sent next.
    pub messages: Vec<Value>,
}

/// An agent: a client, an executor and the tools advertised to the model.
pub struct Agent<S = (), C = ()> {
    client: ChatClient,
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
        let client = ChatClient::new(
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
        let mut messages = Vec::new();
        if let Some(system) = &self.config.system_prompt {
            messages.push(json!({"role": "system", "content": system}));
        }
        messages.push(json!({"role": "user", "content": prompt}));
        let mut trace = Vec::new();
        let tools = self.declarations()?;

        for turn_index in 1..=self.config.max_turns {
            let reply = self
                .client
                .complete(&self.request(&messages, &tools))
                .await?;
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
                return Ok(AgentOutcome {
                    answer: Some(answer),
                    stop: StopReason::Answered,
                    turns: turn_index,
                    trace,
                    messages,
                });
            }
            // The assistant message goes back as sent (its tool calls are what
            // the tool messages answer), without response-only fields.
            messages.push(json!({
                "role": "assistant",
                "content": content,
                "tool_calls": message["tool_calls"],
            }));

            let turn = Turn::new(turn_index).advertising(self.advertised.iter().cloned());
            let arguments: Vec<String> = calls.iter().map(|c| raw_text(&c.arguments)).collect();
            let results = self.executor.execute_batch(run, &turn, calls).await;
            let mut fatal = None;
            for (result, arguments) in results.iter().zip(arguments) {
                messages.push(chat_tool_message(result));
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
                trace.push(TraceEntry {
                    turn: turn_index,
                    call_id: result.tool_call_id.to_string(),
                    tool: result.name.to_string(),
                    arguments,
                    error: error.map(|e| e.kind().as_str()),
                    answer: message_text(&chat_tool_message(result)),
                });
            }
            if let Some(stop) = fatal {
                return Ok(AgentOutcome {
                    answer: None,
                    stop,
                    turns: turn_index,
                    trace,
                    messages,
                });
            }
        }
        Ok(AgentOutcome {
            answer: None,
            stop: StopReason::MaxTurns,
            turns: self.config.max_turns,
            trace,
            messages,
        })
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

fn raw_text(arguments: &RawArguments) -> String {
    match arguments {
        RawArguments::Text(text) => text.clone(),
        RawArguments::Json(value) => value.to_string(),
    }
}

fn message_text(message: &Value) -> String {
    message["content"].as_str().unwrap_or_default().to_owned()
}
