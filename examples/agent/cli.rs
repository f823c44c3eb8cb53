//! The `openai_agent` command line: configuration from the environment and
//! arguments, and the printed report.

use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::Arc;

use tinyagents_tools::ToolExecutor;
use tinyagents_tools::spec::SafetyItem;
use tinyagents_tools::stream::StreamEvent;
use tinyagents_tools::stream::text::{TextFormat, UnknownFormat};

use super::{
    Agent, AgentConfig, AgentEvent, AgentOutcome, ApiKey, DEFAULT_BASE_URL, StopReason, TraceEntry,
};
use crate::{NoteBook, quickstart_registry, quickstart_run};

/// How to call the example.
pub const USAGE: &str = "\
usage: openai_agent [--model NAME] [--max-turns N] [--strict] [--workspace DIR]
                    [--no-stream] [--text-format FORMAT [--max-tokens N]] PROMPT...
       openai_agent --help

Streams each reply (stream: true): the text is printed as it arrives, each
call starts the moment its arguments close, and its answer is printed when
the turn's calls are done.

options:
  --model NAME          the model (default: OPENAI_MODEL)
  --max-turns N         the most requests, 1 to 100 (default 8)
  --strict              strict function schemas (no parallel calls)
  --workspace DIR       the directory read_file may read (default .)
  --no-stream           wait for each whole reply; print the calls and the
                        answer at the end
  --text-format FORMAT  a model served raw: POST {base}/completions with a
                        prompt in the family's chat template and read the
                        calls out of the text. FORMAT is one of hermes,
                        qwen3-coder, glm45, llama3-json, pythonic, mistral,
                        mistral-v11, deepseek-v3, deepseek-v31, kimi-k2,
                        harmony, or tags:START,END
  --max-tokens N        the most tokens one completion asks for (default 2048)

