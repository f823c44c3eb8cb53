//! Examples of arguments in a declaration: Anthropic takes them as
//! `input_examples`; for every other provider they are appended to the
//! description, in one format, written here.

use std::borrow::Cow;

use crate::hash::canonical_json;
use crate::spec::ToolSpec;

/// The line that introduces the examples appended to a description.
pub const EXAMPLES_HEADING: &str = "Examples of arguments:";

/// The description a provider without an examples field shows: the spec's
/// description as is when it has no examples; otherwise the description, a
/// blank line, [`EXAMPLES_HEADING`], then each example on a line of its own
/// as compact JSON with keys sorted:
///
/// ```text
/// Current weather in a city.
///
/// Examples of arguments:
/// {"city":"Paris"}
/// {"city":"Oslo","unit":"celsius"}
/// ```
///
/// OpenAI (Chat Completions and Responses), Gemini and MCP declarations use
/// it; Anthropic's keeps the description and lists the examples as
/// `input_examples`.
pub fn description_with_examples(spec: &ToolSpec) -> Cow<'_, str> {
    if spec.examples.is_empty() {
        return Cow::Borrowed(&spec.description);
    }
    let mut text = spec.description.trim_end().to_owned();
    text.push_str("\n\n");
    text.push_str(EXAMPLES_HEADING);
    for example in &spec.examples {
        text.push('\n');
        text.push_str(&canonical_json(example));
    }
    Cow::Owned(text)
}
