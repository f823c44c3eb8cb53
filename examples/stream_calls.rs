//! Reads one model turn from stdin as it would stream, and prints what the
//! readers of [`tinyagents_tools::stream`] make of it: one JSON object a
//! line on stdout.
//!
//! ```sh
//! printf 'Checking.<tool_call>{"name": "calculate", "arguments": {"a": 6, "b": 7, "op": "multiply"}}</tool_call>' \
//!   | cargo run --example stream_calls -- --format hermes --chunk 3
//! cargo run --example stream_calls -- --format anthropic < tests/fixtures/streams/anthropic.sse
//! cargo run --example stream_calls -- --format qwen3-coder --tools tools.json --grammar lark
//! cargo run --example stream_calls -- --format harmony --instruction
//! ```
//!
//! The first prints
//!
//! ```text
//! {"text":"Che"}
//! {"text":"cki"}
//! {"text":"ng."}
//! {"call":{"id":"text-call-0","name":"calculate","arguments":{"a":6,"b":7,"op":"multiply"}}}
//! {"done":{"calls":1}}
//! ```
//!
//! Options:
//!
//! - `--format F` (required): a text format, `hermes`, `qwen3-coder`,
//!   `glm45`, `llama3-json`, `pythonic`, `mistral`, `mistral-v11`,
//!   `deepseek-v3`, `deepseek-v31`, `kimi-k2`, `harmony` or
//!   `tags:START,END` ([`TextFormat::by_name`]), whose stdin is the model's
//!   raw text; or a provider format, `openai-chat`, `openai-responses`,
//!   `anthropic` or `gemini` ([`NativeFormat`]), whose stdin is the
//!   provider's stream: server-sent events as sent, or one event JSON a
//!   line.
//! - `--tools FILE`: the turn's tools, a JSON array of `{"name",
//!   "description", "input_schema"}` (`description` and `input_schema`
//!   may be left out: no description, an object with no declared
//!   properties). Without it, the quickstart's four tools (`search_docs`,
//!   `write_note`, `read_file`, `calculate`).
//! - `--chunk N`: feeds stdin to the reader N characters at a time (text
//!   formats; a byte that is not UTF-8 counts as one character), or N bytes
//!   of each line at a time (provider formats); `0`, the default, feeds the
//!   whole input at once.
//! - `--grammar xgrammar|lark|gbnf|required`: prints that grammar for the
//!   tools and the text format instead ([`Grammar::text`], then a newline),
//!   without reading stdin. `required` does not depend on the format and is
//!   printed for a provider format too; the others need a text format.
//! - `--instruction`: prints the system prompt text that tells the model
//!   the tools and how to call them ([`TextFormat::instruction`], then a
//!   newline), without reading stdin. Text formats only.
//!
//! The lines, in the order the reader tells them:
//!
//! - `{"text": "..."}`: visible text, as each piece becomes known. Text is
//!   not merged: a text read in pieces prints one line a piece (`--chunk`
//!   changes the lines, never their concatenation), and an empty piece
//!   prints nothing.
//! - `{"reasoning": "..."}`: reasoning, in pieces as text is: `<think>`,
//!   `[THINK]`, harmony's analysis channel, Anthropic's thinking (its
//!   signature is not printed: it goes back with the message), Gemini's
//!   thought parts, the Responses API's reasoning summary and text, and
//!   the `reasoning_content` of OpenAI-compatible servers.
//! - `{"call": {"id", "name", "arguments"}}`: a call ready to run, the
//!   moment its arguments close; `arguments` is the JSON value the executor
//!   would validate (`{}` for a call with no argument text at all).
//! - `{"error": {"kind", "raw", "id", "name"}}`: a call that cannot run
//!   (`kind` one of [`CallProblem::as_str`]'s names; `id` and `name` only
//!   where the format gave them), or a problem of the stream itself (`kind`
//!   one of [`StreamProblemKind::as_str`]'s names, no `id` or `name`). Bad
//!   input on stdin is always such lines, never a failure of the program.
//! - `{"truncated": {"raw"}}`: a call cut off by the end of the input.
//! - last, `{"done": {"calls": N}}`, N the number of `call` lines.
//!
//! Exit status: 0; 2 for a bad command line or a `--tools` file that cannot
//! be read or is not such an array (the reason on stderr); 1 when a grammar
//! cannot be built for the tools (the reason, naming the tool and the
//! schema's JSON pointer, on stderr).

