//! What every impl of a tool type shares: its name and the state and
//! context types it is a tool for, and the parts of a call: the parameters
//! bound from the arguments and the runtime, the fn called, its return value
//! made the call's answer.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::Type;
use syn::spanned::Spanned;

use super::plain;
use crate::ast::{Output, Param};
use crate::util::{generated_ident, last_segment, type_args};
use crate::valid::Model;

/// What every impl of the tool type shares: its name, and the state and
/// context types it is a tool for (named, or generic).
pub(super) struct ToolImpl<'a> {
    pub m: &'a Model<'a>,
    /// The runtime crate's path.
    pub krate: TokenStream,
    /// `#krate::tool_macro`.
    pub p: TokenStream,
    /// The tool type.
    pub tool: syn::Ident,
    /// The impls' generic parameters: a state or context type the tool
    /// works with whatever it is.
    pub generics: Vec<TokenStream>,
    /// The `S` and `C` of `Tool<S, C>`.
    pub s_ty: TokenStream,
    pub c_ty: TokenStream,
    /// The `S` and `C` the spec names an injected value's kind with (`()`
    /// for any).
    pub s_spec: TokenStream,
    pub c_spec: TokenStream,
    /// One local per parameter, bound before the fn runs.
    pub locals: Vec<syn::Ident>,
}

