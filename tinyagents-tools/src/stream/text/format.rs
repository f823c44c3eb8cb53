//! What a text format is: the markers a model writes around its calls and
//! reasoning, and how it writes a call's name and arguments, as plain data.
//!
//! The engine ([`TextReader`](super::TextReader)) reads every format from
//! this description, and the grammar builders read the same fields: a
//! [`TextFormat`] is never code.

use std::fmt;
use std::str::FromStr;

/// A pair of markers around a region (reasoning, a fenced value).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Delimiters {
    /// The marker that opens the region.
    pub start: String,
    /// The marker that closes it.
    pub end: String,
}

impl Delimiters {
    /// The pair `start`, `end`.
    pub fn new(start: impl Into<String>, end: impl Into<String>) -> Self {
        Delimiters {
            start: start.into(),
            end: end.into(),
        }
    }
}

/// How a model that writes its calls as text writes them.
///
/// Built-in descriptions come from the constructors ([`TextFormat::hermes`],
/// [`TextFormat::qwen3_coder`], ...) or by name ([`TextFormat::by_name`]);
/// a user-defined tag pair with a JSON body is [`TextFormat::tags`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextFormat {
    /// The format's name, as [`TextFormat::by_name`] takes it (`hermes`,
    /// `tags:START,END`, ...).
    pub name: String,
    /// The markers around reasoning (`<think>`/`</think>`, Mistral's
    /// `[THINK]`/`[/THINK]`), looked for before calls: call markup inside
    /// them is reasoning text. Harmony's reasoning is its `analysis` channel
    /// ([`CallBody::Harmony`]), not a marker pair.
    pub reasoning: Option<Delimiters>,
    /// The ways a run of calls begins in the text, each with how its calls
    /// are delimited and joined. Empty for [`CallBody::Harmony`], whose
    /// messages carry their own structure.
    pub runs: Vec<CallRun>,
    /// How one call's name and arguments are written.
    pub body: CallBody,
    /// True when the markers are special tokens of the model's tokenizer:
    /// the text the reader is fed must be decoded with special tokens kept
    /// (`skip_special_tokens: false` in vLLM, `--special` in llama.cpp),
    /// or the markers never reach it.
    pub special_tokens: bool,
    /// Which family's prompt conventions [`instruction`](Self::instruction),
    /// [`render_calls`](Self::render_calls) and
    /// [`render_results`](Self::render_results) follow.
    pub family: Family,
}

/// One way a run of calls begins, and how the calls in it are delimited.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallRun {
    /// Where the run begins.
    pub start: RunStart,
    /// The marker that ends the run (`</tool_call>`,
    /// `<｜tool▁calls▁end｜>`), or `None` when the run ends with its last
    /// call (or, for a malformed call, at the end of the output). A
    /// [`RunStart::BodyOpening`] run's end marker may be missing: it is
    /// markup when it follows the call (whitespace between), and the run
    /// ends with its call otherwise.
    pub end: Option<String>,
    /// The marker before each call inside the run
    /// (`<｜tool▁call▁begin｜>`, `<|tool_call_begin|>`), if any.
    pub call_start: Option<String>,
    /// The marker after each call inside the run, if any.
    pub call_end: Option<String>,
    /// How several calls of one run follow each other.
    pub join: Join,
}

/// Where a run of calls begins.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RunStart {
    /// At this marker, anywhere in the visible text.
    Marker(String),
    /// With no marker, at the very start of the output (after leading
    /// whitespace, which stays text): Llama 3.x's bare JSON, a bare
    /// pythonic list.
    OutputStart,
    /// With no marker of its own, at the call body's opening marker
    /// ([`CallBody::opening`]), anywhere in the visible text: the opening
    /// marker is the call's first markup. Qwen3-Coder's calls written
    /// without `<tool_call>`: `<function=NAME>...</function>`, often still
    /// followed by an orphan `</tool_call>` (the run's end marker, which
    /// such a run may leave out). A body without an opening marker never
    /// starts such a run.
    BodyOpening,
}

