//! Tool calls written as text: open-weight models served raw (llama.cpp, a
//! completion endpoint, an engine without a tool parser) write their calls
//! as markup, and a [`TextFormat`] says which.
//!
//! A format is a description, not a parser: its markers, how a call's name
//! and arguments are written ([`CallBody`]), how several calls are joined
//! ([`Join`]), the reasoning markers that come first, and whether the
//! markers are special tokens. One engine, [`TextReader`], reads every
//! format, fed the raw output in pieces cut anywhere (inside a UTF-8
//! sequence or a marker too), in one linear pass. Built in:
//!
//! | name | models | a call |
//! |---|---|---|
//! | `hermes` | Hermes, Qwen2.5, Qwen3 | `<tool_call>{"name": "f", "arguments": {..}}</tool_call>` |
//! | `qwen3-coder` | Qwen3-Coder, Qwen3.5 | `<tool_call><function=f><parameter=k>v</parameter></function></tool_call>`, or bare `<function=f>...</function>` (the orphan `</tool_call>` after it markup) |
//! | `glm45` | GLM-4.5 to 4.7 | `<tool_call>f<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>` |
//! | `llama3-json` | Llama 3.1 to 3.3 | `{"name": "f", "parameters": {..}}`, `<|python_tag|>`, `; ` between calls |
//! | `pythonic` | Llama 3.2 and 4, LFM2, OLMo 3 | `[f(a=1), g()]`, `<|python_start|>`, `<|tool_call_start|>` |
//! | `mistral` | Mistral before tokenizer v11 | `[TOOL_CALLS] [{"name": "f", "arguments": {..}}]` |
//! | `mistral-v11` | Mistral Small 3.2, Magistral, Devstral | `[TOOL_CALLS]f[CALL_ID]id[ARGS]{..}` |
//! | `deepseek-v3` | DeepSeek V3, R1 | `<｜tool▁call▁begin｜>function<｜tool▁sep｜>f` + fenced JSON |
//! | `deepseek-v31` | DeepSeek V3.1 | `<｜tool▁call▁begin｜>f<｜tool▁sep｜>{..}<｜tool▁call▁end｜>` |
//! | `kimi-k2` | Kimi K2 | `<|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{..}<|tool_call_end|>` |
//! | `harmony` | gpt-oss | `<|channel|>commentary to=functions.f <|constrain|>json<|message|>{..}<|call|>` |
//! | `tags:START,END` | your own | `START{"name": "f", "args": {..}}END` |
//!
//! What the reader promises, for every format and every chunking (the
//! [`ModelOutput`] collected from the events equals the whole-text parse):
//!
//! - **the visible text never holds a byte of markup**: a partial marker
//!   is held back until the next piece tells whether it is one;
//! - **reasoning first**: `<think>`, `[THINK]` and harmony's `analysis`
//!   channel are split off before calls are looked for, and call markup
//!   inside them is reasoning text, never a call. A template that opens
//!   `<think>` in the prompt gives output that begins inside reasoning:
//!   read it with [`TextReader::starting_in_reasoning`];
//! - **typed by the schema**: raw parameter values (Qwen3-Coder, GLM) are
//!   typed by the tool's input schema (see [`typing`](self#typed-values));
//! - **nothing silently dropped**: an unknown tool name is still a call
//!   (the executor refuses it, fail-closed, with its id); a call cut off by
//!   the end of the output is [`StreamEvent::Truncated`]; a malformed call
//!   is [`StreamEvent::CallFailed`] with its raw text, ending at its end
//!   marker, at the next call's start marker, or at the end of the output
//!   when the format has no end marker; one bad call never discards the
//!   others. Every call, ready or not, has an index and an id (the
//!   format's, or a generated one when the format gives none or the call
//!   broke before it), so
//!   [`FailedCall::answer`](crate::stream::FailedCall::answer) answers it
//!   by that id with a classified error, without running it;
//! - **text byte for byte**: everything outside call and reasoning markup
//!   is passed through as written, whitespace included; whitespace inside
//!   a call's markup is markup;
//! - **one event per run**: a piece of text, reasoning or arguments that
//!   continues the last event already in the caller's `Vec` is added to
//!   it (see [`OutputReader::push`]), so pieces pushed into one `Vec` give
//!   the events the whole text gives, and pieces taken out after each push
//!   are each an event of their own;
//! - **ready when the arguments close**: [`StreamEvent::CallReady`] comes
//!   before the end marker that follows, with the exact argument text the
//!   model wrote ([`RawArguments::Text`](crate::call::RawArguments::Text))
//!   for JSON formats and the typed object for the others;
//! - **seen as it streams**: [`StreamEvent::CallStarted`] comes the
//!   moment a call's name is read, before its arguments, and
//!   [`StreamEvent::ArgumentsDelta`]s then carry the arguments' raw text
//!   as it arrives (JSON formats), adding up to exactly the ready call's
//!   argument text. A JSON-object call (Hermes, Llama, Mistral, tags)
//!   starts when its `name` member's string closes; a Mistral call waits
//!   for its `id` member too, so it starts with the id it keeps (at the
//!   close, under a generated id, when it writes none; after the arguments
//!   when it writes the id last). Only the preferred arguments key streams
//!   (`arguments`; Llama's `parameters`; the tags' `args`): the call
//!   carries the preferred key wherever it appears, so text under another
//!   key is sent whole at the close, once it is sure to be the arguments.
//!   A bare Llama object at the output start starts only when it opens
//!   with a key (`{"`): from then on it is a call (ready, failed or cut
//!   off, never given back as text). A started call ends ready, failed or
//!   truncated under the index and id it started with, so
//!   [`FailedCall::answer`](crate::stream::FailedCall::answer) answers the
//!   call a UI showed. The XML, key-value and pythonic formats send no
//!   fragments: their arguments are typed values, whole in the ready call;
//! - **ids**: Kimi's `functions.NAME:IDX`, Mistral's `[CALL_ID]` and a
//!   Mistral JSON call's `id` are the call ids; other calls get
//!   `PREFIX` + their index (`text-call-0`, ...; set the prefix per turn
//!   with [`TextReader::for_turn`] so ids never repeat in a run);
//! - **bounded**: arguments past [`StreamLimits`] are refused as they
//!   stream ([`CallProblem::TooLarge`](crate::stream::CallProblem::TooLarge),
//!   [`TooDeep`](crate::stream::CallProblem::TooDeep));
//! - **why it ended**: the [`Finished`](StreamEvent::Finished) event's
//!   reason is what the text says:
//!   [`ToolCalls`](crate::stream::FinishReason::ToolCalls) when the last
//!   non-whitespace content is a call (ready or failed),
//!   [`Length`](crate::stream::FinishReason::Length) when the output ends
//!   inside a call (cut off by the end: the token limit, in practice),
//!   [`Stop`](crate::stream::FinishReason::Stop) at harmony's `<|return|>`
//!   (or `<|end|>` closing a message that is not a call), and
//!   [`EndOfStream`](crate::stream::FinishReason::EndOfStream) when it
//!   ends with text or reasoning (the text cannot tell a stop from a cut;
//!   end-of-sequence tokens such as `</s>` or `<|eot_id|>` are text to the
//!   reader). A server that knows better (a completion's
//!   `finish_reason: "length"`) may override it;
//! - **bad bytes**: invalid UTF-8 (split across pieces or not) becomes
//!   U+FFFD and a [`StreamProblemKind::InvalidUtf8`](crate::stream::StreamProblemKind::InvalidUtf8)
//!   problem.
//!
//! ```
//! use tinyagents_tools::stream::text::TextFormat;
//! use tinyagents_tools::stream::{OutputReader, StreamEvent};
//! use tinyagents_tools::ToolSpec;
//!
//! let tools = [ToolSpec::builder("get_weather", "Weather for a city").build()?];
//! let mut reader = TextFormat::hermes().reader(&tools);
//! let mut events = Vec::new();
//! for piece in ["Let me check.\n<tool", "_call>\n{\"name\": \"get_weather\", ",
//!               "\"arguments\": {\"city\": \"Paris\"}}", "\n</tool_call>"] {
//!     reader.push(piece.as_bytes(), &mut events);
//! }
//! reader.finish(&mut events);
//! // The text never held a byte of the call; the call was ready before
//! // `</tool_call>` arrived.
//! assert_eq!(events[0], StreamEvent::Text("Let me check.\n".into()));
//! let out = tinyagents_tools::stream::ModelOutput::collect(events);
//! let call = out.calls().next().unwrap();
//! assert_eq!(call.name.as_str(), "get_weather");
//! assert_eq!(call.id.as_str(), "text-call-0");
//! assert_eq!(call.arguments, r#"{"city": "Paris"}"#.into());
//! // The whole text at once gives the same output.
//! let whole = "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \
//!              \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
//! assert_eq!(TextFormat::hermes().parse(&tools, whole), out);
//! # Ok::<(), tinyagents_tools::spec::SpecError>(())
//! ```
//!
//! # Typed values
//!
//! A raw parameter value is a string when the property's schema allows
//! `string` (`null` becomes JSON `null` when the schema allows it too), and
//! JSON when the schema names other types only; text that does not parse
//! stays a string, which the executor's validation then refuses by name.
//! Python's `True`, `False` and `None` are read as `true`, `false` and
//! `null` where such a schema allows that value: Qwen3-Coder's chat
//! template writes a boolean or null argument that way (`| string`), so
//! its models do too, and the grammars offer the same spellings.
//! A property the schema says nothing about (an unknown tool or key) is
//! JSON when its text reads as an object, array, number, boolean or null,
//! and a string otherwise; the executor refuses it fail-closed anyway.
//!
//! # The other direction
//!
//! [`TextFormat::instruction`] writes the tools into the system prompt the
//! way the family was trained, [`TextFormat::render_calls`] writes the
//! assistant's calls back into the transcript, and
//! [`TextFormat::render_results`] writes tool results in the family's form,
//! so a whole loop runs against a raw completion endpoint.

