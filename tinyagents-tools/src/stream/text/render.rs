//! The other direction: the tools written into the prompt, the assistant's
//! calls written back into the transcript, and tool results written as the
//! family's chat template writes them.
//!
//! Each family follows its chat template (Qwen's, Qwen3-Coder's, GLM's,
//! Llama 3.1's JSON and Llama 4's pythonic templates, mistral-common's
//! tokenizers, DeepSeek's and Kimi's templates, openai/harmony's renderer);
//! JSON is written as those templates' `tojson` writes it (`", "` and
//! `": "` between items, keys in the schema's order), other values as
//! Python's `str()` where a template writes them with `| string` in the
//! tools' listing (`True`, `False`). The tests check each against the real
//! renderer's output; where ours writes calls otherwise, on purpose,
//! [`TextFormat::render_calls`] says where and why.

use std::fmt::Write as _;

use serde_json::{Map, Value};

use super::format::{CallBody, Family, RunStart, TextFormat};
use crate::call::{RawArguments, ToolCall};
use crate::output::ToolMessage;
use crate::spec::ToolSpec;

impl TextFormat {
    /// The tools, described the way this format's family was trained to
    /// read them, byte for byte as the family's template (or renderer)
    /// writes them. It is the part of the prompt about tools only: the
    /// chat-level parts around it (the beginning-of-sequence token, role
    /// headers, the template's default system text, dates) are the
    /// caller's, as follows.
    ///
    /// | family | what this returns | what the caller writes around it |
    /// |---|---|---|
    /// | Hermes (Qwen3), Qwen3-Coder | the system turn's `# Tools` section | `<\|im_start\|>system\n`, the system text and `\n\n` before (Qwen3-Coder's template writes "You are Qwen, a helpful AI assistant that can interact with a computer to solve tasks." when there is none), `<\|im_end\|>\n` after |
    /// | GLM-4.5 | the text of its own `<\|system\|>` turn | `[gMASK]<sop><\|system\|>\n` before |
    /// | Llama 3.x JSON | the start of the first user turn | the system turn (`Environment: ipython`, the knowledge and today's dates) and the user turn's header before, the user's text right after |
    /// | pythonic (Llama 4) | the end of the system turn | the system text and `\n` before (with no system text, Llama 4's template writes its own default system text in its place, ending in `that you can invoke:\n` and the list), `<\|eot\|>` after |
    /// | Mistral | the `[AVAILABLE_TOOLS]` block | put right before the last `[INST]` (tokenizers v3 to v11) or the first (v13 and later) |
    /// | DeepSeek V3, V3.1 | the tools part of the system prompt | the system text and `\n\n` before, the first `<｜User｜>` after |
    /// | Kimi K2 | the whole `tool_declare` message | nothing: it comes first |
    /// | harmony | the developer message's `# Tools` section | the system message (with its `Calls to these tools must go to the commentary channel: 'functions'.` line) and `<\|start\|>developer<\|message\|>` with the `# Instructions` before, `<\|end\|>` after |
    /// | tags | a plain instruction | anywhere in the system prompt |
    ///
    /// Harmony writes a tool whose schema has no properties as `() => any`,
    /// as openai/harmony does a tool declared without parameters. Where its
    /// renderer writes `any` for a schema (a local `$ref`, `anyOf`, an
    /// `enum` without a `type`), this writes the type the schema describes.
    ///
    /// ```
    /// use tinyagents_tools::stream::text::TextFormat;
    /// use tinyagents_tools::ToolSpec;
    ///
    /// let tools = [ToolSpec::builder("get_location", "Gets the location of the user.").build()?];
    /// let section = TextFormat::harmony().instruction(&tools);
    /// assert_eq!(
    ///     section,
    ///     "# Tools\n\n## functions\n\nnamespace functions {\n\n\
    ///      // Gets the location of the user.\ntype get_location = () => any;\n\n\
    ///      } // namespace functions"
    /// );
    /// # Ok::<(), tinyagents_tools::spec::SpecError>(())
    /// ```
    pub fn instruction(&self, tools: &[ToolSpec]) -> String {
        let lines = |sep: &str| {
            tools
                .iter()
                .map(|t| openai_tool(t, None, 0))
                .collect::<Vec<_>>()
                .join(sep)
        };
        match self.family {
            Family::Hermes => format!(
                "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n\
                 You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n{}\n</tools>\n\n\
                 For each function call, return a json object with function name and arguments within \
                 <tool_call></tool_call> XML tags:\n<tool_call>\n{{\"name\": <function-name>, \"arguments\": \
                 <args-json-object>}}\n</tool_call>",
                lines("\n")
            ),
            Family::Glm45 => format!(
                "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n\
                 You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n{}\n</tools>\n\n\
                 For each function call, output the function name and arguments within the following XML format:\n\
                 <tool_call>{{function-name}}\n<arg_key>{{arg-key-1}}</arg_key>\n<arg_value>{{arg-value-1}}</arg_value>\n\
                 <arg_key>{{arg-key-2}}</arg_key>\n<arg_value>{{arg-value-2}}</arg_value>\n...\n</tool_call>",
                lines("\n")
            ),
            Family::Qwen3Coder => qwen3_coder_tools(tools),
            Family::Llama3Json => {
                let mut out = String::from(
                    "Given the following functions, please respond with a JSON for a function call \
                     with its proper arguments that best answers the given prompt.\n\n\
                     Respond in the format {\"name\": function name, \"parameters\": dictionary of \
                     argument name and its value}. Do not use variables.\n\n",
                );
                for t in tools {
                    out.push_str(&openai_tool(t, Some(4), 0));
                    out.push_str("\n\n");
                }
                out
            }
            Family::Pythonic => {
                format!(
                    "Here is a list of functions in JSON format that you can invoke. Use exact format: \
                     [func_name1(param1=value1, param2=value2), func_name2(...)]\n{}\n",
                    openai_list(tools, Some(4))
                )
            }
            Family::Mistral | Family::MistralV11 => {
                let space = if self.family == Family::Mistral {
                    " "
                } else {
                    ""
                };
                format!(
                    "[AVAILABLE_TOOLS]{space}{}[/AVAILABLE_TOOLS]",
                    openai_list(tools, None)
                )
            }
            Family::DeepSeekV3 => format!(
                "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n\
                 You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n{}\n</tools>\n\n\
                 For function call returns, you should first print <｜tool▁calls▁begin｜>\
                 For each function call, you should return object like:\n\
                 <｜tool▁call▁begin｜>function<｜tool▁sep｜><function_name>\n```json\n\
                 <function_arguments_in_json_format>\n```<｜tool▁call▁end｜>\
                 At the end of function call returns, you should print <｜tool▁calls▁end｜><｜end▁of▁sentence｜>",
                lines("\n")
            ),
            Family::DeepSeekV31 => {
                let mut out = String::from("## Tools\nYou have access to the following tools:\n");
                for t in tools {
                    let _ = write!(
                        out,
                        "\n### {}\nDescription: {}\n\nParameters: {}\n",
                        t.name.as_str(),
                        t.description,
                        to_json(t.input_schema.as_value())
                    );
                }
                out.push_str(
                    "\nIMPORTANT: ALWAYS adhere to this exact format for tool use:\n\
                     <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>tool_call_name<｜tool▁sep｜>tool_call_arguments\
                     <｜tool▁call▁end｜>{{additional_tool_calls}}<｜tool▁calls▁end｜>\n\nWhere:\n\n\
                     - `tool_call_name` must be an exact match to one of the available tools\n\
                     - `tool_call_arguments` must be valid JSON that strictly follows the tool's Parameters Schema\n\
                     - For multiple tool calls, chain them directly without separators or spaces\n",
                );
                out
            }
            Family::KimiK2 => {
                format!(
                    "<|im_system|>tool_declare<|im_middle|>{}<|im_end|>",
                    openai_list(tools, None)
                )
            }
            Family::Harmony => harmony_tools(tools),
            Family::Tags => {
                let (start, end) = self.tag_markers();
                format!(
                    "You can call tools. To call one, write {start}{{\"name\": <tool name>, \"args\": \
                     <arguments as a JSON object>}}{end}; write one such block per call. The tools, \
                     one JSON object a line:\n{}",
                    lines("\n")
                )
            }
        }
    }

