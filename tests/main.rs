//! Integration tests of tinyagents-tools.

mod providers_corpus;
mod providers_dump;
