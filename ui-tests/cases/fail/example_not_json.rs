// `example = ...` takes a JSON object in a string literal: malformed JSON,
// a non-object and a bare token tree are refused at the literal.
use tinyagents_tools::prelude::*;

/// Current weather in a city.
#[tool(
    example = r#"{"city": 'Paris'}"#,
    example = r#"{"city": "Paris",}"#,
    example = r#"["Paris"]"#
)]
async fn weather(
    /// The city.
    city: String,
) -> String {
    city
}

/// Current weather, example unquoted.
#[tool(example = {"city": "Paris"})]
async fn unquoted(
    /// The city.
    city: String,
) -> String {
    city
}

fn main() {
    let _ = (WeatherTool, UnquotedTool);
}