    /// The first run's start and end markers (a tags format's pair).
    fn tag_markers(&self) -> (&str, &str) {
        let run = self.runs.first();
        let start = match run.map(|r| &r.start) {
            Some(RunStart::Marker(m)) => m.as_str(),
            _ => "",
        };
        (start, run.and_then(|r| r.end.as_deref()).unwrap_or(""))
    }

    /// The assistant's `calls` written as this format writes them: the
    /// model's own turn, rebuilt for the transcript of the next prompt,
    /// byte for byte as the family's template (or renderer) writes that
    /// turn's calls after the assistant header and before the end of turn.
    /// Reading the result back gives the same names and arguments (and the
    /// same ids where the format writes ids).
    ///
    /// JSON arguments are the text the model wrote, which is the
    /// renderers' own output when that text is written as `json.dumps`
    /// writes it (the renderers that re-serialize, mistral-common and the
    /// templates given an object, write that form). Where a renderer
    /// writes something else, this follows the family's form and says why:
    ///
    /// - Qwen3-Coder: the template writes a value that is neither object
    ///   nor array through `| string`, so `True`, `False`, `None`; this
    ///   writes JSON's `true`, `false`, `null`, which the reader types as
    ///   such for every parameter; Python's spellings it reads only where
    ///   the schema allows the value (a property the schema says nothing
    ///   about keeps `True` as a string), so the transcript shows the
    ///   model only values that read back.
    /// - GLM: GLM-4.6's template (GLM-4.5's alike), a newline before each
    ///   `<arg_key>`, `<arg_value>` and `</tool_call>`; llama.cpp's own
    ///   GLM-4.5 template, rewritten for its engine, writes none (the
    ///   reader reads both).
    /// - Llama 3.x JSON: Llama 3.1's template takes one call a turn; more
    ///   are joined by `; `, the separator the reader reads.
    /// - pythonic: Python literals (`True`, `None`, dicts); vLLM's Llama 4
    ///   template quotes every value with `"%s"` (`append="True"`, a
    ///   string's own quotes unescaped), which reads back as other calls,
    ///   and matches this for values that are plain strings.
    /// - harmony: the recipient after the channel
    ///   (`<|channel|>commentary to=functions.NAME <|constrain|>json`), as
    ///   openai/harmony's format document writes calls in a conversation
    ///   and gpt-oss writes them; openai-harmony's renderer puts it in the
    ///   role part (`assistant to=functions.NAME<|channel|>commentary`),
    ///   which the document allows too and the reader reads.
    ///
    /// ```
    /// use tinyagents_tools::stream::text::TextFormat;
    /// use tinyagents_tools::ToolCall;
    ///
    /// let calls = [ToolCall::new("functions.get_weather:0", "get_weather", r#"{"city": "Paris"}"#)];
    /// assert_eq!(
    ///     TextFormat::kimi_k2().render_calls(&calls),
    ///     "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0\
    ///      <|tool_call_argument_begin|>{\"city\": \"Paris\"}<|tool_call_end|><|tool_calls_section_end|>"
    /// );
    /// ```
    pub fn render_calls(&self, calls: &[ToolCall]) -> String {
        let name = |c: &ToolCall| c.name.as_str().to_owned();
        let json_args = |c: &ToolCall| arguments_text(&c.arguments);
        let each = |f: &dyn Fn(usize, &ToolCall) -> String, sep: &str| {
            calls
                .iter()
                .enumerate()
                .map(|(i, c)| f(i, c))
                .collect::<Vec<_>>()
                .join(sep)
        };
        match self.family {
            Family::Hermes => each(
                &|_, c| {
                    format!(
                        "<tool_call>\n{{\"name\": {}, \"arguments\": {}}}\n</tool_call>",
                        to_json(&Value::String(name(c))),
                        json_args(c)
                    )
                },
                "\n",
            ),
            Family::Tags => {
                let (start, end) = self.tag_markers();
                each(
                    &|_, c| {
                        format!(
                            "{start}{{\"name\": {}, \"args\": {}}}{end}",
                            to_json(&Value::String(name(c))),
                            json_args(c)
                        )
                    },
                    "\n",
                )
            }
            Family::Qwen3Coder => each(
                &|_, c| {
                    let mut out = format!("<tool_call>\n<function={}>\n", name(c));
                    for (k, v) in argument_object(&c.arguments) {
                        let _ = write!(out, "<parameter={k}>\n{}\n</parameter>\n", raw_value(&v));
                    }
                    out.push_str("</function>\n</tool_call>");
                    out
                },
                "\n",
            ),
            Family::Glm45 => each(
                &|_, c| {
                    let mut out = format!("<tool_call>{}", name(c));
                    for (k, v) in argument_object(&c.arguments) {
                        let _ = write!(
                            out,
                            "\n<arg_key>{k}</arg_key>\n<arg_value>{}</arg_value>",
                            raw_value(&v)
                        );
                    }
                    out.push_str("\n</tool_call>");
                    out
                },
                "\n",
            ),
            Family::Llama3Json => each(
                &|_, c| {
                    format!(
                        "{{\"name\": {}, \"parameters\": {}}}",
                        to_json(&Value::String(name(c))),
                        json_args(c)
                    )
                },
                "; ",
            ),
            Family::Pythonic => {
                let body = each(
                    &|_, c| {
                        let args: Vec<String> = argument_object(&c.arguments)
                            .into_iter()
                            .map(|(k, v)| format!("{k}={}", python_literal(&v)))
                            .collect();
                        format!("{}({})", name(c), args.join(", "))
                    },
                    ", ",
                );
                format!("[{body}]")
            }
            Family::Mistral => {
                let body = each(
                    &|_, c| {
                        format!(
                            "{{\"name\": {}, \"arguments\": {}, \"id\": {}}}",
                            to_json(&Value::String(name(c))),
                            json_args(c),
                            to_json(&Value::String(c.id.as_str().to_owned()))
                        )
                    },
                    ", ",
                );
                format!("[TOOL_CALLS] [{body}]")
            }
            Family::MistralV11 => each(
                &|_, c| match mistral_id(c.id.as_str()) {
                    Some(id) => {
                        format!("[TOOL_CALLS]{}[CALL_ID]{id}[ARGS]{}", name(c), json_args(c))
                    }
                    None => format!("[TOOL_CALLS]{}[ARGS]{}", name(c), json_args(c)),
                },
                "",
            ),
            Family::DeepSeekV3 => format!(
                "<｜tool▁calls▁begin｜>{}<｜tool▁calls▁end｜>",
                each(
                    &|_, c| format!(
                        "<｜tool▁call▁begin｜>function<｜tool▁sep｜>{}\n```json\n{}\n```<｜tool▁call▁end｜>",
                        name(c),
                        json_args(c)
                    ),
                    "\n",
                )
            ),
            Family::DeepSeekV31 => format!(
                "<｜tool▁calls▁begin｜>{}<｜tool▁calls▁end｜>",
                each(
                    &|_, c| format!(
                        "<｜tool▁call▁begin｜>{}<｜tool▁sep｜>{}<｜tool▁call▁end｜>",
                        name(c),
                        json_args(c)
                    ),
                    "",
                )
            ),
            Family::KimiK2 => format!(
                "<|tool_calls_section_begin|>{}<|tool_calls_section_end|>",
                each(
                    &|i, c| format!(
                        "<|tool_call_begin|>{}<|tool_call_argument_begin|>{}<|tool_call_end|>",
                        kimi_id(c, i),
                        json_args(c)
                    ),
                    "",
                )
            ),
            Family::Harmony => {
                let prefix = match &self.body {
                    CallBody::Harmony(h) => h.recipient_prefix.as_str(),
                    _ => "functions.",
                };
                each(
                    &|_, c| {
                        format!(
                            "<|start|>assistant<|channel|>commentary to={prefix}{} <|constrain|>json<|message|>{}<|call|>",
                            name(c),
                            json_args(c)
                        )
                    },
                    "",
                )
            }
        }
    }

