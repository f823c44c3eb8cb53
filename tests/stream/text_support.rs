//! What the text-format tests share: the tools of the turn, and reading an
//! output whole and in every chunking.

use serde_json::{Value, json};
use tinyagents_tools::call::RawArguments;
use tinyagents_tools::stream::text::{RunStart, TextFormat, TextReader};
use tinyagents_tools::stream::{CallProblem, FailedCall, ModelOutput, OutputReader};
use tinyagents_tools::testkit::{Chunking, chunk_bytes, chunk_text};
use tinyagents_tools::{ToolSchema, ToolSpec};

/// The tools every fixture's turn offered.
pub fn tools() -> Vec<ToolSpec> {
    let spec = |name: &str, description: &str, schema: Value| {
        ToolSpec::builder(name, description)
            .input_schema(ToolSchema::from_value(schema))
            .build()
            .unwrap()
    };
    vec![
        spec(
            "get_weather",
            "Current weather for a city.",
            json!({
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "The city, e.g. Paris"},
                    "days": {"type": "integer"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}
                },
                "required": ["city"],
                "additionalProperties": false
            }),
        ),
        spec(
            "write_file",
            "Write a file.",
            json!({
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "content": {"type": "string"},
                    "append": {"type": "boolean"},
                    "lines": {"type": "array", "items": {"type": "string"}}
                },
                "required": ["path", "content"],
                "additionalProperties": false
            }),
        ),
        spec(
            "get_location",
            "Gets the location of the user.",
            json!({"type": "object", "properties": {}}),
        ),
    ]
}

/// A reader of `format` for [`tools`].
pub fn reader(format: &TextFormat) -> TextReader {
    format.reader(&tools())
}

/// `text` read whole.
pub fn whole(format: &TextFormat, text: &str) -> ModelOutput {
    format.parse(&tools(), text)
}

/// `text` read by readers from `make`, whole and in every chunking of
/// `Chunking::matrix(seeds)`, as characters and as bytes; panics where two
/// differ, and returns the whole-text output.
pub fn everywhere_with(make: impl Fn() -> TextReader, text: &str, seeds: u64) -> ModelOutput {
    let expected = make().read_all([text.as_bytes()]);
    for chunking in Chunking::matrix(seeds) {
        let pieces = chunk_text(text, chunking);
        let got = make().read_all(pieces.iter().map(|p| p.as_bytes()));
        assert_eq!(got, expected, "{chunking:?} (characters) of {text:?}");
        let got = make().read_all(chunk_bytes(text.as_bytes(), chunking));
        assert_eq!(got, expected, "{chunking:?} (bytes) of {text:?}");
    }
    expected
}

/// [`everywhere_with`] for a plain reader of `format`, and
/// [`TextFormat::parse`] of `text` too, which must give the same output.
pub fn everywhere(format: &TextFormat, text: &str) -> ModelOutput {
    let expected = everywhere_with(|| reader(format), text, 16);
    assert_eq!(whole(format, text), expected, "parse of {text:?}");
    expected
}

/// The complete calls as (name, arguments as JSON).
pub fn calls(out: &ModelOutput) -> Vec<(String, Value)> {
    out.calls()
        .map(|c| (c.name.as_str().to_owned(), arguments(&c.arguments)))
        .collect()
}

/// Arguments as the JSON value the executor validates.
pub fn arguments(raw: &RawArguments) -> Value {
    match raw {
        RawArguments::Json(v) => v.clone(),
        RawArguments::Text(t) => serde_json::from_str(t).unwrap_or(Value::String(t.clone())),
    }
}

/// The exact argument text of each complete call (JSON formats).
pub fn argument_texts(out: &ModelOutput) -> Vec<String> {
    out.calls()
        .map(|c| match &c.arguments {
            RawArguments::Text(t) => t.clone(),
            RawArguments::Json(v) => v.to_string(),
        })
        .collect()
}

/// The call ids, in order.
pub fn ids(out: &ModelOutput) -> Vec<String> {
    out.calls().map(|c| c.id.as_str().to_owned()).collect()
}

/// The call in `wrapped` (one run of `format`) as a format with a
/// [`RunStart::BodyOpening`] run may also write it: from the body's
/// opening marker on, without the run's end marker; and that marker.
/// `None` for the other formats.
pub fn bare_call<'a>(format: &TextFormat, wrapped: &'a str) -> Option<(&'a str, String)> {
    let end = format
        .runs
        .iter()
        .find(|r| r.start == RunStart::BodyOpening)?
        .end
        .as_deref()?;
    let call = &wrapped[wrapped.find(format.body.opening()?)?..];
    let call = call.trim_end().strip_suffix(end)?.trim_end();
    Some((call, end.to_owned()))
}

/// The one failed call of `out`, which must have failed for malformed
/// arguments (`what`, the output read, names a failure).
pub fn one_malformed_call<'o>(out: &'o ModelOutput, what: &str) -> &'o FailedCall {
    let failed: Vec<_> = out.failed().collect();
    assert_eq!(failed.len(), 1, "{what:?}");
    assert_eq!(failed[0].kind, CallProblem::MalformedArguments, "{what:?}");
    failed[0]
}