/// How several calls of one run follow each other. Whitespace between the
/// pieces of a run is markup, never text.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Join {
    /// One call per run; the next call opens a run of its own (Mistral
    /// v11's `[TOOL_CALLS]` before each call).
    Single,
    /// Calls follow each other, whitespace between them, until the run's
    /// end marker (Kimi's and DeepSeek's call sections; several JSON
    /// objects inside one `<tool_call>`).
    Adjacent,
    /// Calls are separated by this text (Llama 3.x's `; `); whitespace
    /// around it is markup. The run ends at the first call not followed by
    /// it.
    Separator(String),
    /// The calls are a bracketed list: `open`, calls separated by
    /// `separator`, `close` (pythonic `[f(), g()]`, Mistral's JSON array).
    List {
        /// The list's opening bracket.
        open: String,
        /// Between two calls.
        separator: String,
        /// The list's closing bracket.
        close: String,
    },
}

/// How one call's name and arguments are written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallBody {
    /// One JSON object holding the name and the arguments:
    /// `{"name": "f", "arguments": {...}}`. The call is ready when the
    /// object closes; its arguments are the exact text of the first
    /// `argument_keys` member present (`{}` when none is). It starts when
    /// the name member's string closes (and the id member's value, with an
    /// `id_key`), and the first key's member streams as it is written.
    JsonObject {
        /// The key of the tool name (`name`).
        name_key: String,
        /// The keys the arguments may be under, in order of preference
        /// (`arguments`; `parameters` for Llama; `args` then `arguments`
        /// for the seed framework's tags).
        argument_keys: Vec<String>,
        /// The key of a call id the model may write (`id` for Mistral),
        /// if any.
        id_key: Option<String>,
    },
    /// The name as text, then a marker, then the arguments as bare (or
    /// fenced) JSON: Mistral v11's `NAME[ARGS]{...}`, DeepSeek V3.1's
    /// `NAME<｜tool▁sep｜>{...}`, Kimi's
    /// `functions.NAME:0<|tool_call_argument_begin|>{...}`. The call is
    /// ready when the JSON closes.
    NameThenJson {
        /// Markup written before the name (DeepSeek V3's
        /// `function<｜tool▁sep｜>`), if any.
        name_prefix: Option<String>,
        /// The marker between the name and the call id, when the format may
        /// write one (Mistral's `[CALL_ID]`): the id runs from it to
        /// `arguments_marker`.
        id_marker: Option<String>,
        /// The marker between the name (or id) and the arguments.
        arguments_marker: String,
        /// Markers around the JSON (DeepSeek V3's ```` ```json ````
        /// and ```` ``` ````), if any.
        fence: Option<Delimiters>,
        /// What the text before the marker is.
        name: NameForm,
    },
    /// XML-like parameters, each value raw text typed by the tool's input
    /// schema: Qwen3-Coder's
    /// `<function=NAME><parameter=K>value</parameter></function>`.
    XmlParameters(XmlParameters),
    /// Key and value pairs after a plain-text name: GLM-4.5's
    /// `NAME<arg_key>k</arg_key><arg_value>v</arg_value>`, values typed by
    /// the tool's input schema. The call is ready at the run's end marker.
    KeyValue(KeyValuePairs),
    /// Python call syntax inside a [`Join::List`]:
    /// `[f(a=1, b="x"), g()]`, keyword arguments only, values Python
    /// literals (strings, numbers, `True`/`False`/`None`, lists, dicts,
    /// tuples), converted to JSON. A call is ready at its `)`.
    Pythonic,
    /// gpt-oss's harmony messages: a call is a message whose header has a
    /// recipient, its content the JSON arguments.
    Harmony(HarmonyMarkers),
}

impl CallBody {
    /// The marker that opens every call of this body, when it has one
    /// that free text does not write by chance: [`CallBody::XmlParameters`]'
    /// `function_start` (`<function=`). Where a [`RunStart::BodyOpening`]
    /// run begins.
    pub fn opening(&self) -> Option<&str> {
        match self {
            CallBody::XmlParameters(x) => Some(&x.function_start),
            _ => None,
        }
    }
}

/// What the text before a [`CallBody::NameThenJson`] arguments marker is.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum NameForm {
    /// The tool name.
    Plain,
    /// A call id that holds the name, `PREFIX NAME SEPARATOR INDEX`: Kimi's
    /// `functions.get_weather:0` is the call's id, and its name is
    /// `get_weather`.
    IdWithName {
        /// The text before the name (`functions.`).
        prefix: String,
        /// The text between the name and the index (`:`).
        index_separator: String,
    },
}