use std::collections::HashSet;
use std::io::{self, Read, Write};
use std::process::ExitCode;

use serde::Deserialize;
use serde_json::{Map, Value, json};
use tinyagents_tools::call::RawArguments;
use tinyagents_tools::stream::grammar::Grammar;
use tinyagents_tools::stream::native::{NativeFormat, NativeReader};
use tinyagents_tools::stream::text::{FORMAT_NAMES, TextFormat, UnknownFormat};
use tinyagents_tools::stream::{OutputReader, StreamEvent};
use tinyagents_tools::{ToolSchema, ToolSpec};
use tinyagents_tools_examples::quickstart_registry;

const USAGE: &str = "usage: stream_calls --format F [--tools FILE] [--chunk N] \
[--grammar xgrammar|lark|gbnf|required | --instruction] < model-output";

/// The format named by `--format`.
enum Format {
    Text(Box<TextFormat>),
    Native(NativeFormat),
}

/// What the program prints.
enum Mode {
    Read,
    Grammar(Grammar),
    Instruction,
}

/// The command line, read.
struct Options {
    format: Format,
    tools: Option<String>,
    chunk: usize,
    mode: Mode,
}

/// A command line that cannot run: the message for stderr.
struct BadCommandLine(String);

fn parse_options(
    args: impl IntoIterator<Item = String>,
) -> Result<Option<Options>, BadCommandLine> {
    let mut format = None;
    let mut tools = None;
    let mut chunk = None;
    let mut grammar = None;
    let mut instruction = false;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => {
                (flag.to_owned(), Some(value.to_owned()))
            }
            _ => (arg.clone(), None),
        };
        let mut value = |flag: &str| {
            inline
                .clone()
                .or_else(|| args.next())
                .ok_or_else(|| BadCommandLine(format!("{flag} needs a value")))
        };
        let once = |seen: bool, flag: &str| {
            if seen {
                Err(BadCommandLine(format!("{flag} given twice")))
            } else {
                Ok(())
            }
        };
        match flag.as_str() {
            "-h" | "--help" => return Ok(None),
            "--format" => {
                once(format.is_some(), "--format")?;
                let name = value("--format")?;
                format = Some(match name.parse::<NativeFormat>() {
                    Ok(native) => Format::Native(native),
                    Err(_) => Format::Text(Box::new(TextFormat::by_name(&name).map_err(
                        |e| match e {
                            UnknownFormat::Name(_) => BadCommandLine(format!(
                                "unknown format {name:?}: expected one of {}, {} or tags:START,END",
                                NativeFormat::ALL.map(NativeFormat::as_str).join(", "),
                                FORMAT_NAMES.join(", "),
                            )),
                            other => BadCommandLine(other.to_string()),
                        },
                    )?)),
                });
            }
            "--tools" => {
                once(tools.is_some(), "--tools")?;
                tools = Some(value("--tools")?);
            }
            "--chunk" => {
                once(chunk.is_some(), "--chunk")?;
                let text = value("--chunk")?;
                chunk = Some(text.parse::<usize>().map_err(|_| {
                    BadCommandLine(format!(
                        "--chunk takes a whole number of characters (0 for the whole input), not {text:?}"
                    ))
                })?);
            }
            "--grammar" => {
                once(grammar.is_some(), "--grammar")?;
                let name = value("--grammar")?;
                grammar = Some(
                    name.parse::<Grammar>()
                        .map_err(|e| BadCommandLine(e.to_string()))?,
                );
            }
            "--instruction" if inline.is_none() => {
                once(instruction, "--instruction")?;
                instruction = true;
            }
            _ => return Err(BadCommandLine(format!("unknown argument {arg:?}"))),
        }
    }
    let format = format.ok_or_else(|| BadCommandLine("--format is required".into()))?;
    let mode = match (grammar, instruction) {
        (Some(_), true) => {
            return Err(BadCommandLine(
                "--grammar and --instruction each print one thing: give one of them".into(),
            ));
        }
        (Some(kind), false) => {
            if let (Format::Native(native), false) = (&format, kind == Grammar::Required) {
                return Err(BadCommandLine(format!(
                    "--grammar {kind} constrains a text format, and {native} is a provider's \
                     format (its provider constrains its calls); only --grammar required \
                     applies to it"
                )));
            }
            Mode::Grammar(kind)
        }
        (None, true) => {
            if let Format::Native(native) = &format {
                return Err(BadCommandLine(format!(
                    "--instruction writes a text format's system prompt, and {native} is a \
                     provider's format (its tools go in the request, not the prompt)"
                )));
            }
            Mode::Instruction
        }
        (None, false) => Mode::Read,
    };
    Ok(Some(Options {
        format,
        tools,
        chunk: chunk.unwrap_or(0),
        mode,
    }))
}

