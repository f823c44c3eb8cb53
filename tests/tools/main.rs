//! Authoring tools: #[tool] parameters and errors, injection, builtins, toolsets, collection, the testkit, isolated and WASM tools.
//!
//! One test binary for the folder, one module per file.

mod builtins;
mod collect;
mod common;
mod errors;
mod examples;
mod fakes;
mod injection;
mod isolated;
mod patterns;
mod plain_fn;
mod plain_parameters;
mod resource_bounds;
mod service;
mod service_self;
mod testkit;
mod time_and_randomness;
mod toolsets;
mod wasm;