environment:
  OPENAI_BASE_URL  the API root (default https://api.openai.com/v1)
  OPENAI_API_KEY   the bearer token (optional for local servers)
  OPENAI_MODEL     the model, unless --model is given";

/// The longest argument or answer text shown in one trace line.
const TRACE_WIDTH: usize = 160;

/// What the command line asked for.
#[derive(Debug)]
pub struct Invocation {
    /// Endpoint, key, model and limits.
    pub config: AgentConfig,
    /// The user's prompt.
    pub prompt: String,
    /// The directory `read_file` is confined to.
    pub workspace: PathBuf,
}

/// A command line that cannot be run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CliError {
    /// No prompt was given.
    #[error("no prompt given")]
    MissingPrompt,
    /// Neither `--model` nor `OPENAI_MODEL` names a model.
    #[error("no model: pass --model NAME or set OPENAI_MODEL")]
    MissingModel,
    /// A flag needs a value and got none.
    #[error("`{0}` needs a value")]
    MissingValue(&'static str),
    /// `--max-turns` is not a positive number.
    #[error("--max-turns must be a number from 1 to 100, not `{0}`")]
    BadMaxTurns(String),
    /// `--max-tokens` is not a positive number.
    #[error("--max-tokens must be a number from 1 to 1000000, not `{0}`")]
    BadMaxTokens(String),
    /// `--text-format` names no text format.
    #[error("--text-format: {0}")]
    BadTextFormat(#[from] UnknownFormat),
    /// `--strict` describes declared tools; a text format declares none.
    #[error("--strict applies to declared tools, not to --text-format")]
    StrictText,
    /// An unknown flag.
    #[error("unknown option `{0}`")]
    UnknownFlag(String),
}

impl Invocation {
    /// Reads the arguments (without the program name) and the environment
    /// (`env` looks a variable up).
    pub fn parse(
        args: impl IntoIterator<Item = String>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, CliError> {
        let set = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        let mut model = set("OPENAI_MODEL");
        let mut max_turns = None;
        let mut strict = false;
        let mut stream = true;
        let mut text_format = None;
        let mut max_tokens = None;
        let mut workspace = PathBuf::from(".");
        let mut words = Vec::new();
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--model" => model = Some(args.next().ok_or(CliError::MissingValue("--model"))?),
                "--max-turns" => {
                    let value = args.next().ok_or(CliError::MissingValue("--max-turns"))?;
                    match value.parse::<u32>() {
                        Ok(n @ 1..=100) => max_turns = Some(n),
                        _ => return Err(CliError::BadMaxTurns(value)),
                    }
                }
                "--strict" => strict = true,
                "--no-stream" => stream = false,
                "--text-format" => {
                    let name = args.next().ok_or(CliError::MissingValue("--text-format"))?;
                    text_format = Some(TextFormat::by_name(&name)?);
                }
                "--max-tokens" => {
                    let value = args.next().ok_or(CliError::MissingValue("--max-tokens"))?;
                    match value.parse::<u32>() {
                        Ok(n @ 1..=1_000_000) => max_tokens = Some(n),
                        _ => return Err(CliError::BadMaxTokens(value)),
                    }
                }
                "--workspace" => {
                    workspace = args
                        .next()
                        .ok_or(CliError::MissingValue("--workspace"))?
                        .into()
                }
                "--" => words.extend(args.by_ref()),
                flag if flag.starts_with("--") => return Err(CliError::UnknownFlag(arg)),
                _ => words.push(arg),
            }
        }
        let prompt = words.join(" ");
        if prompt.trim().is_empty() {
            return Err(CliError::MissingPrompt);
        }
        if strict && text_format.is_some() {
            return Err(CliError::StrictText);
        }
        let model = model.ok_or(CliError::MissingModel)?;
        let base_url = set("OPENAI_BASE_URL").unwrap_or_else(|| DEFAULT_BASE_URL.to_owned());
        let mut config = AgentConfig::new(base_url, model);
        config.api_key = set("OPENAI_API_KEY").map(ApiKey::new);
        config.strict = strict;
        config.stream = stream;
        config.text_format = text_format;
        if let Some(n) = max_turns {
            config.max_turns = n;
        }
        if let Some(n) = max_tokens {
            config.max_tokens = n;
        }
        Ok(Invocation {
            config,
            prompt,
            workspace,
        })
    }
}

/// Runs the example: the quickstart's tools (those that need no
/// confirmation), an agent over `invocation`'s endpoint, and the report on
/// `out`. Notes and errors go to `err`. Returns the process exit code.
pub async fn cli(
    args: impl IntoIterator<Item = String>,
    env: impl Fn(&str) -> Option<String>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    match run(args, env, out, err).await {
        Ok(code) => code,
        Err(e) => {
            let _ = writeln!(err, "openai_agent: {e}");
            1
        }
    }
}

/// What can go wrong in [`cli`], for its one error line.
#[derive(Debug, thiserror::Error)]
enum RunError {
    #[error(transparent)]
    Agent(#[from] super::AgentError),
    #[error(transparent)]
    Registry(#[from] tinyagents_tools::RegistryError),
    #[error(transparent)]
    Executor(#[from] tinyagents_tools::ExecutorBuildError),
    #[error("cannot write the report: {0}")]
    Io(#[from] io::Error),
}

async fn run(
    args: impl IntoIterator<Item = String>,
    env: impl Fn(&str) -> Option<String>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<i32, RunError> {
    let args: Vec<String> = args.into_iter().collect();
    if args.iter().any(|a| a == "--help" || a == "-h") {
        writeln!(out, "{USAGE}")?;
        return Ok(0);
    }
    let invocation = match Invocation::parse(args, env) {
        Ok(invocation) => invocation,
        Err(e) => {
            writeln!(err, "openai_agent: {e}\n\n{USAGE}")?;
            return Ok(2);
        }
    };
    let registry = quickstart_registry()?;
    let held_back: Vec<String> = registry
        .specs()
        .filter(|s| s.safety.requires_confirmation)
        .map(|s| s.name.to_string())
        .collect();
    let advertised: Vec<String> = registry
        .specs()
        .filter(|s| !s.safety.requires_confirmation)
        .map(|s| s.name.to_string())
        .collect();
    // Tools that need confirmation are never advertised to the model (and a
    // call to a tool that was not advertised is refused), so no approver is
    // needed: say so explicitly.
    let executor = Arc::new(
        ToolExecutor::builder(registry, ())
            .unenforced(SafetyItem::Confirmation)
            .build()?,
    );
    if invocation.config.api_key.is_none() {
        writeln!(
            err,
            "note: OPENAI_API_KEY is not set; sending no Authorization header"
        )?;
    }
    if let Some(format) = &invocation.config.text_format {
        writeln!(
            err,
            "text format: {format} (POST {}/completions)",
            invocation.config.base_url.trim_end_matches('/')
        )?;
    }
    let streamed = invocation.config.stream;
    let agent = Agent::new(invocation.config, executor)?.advertising(advertised)?;
    writeln!(
        err,
        "tools: {} (not offered, they need confirmation: {})",
        agent.advertised().join(", "),
        if held_back.is_empty() {
            "none".to_owned()
        } else {
            held_back.join(", ")
        }
    )?;
    let run = quickstart_run(&invocation.workspace, Arc::new(NoteBook::default()));
    let outcome = if streamed {
        let mut live = Live {
            out: &mut *out,
            err: &mut *err,
            at_line_start: true,
            error: None,
        };
        let outcome = agent
            .run_with(&run, &invocation.prompt, &mut |event| live.show(event))
            .await;
        if let Some(e) = live.error.take() {
            return Err(e.into());
        }
        let outcome = outcome?;
        if !live.at_line_start {
            writeln!(out)?;
        }
        write_stop(&outcome, out)?;
        outcome
    } else {
        let outcome = agent.run(&run, &invocation.prompt).await?;
        write_report(&outcome, out)?;
        outcome
    };
    Ok(match outcome.stop {
        StopReason::Answered => 0,
        _ => 1,
    })
}

/// What a streamed run prints as it goes: the text on `out` as it
/// arrives, each answered call on `out` as a trace line, and the rest
/// (reasoning, calls starting, calls that cannot run, problems with the
/// stream) on `err`.
struct Live<'w> {
    out: &'w mut dyn Write,
    err: &'w mut dyn Write,
    /// Whether the last thing written to `out` ended a line.
    at_line_start: bool,
    /// The first write that failed.
    error: Option<io::Error>,
}

impl Live<'_> {
    fn show(&mut self, event: AgentEvent<'_>) {
        let written = match event {
            AgentEvent::Output(event) => self.output(event),
            AgentEvent::Answered(entry) => self.answered(entry),
        };
        if let Err(e) = written {
            self.error.get_or_insert(e);
        }
    }

    fn output(&mut self, event: &StreamEvent) -> io::Result<()> {
        match event {
            StreamEvent::Text(text) => {
                self.out.write_all(text.as_bytes())?;
                self.out.flush()?;
                if let Some(last) = text.chars().last() {
                    self.at_line_start = last == '\n';
                }
                Ok(())
            }
            StreamEvent::Reasoning(text) => {
                self.err.write_all(text.as_bytes())?;
                self.err.flush()
            }
            StreamEvent::CallReady(ready) => writeln!(
                self.err,
                "[starting {} {}]",
                ready.call.id.as_str(),
                ready.call.name.as_str()
            ),
            StreamEvent::CallFailed(failed) => writeln!(
                self.err,
                "[not run: call {} {} is {}: {}]",
                failed.id.as_ref().map_or("(no id)", |id| id.as_str()),
                failed.name.as_ref().map_or("(no name)", |n| n.as_str()),
                failed.kind.as_str(),
                clip(&failed.raw)
            ),
            StreamEvent::Truncated(cut) => writeln!(
                self.err,
                "[not run: call {} {} was cut off by the end of the output: {}]",
                cut.id.as_ref().map_or("(no id)", |id| id.as_str()),
                cut.name.as_ref().map_or("(no name)", |n| n.as_str()),
                clip(&cut.raw)
            ),
            StreamEvent::Problem(problem) => writeln!(
                self.err,
                "[stream problem: {}: {}]",
                problem.kind.as_str(),
                clip(&problem.raw)
            ),
            _ => Ok(()),
        }
    }

    fn answered(&mut self, entry: &TraceEntry) -> io::Result<()> {
        if !self.at_line_start {
            writeln!(self.out)?;
            self.at_line_start = true;
        }
        write_trace(entry, self.out)
    }
}

/// One trace line: the call, its arguments, and its answer.
fn write_trace(entry: &TraceEntry, out: &mut dyn Write) -> io::Result<()> {
    let status = entry.error.unwrap_or("ok");
    writeln!(
        out,
        "[turn {}] {} {} {} -> {status}: {}",
        entry.turn,
        entry.call_id,
        entry.tool,
        clip(&entry.arguments),
        clip(&entry.answer)
    )
}

/// The line that ends a streamed run's report (its text and calls are
/// already printed).
fn write_stop(outcome: &AgentOutcome, out: &mut dyn Write) -> io::Result<()> {
    match &outcome.stop {
        StopReason::Answered => writeln!(out, "\n(answered in {} turns)", outcome.turns),
        stop => write_stopped(stop, outcome.turns, out),
    }
}

/// Why a run stopped without an answer.
fn write_stopped(stop: &StopReason, turns: u32, out: &mut dyn Write) -> io::Result<()> {
    match stop {
        StopReason::MaxTurns => writeln!(
            out,
            "\nstopped: the model still called tools after {turns} turns"
        ),
        StopReason::FatalToolError { call_id, kind } => {
            writeln!(out, "\nstopped: call {call_id} failed ({kind})")
        }
        StopReason::StreamBroken { error } => {
            writeln!(
                out,
                "\nstopped: the stream broke off in turn {turns}: {error}"
            )
        }
        StopReason::Answered => Ok(()),
    }
}

/// Prints the trace of calls, then the answer or why there is none (the
/// report of a run that was not streamed).
pub fn write_report(outcome: &AgentOutcome, out: &mut dyn Write) -> io::Result<()> {
    for entry in &outcome.trace {
        write_trace(entry, out)?;
    }
    match (&outcome.stop, &outcome.answer) {
        (StopReason::Answered, Some(answer)) => {
            writeln!(out, "\nanswer ({} turns):\n{answer}", outcome.turns)
        }
        (StopReason::Answered, None) => writeln!(out, "\nanswer: (empty)"),
        (stop, _) => write_stopped(stop, outcome.turns, out),
    }
}

fn clip(text: &str) -> String {
    let flat = text.replace('\n', " ");
    if flat.chars().count() <= TRACE_WIDTH {
        return flat;
    }
    let mut clipped: String = flat.chars().take(TRACE_WIDTH).collect();
    clipped.push('…');
    clipped
}