/// One tool of a `--tools` file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolEntry {
    name: String,
    #[serde(default)]
    description: String,
    input_schema: Option<Map<String, Value>>,
}

/// The tools of the `--tools` file at `path`, or why it cannot be used.
fn read_tools(path: &str) -> Result<Vec<ToolSpec>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    let value: Value =
        serde_json::from_str(&text).map_err(|e| format!("{path} is not JSON: {e}"))?;
    let Value::Array(items) = value else {
        return Err(format!(
            "{path} must hold a JSON array of {{\"name\", \"description\", \"input_schema\"}} objects"
        ));
    };
    let mut names = HashSet::new();
    let mut tools = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        let entry: ToolEntry = serde_json::from_value(item).map_err(|e| {
            format!("{path}: tool {i} is not a {{\"name\", \"description\", \"input_schema\"}} object: {e}")
        })?;
        if !names.insert(entry.name.clone()) {
            return Err(format!(
                "{path}: the tool name {:?} is given twice",
                entry.name
            ));
        }
        let mut builder = ToolSpec::builder(entry.name, entry.description);
        if let Some(schema) = entry.input_schema {
            builder = builder.input_schema(ToolSchema::from_value(Value::Object(schema)));
        }
        tools.push(
            builder
                .build()
                .map_err(|e| format!("{path}: tool {i}: {e}"))?,
        );
    }
    Ok(tools)
}

/// Splits `input` into pieces of `n` characters (a byte that is not UTF-8
/// counts as one), or returns it whole for `n == 0`.
fn by_characters(input: &[u8], n: usize) -> Vec<&[u8]> {
    if n == 0 {
        return vec![input];
    }
    let mut pieces = Vec::new();
    let (mut start, mut at, mut count) = (0, 0, 0);
    while at < input.len() {
        at += char_len(&input[at..]);
        count += 1;
        if count == n {
            pieces.push(&input[start..at]);
            (start, count) = (at, 0);
        }
    }
    if start < input.len() {
        pieces.push(&input[start..]);
    }
    pieces
}

/// The length of the character `bytes` starts with: its UTF-8 sequence,
/// or 1 for a byte that does not start a valid one.
fn char_len(bytes: &[u8]) -> usize {
    let want = match bytes[0] {
        0x00..=0x7f => 1,
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => return 1,
    };
    match bytes.get(..want).map(std::str::from_utf8) {
        Some(Ok(_)) => want,
        _ => 1,
    }
}

/// Splits `input` into its lines (each with its line end) and each line
/// into pieces of `n` bytes, or returns it whole for `n == 0`.
fn by_line_bytes(input: &[u8], n: usize) -> Vec<&[u8]> {
    if n == 0 {
        return vec![input];
    }
    input
        .split_inclusive(|&b| b == b'\n')
        .flat_map(|line| line.chunks(n))
        .collect()
}

/// The JSON value the executor validates for a call's arguments.
fn argument_value(arguments: &RawArguments) -> Result<Value, String> {
    match arguments {
        RawArguments::Json(value) => Ok(value.clone()),
        RawArguments::Text(text) if text.trim().is_empty() => Ok(json!({})),
        RawArguments::Text(text) => serde_json::from_str(text).map_err(|_| text.clone()),
    }
}