    /// Tool results in this family's form, byte for byte as its template
    /// writes them, ready to append to the prompt after the assistant's
    /// turn; the caller writes the next assistant header after them.
    /// Each family's result turns are included whole: `<tool_response>`
    /// blocks in one `<|im_start|>user` turn (Hermes, Qwen3-Coder), after
    /// `<|observation|>` (GLM), `ipython` turns (Llama 3.x and 4; Llama
    /// 3.1's template takes one call a turn), `[TOOL_RESULTS]` (Mistral:
    /// v3's `{"content", "call_id"}` object, a result that is JSON text as
    /// that JSON; v11's `ID[TOOL_CONTENT]` before the text when the call
    /// has the id a Mistral model writes after `[CALL_ID]`, none otherwise,
    /// as v13 writes them), `<｜tool▁outputs▁begin｜>` (DeepSeek V3) or one
    /// `<｜tool▁output▁begin｜>` each (V3.1), `tool` turns with
    /// `## Return of ID` (Kimi, whose template writes a message's `name` in
    /// the role's place when the request gives one), and
    /// `functions.NAME to=assistant` messages (harmony).
    ///
    /// ```
    /// use tinyagents_tools::stream::text::TextFormat;
    /// use tinyagents_tools::{ContentBlock, ToolMessage};
    ///
    /// let result = ToolMessage {
    ///     tool_call_id: "text-call-0".into(),
    ///     name: "get_weather".into(),
    ///     content: vec![ContentBlock::Text { text: r#"{"sunny": true}"#.into() }],
    ///     structured: None,
    ///     is_error: false,
    /// };
    /// assert_eq!(
    ///     TextFormat::harmony().render_results(&[result]),
    ///     "<|start|>functions.get_weather to=assistant<|channel|>commentary<|message|>{\"sunny\": true}<|end|>"
    /// );
    /// ```
    pub fn render_results<M: AsRef<ToolMessage>>(&self, results: &[M]) -> String {
        let each = |f: &dyn Fn(&ToolMessage) -> String, sep: &str| {
            results
                .iter()
                .map(|m| f(m.as_ref()))
                .collect::<Vec<_>>()
                .join(sep)
        };
        match self.family {
            Family::Hermes => format!(
                "<|im_start|>user{}<|im_end|>\n",
                each(
                    &|m| format!("\n<tool_response>\n{}\n</tool_response>", m.text()),
                    ""
                )
            ),
            Family::Qwen3Coder => format!(
                "<|im_start|>user\n{}<|im_end|>\n",
                each(
                    &|m| format!("<tool_response>\n{}\n</tool_response>\n", m.text()),
                    ""
                )
            ),
            Family::Glm45 => format!(
                "<|observation|>{}",
                each(
                    &|m| format!("\n<tool_response>\n{}\n</tool_response>", m.text()),
                    ""
                )
            ),
            Family::Llama3Json => each(
                &|m| {
                    let mut output = Map::new();
                    output.insert("output".into(), Value::String(m.text()));
                    format!(
                        "<|start_header_id|>ipython<|end_header_id|>\n\n{}<|eot_id|>",
                        to_json(&Value::Object(output))
                    )
                },
                "",
            ),
            Family::Pythonic => each(
                &|m| {
                    format!(
                        "<|header_start|>ipython<|header_end|>\n\n{}<|eot|>",
                        to_json(&Value::String(m.text()))
                    )
                },
                "",
            ),
            Family::Mistral => each(
                &|m| {
                    // mistral-common writes a result that is JSON text as
                    // that JSON, any other text as a string.
                    let text = m.text();
                    let content = serde_json::from_str(&text).unwrap_or(Value::String(text));
                    format!(
                        "[TOOL_RESULTS] {{\"content\": {}, \"call_id\": {}}}[/TOOL_RESULTS]",
                        to_json(&content),
                        to_json(&Value::String(m.tool_call_id.as_str().to_owned()))
                    )
                },
                "",
            ),
            Family::MistralV11 => each(
                &|m| match mistral_id(m.tool_call_id.as_str()) {
                    Some(id) => format!(
                        "[TOOL_RESULTS]{id}[TOOL_CONTENT]{}[/TOOL_RESULTS]",
                        m.text()
                    ),
                    None => format!("[TOOL_RESULTS]{}[/TOOL_RESULTS]", m.text()),
                },
                "",
            ),
            Family::DeepSeekV3 => format!(
                "<｜tool▁outputs▁begin｜>{}<｜tool▁outputs▁end｜>",
                each(
                    &|m| format!("<｜tool▁output▁begin｜>{}<｜tool▁output▁end｜>", m.text()),
                    "\n"
                )
            ),
            Family::DeepSeekV31 => each(
                &|m| format!("<｜tool▁output▁begin｜>{}<｜tool▁output▁end｜>", m.text()),
                "",
            ),
            Family::KimiK2 => each(
                &|m| {
                    format!(
                        "<|im_system|>tool<|im_middle|>## Return of {}\n{}<|im_end|>",
                        m.tool_call_id.as_str(),
                        m.text()
                    )
                },
                "",
            ),
            Family::Harmony => each(
                &|m| {
                    format!(
                        "<|start|>functions.{} to=assistant<|channel|>commentary<|message|>{}<|end|>",
                        m.name.as_str(),
                        m.text()
                    )
                },
                "",
            ),
            Family::Tags => each(
                &|m| {
                    format!(
                        "<tool_response name={} id={}>\n{}\n</tool_response>",
                        to_json(&Value::String(m.name.as_str().to_owned())),
                        to_json(&Value::String(m.tool_call_id.as_str().to_owned())),
                        m.text()
                    )
                },
                "\n",
            ),
        }
    }
}

