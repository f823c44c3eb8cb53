//! Every rule of `#[tool]`, each a spanned error that says what to write
//! instead. All errors of one fn are collected and reported together.

use proc_macro2::Span;
use syn::Type;
use syn::spanned::Spanned;

use crate::ast::{Output, Param, ToolFn, find_impl_trait, has_doc, last_segment, type_string};
use crate::attr::{Filesystem, ToolOptions, parse_duration_ms};
use crate::names::check_tool_name;
use crate::plain;

/// Types that only ever come from the runtime: without `#[inject]` they are a
/// mistake, not an argument struct.
const RUNTIME_TYPES: &[&str] = &[
    "CancellationToken",
    "RunContext",
    "Ctx",
    "ToolRuntime",
    "Secret",
    "Store",
    "Resource",
    "State",
    "EventEmitter",
    "StreamWriter",
    "WorkspaceRoot",
    "ThreadId",
    "RunId",
    "ToolCallId",
];

/// Types that are never an argument struct: a plain parameter of one of
/// them is a mistake (the model's input is one JSON object).
const PLAIN_TYPES: &[&str] = &[
    "String", "str", "bool", "char", "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16",
    "u32", "u64", "u128", "usize", "f32", "f64", "Vec", "VecDeque", "HashSet", "BTreeSet",
    "HashMap", "BTreeMap", "Option", "Value", "Cow", "PathBuf", "Path",
];

/// True when `ty` is never an argument struct.
fn is_plain_type(ty: &Type) -> bool {
    match ty {
        Type::Reference(_)
        | Type::Slice(_)
        | Type::Array(_)
        | Type::Tuple(_)
        | Type::Ptr(_)
        | Type::FnPtr(_)
        | Type::Never(_) => true,
        Type::Group(g) => is_plain_type(&g.elem),
        Type::Paren(p) => is_plain_type(&p.elem),
        _ => last_segment(ty)
            .is_some_and(|seg| PLAIN_TYPES.contains(&seg.ident.to_string().as_str())),
    }
}

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
    /// The path of the runtime crate (`::tinyagents_tools` unless
    /// `crate = ..`).
    pub krate: syn::Path,
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

