// An explicit tool name follows the canonical rule, checked at the literal.
use tinyagents_tools::prelude::*;

/// One.
#[tool(name = "SearchDocs")]
async fn one() {}

/// Two.
#[tool(name = "search docs")]
async fn two() {}

/// Three.
#[tool(name = "a_name_that_is_far_too_long_for_any_provider_to_accept_as_a_tool_x")]
async fn three() {}

/// Four.
#[tool(name = "café")]
async fn four() {}

/// Five.
#[tool(name = "")]
async fn five() {}

fn main() {}
