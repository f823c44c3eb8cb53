//! MCP: the server over stdio and HTTP (its Mcp-Param headers too), approvals, scale-out, the client against hostile and real servers, bounded results.
//!
//! One test binary for the folder, one module per file.

mod approvals;
mod client;
mod client_definitions;
mod client_hostile;
mod client_input;
mod client_own_server;
mod client_python;
mod client_tasks;
mod common;
mod content;
mod http;
mod param_headers;
mod peer;
mod protocol;
mod python_sdk;
mod result_bounds;
mod scale_out;
mod scripted;
mod server;
mod tasks;
mod waiting;
mod wrapped;
