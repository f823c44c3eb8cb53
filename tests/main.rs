//! Integration tests of tinyagents-tools, one module per concern, compiled
//! into one test binary.

mod injection;
mod policy_rules;
mod registry;
mod schema_corpus;
mod workspace_paths;