/// The line an event prints, if any; counts the call lines in `calls`.
fn line(event: StreamEvent, calls: &mut usize) -> Option<Value> {
    Some(match event {
        StreamEvent::Text(text) if !text.is_empty() => json!({ "text": text }),
        StreamEvent::Reasoning(text) if !text.is_empty() => json!({ "reasoning": text }),
        StreamEvent::CallReady(ready) => {
            let call = ready.call;
            match argument_value(&call.arguments) {
                Ok(arguments) => {
                    *calls += 1;
                    json!({"call": {
                        "id": call.id.as_str(),
                        "name": call.name.as_str(),
                        "arguments": arguments,
                    }})
                }
                // The readers hand on only arguments that parse; should one
                // not, it is an error line, never a call.
                Err(raw) => json!({"error": {
                    "kind": "malformed_arguments",
                    "raw": raw,
                    "id": call.id.as_str(),
                    "name": call.name.as_str(),
                }}),
            }
        }
        StreamEvent::CallFailed(failed) => {
            let mut error = Map::new();
            error.insert("kind".into(), failed.kind.as_str().into());
            error.insert("raw".into(), failed.raw.into());
            if let Some(id) = failed.id {
                error.insert("id".into(), id.as_str().into());
            }
            if let Some(name) = failed.name {
                error.insert("name".into(), name.as_str().into());
            }
            json!({ "error": error })
        }
        StreamEvent::Truncated(cut) => json!({"truncated": {"raw": cut.raw}}),
        StreamEvent::Problem(problem) => json!({"error": {
            "kind": problem.kind.as_str(),
            "raw": problem.raw,
        }}),
        _ => return None,
    })
}

fn print_text(text: &str) -> ExitCode {
    let mut stdout = io::stdout().lock();
    match writeln!(stdout, "{text}").and_then(|()| stdout.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::FAILURE,
    }
}

fn run(options: Options) -> ExitCode {
    let tools = match &options.tools {
        Some(path) => match read_tools(path) {
            Ok(tools) => tools,
            Err(message) => {
                eprintln!("stream_calls: {message}");
                return ExitCode::from(2);
            }
        },
        None => match quickstart_registry() {
            Ok(registry) => registry.specs().cloned().collect(),
            Err(e) => {
                eprintln!("stream_calls: the quickstart's tools: {e}");
                return ExitCode::FAILURE;
            }
        },
    };
    match (&options.mode, &options.format) {
        (Mode::Instruction, Format::Text(format)) => {
            return print_text(&format.instruction(&tools));
        }
        (Mode::Grammar(kind), format) => {
            // The required schema is the same for every format.
            let stand_in = TextFormat::hermes();
            let format = match format {
                Format::Text(format) => format,
                Format::Native(_) => &stand_in,
            };
            return match kind.text(format, &tools) {
                Ok(text) => print_text(&text),
                Err(e) => {
                    eprintln!("stream_calls: {e}");
                    ExitCode::FAILURE
                }
            };
        }
        _ => {}
    }

    let mut input = Vec::new();
    if let Err(e) = io::stdin().lock().read_to_end(&mut input) {
        // What was read before the failure is still read; the failure is
        // the input's, reported as a line like any bad input.
        eprintln!("stream_calls: reading stdin: {e}");
    }
    let (mut reader, pieces): (Box<dyn OutputReader>, _) = match &options.format {
        Format::Text(format) => (
            Box::new(format.reader(&tools)),
            by_characters(&input, options.chunk),
        ),
        Format::Native(format) => (
            Box::new(NativeReader::new(*format)),
            by_line_bytes(&input, options.chunk),
        ),
    };

    let mut stdout = io::BufWriter::new(io::stdout().lock());
    let mut calls = 0;
    let mut events = Vec::new();
    let mut print = |events: &mut Vec<StreamEvent>, calls: &mut usize| -> io::Result<()> {
        for event in events.drain(..) {
            if let Some(line) = line(event, calls) {
                writeln!(stdout, "{line}")?;
            }
        }
        stdout.flush()
    };
    for piece in pieces {
        reader.push(piece, &mut events);
        if print(&mut events, &mut calls).is_err() {
            return ExitCode::FAILURE;
        }
    }
    reader.finish(&mut events);
    let done = print(&mut events, &mut calls)
        .and_then(|()| writeln!(stdout, "{}", json!({"done": {"calls": calls}})))
        .and_then(|()| stdout.flush());
    match done {
        Ok(()) => ExitCode::SUCCESS,
        Err(_) => ExitCode::FAILURE,
    }
}

fn main() -> ExitCode {
    match parse_options(std::env::args().skip(1)) {
        Ok(Some(options)) => run(options),
        Ok(None) => print_text(USAGE),
        Err(BadCommandLine(message)) => {
            eprintln!("stream_calls: {message}\n{USAGE}");
            ExitCode::from(2)
        }
    }
}
