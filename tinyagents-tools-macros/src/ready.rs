//! Whether a tool fn's body can never wait: then the executor may run its
//! calls at once, with no future on the heap (`Tool::call_now`).
//!
//! The check is syntactic and conservative. A body waits only at an
//! `.await`, so a body without the `await` keyword anywhere in its tokens
//! (nested blocks, closures and macro arguments included) never waits,
//! unless a macro expands to an `.await` of its own. Macros are therefore
//! allowed only from a list of well-known ones that expand to plain code;
//! any other macro invocation keeps the usual async call.

use proc_macro2::{TokenStream, TokenTree};
use quote::{ToTokens, quote};

use crate::expand::Parts;
use crate::valid::Model;

/// Macros whose expansion never contains an `.await` of its own (they are
/// recognized by their last path segment).
const PLAIN_MACROS: &[&str] = &[
    "assert",
    "assert_eq",
    "assert_ne",
    "bail",
    "cfg",
    "column",
    "concat",
    "dbg",
    "debug",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_ne",
    "ensure",
    "env",
    "eprint",
    "eprintln",
    "error",
    "file",
    "format",
    "format_args",
    "include_str",
    "info",
    "json",
    "line",
    "matches",
    "module_path",
    "panic",
    "print",
    "println",
    "stringify",
    "todo",
    "trace",
    "unimplemented",
    "unreachable",
    "vec",
    "warn",
    "write",
    "writeln",
];

/// Keywords that a `!` may follow without a macro call (`if !(a && b)`).
const KEYWORDS: &[&str] = &[
    "as", "break", "else", "if", "in", "let", "match", "mut", "return", "while",
];

/// True when `block` can never wait (see the module docs).
pub fn never_waits(block: &syn::Block) -> bool {
    plain(block.to_token_stream())
}

fn plain(tokens: TokenStream) -> bool {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    for (i, token) in tokens.iter().enumerate() {
        match token {
            TokenTree::Ident(ident) => {
                let name = ident.to_string();
                if name == "await" {
                    return false;
                }
                let invoked = matches!(
                    (tokens.get(i + 1), tokens.get(i + 2)),
                    (Some(TokenTree::Punct(bang)), Some(TokenTree::Group(_)))
                        if bang.as_char() == '!'
                );
                if invoked
                    && !KEYWORDS.contains(&name.as_str())
                    && !PLAIN_MACROS.contains(&name.as_str())
                {
                    return false;
                }
            }
            TokenTree::Group(group) => {
                if !plain(group.stream()) {
                    return false;
                }
            }
            TokenTree::Punct(_) | TokenTree::Literal(_) => {}
        }
    }
    true
}