/// The markers of [`CallBody::XmlParameters`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct XmlParameters {
    /// Opens a call; the name follows (`<function=`).
    pub function_start: String,
    /// Ends the name (`>`); also ends a parameter's name.
    pub name_end: String,
    /// Closes a call (`</function>`); the call is ready there.
    pub function_end: String,
    /// Opens a parameter; its name follows (`<parameter=`).
    pub parameter_start: String,
    /// Closes a parameter's value (`</parameter>`).
    pub parameter_end: String,
}

/// The markers of [`CallBody::KeyValue`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KeyValuePairs {
    /// Opens a key (`<arg_key>`).
    pub key_start: String,
    /// Closes a key (`</arg_key>`).
    pub key_end: String,
    /// Opens a value (`<arg_value>`).
    pub value_start: String,
    /// Closes a value (`</arg_value>`).
    pub value_end: String,
}

/// The markers of gpt-oss's harmony format, as its format document names
/// them.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HarmonyMarkers {
    /// Opens a message; the header follows (`<|start|>`).
    pub start: String,
    /// Introduces the channel inside a header (`<|channel|>`).
    pub channel: String,
    /// Ends the header; the content follows (`<|message|>`).
    pub message: String,
    /// Introduces the content type of a call (`<|constrain|>`).
    pub constrain: String,
    /// Ends a message (`<|end|>`).
    pub end: String,
    /// Ends a call's message (`<|call|>`).
    pub call: String,
    /// Ends the final message (`<|return|>`).
    pub return_: String,
    /// The channel that holds reasoning (`analysis`).
    pub reasoning_channel: String,
    /// The namespace prefix of function recipients (`functions.`),
    /// stripped from the name.
    pub recipient_prefix: String,
}

/// The prompt conventions a format's family was trained on: how
/// [`TextFormat::instruction`], [`TextFormat::render_calls`] and
/// [`TextFormat::render_results`] write tools, calls and results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Family {
    /// Hermes and Qwen2.5/Qwen3: `<tools>` JSON lines, `<tool_response>`
    /// in a user turn.
    Hermes,
    /// Qwen3-Coder and Qwen3.5: the `<tools><function>` listing.
    Qwen3Coder,
    /// GLM-4.5 to 4.7: `<tools>` JSON lines, results after
    /// `<|observation|>`.
    Glm45,
    /// Llama 3.1 to 3.3's JSON tool calling: results in an `ipython` turn.
    Llama3Json,
    /// Pythonic calls (Llama 3.2, Llama 4, LFM2, OLMo 3).
    Pythonic,
    /// Mistral before tokenizer v11: `[AVAILABLE_TOOLS]`, results as
    /// `[TOOL_RESULTS] {"content", "call_id"}[/TOOL_RESULTS]`.
    Mistral,
    /// Mistral from tokenizer v11: results as
    /// `[TOOL_RESULTS]content[/TOOL_RESULTS]`.
    MistralV11,
    /// DeepSeek V3: `<tools>` JSON lines and fenced JSON calls.
    DeepSeekV3,
    /// DeepSeek V3.1: `## Tools` and bare JSON calls.
    DeepSeekV31,
    /// Kimi K2: a `tool_declare` system message, results in a `tool` turn.
    KimiK2,
    /// gpt-oss harmony: the TypeScript-like `namespace functions`, results
    /// as `functions.NAME to=assistant` messages.
    Harmony,
    /// A user-defined tag pair: a plain instruction naming the tags.
    Tags,
}

/// The names [`TextFormat::by_name`] knows, besides `tags:START,END`.
pub const FORMAT_NAMES: [&str; 11] = [
    "hermes",
    "qwen3-coder",
    "glm45",
    "llama3-json",
    "pythonic",
    "mistral",
    "mistral-v11",
    "deepseek-v3",
    "deepseek-v31",
    "kimi-k2",
    "harmony",
];

/// A format name [`TextFormat::by_name`] does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnknownFormat {
    /// Not one of [`FORMAT_NAMES`] nor `tags:START,END`.
    #[error("unknown text format {0:?}: expected one of {names} or tags:START,END", names = FORMAT_NAMES.join(", "))]
    Name(String),
    /// `tags:` without two non-empty markers split by a comma.
    #[error("a tags format is written tags:START,END with two non-empty markers (got {0:?})")]
    Tags(String),
}

