//! Integration tests of tinyagents-tools, one module per concern, compiled
//! into one test binary.

mod executor_batch;
mod executor_events;
mod executor_middleware;
mod executor_output;
mod executor_refusals;
mod executor_running;
mod injection;
mod policy_rules;
mod registry;
mod schema_corpus;
mod workspace_paths;
