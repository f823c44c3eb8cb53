//! The same "add" tool written for each contender.

pub mod ours;
pub mod rig;
pub mod rmcp;
