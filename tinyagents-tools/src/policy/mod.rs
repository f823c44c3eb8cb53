//! Safety policies enforced from the metadata tools declare.
//!
//! Each policy is usable alone:
//! - [`AccessPolicy`]: allow and deny lists by name, deny rules by safety
//!   predicate, read-only and local-only modes;
//! - [`ToolSelector`]: which tools are advertised each turn;
//! - [`WorkspacePath`] and [`resolve_in_root`]: paths confined to the run's
//!   workspace root;
//! - [`ConfirmationPolicy`]: an [`Approver`](crate::approval::Approver) decides on calls that need
//!   confirmation, spend money or run shell commands;
//! - [`WorkspacePolicy`]: filesystem tools confined to the run's workspace
//!   root, path arguments checked before the tool runs;
//! - [`ReplayCache`]: recorded results replayed only for deterministic tools;
//! - [`Redactor`](crate::redact::Redactor): masking secrets and patterns (the executor applies it to
//!   every call's model-facing content, error text and tool events).
//!
//! Access, confirmation, workspace and replay policies are
//! [`Middleware`](crate::Middleware): add them with
//! `ToolExecutor::builder(..).middleware(..)`. What tools declare is
//! enforced even without that: the executor adds a [`WorkspacePolicy`] itself
//! when a registered tool declares `workspace` or filesystem access, and
//! refuses to build when one needs confirmation and no [`ConfirmationPolicy`]
//! (or other middleware declaring it) is there, unless the application opts
//! out with [`unenforced`](crate::executor::ToolExecutorBuilder::unenforced). Call limits are executor
//! configuration ([`CallLimits`](crate::runtime::CallLimits)), and the advertised set
//! of a turn is a [`Turn`](crate::Turn), made by a [`ToolSelector`].

mod access;
mod confirm;
mod replay;
mod selection;
mod workspace;

pub use access::{AccessPolicy, AccessPolicyBuilder, PolicyError};
pub use confirm::ConfirmationPolicy;
pub use replay::{ReplayCache, ReplayScope};
pub use selection::{ToolSelector, ToolSelectorBuilder};
pub use workspace::{
    PathViolation, WORKSPACE_PATH_FORMAT, WorkspacePath, WorkspacePolicy, resolve_in_root,
};

/// Adds `names` to an optional set of tool or group names, making the set
/// on first use.
fn add_names(
    set: &mut Option<std::collections::BTreeSet<String>>,
    names: impl IntoIterator<Item = impl Into<String>>,
) {
    set.get_or_insert_default()
        .extend(names.into_iter().map(Into::into));
}
