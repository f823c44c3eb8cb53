//! Code mode end to end: a scripted model sends one `run_code` call whose
//! program calls the tools, through the model-facing executor and the
//! inner one (`tinyagents_tools::code_mode`).

mod approvals;
mod calls;
mod exposure;
mod ledger;
mod limits;
mod model;
mod stubs;
mod tools;
mod values;