impl TextFormat {
    /// The built-in format called `name` ([`FORMAT_NAMES`]), or
    /// `tags:START,END` for [`TextFormat::tags`].
    ///
    /// ```
    /// use tinyagents_tools::stream::text::TextFormat;
    ///
    /// assert_eq!(TextFormat::by_name("kimi-k2")?, TextFormat::kimi_k2());
    /// let tags = TextFormat::by_name("tags:[TOOL_CALL],[/TOOL_CALL]")?;
    /// assert_eq!(tags, TextFormat::tags("[TOOL_CALL]", "[/TOOL_CALL]"));
    /// assert!(TextFormat::by_name("llama5").is_err());
    /// # Ok::<(), tinyagents_tools::stream::text::UnknownFormat>(())
    /// ```
    pub fn by_name(name: &str) -> Result<TextFormat, UnknownFormat> {
        if let Some(markers) = name.strip_prefix("tags:") {
            return match markers.split_once(',') {
                Some((start, end)) if !start.is_empty() && !end.is_empty() => {
                    Ok(TextFormat::tags(start, end))
                }
                _ => Err(UnknownFormat::Tags(name.to_owned())),
            };
        }
        Ok(match name {
            "hermes" => TextFormat::hermes(),
            "qwen3-coder" => TextFormat::qwen3_coder(),
            "glm45" => TextFormat::glm45(),
            "llama3-json" => TextFormat::llama3_json(),
            "pythonic" => TextFormat::pythonic(),
            "mistral" => TextFormat::mistral(),
            "mistral-v11" => TextFormat::mistral_v11(),
            "deepseek-v3" => TextFormat::deepseek_v3(),
            "deepseek-v31" => TextFormat::deepseek_v31(),
            "kimi-k2" => TextFormat::kimi_k2(),
            "harmony" => TextFormat::harmony(),
            _ => return Err(UnknownFormat::Name(name.to_owned())),
        })
    }

    /// Every marker the format writes, reasoning markers included: what a
    /// tokenizer must keep (see [`special_tokens`](Self::special_tokens))
    /// and what a lazy grammar triggers on.
    pub fn markers(&self) -> Vec<&str> {
        let mut all: Vec<&str> = Vec::new();
        if let Some(r) = &self.reasoning {
            all.extend([r.start.as_str(), r.end.as_str()]);
        }
        for run in &self.runs {
            if let RunStart::Marker(m) = &run.start {
                all.push(m);
            }
            all.extend(run.end.as_deref());
            all.extend(run.call_start.as_deref());
            all.extend(run.call_end.as_deref());
        }
        match &self.body {
            CallBody::NameThenJson {
                name_prefix,
                id_marker,
                arguments_marker,
                fence,
                ..
            } => {
                all.extend(name_prefix.as_deref());
                all.extend(id_marker.as_deref());
                all.push(arguments_marker);
                if let Some(f) = fence {
                    all.extend([f.start.as_str(), f.end.as_str()]);
                }
            }
            CallBody::XmlParameters(x) => all.extend([
                x.function_start.as_str(),
                x.function_end.as_str(),
                x.parameter_start.as_str(),
                x.parameter_end.as_str(),
            ]),
            CallBody::KeyValue(k) => all.extend([
                k.key_start.as_str(),
                k.key_end.as_str(),
                k.value_start.as_str(),
                k.value_end.as_str(),
            ]),
            CallBody::Harmony(h) => all.extend([
                h.start.as_str(),
                h.channel.as_str(),
                h.message.as_str(),
                h.constrain.as_str(),
                h.end.as_str(),
                h.call.as_str(),
                h.return_.as_str(),
            ]),
            CallBody::JsonObject { .. } | CallBody::Pythonic => {}
        }
        let mut seen = std::collections::HashSet::new();
        all.retain(|m| !m.trim().is_empty() && seen.insert(*m));
        all
    }
}

impl FromStr for TextFormat {
    type Err = UnknownFormat;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        TextFormat::by_name(name)
    }
}

impl fmt::Display for TextFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}
