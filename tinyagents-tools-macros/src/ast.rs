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
    /// `self` receivers (refused).
    pub receivers: Vec<syn::Receiver>,
    /// The return type, classified.
    pub output: Output,
    /// The expressions of the fn's `#[doc = ...]` attributes, in order:
    /// string literals, or macro calls (`concat!`, `include_str!`) that
    /// rustc evaluates.
    pub doc: Vec<syn::Expr>,
    /// The service, when the fn is a method of a `#[tools]` block.
    pub service: Option<ServiceOf>,
}

/// The type whose `#[tools]` block holds a method tool.
pub struct ServiceOf {
    /// The `Self` type as written in `impl Type`.
    pub ty: Type,
    /// Its name (the last path segment).
    pub ident: syn::Ident,
}

/// One typed parameter.
pub struct Param {
    /// The parameter's name (its pattern as written when not an identifier).
    pub name: String,
    /// The type as written.
    pub ty: Type,
    /// The `#[inject]` attribute, when present.
    pub inject: Option<InjectAttr>,
    /// The pattern, when it is not a plain identifier (`(a, b)`,
    /// `Args { query }`).
    pub destructured: Option<Pat>,
    /// The identifier, when the pattern is one.
    pub ident: Option<syn::Ident>,
    /// The parameter's `///` doc comments (removed from the emitted fn).
    pub doc: Vec<syn::Expr>,
    /// Its `#[arg(...)]` options (removed from the emitted fn).
    pub arg: crate::plain::ArgAttr,
}

/// An `#[inject]` attribute on a parameter.
pub struct InjectAttr {
    /// Where its options are, when it has any (`#[inject(..)]`, refused).
    pub options: Option<Span>,
}

/// The return type, classified syntactically. Whether it is a success or
/// a `Result` is decided by the compiler (`ToolReturn`), not by its name.
pub enum Output {
    /// No return type, or `()`.
    Unit,
    /// A named type (a value, a `ToolOutput`, or a `Result` under any name).
    Type(Box<Type>),
    /// `impl Trait` in the return type: the output type cannot be named.
    ImplTrait(Span),
}

