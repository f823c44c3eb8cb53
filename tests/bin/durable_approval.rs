//! The `durable_approval` example as a binary the tests can start
//! (`CARGO_BIN_EXE_durable-approval`): the same program, one process per
//! command, as a person runs it.

fn main() {
    std::process::exit(tinyagents_tools_examples::durable::cli(std::env::args().skip(1)).into());
}
