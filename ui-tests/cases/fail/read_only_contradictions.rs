// `read_only` excludes every mutating declaration.
use tinyagents_tools::prelude::*;

/// One.
#[tool(read_only, mutating)]
async fn one() {}

/// Two.
#[tool(read_only, destructive)]
async fn two() {}

/// Three.
#[tool(read_only, filesystem = "write")]
async fn three() {}

/// Four.
#[tool(mutating, destructive, local, networked, deterministic, deterministic_given_injected)]
async fn four() {}

fn main() {}
