//! Every rule of `#[tool]`, each a spanned error that says what to write
//! instead. All errors of one fn are collected and reported together.

use proc_macro2::Span;
use syn::Type;
use syn::spanned::Spanned;

use crate::ast::{ToolFn, has_doc};
use crate::attr::{Filesystem, TaskMode, ToolOptions};
use crate::duration::parse_duration_ms;
use crate::names::check_tool_name;
use crate::signature::check_signature;

/// The description: the option's literal, or the doc attributes' expressions.
pub enum Description {
    Option(String),
    Doc(Vec<syn::Expr>),
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

/// A tool that passed every rule: what expansion needs, resolved.
pub struct Model<'a> {
    pub f: &'a ToolFn,
    pub name: String,
    pub description: Description,
    pub title: Option<String>,
    pub effect: Effect,
    pub idempotent: bool,
    pub local: bool,
    pub filesystem: Option<Filesystem>,
    pub shell: bool,
    pub spend: bool,
    pub requires_confirmation: bool,
    pub workspace: bool,
    pub redact_fields: Vec<String>,
    pub redact_patterns: Vec<String>,
    pub redact_secrets: bool,
    /// `unredacted_secrets`: the opt-in to `redact(secrets = false)`.
    pub unredacted_secrets: bool,
    pub determinism: Determinism,
    pub timeout_ms: Option<u64>,
    /// `(max_attempts, backoff_ms)`.
    pub retry: Option<(u32, u64)>,
    pub sequential: bool,
    pub max_concurrency: Option<usize>,
    pub tags: Vec<String>,
    pub blocking: bool,
    /// `isolated`, with its bounds.
    pub isolated: Option<crate::isolated::Isolation>,
    /// `collect`: submit the tool for `ToolRegistry::from_collected`.
    pub collect: bool,
    pub state: Option<Type>,
    pub context: Option<Type>,
    /// The index of the argument struct parameter.
    pub argument: Option<usize>,
    /// The indexes of the plain parameters (none when there is an argument
    /// struct).
    pub plain: Vec<usize>,
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

/// Collects errors; one combined `syn::Error` at the end.
#[derive(Default)]
pub struct Errors(Option<syn::Error>);

impl Errors {
    pub fn push(&mut self, span: Span, message: impl std::fmt::Display) {
        self.push_error(syn::Error::new(span, message));
    }

    /// An error over the whole of `tokens` (first to last token).
    pub fn push_spanned(&mut self, tokens: impl quote::ToTokens, message: impl std::fmt::Display) {
        self.push_error(syn::Error::new_spanned(tokens, message));
    }