impl ToolFn {
    /// Reads `item`, removing the `#[inject]` attributes from its parameters.
    pub fn new(mut item: syn::ItemFn) -> ToolFn {
        let mut params = Vec::new();
        let mut receivers = Vec::new();
        for arg in item.sig.inputs.iter_mut() {
            match arg {
                FnArg::Receiver(r) => receivers.push(r.clone()),
                FnArg::Typed(pt) => {
                    let mut inject = None;
                    let doc = doc_exprs(&pt.attrs);
                    let mut arg = crate::plain::ArgAttr::default();
                    pt.attrs.retain(|attr| {
                        if attr.path().is_ident("doc") {
                            return false;
                        }
                        if attr.path().is_ident("arg") {
                            arg.read(attr);
                            return false;
                        }
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
                    let destructured = match &*pt.pat {
                        Pat::Ident(p) if p.subpat.is_none() => None,
                        other => Some(other.clone()),
                    };
                    let ident = match &*pt.pat {
                        Pat::Ident(p) if p.subpat.is_none() => Some(p.ident.clone()),
                        _ => None,
                    };
                    params.push(Param {
                        name: pat_name(&pt.pat),
                        ty: (*pt.ty).clone(),
                        inject,
                        destructured,
                        ident,
                        doc,
                        arg,
                    });
                }
            }
        }
        let output = classify_output(&item.sig.output);
        let doc = doc_exprs(&item.attrs);
        ToolFn {
            item,
            params,
            receivers,
            output,
            doc,
            service: None,
        }
    }

    /// What the generated types are named after: the fn's name, or for a
    /// method the service's name and the method's (`Inventory_get_item`
    /// gives `InventoryGetItemTool`).
    pub fn type_base(&self) -> String {
        match &self.service {
            None => self.ident_name(),
            Some(service) => {
                use syn::ext::IdentExt;
                format!("{}_{}", service.ident.unraw(), self.ident_name())
            }
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

/// Writes `service` for each `Self` in `ty` (`Self`, `Vec<Self>`, `&Self`,
/// `<Self as Trait>::Item`, `Self::Item`), spanned at the `Self` it
/// replaces: the tool types `#[tools]` makes live outside the `impl` block,
/// where `Self` would name them.
pub fn replace_self(ty: &mut Type, service: &Type) {
    match ty {
        Type::Path(p) => {
            if let Some(q) = &mut p.qself {
                replace_self(&mut q.ty, service);
            } else if let Some(first) = p.path.segments.first()
                && p.path.leading_colon.is_none()
                && first.ident == "Self"
                && first.arguments.is_empty()
            {
                let named = crate::expand::respan(quote::quote!(#service), first.ident.span());
                let rest: Vec<_> = p.path.segments.iter().skip(1).collect();
                if rest.is_empty() {
                    *ty = syn::parse_quote!(#named);
                    return;
                }
                // `Self::Item<..>`: the rest's own arguments may name `Self`.
                *ty = syn::parse_quote!(<#named>#(::#rest)*);
                return replace_self(ty, service);
            }
            replace_in_path(&mut p.path, service);
        }
        Type::Reference(r) => replace_self(&mut r.elem, service),
        Type::Ptr(p) => replace_self(&mut p.elem, service),
        Type::Group(g) => replace_self(&mut g.elem, service),
        Type::Paren(p) => replace_self(&mut p.elem, service),
        Type::Slice(s) => replace_self(&mut s.elem, service),
        Type::Array(a) => replace_self(&mut a.elem, service),
        Type::Tuple(t) => t.elems.iter_mut().for_each(|e| replace_self(e, service)),
        Type::TraitObject(t) => {
            for bound in &mut t.bounds {
                if let syn::TypeParamBound::Trait(t) = bound {
                    replace_in_path(&mut t.path, service);
                }
            }
        }
        Type::FnPtr(f) => {
            for input in &mut f.inputs {
                replace_self(&mut input.ty, service);
            }
            if let ReturnType::Type(_, out) = &mut f.output {
                replace_self(out, service);
            }
        }
        _ => {}
    }
}

/// [`replace_self`] in the type arguments of each segment of `path`.
fn replace_in_path(path: &mut syn::Path, service: &Type) {
    for seg in &mut path.segments {
        match &mut seg.arguments {
            PathArguments::AngleBracketed(args) => {
                for arg in &mut args.args {
                    match arg {
                        GenericArgument::Type(t) => replace_self(t, service),
                        GenericArgument::AssocType(a) => replace_self(&mut a.ty, service),
                        _ => {}
                    }
                }
            }
            PathArguments::Parenthesized(args) => {
                for input in &mut args.inputs {
                    replace_self(&mut input.ty, service);
                }
                if let ReturnType::Type(_, out) = &mut args.output {
                    replace_self(out, service);
                }
            }
            PathArguments::None => {}
        }
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
    Output::Type(Box::new(ty.clone()))
}

/// The expressions of the `#[doc = ...]` attributes.
fn doc_exprs(attrs: &[Attribute]) -> Vec<syn::Expr> {
    attrs
        .iter()
        .filter(|attr| attr.path().is_ident("doc"))
        .filter_map(|attr| match &attr.meta {
            syn::Meta::NameValue(nv) => Some(nv.value.clone()),
            _ => None,
        })
        .collect()
}

/// True when the doc attributes say something: a non-blank literal, or a
/// macro call whose text rustc produces.
pub fn has_doc(doc: &[syn::Expr]) -> bool {
    doc.iter().any(|expr| match expr {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => !s.value().trim().is_empty(),
        _ => true,
    })
}

#[cfg(test)]
mod tests {
    use quote::ToTokens;

    use super::replace_self;

    fn replaced(ty: &str) -> String {
        let mut ty: syn::Type = syn::parse_str(ty).expect("a type");
        replace_self(&mut ty, &syn::parse_str("crate::Shop").expect("a type"));
        ty.to_token_stream().to_string().replace(' ', "")
    }

    #[test]
    fn every_self_in_a_type_names_the_service() {
        for (ty, expected) in [
            ("Self", "crate::Shop"),
            ("Vec<Option<Self>>", "Vec<Option<crate::Shop>>"),
            ("&'a [Self; 2]", "&'a[crate::Shop;2]"),
            ("(u8, Self)", "(u8,crate::Shop)"),
            ("<Self as Listed>::Item", "<crate::Shop as Listed>::Item"),
            ("Self::Item<Self>", "<crate::Shop>::Item<crate::Shop>"),
            (
                "Box<dyn Fn(Self) -> Self>",
                "Box<dynFn(crate::Shop)->crate::Shop>",
            ),
            ("HashMap<String, Self>", "HashMap<String,crate::Shop>"),
            (
                "fn(Self) -> Option<Self>",
                "fn(crate::Shop)->Option<crate::Shop>",
            ),
        ] {
            assert_eq!(replaced(ty), expected.replace(' ', ""), "{ty}");
        }
    }

    #[test]
    fn other_types_are_left_as_they_are() {
        for ty in [
            "u32",
            "SelfRef",
            "my::Self_",
            "Vec<String>",
            "<T as Tr>::Out",
        ] {
            assert_eq!(replaced(ty), ty.replace(' ', ""), "{ty}");
        }
    }
}
