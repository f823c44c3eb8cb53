//! The rules on a tool fn's signature: what the fn may not be, where it may
//! sit, which parameters are model-visible and which injected.
//!
//! The rule that tells the argument struct from a plain parameter: a
//! parameter without `#[inject]`, without a description (`///` or
//! `#[arg(description = "...")]`), without `#[arg]` and whose type is not a
//! plain type (a number, `bool`, `char`, `String`, `Vec`, `Option`, a map,
//! a set, a tuple, ...) is the argument struct; every other parameter
//! without `#[inject]` is a plain parameter. A pattern never decides.

use syn::Type;
use syn::spanned::Spanned;

use super::plain::{self, PlainParam};
use crate::ast::{Output, Param, ToolFn};
use crate::attr::ArgOptions;
use crate::util::{Errors, find_impl_trait, last_segment, type_string};

/// The error for a `#[tool]` fn of an `impl` block or a trait, when its
/// signature names `Self`; the runtime's `tool_macro::ModuleItem` says the
/// same when the compiler finds such a fn (`expand::place`).
pub const NOT_A_FREE_FN: &str = "`#[tool]` goes on a free fn, not on a fn of an `impl` block or a trait: put `#[tools]` on the `impl` block (`#[tools] impl Service { ... }`) and give each `#[tool]` method `&self`, or move the fn out of the block as a free `#[tool]` fn";

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

/// The model-visible parameters: the argument struct, or plain parameters.
pub struct Params {
    /// The index of the argument struct parameter.
    pub argument: Option<usize>,
    /// The plain parameters.
    pub plain: Vec<PlainParam>,
}

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

/// True when `ty` only ever comes from the runtime.
fn is_runtime(ty: &Type) -> bool {
    last_segment(ty).is_some_and(|seg| RUNTIME_TYPES.contains(&seg.ident.to_string().as_str()))
}

/// True when `param` is the argument struct (see the module docs).
fn is_struct(param: &Param, arg: &ArgOptions) -> bool {
    param.inject.is_none()
        && find_impl_trait(&param.ty).is_none()
        && !is_plain_type(&param.ty)
        && !is_runtime(&param.ty)
        && !plain::is_described(param, arg)
        && arg.span.is_none()
}

/// Every rule of the signature; the model-visible parameters it gives.
pub(super) fn check(f: &ToolFn, args: Vec<ArgOptions>, errors: &mut Errors) -> Params {
    check_fn(f, errors);
    check_place(f, errors);
    let struct_param = f
        .params
        .iter()
        .zip(&args)
        .position(|(p, a)| is_struct(p, a));
    let mut argument: Option<usize> = None;
    let mut plain = Vec::new();
    for (i, (param, mut arg)) in f.params.iter().zip(args).enumerate() {
        for error in arg.errors.drain(..) {
            errors.push_error(error);
        }
        if let Some(span) = find_impl_trait(&param.ty) {
            errors.push(
                span,
                "a tool parameter cannot be `impl Trait`: name a concrete type (the argument struct, a plain parameter's type, or an `#[inject]` type)",
            );
        } else if param.inject.is_some() {
            check_injected(param, &arg, errors);
        } else if is_runtime(&param.ty) {
            let ty = type_string(&param.ty);
            errors.push(
                param.ty.span(),
                format_args!(
                    "`{ty}` is a runtime value, never supplied by the model: mark the parameter `#[inject]` (`#[inject] {}: {ty}`)",
                    param.name,
                ),
            );
        } else if is_struct(param, &arg) {
            // The argument struct may be taken apart by a pattern, as in any
            // fn: the generated code passes the decoded value to the fn as
            // written.
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
        } else if let Some(args) = struct_param.map(|s| &f.params[s]) {
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
        } else if let Some(p) = plain::check(i, param, arg, errors) {
            plain.push(p);
        }
    }
    plain::check_names(&plain, errors);
    if let Output::ImplTrait(span) = &f.output {
        errors.push(
            *span,
            "a tool cannot return `impl Trait`: name the type (a `Serialize` type, `ToolOutput` or `()`, optionally in `Result<_, E>`)",
        );
    }
    Params { argument, plain }
}

/// What the fn may not be: `const`, `unsafe`, `extern`, variadic, generic.
fn check_fn(f: &ToolFn, errors: &mut Errors) {
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
}

/// Where the fn sits and what it receives: a free fn has no `self` and
/// sits in a module; a method of a `#[tools]` block takes `&self`. A free
/// fn whose signature names neither `self` nor `Self` may still sit in an
/// `impl` block or a trait: the compiler finds it (`expand::place`).
fn check_place(f: &ToolFn, errors: &mut Errors) {
    if f.service.is_none() {
        for receiver in &f.receivers {
            errors.push_spanned(
                receiver,
                "#[tool] on a method needs `#[tools]` on its `impl` block (`#[tools] impl Service { ... }`), which registers the methods with `registry.register_service(Arc::new(service))`; or make it a free fn without `self`",
            );
        }
        if f.names_self.is_some() && f.receivers.is_empty() {
            errors.push(f.item.sig.ident.span(), NOT_A_FREE_FN);
        }
        return;
    }
    let Some(receiver) = f.receivers.first() else {
        errors.push(
            f.item.sig.ident.span(),
            "a tool method takes `&self` (the service it runs on): add `&self`, or move the fn out of the `impl` block as a free `#[tool]` fn",
        );
        return;
    };
    let message = match &receiver.kind {
        syn::ReceiverKind::Reference(_, _, None) => return,
        syn::ReceiverKind::Reference(_, _, Some(_)) => {
            "a tool method takes `&self`, not `&mut self`: calls may run at once on the one shared service; keep mutable state behind a `Mutex` or an atomic and take `&self`"
        }
        syn::ReceiverKind::Value => {
            "a tool method takes `&self`, not `self`: every call borrows the one shared service; write `&self`"
        }
        _ => {
            "a tool method takes `&self`: write `&self`, not `self: Type` (every tool holds the service in an `Arc` and lends it to each call)"
        }
    };
    errors.push_spanned(receiver, message);
}

/// An `#[inject]` parameter takes no options and no `#[arg]`.
fn check_injected(param: &Param, arg: &ArgOptions, errors: &mut Errors) {
    if let Some(span) = param.inject.as_ref().and_then(|inject| inject.options) {
        errors.push(
            span,
            "#[inject] takes no options: write `#[inject]`; what is injected follows from the parameter's type",
        );
    }
    if let Some(span) = arg.span {
        errors.push(
            span,
            "an `#[inject]` parameter is never seen by the model: remove `#[arg]`",
        );
    }
}
