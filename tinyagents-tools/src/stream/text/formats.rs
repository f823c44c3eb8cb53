//! The built-in formats' descriptions, each with the source its markers
//! were read from.

use super::format::{
    CallBody, CallRun, Delimiters, Family, HarmonyMarkers, Join, KeyValuePairs, NameForm, RunStart,
    TextFormat, XmlParameters,
};

fn think() -> Option<Delimiters> {
    Some(Delimiters::new("<think>", "</think>"))
}

fn marker(m: &str) -> RunStart {
    RunStart::Marker(m.to_owned())
}

/// A run that is one call between two markers.
fn tagged(start: &str, end: &str) -> CallRun {
    CallRun {
        start: marker(start),
        end: Some(end.to_owned()),
        call_start: None,
        call_end: None,
        join: Join::Adjacent,
    }
}

fn json_object(name: &str, arguments: &[&str], id: Option<&str>) -> CallBody {
    CallBody::JsonObject {
        name_key: name.to_owned(),
        argument_keys: arguments.iter().map(|k| (*k).to_owned()).collect(),
        id_key: id.map(str::to_owned),
    }
}

fn list() -> Join {
    Join::List {
        open: "[".into(),
        separator: ",".into(),
        close: "]".into(),
    }
}

impl TextFormat {
    /// Hermes, Qwen2.5 and Qwen3: `<tool_call>{"name": ..., "arguments":
    /// {...}}</tool_call>`, reasoning in `<think>` (Qwen3's chat template;
    /// vLLM's `hermes` parser). Several JSON objects inside one
    /// `<tool_call>` are read as several calls. The arguments may also be
    /// under `parameters`, as Llama's format writes them (models tuned on
    /// both mix them up); an object under any other key fails the call
    /// rather than run it without its arguments.
    pub fn hermes() -> TextFormat {
        TextFormat {
            name: "hermes".into(),
            reasoning: think(),
            runs: vec![tagged("<tool_call>", "</tool_call>")],
            body: json_object("name", &["arguments", "parameters"], None),
            special_tokens: false,
            family: Family::Hermes,
        }
    }

    /// A user-defined tag pair around a JSON object with `name` and `args`
    /// (or `arguments`): the seed framework's
    /// `[TOOL_CALL]{"name": ..., "args": {...}}[/TOOL_CALL]` is
    /// `TextFormat::tags("[TOOL_CALL]", "[/TOOL_CALL]")`. No reasoning
    /// markers.
    pub fn tags(start: impl Into<String>, end: impl Into<String>) -> TextFormat {
        let (start, end) = (start.into(), end.into());
        TextFormat {
            name: format!("tags:{start},{end}"),
            reasoning: None,
            runs: vec![tagged(&start, &end)],
            body: json_object("name", &["args", "arguments"], None),
            special_tokens: false,
            family: Family::Tags,
        }
    }

    /// Qwen3-Coder and Qwen3.5: `<tool_call><function=NAME><parameter=K>
    /// raw value</parameter></function></tool_call>`, one leading and one
    /// trailing newline of each value dropped (Qwen3-Coder's chat template
    /// writes them; vLLM's `qwen3_coder` parser).
    ///
    /// These models often leave out the opening `<tool_call>` and still
    /// write the closing one: a bare `<function=NAME>...</function>`
    /// anywhere in the visible text is a call too (its second run,
    /// [`RunStart::BodyOpening`]; vLLM's parser keys on `<function=` for
    /// the same reason), and a `</tool_call>` right after it (whitespace
    /// between) is markup. A `<function=` in visible text is call markup
    /// from then on, fail closed as every call: one the output cuts off is
    /// truncated, and one that does not read (prose that writes
    /// `<function=x> like this`) fails as malformed with its raw text, up
    /// to its `</function>`, a `</tool_call>`, the next call's opening or
    /// the end of the output. A `</tool_call>` with no call before it is
    /// text.
    pub fn qwen3_coder() -> TextFormat {
        TextFormat {
            name: "qwen3-coder".into(),
            reasoning: think(),
            runs: vec![
                tagged("<tool_call>", "</tool_call>"),
                CallRun {
                    start: RunStart::BodyOpening,
                    end: Some("</tool_call>".into()),
                    call_start: None,
                    call_end: None,
                    join: Join::Single,
                },
            ],
            body: CallBody::XmlParameters(XmlParameters {
                function_start: "<function=".into(),
                name_end: ">".into(),
                function_end: "</function>".into(),
                parameter_start: "<parameter=".into(),
                parameter_end: "</parameter>".into(),
            }),
            special_tokens: false,
            family: Family::Qwen3Coder,
        }
    }

