//! Shared by the integration tests.
pub mod stub;
