//! Nothing to use: this crate is its compile-fail and compile-pass cases
//! (`ui.rs`). The library target is what lets trybuild's generated project
//! turn this crate's `isolated` feature (and with it the core's) on or off
//! as the test run has it.
