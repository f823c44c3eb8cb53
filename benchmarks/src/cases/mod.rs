//! The benchmark cases, one module each.

pub mod batch;
pub mod declarations;
pub mod load;
pub mod per_call;
pub mod registration;