/// A tool as the OpenAI-style `{"type": "function", "function": {"name",
/// "description", "parameters"}}` the templates receive, its keys in that
/// order whatever order the JSON maps keep.
fn openai_tool(t: &ToolSpec, indent: Option<usize>, level: usize) -> String {
    let string = |s: &str| Value::String(s.to_owned()).to_string();
    let mut schema = String::new();
    write_json(&mut schema, t.input_schema.as_value(), indent, level + 2);
    let function = ordered_object(
        &[
            ("name", string(t.name.as_str())),
            ("description", string(&t.description)),
            ("parameters", schema),
        ],
        indent,
        level + 1,
    );
    ordered_object(
        &[("type", string("function")), ("function", function)],
        indent,
        level,
    )
}

/// The tools as a JSON array of [`openai_tool`]s.
fn openai_list(tools: &[ToolSpec], indent: Option<usize>) -> String {
    if tools.is_empty() {
        return "[]".into();
    }
    let (sep, pad, close) = match indent {
        Some(n) => (
            ",\n".to_owned() + &" ".repeat(n),
            "\n".to_owned() + &" ".repeat(n),
            "\n".to_owned(),
        ),
        None => (", ".to_owned(), String::new(), String::new()),
    };
    let items: Vec<String> = tools.iter().map(|t| openai_tool(t, indent, 1)).collect();
    format!("[{pad}{}{close}]", items.join(&sep))
}

