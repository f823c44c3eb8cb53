//! Plain parameters (`#[tool] async fn add(a: i64, b: i64)`): each is a
//! property of the tool's input, named, owned and described. A parameter
//! taken apart by a pattern (`(lo, hi): (i64, i64)`) names its property
//! with `#[arg(name = "...")]`.

use syn::ext::IdentExt;

use crate::ast::{Param, has_doc};
use crate::attr::{ArgDefault, ArgOptions};
use crate::util::{Errors, type_string};

/// A plain parameter that passed every rule.
pub struct PlainParam {
    /// Its index among the fn's parameters.
    pub index: usize,
    /// The field of the generated argument struct, the property's name: the
    /// parameter's name, or `#[arg(name)]`'s.
    pub field: syn::Ident,
    /// What the model reads: `#[arg(description)]`, else the doc comment.
    pub doc: Vec<syn::Expr>,
    /// `#[arg(default)]`.
    pub default: Option<ArgDefault>,
}

/// True when `param` is described (`///` or `#[arg(description)]`).
pub(super) fn is_described(param: &Param, arg: &ArgOptions) -> bool {
    arg.description.is_some() || has_doc(&param.doc)
}

/// The rules of one plain parameter.
pub(super) fn check(
    index: usize,
    param: &Param,
    arg: ArgOptions,
    errors: &mut Errors,
) -> Option<PlainParam> {
    let field = field(param, &arg, errors)?;
    if let syn::Type::Reference(r) = &param.ty {
        errors.push_spanned(
            r,
            "a plain parameter owns its value, decoded from the model's JSON: write `String` for `&str`, `Vec<T>` for `&[T]`, `T` for `&T`",
        );
        return None;
    }
    if !is_described(param, &arg) {
        errors.push(
            field.span(),
            format_args!(
                "the model reads each parameter's description: add a doc comment (`/// ...`) above `{}`, or `#[arg(description = \"...\")]`",
                param.name,
            ),
        );
    }
    let doc = match arg.description {
        Some(text) => vec![syn::parse_quote!(#text)],
        None => param.doc.clone(),
    };
    Some(PlainParam {
        index,
        field,
        doc,
        default: arg.default,
    })
}

/// The property's name: the parameter's, or for a pattern `#[arg(name)]`'s.
fn field(param: &Param, arg: &ArgOptions, errors: &mut Errors) -> Option<syn::Ident> {
    match (&param.ident, &arg.name) {
        (Some(ident), None) => Some(ident.clone()),
        (Some(_), Some(name)) => {
            errors.push(
                name.span(),
                format_args!(
                    "`#[arg(name)]` names the property of a parameter taken apart by a pattern, and this one is named `{}`: rename the parameter, or remove `name`",
                    param.name
                ),
            );
            None
        }
        (None, Some(name)) => match syn::parse_str::<syn::Ident>(&name.value()) {
            Ok(mut ident) => {
                ident.set_span(name.span());
                Some(ident)
            }
            Err(_) => {
                errors.push(
                    name.span(),
                    "`#[arg(name)]` is the name of the property the model writes: letters, digits and `_`, not a Rust keyword (`name = \"range\"`)",
                );
                None
            }
        },
        (None, None) => {
            errors.push_spanned(
                &param.ty,
                format_args!(
                    "a plain parameter taken apart by a pattern has no name for the model: name its property with `#[arg(name = \"...\")]`, or write `name: {}`",
                    type_string(&param.ty),
                ),
            );
            None
        }
    }
}

/// No two plain parameters are the same property.
pub(super) fn check_names(plain: &[PlainParam], errors: &mut Errors) {
    for (i, p) in plain.iter().enumerate() {
        let name = p.field.unraw();
        if plain[..i].iter().any(|q| q.field.unraw() == name) {
            errors.push(
                p.field.span(),
                format_args!(
                    "`{name}` is the property of another parameter already: give this one another `#[arg(name)]`"
                ),
            );
        }
    }
}
