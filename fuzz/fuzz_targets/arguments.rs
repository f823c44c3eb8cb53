//! Arbitrary argument text (or the JSON value it parses to) for every tool of
//! the harness, and for names no tool has, through `ToolExecutor::execute`.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    tinyagents_tools_fuzz::fuzz_arguments(data);
});
