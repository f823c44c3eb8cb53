//! Safety policies enforced from the metadata tools declare.
//!
//! Each policy is usable alone. The building blocks here (path confinement,
//! redaction) are also used by tools directly.

mod redact;
mod workspace;

pub use redact::{MASK, Redactor};
pub use workspace::{PathViolation, WORKSPACE_PATH_FORMAT, WorkspacePath, resolve_in_root};
