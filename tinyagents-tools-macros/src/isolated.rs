//! `#[tool(isolated, max_memory = "256MiB", max_cpu = "2s")]`: the rules of
//! the options, and the code that runs the fn in a worker process.
//!
//! An isolated tool's type implements `Tool` by sending each call to a
//! worker of `WorkerPool::global()` (or of the pool given to
//! `Tool::in_pool`), `WorkerEntry` so that the worker can run the fn, and
//! `IsolatedFn` for the hidden values that cross. It never implements
//! `call_now`: the call always leaves the process. A `blocking` fn is
//! allowed and called directly in the worker, which runs one call at a time.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use crate::attr::ToolOptions;
use crate::attr::parse_size_bytes;
use crate::duration::parse_duration_ms;
use crate::expand::Parts;
use crate::valid::{Errors, Model};

/// The resolved isolation of a tool.
pub struct Isolation {
    pub max_memory: Option<u64>,
    pub max_cpu_ms: Option<u64>,
}

/// Checks `isolated`, `max_memory` and `max_cpu`.
pub fn check(o: &ToolOptions, errors: &mut Errors) -> Option<Isolation> {
    let isolated = o.isolated.is_present();
    let max_memory = o.max_memory.as_ref().and_then(|size| {
        bound(&size.0, "max_memory", "size", "256MiB", isolated, errors, |text| {
            parse_size_bytes(text).ok_or_else(|| {
                "this memory size is not a whole number and a unit: write for example \"256MiB\" (units KiB, MiB, GiB)"
                    .to_owned()
            })
        })
    });
    let max_cpu_ms = o.max_cpu.as_ref().and_then(|cpu| {
        bound(
            &cpu.0,
            "max_cpu",
            "duration",
            "2s",
            isolated,
            errors,
            |text| parse_duration_ms(text).map_err(|e| e.message("CPU time")),
        )
    });
    isolated.then_some(Isolation {
        max_memory,
        max_cpu_ms,
    })
}

/// One bound the OS enforces on the worker (`option`, a `what` such as
/// `example`): refused without `isolated`, when zero, or when `parse` refuses
/// it (with its message).
fn bound(
    lit: &syn::LitStr,
    option: &str,
    what: &str,
    example: &str,
    isolated: bool,
    errors: &mut Errors,
    parse: impl Fn(&str) -> Result<u64, String>,
) -> Option<u64> {
    if !isolated {
        errors.push(
            lit.span(),
            format_args!(
                "`{option}` is enforced by the OS in an isolated worker process: add `isolated` (`#[tool(isolated, {option} = \"{example}\")]`), or remove `{option}`"
            ),
        );
    }
    match parse(&lit.value()) {
        Ok(0) => errors.push(
            lit.span(),
            format_args!(
                "a zero `{option}` would fail every call: give a positive {what} such as \"{example}\", or remove `{option}`"
            ),
        ),
        Ok(value) => return Some(value),
        Err(message) => errors.push(lit.span(), message),
    }
    None
}

