//! Integration tests of tinyagents-tools, one module per concern, compiled
//! into one test binary.

mod agent_loop;
mod builtin_tools;
mod executor_batch;
mod executor_call_now;
mod executor_events;
mod executor_middleware;
mod executor_output;
mod executor_refusals;
mod executor_running;
mod injection;
mod isolated_tools;
mod mcp_http;
mod mcp_server;
mod policies;
mod policy_confirmation;
mod policy_rules;
mod providers_cache;
mod providers_calls;
mod providers_corpus;
mod providers_errors;
mod providers_golden;
mod providers_names;
mod providers_rules;
mod readme;
mod registry;
mod reliability_faults;
mod reliability_forgery;
mod reliability_hostile;
mod reliability_load;
mod reliability_props;
mod reliability_secrets;
mod schema_corpus;
mod testkit;
mod wasm_tools;
mod workspace_paths;
