//! Shared example code.
