//! Provider formats: exported declarations (goldens and published rules), call parsing, errors, caching.
//!
//! One test binary for the folder, one module per file.

mod cache;
mod calls;
mod corpus;
mod errors;
mod features;
mod golden;
mod names;
mod rules;
