//! The `Tool` impl of a tool that runs in this process, by how its fn is
//! written:
//!
//! - a plain `fn` runs at once: the tool implements `InlineCall` (borrowed
//!   arguments, no future) and says so through `Tool::__inline`; its
//!   `Tool::call` runs the same plain code;
//! - an `async fn` answers through the future of `Tool::call` only;
//! - a `blocking` plain fn runs on tokio's blocking pool, from `Tool::call`.

use proc_macro2::TokenStream;
use quote::quote;

use super::call::{ToolImpl, return_spans};
use crate::util::respan;
use crate::valid::Run;

impl ToolImpl<'_> {
    /// The `Tool` impl (and for a plain fn the `InlineCall` impl) of a tool
    /// that runs in this process.
    pub(super) fn local_impl(&self) -> TokenStream {
        match self.m.run {
            Run::Inline => self.inline_impl(),
            Run::Async | Run::Blocking => self.future_impl(),
        }
    }

    /// A plain fn's tool: one plain method runs the call, from borrowed
    /// arguments (`InlineCall`) or owned ones (`Tool::call`). A tool that
    /// injects nothing reads only its arguments: that method is then not
    /// generic over the state and context types, and its body is
    /// type-checked once.
    fn inline_impl(&self) -> TokenStream {
        let ToolImpl {
            p,
            tool,
            generics,
            locals,
            ..
        } = self;
        let result = self.result();
        let args_only = self.m.f.params.iter().all(|param| param.inject.is_none());
        let state_params = self.state_params();
        let inline_params = self.inline_state_params();
        let (run_generics, run_params, run_with, inline_with): (&[TokenStream], _, _, _) =
            if args_only {
                (&[], quote!(), quote!(), quote!())
            } else {
                (
                    generics,
                    quote!(#state_params,),
                    quote!(__state, __runtime,),
                    quote!(__state, __runtime.get(),),
                )
            };
        let binds = self.binds(&quote!(__arguments), |param, local| {
            self.inject(param, local)
        });
        let (callee, receiver) = self.callee(quote!(&self.0));
        let finish = self.finish();
        let call_sig = self.call_sig();
        let inline_call = self.of_state(quote!(#p::InlineCall));
        let methods = quote! {
            #call_sig {
                self.__tinyagents_run(#run_with #p::Arguments::Owned(__arguments))
            }

            fn __inline(&self) -> ::core::option::Option<&dyn #inline_call> {
                ::core::option::Option::Some(self)
            }
        };
        let tool_trait = self.tool_trait(methods);
        let inline_head = self.impl_for(quote!(#p::InlineCall));
        quote! {
            impl #tool {
                #[doc(hidden)]
                #[inline]
                fn __tinyagents_run<#(#run_generics),*>(
                    &self,
                    #run_params
                    __arguments: #p::Arguments<'_>,
                ) -> #result {
                    use #p::{ViaIntoToolOutput as _, ViaSerialize as _, ViaUnsupported as _};
                    #binds
                    let __value = #callee(#receiver #(#locals),*);
                    #finish
                }
            }

            #inline_head {
                fn call_inline(
                    &self,
                    #inline_params,
                    __arguments: &#p::serde_json::Value,
                ) -> #result {
                    self.__tinyagents_run(#inline_with #p::Arguments::Borrowed(__arguments))
                }
            }

            #tool_trait
        }
    }

    /// An `async fn`'s tool, or a `blocking` fn's: `Tool::call` is a future.
    fn future_impl(&self) -> TokenStream {
        let ToolImpl { p, locals, .. } = self;
        let fn_ident = &self.m.f.item.sig.ident;
        let binds = self.binds(
            &quote!(#p::Arguments::Owned(__arguments)),
            |param, local| self.inject(param, local),
        );
        let invoke = if self.m.run == Run::Blocking {
            // The service crosses to the blocking pool in its own `Arc`;
            // spanned at the return type: a value that cannot leave the
            // pool is reported there.
            let service = self
                .m
                .f
                .service
                .as_ref()
                .map(|_| quote!(let __service = ::std::sync::Arc::clone(&self.0);));
            let (callee, receiver) = self.callee(quote!(&__service));
            let run = respan(
                quote!(#p::run_blocking(move || #callee(#receiver #(#locals),*)).await),
                return_spans(self.m).0,
            );
            quote!(#service let __value = #run?;)
        } else {
            let (callee, receiver) = self.callee(quote!(&self.0));
            quote!(let __value = #callee(#receiver #(#locals),*).await;)
        };
        let finish = self.finish();
        // The body carries the span of the fn's name, so that a future that
        // is not `Send` is reported at the user's fn, not at the attribute.
        let mut body = proc_macro2::Group::new(
            proc_macro2::Delimiter::Brace,
            quote! {
                use #p::{ViaIntoToolOutput as _, ViaSerialize as _, ViaUnsupported as _};
                #binds
                #invoke
                #finish
            },
        );
        body.set_span(fn_ident.span());
        let sig = respan(self.call_sig(), fn_ident.span());
        self.tool_trait(quote!(#sig #body))
    }
}
