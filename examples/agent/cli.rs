//! The `openai_agent` command line: configuration from the environment and
//! arguments, and the printed report.

use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::Arc;

use tinyagents_tools::ToolExecutor;
use tinyagents_tools::spec::SafetyItem;

use super::{Agent, AgentConfig, AgentOutcome, ApiKey, DEFAULT_BASE_URL, StopReason};
use crate::{NoteBook, quickstart_registry, quickstart_run};

/// How to call the example.
pub const USAGE: &str = "\
usage: openai_agent [--model NAME] [--max-turns N] [--strict] [--workspace DIR] PROMPT...

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
        let model = model.ok_or(CliError::MissingModel)?;
        let base_url = set("OPENAI_BASE_URL").unwrap_or_else(|| DEFAULT_BASE_URL.to_owned());
        let mut config = AgentConfig::new(base_url, model);
        config.api_key = set("OPENAI_API_KEY").map(ApiKey::new);
        config.strict = strict;
        if let Some(n) = max_turns {
            config.max_turns = n;
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
    let outcome = agent.run(&run, &invocation.prompt).await?;
    write_report(&outcome, out)?;
    Ok(match outcome.stop {
        StopReason::Answered => 0,
        _ => 1,
    })
}

/// Prints the trace of calls, then the answer or why there is none.
pub fn write_report(outcome: &AgentOutcome, out: &mut dyn Write) -> io::Result<()> {
    for entry in &outcome.trace {
        let status = entry.error.unwrap_or("ok");
        writeln!(
            out,
            "[turn {}] {} {} {} -> {status}: {}",
            entry.turn,
            entry.call_id,
            entry.tool,
            clip(&entry.arguments),
            clip(&entry.answer)
        )?;
    }
    match (&outcome.stop, &outcome.answer) {
        (StopReason::Answered, Some(answer)) => {
            writeln!(out, "\nanswer ({} turns):\n{answer}", outcome.turns)
        }
        (StopReason::MaxTurns, _) => writeln!(
            out,
            "\nstopped: the model still called tools after {} turns",
            outcome.turns
        ),
        (StopReason::FatalToolError { call_id, kind }, _) => {
            writeln!(out, "\nstopped: call {call_id} failed ({kind})")
        }
        (StopReason::Answered, None) => writeln!(out, "\nanswer: (empty)"),
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
