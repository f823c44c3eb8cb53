//! A typed model of the input: the fn under `#[tool]` (its parameters,
//! model-visible or `#[inject]`, its return type, its doc comment, the
//! `Self` that says it is no free fn) and the `impl` block under `#[tools]`
//! with its tool methods.
//!
//! Reading never fails: what is wrong is kept as written and refused by
//! `valid`, so that every mistake is reported together.

mod block;
mod self_ty;

use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Attribute, FnArg, Pat, ReturnType, Type};

use crate::util::{find_impl_trait, is_unit, type_string};

pub use block::ToolBlock;
use self_ty::find_self;
pub use self_ty::replace_self;

/// The fn, as read.
pub struct ToolFn {
    /// The fn, with its parameters' `#[inject]`, `#[arg]` and doc
    /// attributes removed: emitted as is.
    pub item: syn::ItemFn,
    /// Typed parameters in order.
    pub params: Vec<Param>,
    /// `self` receivers (a method's; refused on a free fn).
    pub receivers: Vec<syn::Receiver>,
    /// The return type, classified.
    pub output: Output,
    /// The expressions of the fn's `#[doc = ...]` attributes, in order:
    /// string literals, or macro calls (`concat!`, `include_str!`) that
    /// rustc evaluates.
    pub doc: Vec<syn::Expr>,
    /// The service, when the fn is a method of a `#[tools]` block.
    pub service: Option<ServiceOf>,
    /// The first `Self` of a free fn's signature: such a fn sits in an
    /// `impl` block or a trait (refused). An attribute sees its item only,
    /// so a fn of an `impl` block that does not name `Self` is found by
    /// the compiler instead (`expand::place`).
    pub names_self: Option<Span>,
}

/// The type whose `#[tools]` block holds a method tool.
pub struct ServiceOf {
    /// The `Self` type as written in `impl Type`.
    pub ty: Type,
    /// Its name (the last path segment; `Service` when it has none, which
    /// `valid` refuses).
    pub ident: syn::Ident,
}

/// One typed parameter.
pub struct Param {
    /// The parameter's name (its pattern as written when not an identifier),
    /// for messages and the spec's list of injected values.
    pub name: String,
    /// The type as written.
    pub ty: Type,
    /// The identifier, when the pattern is one (`args`, `mut args`); `None`
    /// for a pattern that takes the value apart (`(a, b)`, `Args { query }`).
    pub ident: Option<syn::Ident>,
    /// The `#[inject]` attribute, when present.
    pub inject: Option<InjectAttr>,
    /// The parameter's `///` doc comments.
    pub doc: Vec<syn::Expr>,
    /// Its `#[arg(...)]` attributes, parsed by `attr`.
    pub arg: Vec<Attribute>,
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
    /// Reads a free fn under `#[tool]`.
    pub fn new(item: syn::ItemFn) -> ToolFn {
        let names_self = find_self(&item.sig);
        let mut f = ToolFn::read(item, None);
        f.names_self = names_self;
        f
    }

    /// Reads `item`, removing the attributes of its parameters that are
    /// this crate's (`#[inject]`, `#[arg]`, `///`).
    fn read(mut item: syn::ItemFn, service: Option<ServiceOf>) -> ToolFn {
        let mut params = Vec::new();
        let mut receivers = Vec::new();
        for arg in item.sig.inputs.iter_mut() {
            match arg {
                FnArg::Receiver(r) => receivers.push(r.clone()),
                FnArg::Typed(pt) => params.push(Param::read(pt)),
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
            service,
            names_self: None,
        }
    }

    /// What the generated types are named after: the fn's name, or for a
    /// method the service's name and the method's (`Inventory_get_item`
    /// gives `InventoryGetItemTool`).
    pub fn type_base(&self) -> String {
        match &self.service {
            None => self.ident_name(),
            Some(service) => format!("{}_{}", service.ident.unraw(), self.ident_name()),
        }
    }

    /// The fn's name without a raw prefix.
    pub fn ident_name(&self) -> String {
        self.item.sig.ident.unraw().to_string()
    }

    /// True for an `async fn`.
    pub fn is_async(&self) -> bool {
        self.item.sig.asyncness.is_some()
    }
}

impl Param {
    /// Reads one parameter, taking this crate's attributes off it.
    fn read(pt: &mut syn::PatType) -> Param {
        let doc = doc_exprs(&pt.attrs);
        let mut inject = None;
        let mut arg = Vec::new();
        pt.attrs.retain(|attr| {
            let path = attr.path();
            if path.is_ident("doc") {
                false
            } else if path.is_ident("arg") {
                arg.push(attr.clone());
                false
            } else if path.is_ident("inject") {
                let options = match &attr.meta {
                    syn::Meta::Path(_) => None,
                    syn::Meta::List(list) => Some(list.delimiter.span().join()),
                    syn::Meta::NameValue(nv) => Some(nv.value.span()),
                };
                inject = Some(InjectAttr { options });
                false
            } else {
                true
            }
        });
        let ident = match &*pt.pat {
            Pat::Ident(p) if p.subpat.is_none() => Some(p.ident.clone()),
            _ => None,
        };
        let name = match &ident {
            Some(ident) => ident.unraw().to_string(),
            None => type_string(&pt.pat),
        };
        Param {
            name,
            ty: (*pt.ty).clone(),
            ident,
            inject,
            doc,
            arg,
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
