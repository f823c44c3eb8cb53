//! The benchmark cases, one module each.

pub mod per_call;
