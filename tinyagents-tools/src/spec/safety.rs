//! Safety metadata a tool declares about itself.
//!
//! Every item here is read by something: the executor (idempotency gates
//! retries), the policies in [`crate::policy`] (confirmation, read-only and
//! local-only modes, workspace roots, redaction) and the provider exports (MCP
//! annotations). Defaults are conservative: a tool that declares nothing counts
//! as mutating, non-idempotent, networked and non-deterministic.

use serde::{Deserialize, Serialize};

/// What a tool does to the world outside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    /// Reads only; running it changes nothing.
    ReadOnly,
    /// Changes state (writes, sends, creates). The default.
    #[default]
    Mutating,
    /// Changes state in a way that destroys or overwrites data.
    Destructive,
}

impl Effect {
    /// True for [`Effect::Mutating`] and [`Effect::Destructive`].
    pub fn mutates(self) -> bool {
        !matches!(self, Effect::ReadOnly)
    }
}

/// Whether running a tool twice with the same arguments has the same effect as
/// running it once. Only idempotent tools are ever retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Idempotency {
    /// Repeating a call is safe.
    Idempotent,
    /// Repeating a call may repeat its effect. The default.
    #[default]
    NotIdempotent,
}

impl Idempotency {
    /// True for [`Idempotency::Idempotent`].
    pub fn is_idempotent(self) -> bool {
        matches!(self, Idempotency::Idempotent)
    }
}

/// Whether a tool reaches beyond the local machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reach {
    /// Touches only the local process and machine.
    Local,
    /// Talks to other hosts (an "open world" tool in MCP terms). The default.
    #[default]
    Networked,
}

/// The filesystem access a tool needs.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum FilesystemAccess {
    /// No filesystem access. The default.
    #[default]
    None,
    /// Reads files.
    Read,
    /// Reads and writes files.
    Write,
}

/// Whether a recorded result of the tool may be replayed instead of running it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Determinism {
    /// The same arguments always give the same result.
    Deterministic,
    /// Deterministic given the time, random values and ids its call is
    /// given (an injected `Clock`, `Random` or `Ids`): a call given the same
    /// draw ([`CallDraw`](crate::runtime::CallDraw)) computes the same
    /// result.
    GivenInjected,
    /// Results may differ from run to run. The default.
    #[default]
    NonDeterministic,
}

/// How a tool's model-facing output, error text and events are redacted.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RedactionPolicy {
    /// Mask every registered secret value (on by default; a tool that turns
    /// it off is refused at registration unless it also declares
    /// [`ToolSafety::allow_unredacted_secrets`]).
    pub secrets: bool,
    /// Names of JSON fields whose values are masked wherever they appear in the
    /// tool's structured output (for example `"password"`, `"token"`).
    pub fields: Vec<String>,
    /// Literal substrings masked in the tool's text output.
    pub patterns: Vec<String>,
}

impl Default for RedactionPolicy {
    fn default() -> Self {
        RedactionPolicy {
            secrets: true,
            fields: Vec::new(),
            patterns: Vec::new(),
        }
    }
}

impl RedactionPolicy {
    /// Whether this is the default policy (secrets masked, nothing else).
    pub fn is_default(&self) -> bool {
        self.secrets && self.fields.is_empty() && self.patterns.is_empty()
    }
}

/// Everything a tool declares about its effects.
///
/// Build one with [`ToolSafety::default`] (the conservative profile) and
/// the `with_*`-style setters, or let `#[tool(...)]` build it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolSafety {
    /// Read-only, mutating or destructive.
    pub effect: Effect,
    /// Whether repeating a call is safe.
    pub idempotency: Idempotency,
    /// Local or networked.
    pub reach: Reach,
    /// Filesystem access.
    pub filesystem: FilesystemAccess,
    /// Runs shell commands or spawns processes.
    pub shell: bool,
    /// Spends money or consumes a paid external quota.
    pub spend: bool,
    /// Must be approved by a person (or an approver) before it runs.
    pub requires_confirmation: bool,
    /// Takes paths that must stay inside the run's workspace root.
    pub workspace: bool,
    /// How its outputs are redacted.
    pub redaction: RedactionPolicy,
    /// Whether its results may be replayed.
    pub determinism: Determinism,
    /// The tool's explicit opt-in to a [`RedactionPolicy`] with `secrets`
    /// off: without it, registration refuses such a policy, so a secret is
    /// never shown unmasked by accident.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unredacted_secrets: bool,
}