/// The tool impl of a tool whose body never waits: the fn's future is
/// polled once, in place (`call_now`, and `call_now_ref`, which decodes the
/// arguments from a reference); `call` hands the same plain fn to a ready
/// future shared by every such tool. No state machine is generated
/// beyond the fn's own. `binds` binds the fn's parameters from
/// `__arguments` (and, for injections, `__state` and `__runtime`).
///
/// A tool that injects nothing reads only its arguments: its plain fn is
/// not generic over the executor's state and context types, so its body
/// (with the probes that pick how arguments, errors and the output convert)
/// is type-checked once, not under generic bounds. It is `#[inline]`: built
/// where the tool is registered, as the generic impl is. (Only a body that
/// never waits gains: an `async` body costs the same either way, measured
/// with `benchmarks/compile_time.sh`.)
pub(crate) fn tool_impl(
    m: &Model<'_>,
    parts: &Parts<'_>,
    binds: TokenStream,
    arguments_mut: Option<TokenStream>,
) -> TokenStream {
    let (krate, name, fn_ident) = (&m.krate, &m.name, &m.f.item.sig.ident);
    let p = quote!(#krate::tool_macro);
    let (tool, s_ty, c_ty) = (parts.tool, parts.s_ty, parts.c_ty);
    let (locals, unwrap_result, convert) = (parts.locals, parts.unwrap_result, parts.convert);
    let result = quote!(::core::result::Result<#krate::ToolOutput, #krate::ToolError>);
    let args_only = m.f.params.iter().all(|param| param.inject.is_none());
    let arguments = quote!(#p::Arguments<'_>);
    let now_types = if args_only {
        quote!(#arguments_mut __arguments: #arguments)
    } else {
        parts.params_with(krate, arguments_mut, arguments)
    };
    let now_generics: &[TokenStream] = if args_only { &[] } else { parts.generics };
    let plain_types = parts.call_params(krate, None);
    let ref_types = parts.params_with(krate, None, quote!(&#p::serde_json::Value));
    let now_with = |arguments: TokenStream| {
        if args_only {
            quote!(#tool::__tinyagents_now(#arguments))
        } else {
            quote!(#tool::__tinyagents_now(__state, __runtime, #arguments))
        }
    };
    let now_call = now_with(quote!(#p::Arguments::Owned(__arguments)));
    let now_ref = now_with(quote!(#p::Arguments::Borrowed(__arguments)));
    let now_future = if args_only {
        quote!(#p::NowCall::args_only(#tool::__tinyagents_now, __arguments))
    } else {
        quote!(#p::now_call(#tool::__tinyagents_now, __state, __runtime, __arguments))
    };
    let now_fn = quote! {
        impl #tool {
            #[doc(hidden)]
            #[inline]
            fn __tinyagents_now<#(#now_generics),*>(#now_types) -> #result {
                use #p::{ViaIntoToolOutput as _, ViaSerialize as _, ViaUnsupported as _};
                #binds
                let __value = #p::poll_once(#name, #fn_ident(#(#locals),*))?;
                #unwrap_result
                #convert
            }
        }

    };
    let tool_trait = parts.tool_trait_impl(
        krate,
        quote! {
            // What `async_trait` makes of `async fn call`, written out so
            // that the future is the shared `NowCall`, not a state
            // machine of this tool's own.
            fn call<'life0, 'life1, 'life2, 'async_trait>(
                &'life0 self,
                __state: &'life1 #s_ty,
                __runtime: &'life2 #krate::ToolRuntime<#c_ty>,
                __arguments: #p::serde_json::Value,
            ) -> ::core::pin::Pin<::std::boxed::Box<
                dyn ::core::future::Future<Output = #result> + ::core::marker::Send + 'async_trait,
            >>
            where
                'life0: 'async_trait,
                'life1: 'async_trait,
                'life2: 'async_trait,
                Self: 'async_trait,
            {
                ::std::boxed::Box::pin(#now_future)
            }

            fn never_waits(&self) -> bool {
                true
            }

            fn call_now(&self, #plain_types) -> #result {
                #now_call
            }

            fn call_now_ref(&self, #ref_types) -> #result {
                #now_ref
            }
        },
    );
    quote!(#now_fn #tool_trait)
}

#[cfg(test)]
mod tests {
    use super::never_waits;

    fn body(code: &str) -> syn::Block {
        syn::parse_str(code).expect("a block")
    }

    #[test]
    fn plain_bodies_never_wait() {
        for code in [
            "{ add(args) }",
            "{ let s = format!(\"{}\", a.b); if !(x && y) { return Err(e.into()); } Ok(vec![s]) }",
            "{ tracing::info!(n = 1, \"x\"); serde_json::json!({\"a\": [1]}) }",
            "{ let f = |x: u8| x + 1; match !flag { true => f(1), _ => 2 } }",
        ] {
            assert!(never_waits(&body(code)), "{code}");
        }
    }

    #[test]
    fn awaits_and_unknown_macros_may_wait() {
        for code in [
            "{ fetch(url).await }",
            "{ let r = { inner().await }; r }",
            "{ tokio::select! { _ = a => 1 } }",
            "{ my_wait!(x) }",
            "{ format!(\"{}\", slow().await) }",
            "{ let c = async { 1 }; c.await }",
        ] {
            assert!(!never_waits(&body(code)), "{code}");
        }
    }
}
