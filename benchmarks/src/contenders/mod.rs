//! The same "add" tool written for each contender, and `tool-parser`
//! driven for the streaming case.

pub mod ours;
pub mod ours_exec;
#[cfg(feature = "rig")]
pub mod rig;
pub mod rmcp;
pub mod tool_parser;
