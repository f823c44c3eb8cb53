//! Which tools may run at all: allow and deny lists by name, deny rules by
//! safety predicate, and the read-only and local-only modes.
//!
//! Names are checked when the policy is built: a name that matches no
//! registered tool is a [`PolicyError`] with a did-you-mean suggestion, never a
//! list entry that silently matches nothing.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::fmt;
use std::sync::Arc;

use crate::error::ToolError;
use crate::middleware::{BeforeOutcome, BeforeResult, BeforeToolCtx, Middleware};
use crate::registry::ToolRegistry;
use crate::spec::ToolSpec;
use crate::spec::{FilesystemAccess, Reach};
use crate::tool::Shared;

use super::add_names;

/// Why a policy could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// A listed tool name matches no registered tool.
    #[error("policy `{policy}` names `{name}`, which is not a registered tool{}", suggestion_text(.suggestion))]
    UnknownTool {
        /// The policy.
        policy: &'static str,
        /// The name as listed.
        name: String,
        /// The closest registered name, when one is close.
        suggestion: Option<String>,
    },
    /// A setting is out of range.
    #[error("policy `{policy}`: {message}")]
    Invalid {
        /// The policy.
        policy: &'static str,
        /// What is wrong.
        message: String,
    },
}

fn suggestion_text(suggestion: &Option<String>) -> String {
    match suggestion {
        Some(s) => format!("; did you mean `{s}`?"),
        None => String::new(),
    }
}

/// Checks that every name in `listed` is one of `known`.
pub(crate) fn check_names<'a>(
    policy: &'static str,
    listed: impl IntoIterator<Item = &'a str>,
    known: &[&str],
) -> Result<(), PolicyError> {
    for name in listed {
        if !known.contains(&name) {
            let suggestion = known
                .iter()
                .map(|k| (strsim::normalized_damerau_levenshtein(name, k), *k))
                .filter(|(score, _)| *score >= 0.6)
                .max_by(|a, b| a.0.total_cmp(&b.0))
                .map(|(_, k)| k.to_owned());
            return Err(PolicyError::UnknownTool {
                policy,
                name: name.to_owned(),
                suggestion,
            });
        }
    }
    Ok(())
}

type SpecPredicate = Arc<dyn Fn(&ToolSpec) -> bool + Send + Sync>;

#[derive(Clone)]
struct DenyRule {
    policy: Cow<'static, str>,
    reason: String,
    applies: SpecPredicate,
}

/// Allow and deny rules over tool specs.
///
/// ```
/// use tinyagents_tools::policy::AccessPolicy;
/// use tinyagents_tools::{ToolSpec, ToolSafety};
///
/// let read = ToolSpec::builder("read_file", "Read a file.").safety(ToolSafety::pure()).build().unwrap();
/// let write = ToolSpec::builder("write_file", "Write a file.").build().unwrap();
/// let policy = AccessPolicy::read_only();
/// assert!(policy.check(&read).is_ok());
/// assert!(policy.check(&write).is_err());
/// ```
#[derive(Clone, Default)]
pub struct AccessPolicy {
    allow: Option<BTreeSet<String>>,
    deny: BTreeSet<String>,
    rules: Vec<DenyRule>,
}

impl AccessPolicy {
    /// Starts a policy that allows everything.
    pub fn builder() -> AccessPolicyBuilder {
        AccessPolicyBuilder {
            policy: AccessPolicy::default(),
        }
    }

    /// Read-only mode: refuses every mutating or destructive tool, and every
    /// tool that writes files.
    pub fn read_only() -> Self {
        AccessPolicy::builder()
            .deny_where(
                "read_only_mode",
                "this run is read-only, and this tool changes data",
                |spec| {
                    spec.safety.effect.mutates()
                        || spec.safety.filesystem == FilesystemAccess::Write
                },
            )
            .build_unchecked()
    }

    /// Local-only mode: refuses every networked tool.
    pub fn local_only() -> Self {
        AccessPolicy::builder()
            .deny_where(
                "local_only_mode",
                "this run may not reach the network, and this tool does",
                |spec| spec.safety.reach == Reach::Networked,
            )
            .build_unchecked()
    }

