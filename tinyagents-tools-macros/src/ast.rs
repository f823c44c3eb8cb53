//! A typed model of the fn under `#[tool]`: its parameters (model-visible or
//! `#[inject]`), its return type, its doc comment.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Attribute, FnArg, GenericArgument, Pat, PathArguments, ReturnType, Type};

/// The fn, as read.
pub struct ToolFn {
    /// The fn, with the `#[inject]` attributes removed: emitted as is.
    pub item: syn::ItemFn,
    /// Typed parameters in order.
    pub params: Vec<Param>,
    /// Spans of `self` receivers (refused).
    pub receivers: Vec<Span>,
    /// The return type, classified.
    pub output: Output,
    /// The doc comment's text, when there is one.
    pub doc: Option<String>,
}

/// One typed parameter.
pub struct Param {
    /// The parameter's name (its pattern as written when not an identifier).
    pub name: String,
    /// The type as written.
    pub ty: Type,
    /// The `#[inject]` attribute, when present.
    pub inject: Option<InjectAttr>,
}

/// An `#[inject]` attribute on a parameter.
pub struct InjectAttr {
    /// Where its options are, when it has any (`#[inject(..)]`, refused).
    pub options: Option<Span>,
}

/// The return type, classified syntactically.
pub enum Output {
    /// No return type, or `()`.
    Unit,
    /// A plain value type.
    Value(Box<Type>),
    /// `Result<T, E>`.
    Result {
        /// The success type.
        ok: Box<Type>,
        /// The error type.
        err: Box<Type>,
    },
    /// A one-argument `Result<T>` alias: its error type cannot be checked.
    ResultAlias(Span),
    /// `impl Trait` in the return type: the output type cannot be named.
    ImplTrait(Span),
}

impl Output {
    /// The success type, when it can be named and is not `()`.
    pub fn value_type(&self) -> Option<&Type> {
        match self {
            Output::Value(ty) => Some(ty),
            Output::Result { ok, .. } if !is_unit(ok) => Some(ok),
            _ => None,
        }
    }
}

impl ToolFn {
    /// Reads `item`, removing the `#[inject]` attributes from its parameters.
    pub fn new(mut item: syn::ItemFn) -> ToolFn {
        let mut params = Vec::new();
        let mut receivers = Vec::new();
        for arg in item.sig.inputs.iter_mut() {
            match arg {
                FnArg::Receiver(r) => receivers.push(r.span()),
                FnArg::Typed(pt) => {
                    let mut inject = None;
                    pt.attrs.retain(|attr| {
                        if !attr.path().is_ident("inject") {
                            return true;
                        }
                        let options = match &attr.meta {
                            syn::Meta::Path(_) => None,
                            syn::Meta::List(list) => Some(list.delimiter.span().join()),
                            syn::Meta::NameValue(nv) => Some(nv.value.span()),
                        };
                        inject = Some(InjectAttr { options });
                        false
                    });
                    params.push(Param {
                        name: pat_name(&pt.pat),
                        ty: (*pt.ty).clone(),
                        inject,
                    });
                }
            }
        }
        let output = classify_output(&item.sig.output);
        let doc = doc_text(&item.attrs);
        ToolFn {
            item,
            params,
            receivers,
            output,
            doc,
        }
    }

    /// The fn's name without a raw prefix.
    pub fn ident_name(&self) -> String {
        use syn::ext::IdentExt;
        self.item.sig.ident.unraw().to_string()
    }
}

fn pat_name(pat: &Pat) -> String {
    match pat {
        Pat::Ident(p) => {
            use syn::ext::IdentExt;
            p.ident.unraw().to_string()
        }
        other => type_string(other),
    }
}

/// Tokens as compact text: `Store<DocIndex>`, not `Store < DocIndex >`.
pub fn type_string(tokens: &impl quote::ToTokens) -> String {
    let text = tokens.to_token_stream().to_string();
    let mut out = String::with_capacity(text.len());
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c == ' ' {
            let prev = if i > 0 { chars[i - 1] } else { ' ' };
            let next = chars.get(i + 1).copied().unwrap_or(' ');
            let glue_after = matches!(prev, '<' | ':' | '&' | '(' | '[');
            let glue_before = matches!(next, '<' | '>' | ':' | ',' | ')' | ']');
            if glue_after || glue_before {
                continue;
            }
        }
        out.push(c);
    }
    out
}

