// A secret has no JSON schema, so it cannot be a model-visible argument.
use schemars::JsonSchema;
use tinyagents_tools::Secret;

#[derive(JsonSchema)]
struct Args {
    query: String,
    api_key: Secret<String>,
}

fn main() {}
