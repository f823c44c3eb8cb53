//! The benchmark cases, one module each.

pub mod batch;
pub mod declarations;
pub mod inflight;
pub mod load;
pub mod mcp_http;
pub mod per_call;
pub mod registration;
pub mod stream;
pub mod stream_corpus;
pub mod stream_turn;