/// The rules about the fn itself; returns the argument struct's index and
/// the plain parameters' indexes.
fn check_signature(f: &ToolFn, errors: &mut Errors) -> (Option<usize>, Vec<usize>) {
    let sig = &f.item.sig;
    if let Some(c) = &sig.constness {
        errors.push(c.span(), "a tool fn cannot be `const`: remove `const`");
    }
    if let syn::Safety::Unsafe(u) = &sig.safety {
        errors.push(
            u.span(),
            "a tool fn cannot be `unsafe`: wrap the unsafe code in a safe fn",
        );
    }
    if let Some(abi) = &sig.abi {
        errors.push(abi.span(), "a tool fn cannot have an ABI: remove `extern`");
    }
    if let Some(v) = &sig.variadic {
        errors.push(v.span(), "a tool fn cannot be variadic");
    }
    if !sig.generics.params.is_empty() {
        errors.push_spanned(
            &sig.generics,
            "a tool fn cannot be generic: its schema and injected types must be known; use concrete types (name the state and context with `#[tool(state = .., context = ..)]`)",
        );
    }
    if let Some(where_clause) = &sig.generics.where_clause {
        errors.push_spanned(
            where_clause,
            "a tool fn cannot have a `where` clause: its schema and injected types must be known; remove the `where` clause and use concrete types",
        );
    }
    for receiver in &f.receivers {
        errors.push_spanned(
            receiver,
            "#[tool] goes on a free fn, not a method: move the fn out of the `impl` block, remove `self`, and take what the tool needs as `#[inject]` parameters (`State<T>`, `Store<T>`, `Resource<T>`, ...)",
        );
    }

    // The argument struct: the parameter that is neither injected, nor a
    // runtime type, nor described, nor of a plain type. Every other
    // model-visible parameter is a plain parameter.
    let is_runtime = |ty: &Type| {
        last_segment(ty).is_some_and(|seg| RUNTIME_TYPES.contains(&seg.ident.to_string().as_str()))
    };
    let is_struct = |p: &Param| {
        p.inject.is_none()
            && find_impl_trait(&p.ty).is_none()
            && !is_plain_type(&p.ty)
            && !is_runtime(&p.ty)
            && !plain::is_described(p)
            && p.arg.span.is_none()
    };
    let struct_param = f.params.iter().find(|p| is_struct(p));
    let mut argument: Option<usize> = None;
    let mut plain_params = Vec::new();
    for (i, param) in f.params.iter().enumerate() {
        for error in &param.arg.errors {
            errors.push_error(error.clone());
        }
        if let Some(span) = find_impl_trait(&param.ty) {
            errors.push(
                span,
                "a tool parameter cannot be `impl Trait`: name a concrete type (the argument struct, a plain parameter's type, or an `#[inject]` type)",
            );
            continue;
        }
        if let Some(inject) = &param.inject {
            if let Some(span) = inject.options {
                errors.push(
                    span,
                    "#[inject] takes no options: write `#[inject]`; what is injected follows from the parameter's type",
                );
            }
            if let Some(span) = param.arg.span {
                errors.push(
                    span,
                    "an `#[inject]` parameter is never seen by the model: remove `#[arg]`",
                );
            }
            continue;
        }
        if is_runtime(&param.ty) {
            errors.push(
                param.ty.span(),
                format_args!(
                    "`{}` is a runtime value, never supplied by the model: mark the parameter `#[inject]` (`#[inject] {}: {}`)",
                    type_string(&param.ty),
                    param.name,
                    type_string(&param.ty),
                ),
            );
            continue;
        }
        if is_struct(param) {
            if let Some(pat) = &param.destructured {
                errors.push_spanned(
                    pat,
                    format_args!(
                        "name the argument struct instead of taking it apart: write `args: {}` and use `args.field` in the body",
                        type_string(&param.ty),
                    ),
                );
                continue;
            }
            match argument {
                None => argument = Some(i),
                Some(first) => errors.push(
                    param.ty.span(),
                    format_args!(
                        "a tool has at most one model-visible parameter, the argument struct (here `{}`); `{}` would be a second one: move it into the argument struct, or mark it `#[inject]` if it is a runtime value",
                        type_string(&f.params[first].ty),
                        param.name,
                    ),
                ),
            }
            continue;
        }
        // A plain parameter.
        if let Some(args) = struct_param {
            errors.push_spanned(
                &param.ty,
                format_args!(
                    "`{}: {}` is a plain parameter, but `{}: {}` is the argument struct: a tool takes one argument struct or plain parameters, not both; move `{}` into `{}`, or describe `{}` (`/// ...`) to make every parameter plain",
                    param.name,
                    type_string(&param.ty),
                    args.name,
                    type_string(&args.ty),
                    param.name,
                    type_string(&args.ty),
                    args.name,
                ),
            );
            continue;
        }
        if param.ident.is_none() {
            errors.push_spanned(
                param.destructured.as_ref().map_or(&param.ty, |_| &param.ty),
                format_args!(
                    "a plain parameter is a named property of the tool's input: write `name: {}`, not a pattern",
                    type_string(&param.ty),
                ),
            );
            continue;
        }
        if let Type::Reference(r) = &param.ty {
            errors.push_spanned(
                r,
                "a plain parameter owns its value, decoded from the model's JSON: write `String` for `&str`, `Vec<T>` for `&[T]`, `T` for `&T`",
            );
            continue;
        }
        if !plain::is_described(param) {
            errors.push(
                plain::span(param),
                format_args!(
                    "the model reads each parameter's description: add a doc comment (`/// ...`) above `{}`, or `#[arg(description = \"...\")]`",
                    param.name,
                ),
            );
        }
        plain_params.push(i);
    }

    if let Output::ImplTrait(span) = &f.output {
        errors.push(
            *span,
            "a tool cannot return `impl Trait`: name the type (a `Serialize` type, `ToolOutput` or `()`, optionally in `Result<_, E>`)",
        );
    }
    (argument, plain_params)
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

    let isolated = crate::isolated::check(&o, errors);
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
        krate: o
            .krate
            .map_or_else(|| syn::parse_quote!(::tinyagents_tools), |k| k.0),
    }
}
