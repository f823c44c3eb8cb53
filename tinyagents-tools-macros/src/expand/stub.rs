//! What a refused fn or block leaves beside its errors: a tool type (or the
//! main block's `ToolService`) whose uses compile, so that one mistake is
//! one error: the tool's registration and its `spec()` add none of their own.

use proc_macro2::TokenStream;
use quote::quote;

use crate::ast::ToolFn;
use crate::util::generated_ident;

/// The name of the tool type of a free fn.
pub(super) fn tool_ident(f: &ToolFn) -> syn::Ident {
    generated_ident(&f.type_base(), "Tool", f.item.sig.ident.span())
}

/// The tool type `tool` of a fn `#[tool]` refused: it names the same type
/// and implements `Tool` for every state and context, so its uses compile;
/// the crate does not (the refusal is a compile error), so its bodies never
/// run.
pub(super) fn stub(f: &ToolFn, tool: &syn::Ident, krate: &syn::Path) -> TokenStream {
    let vis = &f.item.vis;
    let refused = "#[tool] refused this fn at compile time";
    quote! {
        #[doc(hidden)]
        #[derive(::core::fmt::Debug, ::core::clone::Clone, ::core::marker::Copy, ::core::default::Default)]
        #vis struct #tool;

        impl #tool {
            #[doc(hidden)]
            #vis fn spec() -> &'static #krate::ToolSpec {
                ::core::unreachable!(#refused)
            }
        }

        impl<AnyState, AnyContext> #krate::Tool<AnyState, AnyContext> for #tool
        where
            AnyState: ::core::marker::Send + ::core::marker::Sync + 'static,
            AnyContext: ::core::marker::Send + ::core::marker::Sync + 'static,
        {
            fn spec(&self) -> &#krate::ToolSpec {
                ::core::unreachable!(#refused)
            }

            fn call<'life0, 'life1, 'life2, 'async_trait>(
                &'life0 self,
                _: &'life1 AnyState,
                _: &'life2 #krate::ToolRuntime<AnyContext>,
                _: #krate::tool_macro::serde_json::Value,
            ) -> ::core::pin::Pin<::std::boxed::Box<
                dyn ::core::future::Future<
                    Output = ::core::result::Result<#krate::ToolOutput, #krate::ToolError>,
                > + ::core::marker::Send + 'async_trait,
            >>
            where
                'life0: 'async_trait,
                'life1: 'async_trait,
                'life2: 'async_trait,
                Self: 'async_trait,
            {
                ::core::unreachable!(#refused)
            }
        }
    }
}

/// The main block's `ToolService` when `#[tools]` refused the block: it
/// compiles for every state and context, and never runs (the crate does not
/// build).
pub(super) fn stub_service(service: &syn::Type, krate: &syn::Path) -> TokenStream {
    quote! {
        impl<AnyState, AnyContext> #krate::ToolService<AnyState, AnyContext> for #service
        where
            AnyState: ::core::marker::Send + ::core::marker::Sync + 'static,
            AnyContext: ::core::marker::Send + ::core::marker::Sync + 'static,
        {
            fn tools(
                _: &::std::sync::Arc<Self>,
            ) -> ::std::vec::Vec<::std::sync::Arc<dyn #krate::Tool<AnyState, AnyContext>>> {
                ::core::unreachable!("#[tools] refused this block at compile time")
            }
        }
    }
}