    /// GLM-4.5 to 4.7: `<tool_call>NAME<arg_key>k</arg_key><arg_value>v
    /// </arg_value></tool_call>` (GLM-4.5's chat template, llama.cpp's
    /// `glm_4_5.jinja`; vLLM's `glm45` and `glm47` parsers; 4.7 drops the
    /// newlines 4.5 writes between the pieces, and both are read).
    pub fn glm45() -> TextFormat {
        TextFormat {
            name: "glm45".into(),
            reasoning: think(),
            runs: vec![CallRun {
                join: Join::Single,
                ..tagged("<tool_call>", "</tool_call>")
            }],
            body: CallBody::KeyValue(KeyValuePairs {
                key_start: "<arg_key>".into(),
                key_end: "</arg_key>".into(),
                value_start: "<arg_value>".into(),
                value_end: "</arg_value>".into(),
            }),
            special_tokens: false,
            family: Family::Glm45,
        }
    }

    /// Llama 3.1 to 3.3 JSON tool calling: `{"name": ..., "parameters":
    /// {...}}` at the start of the output or after `<|python_tag|>`,
    /// several calls joined by `; ` (vLLM's `llama3_json` parser and
    /// `tool_chat_template_llama3.1_json.jinja`). `arguments` is read
    /// where `parameters` is missing.
    pub fn llama3_json() -> TextFormat {
        let run = |start| CallRun {
            start,
            end: None,
            call_start: None,
            call_end: None,
            join: Join::Separator("; ".into()),
        };
        TextFormat {
            name: "llama3-json".into(),
            reasoning: None,
            runs: vec![run(RunStart::OutputStart), run(marker("<|python_tag|>"))],
            body: json_object("name", &["parameters", "arguments"], None),
            special_tokens: true,
            family: Family::Llama3Json,
        }
    }

    /// Pythonic calls: a bare `[f(a=1, b="x"), g()]` at the start of the
    /// output (Llama 3.2, OLMo 3), or anywhere inside Llama 4's
    /// `<|python_start|>` ... `<|python_end|>` or LFM2's
    /// `<|tool_call_start|>` ... `<|tool_call_end|>` (vLLM's `pythonic`,
    /// `llama4_pythonic` and `lfm2` parsers; LFM2's chat template).
    pub fn pythonic() -> TextFormat {
        let run = |start, end: Option<&str>| CallRun {
            start,
            end: end.map(str::to_owned),
            call_start: None,
            call_end: None,
            join: list(),
        };
        TextFormat {
            name: "pythonic".into(),
            reasoning: None,
            runs: vec![
                run(RunStart::OutputStart, None),
                run(marker("<|python_start|>"), Some("<|python_end|>")),
                run(marker("<|tool_call_start|>"), Some("<|tool_call_end|>")),
            ],
            body: CallBody::Pythonic,
            special_tokens: true,
            family: Family::Pythonic,
        }
    }

    /// Mistral before tokenizer v11 (Mistral 7B v0.3, Mixtral 8x22B, Nemo,
    /// Small 3.1): `[TOOL_CALLS] [{"name": ..., "arguments": {...}, "id":
    /// ...}, ...]` (mistral-common's `InstructTokenizerV3`; the `id` is
    /// optional).
    pub fn mistral() -> TextFormat {
        TextFormat {
            name: "mistral".into(),
            reasoning: None,
            runs: vec![CallRun {
                start: marker("[TOOL_CALLS]"),
                end: None,
                call_start: None,
                call_end: None,
                join: list(),
            }],
            body: json_object("name", &["arguments"], Some("id")),
            special_tokens: true,
            family: Family::Mistral,
        }
    }

    /// Mistral from tokenizer v11 (Small 3.2, Magistral, Devstral):
    /// `[TOOL_CALLS]NAME[ARGS]{...}` before each call, `[CALL_ID]id`
    /// between the name and `[ARGS]` in v11, reasoning in
    /// `[THINK]`...`[/THINK]` (mistral-common's `InstructTokenizerV11` and
    /// `V13`).
    pub fn mistral_v11() -> TextFormat {
        TextFormat {
            name: "mistral-v11".into(),
            reasoning: Some(Delimiters::new("[THINK]", "[/THINK]")),
            runs: vec![CallRun {
                start: marker("[TOOL_CALLS]"),
                end: None,
                call_start: None,
                call_end: None,
                join: Join::Single,
            }],
            body: CallBody::NameThenJson {
                name_prefix: None,
                id_marker: Some("[CALL_ID]".into()),
                arguments_marker: "[ARGS]".into(),
                fence: None,
                name: NameForm::Plain,
            },
            special_tokens: true,
            family: Family::MistralV11,
        }
    }

