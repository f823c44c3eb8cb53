//! Shared by the integration tests.
pub mod executor;
pub mod stub;
