//! Integration tests of tinyagents-tools (one binary; one module per topic).

mod executor_refusals;
