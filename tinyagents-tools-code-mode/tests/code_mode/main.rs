//! Code mode end to end: a scripted model sends one `run_code` call whose
//! program calls the tools, through the model-facing executor and the
//! inner one (`tinyagents_tools_code_mode`).

mod answers;
mod approvals;
mod body;
mod calls;
// The example's catalog: `lookup` and `ItemId` for the tests' registry,
// `catalog_spec` for declaration sizes (the rest is the example's).
#[allow(dead_code)]
#[path = "../../examples/code_mode/catalog.rs"]
mod catalog;
mod exposure;
mod ledger;
mod limits;
mod model;
mod stubs;
mod tools;
mod values;