impl<'a> ToolImpl<'a> {
    pub fn new(m: &'a Model<'a>) -> ToolImpl<'a> {
        let krate = &m.krate;
        let sig = &m.f.item.sig;
        let (state, context) = state_and_context(m);
        let any_state = fresh_ident("AnyState", sig);
        let any_context = fresh_ident("AnyContext", sig);
        let bound = quote!(::core::marker::Send + ::core::marker::Sync + 'static);
        let mut generics = Vec::new();
        if state.is_none() {
            generics.push(quote!(#any_state: #bound));
        }
        if context.is_none() {
            generics.push(quote!(#any_context: #bound));
        }
        let named = |ty: &Option<Type>, any: &syn::Ident| {
            let spec = ty.as_ref().map_or_else(|| quote!(()), |t| quote!(#t));
            let ty = ty.as_ref().map_or_else(|| quote!(#any), |t| quote!(#t));
            (ty, spec)
        };
        let (s_ty, s_spec) = named(&state, &any_state);
        let (c_ty, c_spec) = named(&context, &any_context);
        ToolImpl {
            m,
            krate: quote!(#krate),
            p: quote!(#krate::tool_macro),
            tool: generated_ident(&m.f.type_base(), "Tool", sig.ident.span()),
            generics,
            s_ty,
            c_ty,
            s_spec,
            c_spec,
            locals: (0..m.f.params.len())
                .map(|i| format_ident!("__tinyagents_arg{}", i))
                .collect(),
        }
    }

    /// The fn and the receiver it is called with: a free fn by name, a
    /// method on the tool's service.
    pub fn callee(&self, service: TokenStream) -> (TokenStream, Option<TokenStream>) {
        let fn_ident = &self.m.f.item.sig.ident;
        match &self.m.f.service {
            None => (quote!(#fn_ident), None),
            Some(of) => {
                let ty = &of.ty;
                (quote!(<#ty>::#fn_ident), Some(quote!(#service,)))
            }
        }
    }

    /// `Result<ToolOutput, ToolError>`.
    pub fn result(&self) -> TokenStream {
        let krate = &self.krate;
        quote!(::core::result::Result<#krate::ToolOutput, #krate::ToolError>)
    }

    /// `path<S, C>`: the trait at `path` for the tool's state and context
    /// types.
    pub fn of_state(&self, path: TokenStream) -> TokenStream {
        let ToolImpl { s_ty, c_ty, .. } = self;
        quote!(#path<#s_ty, #c_ty>)
    }

    /// `impl<..> path<S, C> for` the tool: the head of an impl of a trait
    /// over the state and context types.
    pub fn impl_for(&self, path: TokenStream) -> TokenStream {
        let ToolImpl { tool, generics, .. } = self;
        let of_state = self.of_state(path);
        quote!(impl<#(#generics),*> #of_state for #tool)
    }

    /// `__state: &S, __runtime: &ToolRuntime<C>`: what a call runs with
    /// besides its arguments.
    pub fn state_params(&self) -> TokenStream {
        let ToolImpl {
            krate, s_ty, c_ty, ..
        } = self;
        quote!(__state: &#s_ty, __runtime: &#krate::ToolRuntime<#c_ty>)
    }

    /// `__state: &S, __runtime: &InlineRuntime<'_, C>`: what a call
    /// answered at once runs with (its runtime made only if asked for).
    pub fn inline_state_params(&self) -> TokenStream {
        let ToolImpl { p, s_ty, c_ty, .. } = self;
        quote!(__state: &#s_ty, __runtime: &#p::InlineRuntime<'_, #c_ty>)
    }

    /// The signature of `Tool::call`.
    pub fn call_sig(&self) -> TokenStream {
        let p = &self.p;
        let state_params = self.state_params();
        let result = self.result();
        quote! {
            async fn call(&self, #state_params, __arguments: #p::serde_json::Value) -> #result
        }
    }

    /// `impl Tool<S, C> for` the tool, under `async_trait`: its spec is the
    /// tool's own, its other methods are `methods`.
    pub fn tool_trait(&self, methods: TokenStream) -> TokenStream {
        let ToolImpl { krate, p, tool, .. } = self;
        let head = self.impl_for(quote!(#krate::Tool));
        quote! {
            #[#p::async_trait]
            #head {
                fn spec(&self) -> &#krate::ToolSpec {
                    #tool::spec()
                }

                #methods
            }
        }
    }

    /// Binds every parameter's local: the model-visible ones decoded from
    /// `arguments` (an `Arguments` expression, used once), the injected
    /// ones by `inject`.
    pub fn binds(
        &self,
        arguments: &TokenStream,
        inject: impl Fn(&Param, &syn::Ident) -> TokenStream,
    ) -> TokenStream {
        let p = &self.p;
        let plain = (!self.m.params.plain.is_empty()).then(|| plain::bind(self, arguments));
        let each = self.m.f.params.iter().zip(&self.locals).enumerate();
        let binds = each.map(|(i, (param, local))| {
            let ty = &param.ty;
            if param.inject.is_some() {
                inject(param, local)
            } else if self.m.params.argument == Some(i) {
                let decode = quote_spanned! {ty.span()=>
                    (&&#p::DecodeProbe::<#ty>::new()).decode(#arguments)
                };
                quote! {
                    let #local = {
                        use #p::{Decodable as _, Undecodable as _};
                        #decode?
                    };
                }
            } else {
                quote!()
            }
        });
        quote!(#plain #(#binds)*)
    }

    /// An injected parameter built from the call's state and runtime.
    pub fn inject(&self, param: &Param, local: &syn::Ident) -> TokenStream {
        let ToolImpl {
            krate, s_ty, c_ty, ..
        } = self;
        let ty = &param.ty;
        quote_spanned! {ty.span()=>
            let #local = <#ty as #krate::Inject<#s_ty, #c_ty>>::inject(__state, __runtime)
                .map_err(#krate::inject::InjectError::into_tool_error)?;
        }
    }

    /// The return value `__value` made the call's answer: a `Result`'s error
    /// returned as a `ToolError`, the success converted to a `ToolOutput`.
    pub fn finish(&self) -> TokenStream {
        let p = &self.p;
        let (ret_span, err_span) = return_spans(self.m);
        let err_conv = quote_spanned! {err_span=>
            (&&&#p::ErrorProbe::of(&err)).error_kind().convert(err)
        };
        let convert = quote_spanned! {ret_span=>
            (&&&#p::OutputProbe::of(&__value)).output_kind().convert(__value)
        };
        quote! {
            let __value = match {
                use #p::{KeepReturn as _, SplitReturn as _};
                (&&#p::ReturnProbe::of(&__value)).split(__value)
            } {
                ::core::result::Result::Ok(value) => value,
                #[allow(unreachable_patterns)]
                ::core::result::Result::Err(err) => {
                    use #p::{ViaClassifyError as _, ViaIntoToolError as _, ViaOtherError as _};
                    return ::core::result::Result::Err(#err_conv);
                }
            };
            #convert
        }
    }
}

/// The spans the return value's conversions are reported at: the return
/// type's, and the error type's when it is written out (`Result<T, E>`).
pub(super) fn return_spans(m: &Model<'_>) -> (Span, Span) {
    let ret_span = match &m.f.item.sig.output {
        syn::ReturnType::Type(_, ty) => ty.span(),
        syn::ReturnType::Default => Span::call_site(),
    };
    let err_span = match &m.f.output {
        Output::Type(ty) => last_segment(ty)
            .map(type_args)
            .and_then(|args| (args.len() == 2).then(|| args[1].span()))
            .unwrap_or(ret_span),
        _ => ret_span,
    };
    (ret_span, err_span)
}

/// The state and context types, declared or inferred from injected params.
fn state_and_context(m: &Model<'_>) -> (Option<Type>, Option<Type>) {
    let mut state = m.state.clone();
    let mut context = m.context.clone();
    for param in m.f.params.iter().filter(|p| p.inject.is_some()) {
        let Some(seg) = last_segment(&param.ty) else {
            continue;
        };
        let args = type_args(seg);
        let ident = seg.ident.to_string();
        if ident == "State" && state.is_none() && args.len() == 1 {
            state = Some(args[0].clone());
        }
        if matches!(ident.as_str(), "Ctx" | "RunContext" | "ToolRuntime") && context.is_none() {
            context = match args.as_slice() {
                [ty] => Some((*ty).clone()),
                [] => Some(syn::parse_quote!(())),
                _ => None,
            };
        }
    }
    (state, context)
}

/// `base`, or `base` with `_` appended until no identifier of the fn's
/// signature has that name (a generic parameter must not shadow a type the
/// fn uses).
fn fresh_ident(base: &str, sig: &syn::Signature) -> syn::Ident {
    fn mentions(tokens: TokenStream, name: &str) -> bool {
        tokens.into_iter().any(|tt| match tt {
            proc_macro2::TokenTree::Ident(i) => i == name,
            proc_macro2::TokenTree::Group(g) => mentions(g.stream(), name),
            _ => false,
        })
    }
    let mut name = base.to_owned();
    while mentions(quote!(#sig), &name) {
        name.push('_');
    }
    format_ident!("{}", name)
}