/// The spec builder calls for the bounds.
pub fn spec_bounds(isolation: &Isolation) -> TokenStream {
    let memory = isolation.max_memory.map(|n| quote!(.max_memory(#n)));
    let cpu = isolation
        .max_cpu_ms
        .map(|ms| quote!(.max_cpu(::core::time::Duration::from_millis(#ms))));
    quote!(#memory #cpu)
}

/// `Tool`, `IsolatedFn` and `WorkerEntry` for an isolated tool.
pub fn tool_impl(m: &Model<'_>, parts: &Parts<'_>) -> TokenStream {
    let krate = &m.krate;
    let p = quote!(#krate::tool_macro);
    let iso = quote!(#krate::isolated);
    let f = m.f;
    let vis = &f.item.vis;
    let fn_ident = &f.item.sig.ident;
    let name = &m.name;
    let Parts {
        tool,
        generics,
        s_ty,
        c_ty,
        locals,
        unwrap_result,
        convert,
    } = parts;
    let result = quote!(::core::result::Result<#krate::ToolOutput, #krate::ToolError>);

    // Each hidden value must cross: one error, at its type.
    let asserts = f.params.iter().filter(|p| p.inject.is_some()).map(|param| {
        let ty = &param.ty;
        quote_spanned!(ty.span()=> #p::assert_crosses::<#ty>();)
    });
    let sends = f.params.iter().filter(|p| p.inject.is_some()).map(|param| {
        let ty = &param.ty;
        let pname = &param.name;
        quote! {{
            use #p::{Crosses as _, DoesNotCross as _};
            let value = <#ty as #krate::Inject<#s_ty, #c_ty>>::inject(__state, __runtime)
                .map_err(#krate::inject::InjectError::into_tool_error)?;
            injected.insert(
                ::std::string::String::from(#pname),
                (&&#p::CrossProbe::<#ty>::new()).send(&value)?,
            );
        }}
    });
    let plain_receive = (!m.plain.is_empty()).then(|| {
        crate::plain::bind(
            m,
            &m.plain,
            locals,
            quote!(#p::Arguments::Borrowed(__call.arguments())),
        )
    });
    let receives = f
        .params
        .iter()
        .enumerate()
        .zip(locals.iter())
        .map(|((i, param), local)| {
            let ty = &param.ty;
            let pname = &param.name;
            if m.plain.contains(&i) {
                quote!()
            } else if param.inject.is_some() {
                quote! {
                    let #local = {
                        use #p::{Crosses as _, DoesNotCross as _};
                        (&&#p::CrossProbe::<#ty>::new()).receive(&mut __call, #pname)?
                    };
                }
            } else {
                let decode = quote_spanned! {ty.span()=>
                    (&&#p::DecodeProbe::<#ty>::new()).decode(#p::Arguments::Borrowed(__call.arguments()))
                };
                quote! {
                    let #local = {
                        use #p::{Decodable as _, Undecodable as _};
                        #decode?
                    };
                }
            }
        });
    let invoke = if m.blocking {
        quote!(#fn_ident(#(#locals),*))
    } else {
        quote!(#fn_ident(#(#locals),*).await)
    };

    let impls = quote! {
        impl #tool {
            /// The tool, its calls run by `pool` instead of the global
            /// worker pool.
            #vis fn in_pool(pool: #iso::WorkerPool) -> #iso::InPool<#tool> {
                #iso::InPool::new(#tool, pool)
            }

            #[doc(hidden)]
            #[allow(dead_code)]
            fn __tinyagents_crossing() {
                #(#asserts)*
            }
        }

        impl<#(#generics),*> #iso::IsolatedFn<#s_ty, #c_ty> for #tool {
            fn isolated_spec() -> &'static #krate::ToolSpec {
                #tool::spec()
            }

            #[allow(unused_variables, unused_mut)]
            fn injected(
                __state: &#s_ty,
                __runtime: &#krate::ToolRuntime<#c_ty>,
            ) -> ::core::result::Result<#p::serde_json::Map<::std::string::String, #p::serde_json::Value>, #krate::ToolError> {
                let mut injected = #p::serde_json::Map::new();
                #(#sends)*
                ::core::result::Result::Ok(injected)
            }
        }

        impl #iso::WorkerEntry for #tool {
            const NAME: &'static str = #name;

            fn run(__call: #iso::WorkerCall) -> impl ::core::future::Future<Output = #result> + 'static {
                async move {
                    #[allow(unused_mut)]
                    let mut __call = __call;
                    use #p::{ViaIntoToolOutput as _, ViaSerialize as _, ViaUnsupported as _};
                    #plain_receive
                    #(#receives)*
                    let __value = #invoke;
                    #unwrap_result
                    #convert
                }
            }
        }

    };
    let tool_trait = parts.tool_trait_impl(
        &krate,
        quote! {
            async fn call(
                &self,
                __state: &#s_ty,
                __runtime: &#krate::ToolRuntime<#c_ty>,
                __arguments: #p::serde_json::Value,
            ) -> #result {
                #iso::run_isolated::<#tool, #s_ty, #c_ty>(
                    #iso::WorkerPool::global(),
                    __state,
                    __runtime,
                    __arguments,
                )
                .await
            }
        },
    );
    quote!(#impls #tool_trait)
}