/// An object whose members, already written, keep the given order.
fn ordered_object(members: &[(&str, String)], indent: Option<usize>, level: usize) -> String {
    let mut out = String::from("{");
    for (i, (k, v)) in members.iter().enumerate() {
        if i > 0 {
            out.push_str(if indent.is_some() { "," } else { ", " });
        }
        if let Some(n) = indent {
            out.push('\n');
            out.push_str(&" ".repeat(n * (level + 1)));
        }
        out.push_str(&Value::String((*k).to_owned()).to_string());
        out.push_str(": ");
        out.push_str(v);
    }
    if let Some(n) = indent {
        out.push('\n');
        out.push_str(&" ".repeat(n * level));
    }
    out.push('}');
    out
}

/// The id when it is one a Mistral model writes after `[CALL_ID]` (nine
/// letters and digits): tokenizer v11 writes such ids back with the call
/// and its result, v13 and later write none, and a call read without
/// `[CALL_ID]` has a generated id, so each model gets back its own form.
fn mistral_id(id: &str) -> Option<&str> {
    (id.len() == 9 && id.bytes().all(|b| b.is_ascii_alphanumeric())).then_some(id)
}

/// Kimi's `functions.NAME:IDX` id: the call's own when it has that form.
fn kimi_id(call: &ToolCall, index: usize) -> String {
    let id = call.id.as_str();
    if id.starts_with("functions.") && id.contains(':') {
        id.to_owned()
    } else {
        format!("functions.{}:{index}", call.name.as_str())
    }
}

