//! The `impl` block under `#[tools]`, and its `#[tool]` methods, each read
//! as a [`ToolFn`] of the service.

use quote::format_ident;
use syn::ImplItem;

use super::{ServiceOf, ToolFn, replace_self};
use crate::util::{is_tool_attr, last_segment};

/// The block, as read.
pub struct ToolBlock {
    /// The block as emitted: without its methods' `#[tool]`, and its tool
    /// methods' parameters without this crate's attributes.
    pub item: syn::ItemImpl,
    /// Its `#[tool]` methods, in order.
    pub methods: Vec<ToolMethod>,
}

/// A `#[tool]` method of the block.
pub struct ToolMethod {
    /// The method, read as a tool fn of the service.
    pub f: ToolFn,
    /// Its `#[tool(...)]` attribute, parsed by `attr`.
    pub attr: syn::Attribute,
}

impl ToolBlock {
    /// Reads the block, taking the `#[tool]` attribute off its methods.
    pub fn new(mut item: syn::ItemImpl) -> ToolBlock {
        let service = (*item.self_ty).clone();
        let ident = last_segment(&service)
            .map_or_else(|| format_ident!("Service"), |seg| seg.ident.clone());
        let mut methods = Vec::new();
        for member in item.items.iter_mut() {
            let ImplItem::Fn(method) = member else {
                continue;
            };
            let Some(at) = method.attrs.iter().position(is_tool_attr) else {
                continue;
            };
            let attr = method.attrs.remove(at);
            // The tool's types are written outside the block, where `Self`
            // would name the tool: its signature names the service instead.
            let mut sig = method.sig.clone();
            for input in &mut sig.inputs {
                if let syn::FnArg::Typed(param) = input {
                    replace_self(&mut param.ty, &service);
                }
            }
            if let syn::ReturnType::Type(_, ty) = &mut sig.output {
                replace_self(ty, &service);
            }
            let fn_item = syn::ItemFn {
                attrs: method.attrs.clone(),
                vis: method.vis.clone(),
                modifiers: Default::default(),
                sig,
                block: Box::new(method.block.clone()),
            };
            let of = ServiceOf {
                ty: service.clone(),
                ident: ident.clone(),
            };
            let f = ToolFn::read(fn_item, Some(of));
            method.sig = f.item.sig.clone();
            methods.push(ToolMethod { f, attr });
        }
        ToolBlock { item, methods }
    }
}