impl ToolSafety {
    /// A read-only, idempotent, local, deterministic profile: the usual shape of
    /// a pure lookup or computation.
    pub fn pure() -> Self {
        ToolSafety {
            effect: Effect::ReadOnly,
            idempotency: Idempotency::Idempotent,
            reach: Reach::Local,
            determinism: Determinism::Deterministic,
            ..ToolSafety::default()
        }
    }

    setters! {
        /// Sets the effect.
        effect(effect: Effect) => effect = effect;
        /// Sets idempotency.
        idempotency(idempotency: Idempotency) => idempotency = idempotency;
        /// Sets the reach.
        reach(reach: Reach) => reach = reach;
        /// Sets filesystem access.
        filesystem(access: FilesystemAccess) => filesystem = access;
        /// Marks shell or process access.
        shell(shell: bool) => shell = shell;
        /// Marks spending.
        spend(spend: bool) => spend = spend;
        /// Marks that the tool needs confirmation.
        requires_confirmation(yes: bool) => requires_confirmation = yes;
        /// Marks that the tool's paths are confined to the workspace root.
        workspace(yes: bool) => workspace = yes;
        /// Sets the redaction policy.
        redaction(redaction: RedactionPolicy) => redaction = redaction;
        /// Sets determinism.
        determinism(determinism: Determinism) => determinism = determinism;
        /// Opts in to a redaction policy that leaves secrets unmasked (see
        /// [`ToolSafety::unredacted_secrets`]).
        allow_unredacted_secrets(yes: bool) => unredacted_secrets = yes;
    }

    /// True when the tool only reads.
    pub fn is_read_only(&self) -> bool {
        self.effect == Effect::ReadOnly
    }
}

/// A declared safety item that only a policy can enforce.
///
/// [`ToolExecutorBuilder::build`](crate::executor::ToolExecutorBuilder::build) makes
/// sure each one a registered tool declares is enforced: the executor adds
/// the policy itself where it needs nothing from the application
/// (workspace), and refuses to build where it does (confirmation needs an
/// approver), unless the application opts out with
/// [`ToolExecutorBuilder::unenforced`](crate::executor::ToolExecutorBuilder::unenforced).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum SafetyItem {
    /// `workspace` or filesystem access: the run must have a workspace
    /// root and path arguments stay inside it
    /// ([`WorkspacePolicy`](crate::policy::WorkspacePolicy)).
    Workspace,
    /// `requires_confirmation`, `spend` or `shell`: an approver decides
    /// ([`ConfirmationPolicy`](crate::policy::ConfirmationPolicy)).
    Confirmation,
}

impl SafetyItem {
    /// Every item.
    pub const ALL: [SafetyItem; 2] = [SafetyItem::Workspace, SafetyItem::Confirmation];

    /// The item's name: `workspace` or `confirmation`.
    pub fn as_str(self) -> &'static str {
        match self {
            SafetyItem::Workspace => "workspace",
            SafetyItem::Confirmation => "confirmation",
        }
    }

    /// The policy that enforces it.
    pub fn policy(self) -> &'static str {
        match self {
            SafetyItem::Workspace => "WorkspacePolicy",
            SafetyItem::Confirmation => "ConfirmationPolicy",
        }
    }

    /// True when `safety` declares this item.
    pub fn declared_by(self, safety: &ToolSafety) -> bool {
        match self {
            SafetyItem::Workspace => {
                safety.workspace || safety.filesystem != FilesystemAccess::None
            }
            SafetyItem::Confirmation => {
                safety.requires_confirmation || safety.spend || safety.shell
            }
        }
    }
}

impl std::fmt::Display for SafetyItem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
