//! The same "add" tool written for each contender.

pub mod ours;
pub mod ours_exec;
#[cfg(feature = "rig")]
pub mod rig;
pub mod rmcp;
