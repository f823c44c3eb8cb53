//! Policies and declared safety: access rules, confirmation and approvals, workspace paths, redaction.
//!
//! One test binary for the folder, one module per file.

mod approvals_scoped;
mod confirmation;
mod declared_safety;
mod given_injected;
mod policies;
mod redaction_forms;
mod rules;
mod workspace_paths;
