//! Helpers every stage shares: the error collector, and small readings of
//! names and types. Nothing here knows a stage.

use proc_macro2::{Span, TokenStream, TokenTree};
use syn::spanned::Spanned;
use syn::{GenericArgument, PathArguments, Type};

/// Collects every error of one item (serde_derive's `Ctxt`): each rule adds
/// its own at the token that is wrong, and the user sees them all at once.
#[derive(Default)]
pub struct Errors(Option<syn::Error>);

impl Errors {
    /// An error at `span`.
    pub fn push(&mut self, span: Span, message: impl std::fmt::Display) {
        self.push_error(syn::Error::new(span, message));
    }

    /// An error over the whole of `tokens` (first to last token).
    pub fn push_spanned(&mut self, tokens: impl quote::ToTokens, message: impl std::fmt::Display) {
        self.push_error(syn::Error::new_spanned(tokens, message));
    }

    /// An error made elsewhere (a parser's).
    pub fn push_error(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(error),
            None => self.0 = Some(error),
        }
    }

    /// True while no error was pushed.
    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// Every error, combined; `Ok` when there is none.
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

/// The name of a type generated for `base` (a fn's name, or a service's and
/// a method's): `search_docs` and `Tool` give `SearchDocsTool`.
pub fn generated_ident(base: &str, suffix: &str, span: Span) -> syn::Ident {
    let mut name = pascal_case(base);
    name.push_str(suffix);
    syn::Ident::new(&name, span)
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

/// `tokens` with every token's span set to `span` (so that rustc reports an
/// error in them at the user's token the span comes from).
pub fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut tt| {
            if let TokenTree::Group(g) = &tt {
                let mut group = proc_macro2::Group::new(g.delimiter(), respan(g.stream(), span));
                group.set_span(span);
                tt = TokenTree::Group(group);
            } else {
                tt.set_span(span);
            }
            tt
        })
        .collect()
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

/// True for `#[tool]` and `#[tool(...)]`, under any path
/// (`#[tinyagents_tools::tool]`).
pub fn is_tool_attr(attr: &syn::Attribute) -> bool {
    attr.path()
        .segments
        .last()
        .is_some_and(|s| s.ident == "tool")
}