use std::borrow::Cow;

use crate::spec::ToolSpec;
use crate::stream::{Finish, ModelOutput, OutputReader, StreamEvent, StreamLimits};

mod engine;
mod format;
mod formats;
mod json_call;
mod python;
mod render;
pub(crate) mod typing;

pub use format::{
    CallBody, CallRun, Delimiters, FORMAT_NAMES, Family, HarmonyMarkers, Join, KeyValuePairs,
    NameForm, RunStart, TextFormat, UnknownFormat, XmlParameters,
};

use engine::{Compiled, Engine};

/// The prefix of the ids given to calls whose format writes none.
pub const DEFAULT_ID_PREFIX: &str = "text-call-";

/// Reads one turn of a model's raw text output in a [`TextFormat`], fed in
/// pieces as they arrive (see the [module docs](self) for what it
/// promises). Make a new one for each turn.
#[derive(Debug)]
pub struct TextReader {
    engine: Engine,
    finished: bool,
}

impl TextReader {
    /// A reader of `format` for a turn that offered `tools` (their input
    /// schemas type raw parameter values).
    pub fn new<'a>(format: &TextFormat, tools: impl IntoIterator<Item = &'a ToolSpec>) -> Self {
        let compiled = Compiled::shared(format);
        // Only raw parameter values are typed by a schema: the formats
        // that write none keep no schemas. A schema is shared, not copied.
        let schemas = if compiled.types_values() {
            tools
                .into_iter()
                .map(|t| (t.name.as_str().to_owned(), t.input_schema.clone()))
                .collect()
        } else {
            Default::default()
        };
        TextReader {
            engine: Engine::new(
                compiled,
                schemas,
                StreamLimits::default(),
                Cow::Borrowed(DEFAULT_ID_PREFIX),
            ),
            finished: false,
        }
    }

    /// The output begins inside reasoning (the chat template opened
    /// `<think>` in the prompt): everything up to the format's reasoning end
    /// marker is reasoning. For harmony, the output begins inside an
    /// `analysis` message. Set before the first piece.
    pub fn starting_in_reasoning(mut self) -> Self {
        self.engine.start_in_reasoning();
        self
    }

    /// Holds arguments to `limits` instead of the executor's defaults. Set
    /// before the first piece.
    pub fn with_limits(mut self, limits: StreamLimits) -> Self {
        self.engine.set_limits(limits);
        self
    }

    /// Gives calls whose format writes no id the id `prefix` + their index.
    /// Set before the first piece.
    pub fn with_id_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.engine.set_id_prefix(Cow::Owned(prefix.into()));
        self
    }

    /// Ids for turn `turn` of a run: `text-call-<turn>-<index>`, so ids
    /// never repeat across the turns (approvals, replays and results keyed
    /// by call id never mix two calls). Set before the first piece.
    pub fn for_turn(self, turn: u32) -> Self {
        self.with_id_prefix(format!("{DEFAULT_ID_PREFIX}{turn}-"))
    }

    /// Appends the [`Finished`](StreamEvent::Finished) event, once.
    fn finished(&mut self, out: &mut Vec<StreamEvent>) {
        self.finished = true;
        out.push(StreamEvent::Finished(Finish {
            reason: self.engine.finish_reason(),
            usage: None,
        }));
    }
}

