//! Integration tests of tinyagents-tools (one binary; one module per topic).

mod executor_batch;
mod executor_events;
mod executor_middleware;
mod executor_output;
mod executor_refusals;
mod executor_running;
