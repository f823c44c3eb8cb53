//! [`ExecutorConfig`]: timeouts, concurrency, argument and content bounds,
//! repair and call limits, with safe defaults.

use std::num::NonZeroUsize;
use std::time::Duration;

use crate::executor::args::ArgumentLimits;
use crate::executor::content::ContentLimits;
use crate::registry::ToolRegistry;
use crate::runtime::limits::CallLimits;
use crate::spec::SafetyItem;

/// How an executor runs calls. Every field has a safe default.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExecutorConfig {
    /// The timeout of a tool that declares none (default 60 s).
    pub default_timeout: Duration,
    /// How long a timed-out or cancelled call may take to stop after its
    /// cancellation token fires before its future is dropped (default 1 s).
    pub cancel_grace: Duration,
    /// The most calls of one batch that run at once (default 8; 1 runs a
    /// batch serially).
    pub max_concurrency: NonZeroUsize,
    /// The largest argument text, in bytes, checked before parsing (default
    /// 1 MiB).
    pub max_argument_bytes: usize,
    /// The deepest nesting of arrays and objects in arguments (default 64).
    pub max_argument_depth: usize,
    /// The most bytes of model-facing content per result (default 64 KiB);
    /// more is cut, with a note.
    pub max_content_bytes: usize,
    /// Content above this many bytes goes to the artifact store, when there
    /// is one, and the model sees a preview (default 16 KiB).
    pub artifact_threshold: usize,
    /// The size of that preview in bytes (default 1 KiB).
    pub preview_bytes: usize,
    /// Whether repairable errors go back to the model (default `true`); when
    /// `false` they come back fatal.
    pub repair_allowed: bool,
    /// Call limits per turn, per run and per tool (default: none).
    pub limits: CallLimits,
    /// Whether each call's `execute_tool` span also records the call's
    /// arguments (`gen_ai.tool.call.arguments`) and its result
    /// (`gen_ai.tool.call.result`), both redacted as the events and the
    /// result are (default `false`: a span names the tool and the call,
    /// never the values).
    pub trace_content: bool,
}

impl Default for ExecutorConfig {
    fn default() -> Self {
        ExecutorConfig {
            default_timeout: Duration::from_secs(60),
            cancel_grace: Duration::from_secs(1),
            max_concurrency: NonZeroUsize::new(8).expect("8 is not zero"),
            max_argument_bytes: 1 << 20,
            max_argument_depth: 64,
            max_content_bytes: 64 << 10,
            artifact_threshold: 16 << 10,
            preview_bytes: 1 << 10,
            repair_allowed: true,
            limits: CallLimits::default(),
            trace_content: false,
        }
    }
}

impl ExecutorConfig {
    pub(crate) fn argument_limits(&self) -> ArgumentLimits {
        ArgumentLimits {
            max_bytes: self.max_argument_bytes,
            max_depth: self.max_argument_depth,
        }
    }

    pub(crate) fn content_limits(&self) -> ContentLimits {
        ContentLimits {
            max_bytes: self.max_content_bytes,
            artifact_threshold: self.artifact_threshold,
            preview_bytes: self.preview_bytes,
        }
    }

    pub(crate) fn check<S, C>(
        &self,
        registry: &ToolRegistry<S, C>,
    ) -> Result<(), ExecutorBuildError>
    where
        S: Send + Sync + 'static,
        C: Send + Sync + 'static,
    {
        let mut names: Vec<&String> = self.limits.per_tool.keys().collect();
        names.sort();
        if let Some(name) = names.into_iter().find(|n| registry.get(n).is_none()) {
            return Err(ExecutorBuildError::UnknownToolInLimits { name: name.clone() });
        }
        if self.default_timeout.is_zero() {
            return Err(ExecutorBuildError::ZeroTimeout);
        }
        Ok(())
    }
}

/// Why an executor could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ExecutorBuildError {
    /// A per-tool call limit names a tool the registry does not have (a typo
    /// would otherwise be a silent no-op).
    #[error("a call limit names `{name}`, which is not a registered tool")]
    UnknownToolInLimits {
        /// The name in the limits.
        name: String,
    },
    /// The default timeout is zero.
    #[error("the default timeout must be longer than zero")]
    ZeroTimeout,
    /// A registered tool declares a safety item that no middleware enforces
    /// and that the executor cannot enforce alone (add the policy, or opt
    /// out with [`ToolExecutorBuilder::unenforced`](crate::executor::ToolExecutorBuilder::unenforced)).
    #[error(
        "`{tool}` declares {item}, and no middleware enforces it: add {policy}, or opt out explicitly with `unenforced(SafetyItem::{item:?})`"
    )]
    MissingPolicy {
        /// The first tool (in registration order) that declares the item.
        tool: String,
        /// The declared item.
        item: SafetyItem,
        /// The policy that enforces it.
        policy: &'static str,
    },
}

impl ExecutorBuildError {
    /// A stable name for the kind of refusal: `unknown_tool_in_limits`,
    /// `zero_timeout` or `missing_policy`.
    pub fn rule(&self) -> &'static str {
        match self {
            ExecutorBuildError::UnknownToolInLimits { .. } => "unknown_tool_in_limits",
            ExecutorBuildError::ZeroTimeout => "zero_timeout",
            ExecutorBuildError::MissingPolicy { .. } => "missing_policy",
        }
    }
}