/// The arguments as JSON text: the exact text when the model wrote it.
fn arguments_text(arguments: &RawArguments) -> String {
    match arguments {
        RawArguments::Text(text) => text.clone(),
        RawArguments::Json(value) => to_json(value),
    }
}

/// The arguments as an object's members (none when they are not one).
fn argument_object(arguments: &RawArguments) -> Vec<(String, Value)> {
    let value = match arguments {
        RawArguments::Json(value) => value.clone(),
        RawArguments::Text(text) => serde_json::from_str(text).unwrap_or(Value::Null),
    };
    match value {
        Value::Object(map) => map.into_iter().collect(),
        _ => Vec::new(),
    }
}

/// A parameter value as raw text: a string as it is, anything else as
/// JSON.
fn raw_value(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => to_json(other),
    }
}

/// JSON as Python's `json.dumps` (and Jinja's `tojson`) writes it:
/// `", "` between items and `": "` after keys, non-ASCII kept.
pub(crate) fn to_json(value: &Value) -> String {
    let mut out = String::new();
    write_json(&mut out, value, None, 0);
    out
}

/// JSON indented by `indent` spaces a level, as `tojson(indent=N)`.
#[cfg(test)]
fn to_json_indented(value: &Value, indent: usize) -> String {
    let mut out = String::new();
    write_json(&mut out, value, Some(indent), 0);
    out
}

