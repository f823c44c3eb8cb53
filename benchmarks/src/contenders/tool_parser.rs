//! The `tool-parser` crate (the Rust text tool-call parsers of SGLang's
//! lineage) driven as its users drive it, beside ours, for the text formats
//! both read.
//!
//! Its parse is `async` (`async_trait`, one boxed future per call) but
//! never waits: each future is polled once, with a no-op waker
//! ([`now`]). A streamed read is `parse_incremental` per piece, then, at
//! the end, what it still holds (`get_unstreamed_tool_args`,
//! `take_unstreamed_normal_text`), as its gateway does at the end of a
//! stream.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use openai_protocol::common::Tool;
use serde_json::Value;
use tinyagents_tools::ToolSpec;
use tinyagents_tools::call::RawArguments;
use tinyagents_tools::stream::ModelOutput;
use tool_parser::ParserFactory;
use tool_parser::traits::ToolParser;

/// Our text formats that `tool-parser` reads too, with the name of its
/// parser for each.
pub const COMMON_FORMATS: [(&str, &str); 9] = [
    ("hermes", "qwen"),
    ("qwen3-coder", "qwen_coder"),
    ("glm45", "glm45_moe"),
    ("llama3-json", "llama"),
    ("pythonic", "pythonic"),
    ("mistral", "mistral"),
    ("deepseek-v3", "deepseek"),
    ("deepseek-v31", "deepseek31"),
    ("kimi-k2", "kimik2"),
];

/// What a parse gave, in a form both parsers' outputs take: the visible
/// text and each call's name and arguments (as the JSON value the
/// arguments' text reads as; text that does not read as JSON stays a JSON
/// string).
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    /// The visible text.
    pub text: String,
    /// The complete calls, in order: name, arguments.
    pub calls: Vec<(String, Value)>,
}

impl Parsed {
    /// Our output in this form (complete calls only).
    pub fn ours(out: &ModelOutput) -> Self {
        Parsed {
            text: out.text(),
            calls: out
                .calls()
                .map(|c| {
                    let args = match &c.arguments {
                        RawArguments::Json(v) => v.clone(),
                        RawArguments::Text(t) => json_or_string(t),
                    };
                    (c.name.as_str().to_owned(), args)
                })
                .collect(),
        }
    }
}

fn json_or_string(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}

/// The tools of the turn as `tool-parser` takes them (OpenAI's
/// `{"type": "function", "function": {...}}`).
pub fn tools(specs: &[ToolSpec]) -> Vec<Tool> {
    specs
        .iter()
        .map(|s| {
            serde_json::from_value(serde_json::json!({
                "type": "function",
                "function": {
                    "name": s.name.as_str(),
                    "description": s.description,
                    "parameters": s.input_schema.as_value(),
                }
            }))
            .expect("an OpenAI tool")
        })
        .collect()
}

/// A `tool-parser` parser of one format, reused from stream to stream.
pub struct TheirParser {
    factory: ParserFactory,
    name: &'static str,
    parser: Box<dyn ToolParser>,
    tools: Vec<Tool>,
}

impl TheirParser {
    /// Its parser called `name`, for a turn that offered `tools`.
    pub fn new(name: &'static str, tools: Vec<Tool>) -> Self {
        let factory = ParserFactory::new();
        let parser = factory.registry().create_parser(name).expect("a parser");
        TheirParser {
            factory,
            name,
            parser,
            tools,
        }
    }

    /// A new parser of the same format (what a server makes per request).
    pub fn create(&self) -> Box<dyn ToolParser> {
        self.factory
            .registry()
            .create_parser(self.name)
            .expect("a parser")
    }

    /// The whole output at once (`parse_complete_with_tools`). A parse
    /// error (it returns one for some malformed calls) is no calls and the
    /// whole text, as its gateway answers it.
    pub fn whole(&self, text: &str) -> Parsed {
        match now(self.parser.parse_complete_with_tools(text, &self.tools)) {
            Ok((text, calls)) => Parsed {
                text,
                calls: calls
                    .into_iter()
                    .map(|c| (c.function.name, json_or_string(&c.function.arguments)))
                    .collect(),
            },
            Err(_) => Parsed {
                text: text.to_owned(),
                calls: Vec::new(),
            },
        }
    }

    /// The output fed piece by piece, then flushed. The parser is reset
    /// first (the pythonic one, whose `reset` keeps its state, is made
    /// anew: it holds no compiled regex). An error from a piece drops that
    /// piece's result and reading goes on, as its gateway does.
    pub fn streamed<'p>(&mut self, pieces: impl IntoIterator<Item = &'p str>) -> Parsed {
        if self.name == "pythonic" {
            self.parser = self.create();
        } else {
            self.parser.reset();
        }
        let mut text = String::new();
        let mut calls: Vec<(Option<String>, String)> = Vec::new();
        let mut take = |items: Vec<tool_parser::types::ToolCallItem>| {
            for item in items {
                if calls.len() <= item.tool_index {
                    calls.resize(item.tool_index + 1, (None, String::new()));
                }
                let call = &mut calls[item.tool_index];
                if let Some(name) = item.name {
                    call.0 = Some(name);
                }
                call.1.push_str(&item.parameters);
            }
        };
        for piece in pieces {
            if let Ok(result) = now(self.parser.parse_incremental(piece, &self.tools)) {
                text.push_str(&result.normal_text);
                take(result.calls);
            }
        }
        if let Some(rest) = self.parser.get_unstreamed_tool_args() {
            take(rest);
        }
        text.push_str(&self.parser.take_unstreamed_normal_text());
        Parsed {
            text,
            calls: calls
                .into_iter()
                .filter_map(|(name, args)| {
                    let args = if args.is_empty() { "{}" } else { &args };
                    Some((name?, json_or_string(args)))
                })
                .collect(),
        }
    }
}

/// The value of a future that never waits, polled once.
pub fn now<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(value) => value,
        Poll::Pending => panic!("tool-parser's parse waited"),
    }
}
