//! `#[tools]` on an `impl` block: each `#[tool]` method becomes a tool type
//! holding the service in an `Arc`, and the block implements the hidden
//! `BlockTools<N, S, C>` (block `N` of the type: 1 for `#[tools]`, `N` for
//! `#[tools(block = N)]`). The main block also implements `ToolService`,
//! which adds the tools of blocks 2 to 16 found by autoref specialization on
//! the concrete type, so that no list of blocks is kept anywhere.

use proc_macro2::TokenStream;
use quote::quote;

use super::stub::stub_service;
use crate::ast::{ServiceOf, ToolBlock};
use crate::attr::{BlockOptions, FnAttrs, MAX_BLOCK};
use crate::util::{Errors, generated_ident};
use crate::valid::{self, Model};

/// The attribute's entry point.
pub fn tools(args: TokenStream, input: TokenStream) -> TokenStream {
    const EXPECTED: &str =
        "#[tools] goes on an `impl` block of a service type: `#[tools] impl Service { ... }`";
    let item: syn::ItemImpl = match super::parse_item(&input, EXPECTED) {
        Ok(item) => item,
        Err(kept) => return kept,
    };
    let mut errors = Errors::default();
    let options = BlockOptions::parse(args, &mut errors);
    // Only a block known to be the main one stands in for the service when
    // refused: a mistyped `block` must not claim to be it.
    let known_main = errors.is_empty() && options.number() == 1;
    let block = ToolBlock::new(item);
    let mut tools = Vec::new();
    let mut expansions = Vec::new();
    let is_tool_block = valid::check_block(&block, &mut errors);
    for method in block.methods.iter().filter(|_| is_tool_block) {
        let attrs = FnAttrs::new(options.method_options(&method.attr), &method.f);
        match valid::check(&method.f, attrs) {
            Ok(model) => {
                let ident = &method.f.item.sig.ident;
                tools.push(generated_ident(&method.f.type_base(), "Tool", ident.span()));
                expansions.push(super::tool_fn(&model));
            }
            Err(err) => errors.push_error(err),
        }
    }
    let item = &block.item;
    if let Err(err) = errors.finish() {
        // Keep the block, and the main block's `ToolService`, so that one
        // mistake is one error: `register_service` adds none of its own.
        let err = err.to_compile_error();
        let stub =
            (known_main && is_tool_block).then(|| stub_service(&item.self_ty, &options.krate()));
        return quote!(#item #stub #err);
    }
    let impls = block_impls(&options, &item.self_ty, &tools);
    quote! {
        #item
        #(#expansions)*
        #impls
    }
}

/// `ToolBlock<N>` and `BlockTools<N, S, C>` for the block, and for the main
/// block `ToolService`.
fn block_impls(options: &BlockOptions, service: &syn::Type, tools: &[syn::Ident]) -> TokenStream {
    let krate = options.krate();
    let p = quote!(#krate::tool_macro);
    let number = options.number();
    let (s_ty, c_ty, generics) = state_and_context(options);
    let block_tools = quote! {
        impl #p::ToolBlock<#number> for #service {}

        impl<#(#generics),*> #p::BlockTools<#number, #s_ty, #c_ty> for #service
        where
            #(#tools: #krate::Tool<#s_ty, #c_ty>,)*
        {
            fn block_tools(
                service: &::std::sync::Arc<Self>,
                out: &mut ::std::vec::Vec<::std::sync::Arc<dyn #krate::Tool<#s_ty, #c_ty>>>,
            ) {
                #(out.push(::std::sync::Arc::new(#tools::new(::std::sync::Arc::clone(service))));)*
            }
        }
    };
    let further = 2..=MAX_BLOCK;
    let service_impl = (number == 1).then(|| {
        quote! {
            impl<#(#generics),*> #krate::ToolService<#s_ty, #c_ty> for #service
            where
                #service: #p::BlockTools<1, #s_ty, #c_ty>,
            {
                fn tools(
                    service: &::std::sync::Arc<Self>,
                ) -> ::std::vec::Vec<::std::sync::Arc<dyn #krate::Tool<#s_ty, #c_ty>>> {
                    use #p::{BlockAbsent as _, BlockPresent as _};
                    let mut out = ::std::vec::Vec::new();
                    <#service as #p::BlockTools<1, #s_ty, #c_ty>>::block_tools(service, &mut out);
                    #((&&#p::BlockProbe::<#service, #further>::new()).add::<#s_ty, #c_ty>(service, &mut out);)*
                    out
                }
            }
        }
    });
    quote!(#block_tools #service_impl)
}

/// The `S` and `C` of the block's impls: named, or generic parameters.
fn state_and_context(o: &BlockOptions) -> (TokenStream, TokenStream, Vec<TokenStream>) {
    let bound = quote!(::core::marker::Send + ::core::marker::Sync + 'static);
    let mut generics = Vec::new();
    let s_ty = match &o.state {
        Some(ty) => quote!(#ty),
        None => {
            generics.push(quote!(AnyState: #bound));
            quote!(AnyState)
        }
    };
    let c_ty = match &o.context {
        Some(ty) => quote!(#ty),
        None => {
            generics.push(quote!(AnyContext: #bound));
            quote!(AnyContext)
        }
    };
    (s_ty, c_ty, generics)
}

/// The tool type of a method: the service in an `Arc`, its spec, `new`.
pub(super) fn tool_struct(m: &Model<'_>, tool: &syn::Ident, service: &ServiceOf) -> TokenStream {
    let vis = &m.f.item.vis;
    let ty = &service.ty;
    let method = &m.f.item.sig.ident;
    let doc = format!(
        "The `{}` tool, generated by `#[tools]` from the method `{}::{}`; `registry.register_service(..)` registers it with the service's other tools.",
        m.name, service.ident, method
    );
    let debug = format!("{tool}");
    quote! {
        #[doc = #doc]
        #vis struct #tool(::std::sync::Arc<#ty>);

        impl #tool {
            /// The tool, running on `service`.
            #vis fn new(service: ::std::sync::Arc<#ty>) -> Self {
                #tool(service)
            }
        }

        impl ::core::clone::Clone for #tool {
            fn clone(&self) -> Self {
                #tool(::std::sync::Arc::clone(&self.0))
            }
        }

        impl ::core::fmt::Debug for #tool {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                f.write_str(#debug)
            }
        }
    }
}
