//! MCP: the server over stdio and HTTP, approvals, scale-out, the client against hostile and real servers, bounded results.
//!
//! One test binary for the folder, one module per file.

mod approvals;
mod client;
mod client_hostile;
mod client_own_server;
mod client_python;
mod common;
mod content;
mod http;
mod peer;
mod protocol;
mod result_bounds;
mod scale_out;
mod server;
