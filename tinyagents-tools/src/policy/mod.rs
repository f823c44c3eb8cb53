//! Safety policies enforced from the metadata tools declare.
//!
//! Each policy is usable alone:
//! - [`AccessPolicy`]: allow and deny lists by name, deny rules by safety
//!   predicate, read-only and local-only modes;
//! - [`ToolSelector`]: which tools are advertised each turn;
//! - [`WorkspacePath`] and [`resolve_in_root`]: paths confined to the run's
//!   workspace root;
//! - [`Redactor`]: masking secrets and patterns in model-facing output.

mod access;
mod redact;
mod selection;
mod workspace;

pub use access::{AccessPolicy, AccessPolicyBuilder, PolicyError};
pub use redact::{MASK, Redactor};
pub use selection::{ToolSelector, ToolSelectorBuilder};
pub use workspace::{PathViolation, WORKSPACE_PATH_FORMAT, WorkspacePath, resolve_in_root};