    /// Combines two policies: a tool must pass both.
    pub fn and(mut self, other: AccessPolicy) -> Self {
        self.allow = match (self.allow, other.allow) {
            (Some(a), Some(b)) => Some(a.intersection(&b).cloned().collect()),
            (a, b) => a.or(b),
        };
        self.deny.extend(other.deny);
        self.rules.extend(other.rules);
        self
    }

    /// `Ok` when the tool may run, else a repairable `denied` error naming the
    /// policy and saying why.
    pub fn check(&self, spec: &ToolSpec) -> Result<(), ToolError> {
        let name = spec.name.as_str();
        if let Some(allow) = &self.allow
            && !allow.contains(name)
        {
            return Err(ToolError::denied(
                "allow_list",
                format!("the tool `{name}` is not allowed in this run"),
            ));
        }
        if self.deny.contains(name) {
            return Err(ToolError::denied(
                "deny_list",
                format!("the tool `{name}` is not allowed in this run"),
            ));
        }
        for rule in &self.rules {
            if (rule.applies)(spec) {
                return Err(ToolError::denied(
                    rule.policy.clone(),
                    format!("the tool `{name}` cannot be used: {}", rule.reason),
                ));
            }
        }
        Ok(())
    }

    /// True when [`check`](Self::check) passes.
    pub fn allows(&self, spec: &ToolSpec) -> bool {
        self.check(spec).is_ok()
    }
}

impl fmt::Debug for AccessPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AccessPolicy")
            .field("allow", &self.allow)
            .field("deny", &self.deny)
            .field(
                "rules",
                &self.rules.iter().map(|r| &r.policy).collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// Builds an [`AccessPolicy`].
pub struct AccessPolicyBuilder {
    policy: AccessPolicy,
}

impl AccessPolicyBuilder {
    /// Only the listed tools may run (several calls add to the list).
    pub fn allow(mut self, names: impl IntoIterator<Item = impl Into<String>>) -> Self {
        add_names(&mut self.policy.allow, names);
        self
    }

    /// The listed tools may not run.
    pub fn deny(mut self, names: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.policy.deny.extend(names.into_iter().map(Into::into));
        self
    }

    /// Tools whose spec matches `predicate` may not run; `reason` is shown to
    /// the model, `policy` names the rule in events.
    pub fn deny_where(
        mut self,
        policy: impl Into<Cow<'static, str>>,
        reason: impl Into<String>,
        predicate: impl Fn(&ToolSpec) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.policy.rules.push(DenyRule {
            policy: policy.into(),
            reason: reason.into(),
            applies: Arc::new(predicate),
        });
        self
    }

    /// Checks every listed name against `registry` and builds the policy.
    pub fn build<S: Shared, C: Shared>(
        self,
        registry: &ToolRegistry<S, C>,
    ) -> Result<AccessPolicy, PolicyError> {
        let known: Vec<&str> = registry.names().collect();
        if let Some(allow) = &self.policy.allow {
            check_names("allow_list", allow.iter().map(String::as_str), &known)?;
        }
        check_names(
            "deny_list",
            self.policy.deny.iter().map(String::as_str),
            &known,
        )?;
        Ok(self.policy)
    }

    /// Builds without checking names (for policies with predicates only).
    fn build_unchecked(self) -> AccessPolicy {
        self.policy
    }
}

/// As middleware, an access policy refuses a call before the tool runs; the
/// `tool.rejected` event names the rule that refused (`allow_list`,
/// `deny_list`, `read_only_mode`, ...).
#[async_trait::async_trait]
impl<S: Shared, C: Shared> Middleware<S, C> for AccessPolicy {
    fn name(&self) -> &str {
        "access_policy"
    }

    async fn before_tool(&self, ctx: &mut BeforeToolCtx<'_, S, C>) -> BeforeResult {
        self.check(ctx.spec()).map(|()| BeforeOutcome::Continue)
    }
}
