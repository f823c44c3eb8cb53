//! Arbitrary provider payloads through every provider's tool-call parser,
//! and the calls read from them through `ToolExecutor::execute_batch`.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    tinyagents_tools_fuzz::fuzz_provider_calls(data);
});