impl OutputReader for TextReader {
    // Inlined into the caller's loop, in the caller's crate: a piece that
    // only continues what is being read costs no call. After `finish`
    // the engine reads nothing more.
    #[inline(always)]
    fn push(&mut self, piece: &[u8], out: &mut Vec<StreamEvent>) {
        self.engine.push(piece, out);
    }

    fn finish(&mut self, out: &mut Vec<StreamEvent>) {
        if self.finished {
            return;
        }
        self.engine.finish(out);
        self.finished(out);
    }
}

impl TextFormat {
    /// A reader of this format for a turn that offered `tools`.
    pub fn reader<'a>(&self, tools: impl IntoIterator<Item = &'a ToolSpec>) -> TextReader {
        TextReader::new(self, tools)
    }

    /// The whole output at once: what a [`TextReader`] fed `text` in any
    /// pieces collects to.
    pub fn parse<'a>(
        &self,
        tools: impl IntoIterator<Item = &'a ToolSpec>,
        text: &str,
    ) -> ModelOutput {
        let mut reader = self.reader(tools);
        // An output is a few parts (its text, its calls), each one event
        // here (no call starts nor fragments), and the finish.
        let mut events = Vec::with_capacity(8);
        reader.engine.read_whole(text, &mut events);
        reader.finished(&mut events);
        let mut out = ModelOutput {
            parts: Vec::with_capacity(events.len()),
            ..ModelOutput::default()
        };
        for event in events {
            out.push(event);
        }
        out
    }
}