/// True for `()`.
pub fn is_unit(ty: &Type) -> bool {
    matches!(ty, Type::Tuple(t) if t.elems.is_empty())
}

/// The last path segment of `ty`, when it is a path type.
pub fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last(),
        Type::Group(g) => last_segment(&g.elem),
        Type::Paren(p) => last_segment(&p.elem),
        _ => None,
    }
}

/// The generic type arguments of a path segment.
pub fn type_args(seg: &syn::PathSegment) -> Vec<&Type> {
    match &seg.arguments {
        PathArguments::AngleBracketed(args) => args
            .args
            .iter()
            .filter_map(|a| match a {
                GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The span of the first `impl Trait` inside `ty`.
pub fn find_impl_trait(ty: &Type) -> Option<Span> {
    match ty {
        Type::ImplTrait(t) => Some(t.span()),
        Type::Group(g) => find_impl_trait(&g.elem),
        Type::Paren(p) => find_impl_trait(&p.elem),
        Type::Reference(r) => find_impl_trait(&r.elem),
        Type::Slice(s) => find_impl_trait(&s.elem),
        Type::Array(a) => find_impl_trait(&a.elem),
        Type::Tuple(t) => t.elems.iter().find_map(find_impl_trait),
        Type::Path(p) => p
            .path
            .segments
            .iter()
            .find_map(|seg| type_args(seg).into_iter().find_map(find_impl_trait)),
        _ => None,
    }
}

fn classify_output(output: &ReturnType) -> Output {
    let ty = match output {
        ReturnType::Default => return Output::Unit,
        ReturnType::Type(_, ty) => &**ty,
    };
    if let Some(span) = find_impl_trait(ty) {
        return Output::ImplTrait(span);
    }
    if is_unit(ty) {
        return Output::Unit;
    }
    if let Some(seg) = last_segment(ty)
        && seg.ident == "Result"
    {
        let args = type_args(seg);
        match args.as_slice() {
            [ok, err] => {
                return Output::Result {
                    ok: Box::new((*ok).clone()),
                    err: Box::new((*err).clone()),
                };
            }
            [_] => return Output::ResultAlias(seg.ident.span()),
            _ => {}
        }
    }
    Output::Value(Box::new(ty.clone()))
}

/// The doc comment as the model should read it: one leading space per line
/// removed, soft-wrapped lines joined, paragraphs, list items and code blocks
/// kept.
fn doc_text(attrs: &[Attribute]) -> Option<String> {
    let mut lines = Vec::new();
    for attr in attrs {
        if !attr.path().is_ident("doc") {
            continue;
        }
        if let syn::Meta::NameValue(nv) = &attr.meta
            && let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) = &nv.value
        {
            for line in s.value().split('\n') {
                lines.push(line.strip_prefix(' ').unwrap_or(line).trim_end().to_owned());
            }
        }
    }
    let text = join_doc_lines(&lines);
    (!text.is_empty()).then_some(text)
}

fn join_doc_lines(lines: &[String]) -> String {
    let mut out = String::new();
    let mut in_code = false;
    let mut new_paragraph = false;
    for line in lines {
        let fence = line.trim_start().starts_with("```");
        if !in_code && !fence && line.trim().is_empty() {
            new_paragraph = !out.is_empty();
            continue;
        }
        if out.is_empty() {
        } else if new_paragraph {
            out.push_str("\n\n");
        } else if in_code || fence || is_list_item(line) || line.starts_with("    ") {
            out.push('\n');
        } else {
            out.push(' ');
            out.push_str(line.trim_start());
            continue;
        }
        out.push_str(line);
        new_paragraph = false;
        if fence {
            in_code = !in_code;
        }
    }
    out.trim_end().to_owned()
}

fn is_list_item(line: &str) -> bool {
    let t = line.trim_start();
    if t.starts_with("- ") || t.starts_with("* ") || t.starts_with("+ ") {
        return true;
    }
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && t[digits..].starts_with(". ")
}
