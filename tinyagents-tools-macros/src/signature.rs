//! The rules on a tool fn's signature: which parameters are model-visible,
//! which are injected, and what the fn may not be.

use syn::Type;
use syn::spanned::Spanned;

use crate::ast::{Output, Param, ToolFn, find_impl_trait, last_segment, type_string};
use crate::plain;
use crate::valid::Errors;

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

/// The rules about the fn itself; returns the argument struct's index and
/// the plain parameters' indexes.
pub fn check_signature(f: &ToolFn, errors: &mut Errors) -> (Option<usize>, Vec<usize>) {
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
    check_receiver(f, errors);

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

/// A free fn has no `self`; a method of a `#[tools]` block takes `&self`.
fn check_receiver(f: &ToolFn, errors: &mut Errors) {
    if f.service.is_none() {
        for receiver in &f.receivers {
            errors.push_spanned(
                receiver,
                "#[tool] on a method needs `#[tools]` on its `impl` block (`#[tools] impl Service { ... }`), which registers the methods with `registry.register_service(Arc::new(service))`; or make it a free fn without `self`",
            );
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
