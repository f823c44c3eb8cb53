//! `#[tool(isolated)]`: the code that runs the fn in a worker process.
//!
//! An isolated tool's type implements `Tool` by sending each call to a
//! worker of `WorkerPool::global()` (or of the pool given to
//! `Tool::in_pool`), `WorkerEntry` so that the worker can run the fn, and
//! `IsolatedFn` for the hidden values that cross. Its call always leaves
//! the process, as a future; a plain fn is called as is in its worker,
//! which runs one call at a time.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use super::call::ToolImpl;
use crate::valid::{Isolation, Run};

/// The spec builder calls for the bounds.
pub(super) fn spec_bounds(isolation: &Isolation) -> TokenStream {
    let memory = isolation.max_memory.map(|n| quote!(.max_memory(#n)));
    let cpu = isolation
        .max_cpu_ms
        .map(|ms| quote!(.max_cpu(::core::time::Duration::from_millis(#ms))));
    quote!(#memory #cpu)
}

/// `Tool`, `IsolatedFn` and `WorkerEntry` for an isolated tool.
pub(super) fn tool_impl(t: &ToolImpl<'_>) -> TokenStream {
    let ToolImpl {
        krate,
        tool,
        s_ty,
        c_ty,
        ..
    } = t;
    let iso = quote!(#krate::isolated);
    let vis = &t.m.f.item.vis;
    let call_sig = t.call_sig();
    let call = quote! {
        #call_sig {
            #iso::run_isolated::<#tool, #s_ty, #c_ty>(
                #iso::WorkerPool::global(),
                __state,
                __runtime,
                __arguments,
            )
            .await
        }
    };
    let isolated_fn = isolated_fn(t);
    let worker_entry = worker_entry(t);
    let tool_trait = t.tool_trait(call);
    quote! {
        impl #tool {
            /// The tool, its calls run by `pool` instead of the global
            /// worker pool.
            #vis fn in_pool(pool: #iso::WorkerPool) -> #iso::InPool<#tool> {
                #iso::InPool::new(#tool, pool)
            }
        }

        #isolated_fn
        #worker_entry
        #tool_trait
    }
}

/// `IsolatedFn`: the hidden values, built in this process and sent to the
/// worker; each must cross (one error, at its type).
fn isolated_fn(t: &ToolImpl<'_>) -> TokenStream {
    let ToolImpl { krate, p, tool, .. } = t;
    let injected = || t.m.f.params.iter().filter(|p| p.inject.is_some());
    let asserts = injected().map(|param| {
        let ty = &param.ty;
        quote_spanned!(ty.span()=> #p::assert_crosses::<#ty>();)
    });
    let inject = t.of_state(quote!(#krate::Inject));
    let sends = injected().map(|param| {
        let ty = &param.ty;
        let pname = &param.name;
        quote! {{
            use #p::{Crosses as _, DoesNotCross as _};
            let value = <#ty as #inject>::inject(__state, __runtime)
                .map_err(#krate::inject::InjectError::into_tool_error)?;
            injected.insert(
                ::std::string::String::from(#pname),
                (&&#p::CrossProbe::<#ty>::new()).send(&value)?,
            );
        }}
    });
    let head = t.impl_for(quote!(#krate::isolated::IsolatedFn));
    let state_params = t.state_params();
    quote! {
        impl #tool {
            #[doc(hidden)]
            #[allow(dead_code)]
            fn __tinyagents_crossing() {
                #(#asserts)*
            }
        }

        #head {
            fn isolated_spec() -> &'static #krate::ToolSpec {
                #tool::spec()
            }

            #[allow(unused_variables, unused_mut)]
            fn injected(
                #state_params,
            ) -> ::core::result::Result<#p::serde_json::Map<::std::string::String, #p::serde_json::Value>, #krate::ToolError> {
                let mut injected = #p::serde_json::Map::new();
                #(#sends)*
                ::core::result::Result::Ok(injected)
            }
        }
    }
}

/// `WorkerEntry`: in the worker, the call's arguments decoded, its hidden
/// values received, the fn run.
fn worker_entry(t: &ToolImpl<'_>) -> TokenStream {
    let ToolImpl {
        m,
        krate,
        p,
        tool,
        locals,
        ..
    } = t;
    let iso = quote!(#krate::isolated);
    let name = &m.name;
    let fn_ident = &m.f.item.sig.ident;
    let result = t.result();
    let binds = t.binds(
        &quote!(#p::Arguments::Borrowed(__call.arguments())),
        |param, local| {
            let ty = &param.ty;
            let pname = &param.name;
            quote! {
                let #local = {
                    use #p::{Crosses as _, DoesNotCross as _};
                    (&&#p::CrossProbe::<#ty>::new()).receive(&mut __call, #pname)?
                };
            }
        },
    );
    let invoke = match m.run {
        Run::Async => quote!(#fn_ident(#(#locals),*).await),
        Run::Inline | Run::Blocking => quote!(#fn_ident(#(#locals),*)),
    };
    let finish = t.finish();
    quote! {
        impl #iso::WorkerEntry for #tool {
            const NAME: &'static str = #name;

            fn run(__call: #iso::WorkerCall) -> impl ::core::future::Future<Output = #result> + 'static {
                async move {
                    #[allow(unused_mut)]
                    let mut __call = __call;
                    use #p::{ViaIntoToolOutput as _, ViaSerialize as _, ViaUnsupported as _};
                    #binds
                    let __value = #invoke;
                    #finish
                }
            }
        }
    }
}
