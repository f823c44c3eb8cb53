//! Integration tests of tinyagents-tools.

mod providers_cache;
mod providers_calls;
mod providers_corpus;
mod providers_errors;
mod providers_golden;
mod providers_names;
mod providers_rules;
