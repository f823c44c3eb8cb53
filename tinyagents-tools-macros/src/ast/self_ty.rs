//! `Self` in a tool fn's signature. A method's is written as the service's
//! type: the tool types `#[tools]` makes live outside the `impl` block,
//! where `Self` would name them. A free fn's says the fn is no free fn: it
//! sits in an `impl` block or a trait.

use proc_macro2::{Span, TokenStream, TokenTree};
use quote::ToTokens;
use syn::{GenericArgument, PathArguments, ReturnType, Type};

use crate::util::respan;

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
                let named = respan(quote::quote!(#service), first.ident.span());
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

/// The first `Self` of `sig`'s parameters and return type, if any.
pub fn find_self(sig: &syn::Signature) -> Option<Span> {
    fn find(tokens: TokenStream) -> Option<Span> {
        tokens.into_iter().find_map(|tree| match tree {
            TokenTree::Ident(ident) if ident == "Self" => Some(ident.span()),
            TokenTree::Group(group) => find(group.stream()),
            _ => None,
        })
    }
    find(sig.inputs.to_token_stream()).or_else(|| find(sig.output.to_token_stream()))
}

#[cfg(test)]
mod tests {
    use quote::ToTokens;

    use super::{find_self, replace_self};

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

    #[test]
    fn a_self_anywhere_in_the_parameters_or_return_type_is_found() {
        for sig in [
            "fn new() -> Self",
            "fn make(n: u32) -> Result<Vec<Self>, String>",
            "fn from(other: &Self)",
            "fn each(f: impl Fn(Self::Item))",
        ] {
            let sig: syn::Signature = syn::parse_str(sig).expect("a signature");
            assert!(find_self(&sig).is_some(), "{}", sig.to_token_stream());
        }
    }

    #[test]
    fn a_signature_without_self_has_none() {
        for sig in [
            "fn free(args: Args) -> String",
            "fn selfish(self_ref: SelfRef) -> my::Self_",
        ] {
            let sig: syn::Signature = syn::parse_str(sig).expect("a signature");
            assert!(find_self(&sig).is_none(), "{}", sig.to_token_stream());
        }
    }
}
