//! The same "add" tool written for each contender.

pub mod ours;
#[cfg(feature = "rig")]
pub mod rig;
pub mod rmcp;