    fn deepseek_runs() -> Vec<CallRun> {
        vec![CallRun {
            start: marker("<｜tool▁calls▁begin｜>"),
            end: Some("<｜tool▁calls▁end｜>".into()),
            call_start: Some("<｜tool▁call▁begin｜>".into()),
            call_end: Some("<｜tool▁call▁end｜>".into()),
            join: Join::Adjacent,
        }]
    }

    /// DeepSeek V3: `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function
    /// <｜tool▁sep｜>NAME\n```json\n{...}\n```<｜tool▁call▁end｜>
    /// <｜tool▁calls▁end｜>` (full-width `｜` U+FF5C and `▁` U+2581;
    /// vLLM's `tool_chat_template_deepseekv3.jinja` and `deepseek_v3`
    /// parser), reasoning in `<think>` (R1).
    pub fn deepseek_v3() -> TextFormat {
        TextFormat {
            name: "deepseek-v3".into(),
            reasoning: think(),
            runs: TextFormat::deepseek_runs(),
            body: CallBody::NameThenJson {
                name_prefix: Some("function<｜tool▁sep｜>".into()),
                id_marker: None,
                arguments_marker: "\n".into(),
                fence: Some(Delimiters::new("```json", "```")),
                name: NameForm::Plain,
            },
            special_tokens: true,
            family: Family::DeepSeekV3,
        }
    }

    /// DeepSeek V3.1: `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>NAME
    /// <｜tool▁sep｜>{...}<｜tool▁call▁end｜><｜tool▁calls▁end｜>`, bare
    /// JSON (its chat template; vLLM's `deepseek_v31` parser). In thinking
    /// mode the template opens `<think>` in the prompt:
    /// read such output with
    /// [`TextReader::starting_in_reasoning`](super::TextReader::starting_in_reasoning).
    pub fn deepseek_v31() -> TextFormat {
        TextFormat {
            name: "deepseek-v31".into(),
            reasoning: think(),
            runs: TextFormat::deepseek_runs(),
            body: CallBody::NameThenJson {
                name_prefix: None,
                id_marker: None,
                arguments_marker: "<｜tool▁sep｜>".into(),
                fence: None,
                name: NameForm::Plain,
            },
            special_tokens: true,
            family: Family::DeepSeekV31,
        }
    }

    /// Kimi K2: `<|tool_calls_section_begin|><|tool_call_begin|>
    /// functions.NAME:IDX<|tool_call_argument_begin|>{...}
    /// <|tool_call_end|><|tool_calls_section_end|>`; `functions.NAME:IDX` is
    /// the call's id (Kimi K2's chat templates; vLLM's `kimi_k2` parser),
    /// reasoning in `<think>` (K2 Thinking).
    pub fn kimi_k2() -> TextFormat {
        TextFormat {
            name: "kimi-k2".into(),
            reasoning: think(),
            runs: vec![CallRun {
                start: marker("<|tool_calls_section_begin|>"),
                end: Some("<|tool_calls_section_end|>".into()),
                call_start: Some("<|tool_call_begin|>".into()),
                call_end: Some("<|tool_call_end|>".into()),
                join: Join::Adjacent,
            }],
            body: CallBody::NameThenJson {
                name_prefix: None,
                id_marker: None,
                arguments_marker: "<|tool_call_argument_begin|>".into(),
                fence: None,
                name: NameForm::IdWithName {
                    prefix: "functions.".into(),
                    index_separator: ":".into(),
                },
            },
            special_tokens: true,
            family: Family::KimiK2,
        }
    }

    /// gpt-oss harmony, as openai/harmony's format document gives it:
    /// messages `<|start|>{header}<|message|>{content}<|end|>` (the first
    /// one's `<|start|>assistant` is in the prompt), the `analysis`
    /// channel as reasoning, `final` and recipient-less `commentary` as
    /// text, and a call as a message whose header names a recipient
    /// (`to=functions.NAME`, in the role part or after the channel), with
    /// `json` or `<|constrain|>json` as its content type, ended by
    /// `<|call|>`.
    pub fn harmony() -> TextFormat {
        TextFormat {
            name: "harmony".into(),
            reasoning: None,
            runs: Vec::new(),
            body: CallBody::Harmony(HarmonyMarkers {
                start: "<|start|>".into(),
                channel: "<|channel|>".into(),
                message: "<|message|>".into(),
                constrain: "<|constrain|>".into(),
                end: "<|end|>".into(),
                call: "<|call|>".into(),
                return_: "<|return|>".into(),
                reasoning_channel: "analysis".into(),
                recipient_prefix: "functions.".into(),
            }),
            special_tokens: true,
            family: Family::Harmony,
        }
    }
}
