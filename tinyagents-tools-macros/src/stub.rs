//! The tool type of a fn `#[tool]` refused: emitted beside the error so
//! that the tool's uses (its registration, its `spec()`) add no errors of
//! their own.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::ast::ToolFn;

/// The tool type of a fn `#[tool]` refused: it names the same type and
/// implements `Tool` for every state and context, so its uses compile; the
/// crate does not (the refusal is a compile error), so its bodies never run.
pub fn stub(f: &ToolFn, krate: &syn::Path) -> TokenStream {
    let vis = &f.item.vis;
    let fn_ident = &f.item.sig.ident;
    let tool = format_ident!(
        "{}",
        crate::expand::struct_name(&f.type_base()),
        span = fn_ident.span()
    );
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
