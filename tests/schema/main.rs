//! Schemas and the registry: the schema corpus, JSON Schema 2020-12 keywords, output schemas, name rules and registration.
//!
//! One test binary for the folder, one module per file.

mod corpus;
mod keywords;
mod name_rules_agree;
mod output_schemas;
mod registry;
mod spec;