    pub fn push_error(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(error),
            None => self.0 = Some(error),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    pub fn finish(self) -> Result<(), syn::Error> {
        self.0.map_or(Ok(()), Err)
    }
}

/// `search_docs` -> `SearchDocs`.
pub fn pascal_case(fn_name: &str) -> String {
    let mut out = String::new();
    for word in fn_name.split('_').filter(|w| !w.is_empty()) {
        let mut chars = word.chars();
        if let Some(first) = chars.next() {
            out.extend(first.to_uppercase());
            out.push_str(chars.as_str());
        }
    }
    out
}

/// Checks the fn and its options; returns the resolved tool or every error.
pub fn check(options: darling::Result<ToolOptions>, f: &ToolFn) -> Result<Model<'_>, syn::Error> {
    let mut errors = Errors::default();
    let (argument, plain) = check_signature(f, &mut errors);
    let options = match options {
        Ok(options) => Some(options),
        Err(err) => {
            errors.push_error(err.into());
            None
        }
    };
    let model = options.map(|o| check_options(o, f, argument, plain, &mut errors));
    errors.finish()?;
    Ok(model.expect("options parsed when there is no error"))
}

fn check_options<'a>(
    o: ToolOptions,
    f: &'a ToolFn,
    argument: Option<usize>,
    plain: Vec<usize>,
    errors: &mut Errors,
) -> Model<'a> {
    let sig = &f.item.sig;

    // Sync or async.
    match (sig.asyncness.is_some(), o.blocking.is_present()) {
        (false, false) => errors.push(
            sig.fn_token.span(),
            "a tool fn must be `async`: write `async fn`, or mark a synchronous fn `#[tool(blocking)]` to run it on tokio's blocking pool",
        ),
        (true, true) => errors.push(
            o.blocking.span(),
            "`blocking` is for synchronous fns and this fn is `async`: remove `blocking`",
        ),
        _ => {}
    }

    // Name.
    let name = match &o.name {
        Some(lit) => {
            let name = lit.value();
            if let Err(reason) = check_tool_name(&name) {
                errors.push(lit.span(), format_args!("invalid tool name: {reason}"));
            }
            name
        }
        None => {
            let name = f.ident_name();
            if let Err(reason) = check_tool_name(&name) {
                errors.push(
                    sig.ident.span(),
                    format_args!(
                        "the fn name `{name}` is not a valid tool name ({reason}): rename the fn, or name the tool with `#[tool(name = \"...\")]`"
                    ),
                );
            }
            name
        }
    };

    // Description.
    let description = match &o.description {
        Some(lit) => {
            let text = lit.value();
            if text.trim().is_empty() {
                errors.push(
                    lit.span(),
                    "the description is empty: say what the tool does, the model reads it to decide when to call the tool",
                );
            }
            Description::Option(text)
        }
        None => {
            if !has_doc(&f.doc) {
                errors.push(
                    sig.ident.span(),
                    "a tool needs a description, the model reads it to decide when to call the tool: add a doc comment (`/// ...`) to the fn, or `#[tool(description = \"...\")]`",
                );
            }
            Description::Doc(f.doc.clone())
        }
    };

    // Effect.
    let contradiction = |errors: &mut Errors, span: Span, a: &str, b: &str| {
        errors.push(
            span,
            format_args!("`{a}` and `{b}` contradict each other: keep one of them"),
        );
    };
    if o.read_only.is_present() {
        for (flag, word) in [(&o.mutating, "mutating"), (&o.destructive, "destructive")] {
            if flag.is_present() {
                contradiction(errors, flag.span(), "read_only", word);
            }
        }
        if let Some(fs) = &o.filesystem
            && **fs == Filesystem::Write
        {
            contradiction(errors, fs.span(), "read_only", "filesystem = \"write\"");
        }
    }
    if o.mutating.is_present() && o.destructive.is_present() {
        errors.push(
            o.mutating.span(),
            "`destructive` already means the tool mutates: remove `mutating`",
        );
    }
    let effect = if o.destructive.is_present() {
        Effect::Destructive
    } else if o.read_only.is_present() {
        Effect::ReadOnly
    } else {
        Effect::Mutating
    };
    if o.local.is_present() && o.networked.is_present() {
        contradiction(errors, o.networked.span(), "local", "networked");
    }
    if o.deterministic.is_present() && o.deterministic_given_injected.is_present() {
        contradiction(
            errors,
            o.deterministic_given_injected.span(),
            "deterministic",
            "deterministic_given_injected",
        );
    }
    let determinism = if o.deterministic.is_present() {
        Determinism::Deterministic
    } else if o.deterministic_given_injected.is_present() {
        Determinism::GivenInjected
    } else {
        Determinism::NonDeterministic
    };

    // Timeout.
    let timeout_ms = o.timeout.as_ref().map(|t| &t.0).and_then(|lit| {
        match parse_duration_ms(&lit.value()) {
            Ok(0) => errors.push(
                lit.span(),
                "a zero timeout would fail every call: give a positive duration such as \"30s\", or remove `timeout` to use the executor's default",
            ),
            Ok(ms) => return Some(ms),
            Err(e) => errors.push(lit.span(), e.message("timeout")),
        }
        None
    });

    // Retry.
    let retry = o.retry.as_ref().and_then(|retry| {
        let span = retry.span;
        if !o.idempotent.is_present() {
            errors.push(
                span,
                "`retry` needs `idempotent`: a retried call repeats its effect; add `idempotent` if repeating a call is safe, or remove `retry`",
            );
        }
        let attempts = match retry.max_attempts.as_ref()?.base10_parse::<u32>() {
            Ok(n) if n >= 2 => Some(n),
            _ => {
                errors.push(
                    retry.max_attempts.as_ref()?.span(),
                    "`retry(max_attempts)` counts every attempt, the first included: retrying needs at least 2; remove `retry` for a single attempt",
                );
                None
            }
        };
        let backoff = match &retry.backoff {
            None => Some(100),
            Some(lit) => match parse_duration_ms(&lit.value()) {
                Ok(ms) => Some(ms),
                Err(e) => {
                    errors.push(lit.span(), e.message("backoff"));
                    None
                }
            },
        };
        Some((attempts?, backoff?))
    });

    let max_concurrency = o.max_concurrency.as_ref().map(|c| c.value);
    if let Some(c) = &o.max_concurrency
        && o.sequential.is_present()
    {
        errors.push(
            c.span,
            "`sequential` and `max_concurrency` contradict each other: `sequential` already keeps the tool apart from every other call; keep one of them",
        );
    }

    // Tasks.
    let task = o.task.as_ref().map_or(TaskMode::Forbidden, |t| **t);
    if o.escalates.is_present() && task == TaskMode::Forbidden {
        errors.push(
            o.escalates.span(),
            "`escalates` says where the tool's task begins, and this tool never runs as a task: add `task = \"optional\"` or `task = \"required\"`, or remove `escalates`",
        );
    }

    let isolated = crate::isolated::check(&o, errors);
    for example in &o.example {
        if let Err((problem, at)) = crate::json::check_object(&example.value()) {
            errors.push(
                example.span(),
                format_args!(
                    "invalid example: {problem} (at byte {at}); {}",
                    crate::json::EXAMPLE_FORM
                ),
            );
        }
    }
    if f.service.is_some() {
        if o.isolated.is_present() {
            errors.push(
                o.isolated.span(),
                "`isolated` runs the fn in a worker process, which cannot reach the service instance: make it a free `#[tool(isolated)]` fn",
            );
        }
        if o.collect.is_present() {
            errors.push(
                o.collect.span(),
                "a method tool is registered with its service (`registry.register_service(Arc::new(service))`), not collected: remove `collect`",
            );
        }
    }
    let redact = o.redact.unwrap_or_default();
    let secrets_off = redact.secrets.as_ref().filter(|b| !b.value);
    match (secrets_off, o.unredacted_secrets.is_present()) {
        (Some(off), false) => errors.push(
            off.span(),
            "`secrets = false` lets a secret in the tool's output reach the model unmasked: add `unredacted_secrets` to the #[tool] options to opt in, or remove `secrets = false`",
        ),
        (None, true) => errors.push(
            o.unredacted_secrets.span(),
            "`unredacted_secrets` opts in to `redact(secrets = false)`, which this tool does not have: add `redact(secrets = false)`, or remove `unredacted_secrets`",
        ),
        _ => {}
    }
    Model {
        f,
        name,
        description,
        title: o.title.map(|t| t.value()),
        effect,
        idempotent: o.idempotent.is_present(),
        local: o.local.is_present(),
        filesystem: o.filesystem.map(|fs| *fs),
        shell: o.shell.is_present(),
        spend: o.spend.is_present(),
        requires_confirmation: o.requires_confirmation.is_present(),
        workspace: o.workspace.is_present(),
        redact_fields: redact.fields.iter().map(|l| l.value()).collect(),
        redact_patterns: redact.patterns.iter().map(|l| l.value()).collect(),
        redact_secrets: redact.secrets.is_none_or(|b| b.value),
        unredacted_secrets: o.unredacted_secrets.is_present(),
        determinism,
        timeout_ms,
        retry,
        sequential: o.sequential.is_present(),
        max_concurrency,
        tags: o.tags.0.iter().map(|l| l.value()).collect(),
        blocking: o.blocking.is_present(),
        isolated,
        collect: o.collect.is_present(),
        state: o.state,
        context: o.context,
        argument,
        plain,
        examples: o.example,
        krate: o
            .krate
            .map_or_else(|| syn::parse_quote!(::tinyagents_tools), |k| k.0),
        task,
        escalates: o.escalates.is_present(),
    }
}
