//! Every rule of `#[tool]` and `#[tools]`, each a spanned error that says
//! what to write instead. All errors of one fn (or block) are collected and
//! reported together; a fn that passes every rule becomes a [`Model`], what
//! `expand` needs, resolved.

mod block;
mod example;
mod isolated;
mod options;
mod plain;
mod signature;

use syn::Type;

use crate::ast::ToolFn;
use crate::attr::{Filesystem, FnAttrs, TaskMode, ToolOptions};
use crate::util::Errors;

pub use block::check_block;
pub use isolated::Isolation;
pub use signature::Params;

/// A tool that passed every rule: what expansion needs, resolved.
pub struct Model<'a> {
    pub f: &'a ToolFn,
    pub name: String,
    pub description: Description,
    pub title: Option<String>,
    /// What the tool declares it does, for its `ToolSafety`.
    pub safety: Safety,
    pub tags: Vec<String>,
    /// How a call runs the fn.
    pub run: Run,
    /// `isolated`, with its bounds.
    pub isolated: Option<Isolation>,
    /// The timeout, retry and concurrency it runs under.
    pub limits: Limits,
    /// `collect`: submit the tool for `ToolRegistry::from_collected`.
    pub collect: bool,
    pub state: Option<Type>,
    pub context: Option<Type>,
    /// The model-visible parameters: the argument struct, or plain ones.
    pub params: Params,
    /// `example = "..."`: JSON objects of arguments, checked for syntax.
    pub examples: Vec<syn::LitStr>,
    /// The path of the runtime crate (`::tinyagents_tools` unless
    /// `crate = ..`).
    pub krate: syn::Path,
    /// `task = "..."`: whether the tool may run as an MCP task.
    pub task: TaskMode,
    /// `escalates`: its task begins where the body calls
    /// `McpPeer::escalate`.
    pub escalates: bool,
}

/// How a call runs the fn, decided by how it is written.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Run {
    /// A plain `fn`: called at once, on the thread that runs the call, with
    /// no future (`InlineCall`).
    Inline,
    /// An `async fn`: its future is the call's (`Tool::call`).
    Async,
    /// A plain `fn` marked `blocking`: run on tokio's blocking pool.
    Blocking,
}

/// The description: the option's literal, or the doc attributes' expressions.
pub enum Description {
    Option(String),
    Doc(Vec<syn::Expr>),
}

/// The effects a tool declares: `ToolSafety`, resolved.
pub struct Safety {
    pub effect: Effect,
    pub idempotent: bool,
    pub local: bool,
    pub filesystem: Option<Filesystem>,
    pub shell: bool,
    pub spend: bool,
    pub requires_confirmation: bool,
    pub workspace: bool,
    pub redaction: Redaction,
    pub determinism: Determinism,
}

/// `timeout`, `retry`, `sequential` and `max_concurrency`, resolved.
pub struct Limits {
    pub timeout_ms: Option<u64>,
    /// `(max_attempts, backoff_ms)`.
    pub retry: Option<(u32, u64)>,
    pub sequential: bool,
    pub max_concurrency: Option<usize>,
}

/// The effect a tool declares.
#[derive(Clone, Copy)]
pub enum Effect {
    ReadOnly,
    Mutating,
    Destructive,
}

/// The determinism a tool declares.
#[derive(Clone, Copy)]
pub enum Determinism {
    Deterministic,
    GivenInjected,
    NonDeterministic,
}

/// `redact(...)` and `unredacted_secrets`.
#[derive(Default)]
pub struct Redaction {
    pub fields: Vec<String>,
    pub patterns: Vec<String>,
    /// Registered secret values masked (default `true`).
    pub secrets: bool,
    /// `unredacted_secrets`: the opt-in to `redact(secrets = false)`.
    pub unredacted_secrets: bool,
}

/// Checks the fn and its attributes; returns the resolved tool or every
/// error.
pub fn check(f: &ToolFn, attrs: FnAttrs) -> Result<Model<'_>, syn::Error> {
    let mut errors = Errors::default();
    let params = signature::check(f, attrs.args, &mut errors);
    let model = match attrs.options {
        Ok(options) => Some(resolve(options, f, params, &mut errors)),
        Err(err) => {
            errors.push_error(err.into());
            None
        }
    };
    errors.finish()?;
    Ok(model.expect("options parsed when there is no error"))
}

/// The options' rules, and the model they give.
fn resolve<'a>(o: ToolOptions, f: &'a ToolFn, params: Params, errors: &mut Errors) -> Model<'a> {
    let run = run(f, &o, errors);
    let name = options::name(&o, f, errors);
    let description = options::description(&o, f, errors);
    let effect = options::effect(&o, errors);
    let determinism = options::determinism(&o, errors);
    let timeout_ms = options::timeout(&o, errors);
    let retry = options::retry(&o, errors);
    let max_concurrency = options::max_concurrency(&o, errors);
    let task = options::task(&o, errors);
    let isolated = isolated::check(&o, errors);
    example::check(&o.example, errors);
    options::method_only(&o, f, errors);
    let redaction = options::redaction(&o, errors);
    Model {
        f,
        name,
        description,
        title: o.title.map(|t| t.value()),
        safety: Safety {
            effect,
            idempotent: o.idempotent.is_present(),
            local: o.local.is_present(),
            filesystem: o.filesystem.map(|fs| *fs),
            shell: o.shell.is_present(),
            spend: o.spend.is_present(),
            requires_confirmation: o.requires_confirmation.is_present(),
            workspace: o.workspace.is_present(),
            redaction,
            determinism,
        },
        tags: o.tags.0.iter().map(|l| l.value()).collect(),
        run,
        isolated,
        limits: Limits {
            timeout_ms,
            retry,
            sequential: o.sequential.is_present(),
            max_concurrency,
        },
        collect: o.collect.is_present(),
        state: o.state,
        context: o.context,
        params,
        examples: o.example,
        krate: o
            .krate
            .map_or_else(|| syn::parse_quote!(::tinyagents_tools), |k| k.0),
        task,
        escalates: o.escalates.is_present(),
    }
}

/// How a call runs the fn: a plain `fn` at once, an `async fn` as a future,
/// a `blocking` plain fn on the blocking pool. `blocking` on an `async fn`
/// is refused.
fn run(f: &ToolFn, o: &ToolOptions, errors: &mut Errors) -> Run {
    match (f.is_async(), o.blocking.is_present()) {
        (true, true) => {
            errors.push(
                o.blocking.span(),
                "`blocking` is for synchronous fns and this fn is `async`: remove `blocking`",
            );
            Run::Async
        }
        (true, false) => Run::Async,
        (false, true) => Run::Blocking,
        (false, false) => Run::Inline,
    }
}