fn write_json(out: &mut String, value: &Value, indent: Option<usize>, level: usize) {
    let newline = |out: &mut String, level: usize| {
        if let Some(n) = indent {
            out.push('\n');
            out.push_str(&" ".repeat(n * level));
        }
    };
    let (item_sep, key_sep) = match indent {
        Some(_) => (",", ": "),
        None => (", ", ": "),
    };
    match value {
        Value::Array(items) if !items.is_empty() => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(item_sep);
                }
                newline(out, level + 1);
                write_json(out, item, indent, level + 1);
            }
            newline(out, level);
            out.push(']');
        }
        Value::Object(map) if !map.is_empty() => {
            out.push('{');
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(item_sep);
                }
                newline(out, level + 1);
                out.push_str(&Value::String(k.clone()).to_string());
                out.push_str(key_sep);
                write_json(out, v, indent, level + 1);
            }
            newline(out, level);
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// A JSON value as a Python literal (`True`, `None`, double-quoted
/// strings).
fn python_literal(value: &Value) -> String {
    match value {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => Value::String(s.clone()).to_string(),
        Value::Array(items) => format!(
            "[{}]",
            items
                .iter()
                .map(python_literal)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Value::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| format!("{}: {}", Value::String(k.clone()), python_literal(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// A value as Python's `str()` writes it, as the templates' `| string`
/// filter does: a string as it is, `True`, `False`, `None`, and lists and
/// dicts as their Python repr (single-quoted strings).
fn python_str(value: &Value) -> String {
    fn repr(value: &Value) -> String {
        match value {
            Value::String(s) => format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'")),
            Value::Array(items) => format!(
                "[{}]",
                items.iter().map(repr).collect::<Vec<_>>().join(", ")
            ),
            Value::Object(map) => format!(
                "{{{}}}",
                map.iter()
                    .map(|(k, v)| format!("{}: {}", repr(&Value::String(k.clone())), repr(v)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            other => python_str(other),
        }
    }
    match value {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        other => repr(other),
    }
}

/// Qwen3-Coder's `<tools>` listing, as its chat template writes it.
fn qwen3_coder_tools(tools: &[ToolSpec]) -> String {
    let mut out = String::from("# Tools\n\nYou have access to the following functions:\n\n<tools>");
    for t in tools {
        let schema = t.input_schema.as_value();
        let _ = write!(out, "\n<function>\n<name>{}</name>", t.name.as_str());
        let _ = write!(out, "\n<description>{}</description>", t.description.trim());
        out.push_str("\n<parameters>");
        if let Some(Value::Object(props)) = schema.get("properties") {
            for (name, fields) in props {
                let _ = write!(out, "\n<parameter>\n<name>{name}</name>");
                if let Some(ty) = fields.get("type") {
                    let _ = write!(out, "\n<type>{}</type>", python_str(ty));
                }
                if let Some(Value::String(d)) = fields.get("description") {
                    let _ = write!(out, "\n<description>{}</description>", d.trim());
                }
                extra_keys(&mut out, fields, &["name", "type", "description"]);
                out.push_str("\n</parameter>");
            }
        }
        extra_keys(&mut out, schema, &["type", "properties"]);
        out.push_str("\n</parameters>\n</function>");
    }
    out.push_str(
        "\n</tools>\n\nIf you choose to call a function ONLY reply in the following format with NO suffix:\n\n\
         <tool_call>\n<function=example_function_name>\n<parameter=example_parameter_1>\nvalue_1\n</parameter>\n\
         <parameter=example_parameter_2>\nThis is the value for the second parameter\nthat can span\nmultiple lines\n\
         </parameter>\n</function>\n</tool_call>\n\n<IMPORTANT>\nReminder:\n\
         - Function calls MUST follow the specified format: an inner <function=...></function> block must be nested \
         within <tool_call></tool_call> XML tags\n- Required parameters MUST be specified\n\
         - You may provide optional reasoning for your function call in natural language BEFORE the function call, \
         but NOT after\n- If there is no function call available, answer the question like normal with your current \
         knowledge and do not tell the user about function calls\n</IMPORTANT>",
    );
    out
}

/// The template's `render_extra_keys`: every other key as `<key>value</key>`.
fn extra_keys(out: &mut String, value: &Value, handled: &[&str]) {
    let Value::Object(map) = value else { return };
    for (k, v) in map {
        if handled.contains(&k.as_str()) {
            continue;
        }
        let text = match v {
            Value::Object(_) | Value::Array(_) => to_json(v),
            other => python_str(other),
        };
        let _ = write!(out, "\n<{k}>{text}</{k}>");
    }
}

/// Harmony's `# Tools` section: each tool a TypeScript-like type in the
/// `functions` namespace, as openai/harmony renders JSON Schema.
fn harmony_tools(tools: &[ToolSpec]) -> String {
    let mut parts = vec![
        "## functions\n".to_owned(),
        "namespace functions {\n".to_owned(),
    ];
    for t in tools {
        for line in t.description.lines() {
            parts.push(format!("// {line}"));
        }
        let schema = t.input_schema.as_value();
        let empty = schema
            .get("properties")
            .and_then(Value::as_object)
            .is_none_or(Map::is_empty);
        if empty {
            parts.push(format!("type {} = () => any;\n", t.name.as_str()));
        } else {
            parts.push(format!(
                "type {} = (_: {}) => any;\n",
                t.name.as_str(),
                typescript(schema, schema, "")
            ));
        }
    }
    parts.push("} // namespace functions".to_owned());
    format!("# Tools\n\n{}", parts.join("\n"))
}

/// A JSON Schema as a TypeScript type, as openai/harmony's renderer writes
/// it: objects as `{ key?: type, }` blocks with `//` comments (title,
/// description, examples, default), `oneOf` as `\n | ` alternatives,
/// `nullable` as `| null`. Where the renderer writes `any` (a local `$ref`,
/// `anyOf`, an `enum` without a `type`), this one writes what the schema
/// says: the `$ref`'s target, `anyOf` as `oneOf`, the enum's values.
fn typescript(root: &Value, schema: &Value, indent: &str) -> String {
    let schema = resolve(root, schema);
    if let Some(variants) = alternatives(schema) {
        let mut out = String::new();
        for variant in variants {
            let variant = resolve(root, variant);
            let _ = write!(
                out,
                "\n{indent} | {}",
                nullable(variant, typescript(root, variant, &format!("{indent}   ")))
            );
            let mut comments = Vec::new();
            if let Some(Value::String(d)) = variant.get("description") {
                comments.push(d.clone());
            }
            if let Some(d) = default_comment(variant) {
                comments.push(d);
            }
            if !comments.is_empty() {
                let _ = write!(out, " // {}", comments.join(" "));
            }
        }
        return out;
    }
    match schema.get("type") {
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .map(|t| if t == "integer" { "number" } else { t })
            .collect::<Vec<_>>()
            .join(" | "),
        Some(Value::String(t)) => match t.as_str() {
            "object" => object_type(root, schema, indent),
            "string" => match string_enum(schema) {
                Some(values) => values,
                None => "string".into(),
            },
            "number" | "integer" => "number".into(),
            "boolean" => "boolean".into(),
            "array" => match schema.get("items") {
                Some(items) => format!("{}[]", typescript(root, items, indent)),
                None => "Array<any>".into(),
            },
            _ => "any".into(),
        },
        _ => match schema.get("enum") {
            Some(Value::Array(values)) if !values.is_empty() => values
                .iter()
                .map(Value::to_string)
                .collect::<Vec<_>>()
                .join(" | "),
            _ => "any".into(),
        },
    }
}

/// The schema a local `$ref` points at, or the schema itself.
fn resolve<'a>(root: &'a Value, schema: &'a Value) -> &'a Value {
    schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix('#'))
        .and_then(|p| root.pointer(p))
        .unwrap_or(schema)
}

/// A schema's `oneOf` (or `anyOf`) alternatives.
fn alternatives(schema: &Value) -> Option<&Vec<Value>> {
    ["oneOf", "anyOf"]
        .iter()
        .find_map(|k| schema.get(*k).and_then(Value::as_array))
}

/// A string enum's values, quoted and joined by ` | `.
fn string_enum(schema: &Value) -> Option<String> {
    let values: Vec<String> = schema
        .get("enum")?
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .map(|s| format!("\"{s}\""))
        .collect();
    (!values.is_empty()).then(|| values.join(" | "))
}

/// `ty` with ` | null` added when the schema says `"nullable": true`.
fn nullable(schema: &Value, ty: String) -> String {
    if schema.get("nullable") == Some(&Value::Bool(true)) && !ty.contains("null") {
        format!("{ty} | null")
    } else {
        ty
    }
}

/// The `default: ...` comment: a string quoted, or bare in an enum.
fn default_comment(schema: &Value) -> Option<String> {
    let is_enum = schema
        .get("enum")
        .and_then(Value::as_array)
        .is_some_and(|e| !e.is_empty());
    Some(match schema.get("default")? {
        Value::String(d) if is_enum => format!("default: {d}"),
        Value::String(d) => format!("default: \"{d}\""),
        other => format!("default: {other}"),
    })
}

fn object_type(root: &Value, schema: &Value, indent: &str) -> String {
    let mut out = String::new();
    if let Some(Value::String(d)) = schema.get("description") {
        let _ = writeln!(out, "{indent}// {d}");
    }
    out.push_str("{\n");
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let props = schema.get("properties").and_then(Value::as_object);
    for (key, prop) in props.into_iter().flatten() {
        let prop = resolve(root, prop);
        let optional = if required.contains(&key.as_str()) {
            ""
        } else {
            "?"
        };
        if let Some(Value::String(title)) = prop.get("title") {
            let _ = write!(out, "{indent}// {title}\n{indent}//\n");
        }
        let description = prop.get("description").and_then(Value::as_str);
        match alternatives(prop) {
            None => {
                if let Some(d) = description {
                    let _ = writeln!(out, "{indent}// {d}");
                }
                examples(&mut out, prop, indent);
                let ty = typescript(root, prop, &format!("{indent}    "));
                let _ = write!(out, "{indent}{key}{optional}: {},", nullable(prop, ty));
                if let Some(d) = default_comment(prop) {
                    let _ = write!(out, " // {d}");
                }
                out.push('\n');
            }
            Some(variants) => {
                examples(&mut out, prop, indent);
                // The property's description goes above it, unless the
                // first alternative says the same.
                let first = variants
                    .first()
                    .and_then(|v| v.get("description"))
                    .and_then(Value::as_str);
                let above = description.filter(|d| Some(*d) != first);
                if let Some(d) = above {
                    let _ = writeln!(out, "{indent}// {d}");
                }
                if let Some(d) = default_comment(prop) {
                    let _ = writeln!(out, "{indent}// {d}");
                }
                let _ = writeln!(out, "{indent}{key}{optional}:");
                for (i, variant) in variants.iter().enumerate() {
                    let variant = resolve(root, variant);
                    let ty = typescript(root, variant, &format!("{indent}   "));
                    let _ = write!(out, "{indent} | {}", nullable(variant, ty));
                    let mut comments = Vec::new();
                    let own = variant.get("description").and_then(Value::as_str);
                    if let Some(d) =
                        own.filter(|d| !(i == 0 && above.is_some()) && Some(*d) != description)
                    {
                        comments.push(d.to_owned());
                    }
                    if let Some(d) = default_comment(variant) {
                        comments.push(d);
                    }
                    if !comments.is_empty() {
                        let _ = write!(out, " // {}", comments.join(" "));
                    }
                    out.push('\n');
                }
                let _ = writeln!(out, "{indent},");
            }
        }
    }
    out.push_str(indent);
    out.push('}');
    out
}

/// A property's `examples` as `// Examples:` and `// - "..."` lines.
fn examples(out: &mut String, prop: &Value, indent: &str) {
    let Some(Value::Array(examples)) = prop.get("examples") else {
        return;
    };
    if examples.is_empty() {
        return;
    }
    let _ = writeln!(out, "{indent}// Examples:");
    for example in examples.iter().filter_map(Value::as_str) {
        let _ = writeln!(out, "{indent}// - \"{example}\"");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_is_written_as_jinja_s_tojson_writes_it() {
        let value = json!({"a": [1, "é"], "b": {}});
        assert_eq!(to_json(&value), r#"{"a": [1, "é"], "b": {}}"#);
        assert_eq!(
            to_json_indented(&json!({"a": [1]}), 4),
            "{\n    \"a\": [\n        1\n    ]\n}"
        );
    }

    #[test]
    fn harmony_renders_a_schema_as_its_format_document_shows() {
        // The format document's get_current_weather example.
        let schema = json!({
            "type": "object",
            "properties": {
                "format": {"type": "string", "enum": ["celsius", "fahrenheit"], "default": "celsius"},
                "location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"},
            },
            "required": ["location"]
        });
        assert_eq!(
            typescript(&schema, &schema, ""),
            "{\nformat?: \"celsius\" | \"fahrenheit\", // default: celsius\n\
             // The city and state, e.g. San Francisco, CA\nlocation: string,\n}"
        );
    }
}
