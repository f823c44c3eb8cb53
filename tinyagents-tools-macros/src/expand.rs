//! Code generation: the fn as written, plus a unit struct implementing
//! `Tool` whose spec is built once.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::Type;
use syn::spanned::Spanned;

use crate::ast::{Output, ToolFn, last_segment, type_args, type_string};
use crate::attr::ToolOptions;
use crate::safety::safety_tokens;
use crate::valid::{self, Description, Model};

/// The attribute's entry point.
pub fn tool(args: TokenStream, input: TokenStream) -> TokenStream {
    let item: syn::ItemFn = match syn::parse2(input.clone()) {
        Ok(item) => item,
        Err(err) => {
            // Keep the item so that its uses do not add errors of their own.
            let err = syn::Error::new(
                err.span(),
                format_args!("#[tool] goes on an `async fn` ({err})"),
            )
            .to_compile_error();
            return quote!(#input #err);
        }
    };
    let options = ToolOptions::parse(args);
    let krate: syn::Path = match &options {
        Ok(ToolOptions {
            krate: Some(path), ..
        }) => path.0.clone(),
        _ => syn::parse_quote!(::tinyagents_tools),
    };
    let f = ToolFn::new(item);
    match valid::check(options, &f) {
        Ok(model) => expand(&model),
        Err(err) => {
            // Keep the fn, and (outside an `impl` block) a tool type with
            // the same name, so that one mistake is one error: the fn's
            // callers and the tool's registration add none of their own.
            let item = &f.item;
            let err = err.to_compile_error();
            let stub = f
                .receivers
                .is_empty()
                .then(|| crate::stub::stub(&f, &krate));
            quote!(#item #stub #err)
        }
    }
}

/// `tokens` with every token's span set to `span` (so that rustc reports an
/// error in them at the user's token the span comes from).
pub(crate) fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut tt| {
            if let proc_macro2::TokenTree::Group(g) = &tt {
                let mut group = proc_macro2::Group::new(g.delimiter(), respan(g.stream(), span));
                group.set_span(span);
                tt = proc_macro2::TokenTree::Group(group);
            } else {
                tt.set_span(span);
            }
            tt
        })
        .collect()
}

/// `search_docs` -> `SearchDocsTool`.
pub(crate) fn struct_name(fn_name: &str) -> String {
    let mut out = valid::pascal_case(fn_name);
    out.push_str("Tool");
    out
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

/// What the tool impl needs from the rest of the expansion.
pub(crate) struct Parts<'a> {
    pub tool: &'a syn::Ident,
    pub generics: &'a [TokenStream],
    pub s_ty: &'a TokenStream,
    pub c_ty: &'a TokenStream,
    pub locals: &'a [syn::Ident],
    pub unwrap_result: &'a TokenStream,
    pub convert: &'a TokenStream,
}

impl Parts<'_> {
    /// The parameters of `call` and `call_now` after `&self`: the state,
    /// the runtime and the arguments (`arguments_mut` makes them `mut`).
    pub(crate) fn call_params(
        &self,
        krate: &impl ToTokens,
        arguments_mut: Option<TokenStream>,
    ) -> TokenStream {
        self.params_with(
            krate,
            arguments_mut,
            quote!(#krate::tool_macro::serde_json::Value),
        )
    }

    /// [`call_params`](Self::call_params) with the arguments of type
    /// `arguments` (`&Value` for `call_now_ref`, `Arguments` for the plain
    /// fn of a tool that never waits).
    pub(crate) fn params_with(
        &self,
        krate: &impl ToTokens,
        arguments_mut: Option<TokenStream>,
        arguments: TokenStream,
    ) -> TokenStream {
        let Parts { s_ty, c_ty, .. } = self;
        quote! {
            __state: &#s_ty,
            __runtime: &#krate::ToolRuntime<#c_ty>,
            #arguments_mut __arguments: #arguments,
        }
    }

    /// `impl Tool<S, C> for` the tool, under `async_trait`: its spec is the
    /// tool's own, its other methods are `methods`.
    pub(crate) fn tool_trait_impl(
        &self,
        krate: &impl ToTokens,
        methods: TokenStream,
    ) -> TokenStream {
        let Parts {
            tool,
            generics,
            s_ty,
            c_ty,
            ..
        } = self;
        quote! {
            #[#krate::tool_macro::async_trait]
            impl<#(#generics),*> #krate::Tool<#s_ty, #c_ty> for #tool {
                fn spec(&self) -> &#krate::ToolSpec {
                    #tool::spec()
                }

                #methods
            }
        }
    }
}

pub(crate) fn expand(m: &Model<'_>) -> TokenStream {
    let krate = &m.krate;
    let krate = quote!(#krate);
    let p = quote!(#krate::tool_macro);
    let f = m.f;
    let item = &f.item;
    let vis = &item.vis;
    let fn_ident = &item.sig.ident;
    let tool = format_ident!("{}", struct_name(&f.type_base()), span = fn_ident.span());

    let (state, context) = state_and_context(m);
    let any_state = fresh_ident("AnyState", &item.sig);
    let any_context = fresh_ident("AnyContext", &item.sig);
    let mut generics = Vec::new();
    if state.is_none() {
        generics.push(quote!(#any_state: ::core::marker::Send + ::core::marker::Sync + 'static));
    }
    if context.is_none() {
        generics.push(quote!(#any_context: ::core::marker::Send + ::core::marker::Sync + 'static));
    }
    let s_spec = state.clone().map_or_else(|| quote!(()), |t| quote!(#t));
    let c_spec = context.clone().map_or_else(|| quote!(()), |t| quote!(#t));
    let s_ty = state.map_or_else(|| quote!(#any_state), |t| quote!(#t));
    let c_ty = context.map_or_else(|| quote!(#any_context), |t| quote!(#t));

    // The spec.
    let name = &m.name;
    let description = match &m.description {
        Description::Option(text) => quote!(#text),
        Description::Doc(parts) => quote!(#p::doc_description(&[#(#parts),*])),
    };
    let title = m.title.as_ref().map(|t| quote!(.title(#t)));
    let input_schema = match m.argument {
        Some(i) => {
            let ty = &f.params[i].ty;
            quote_spanned!(ty.span()=> #p::input_schema::<#ty>())
        }
        None if !m.plain.is_empty() => {
            let ty = crate::plain::args_type(f);
            quote!(#p::input_schema::<#ty>())
        }
        None => quote!(#krate::ToolSchema::empty_object()),
    };
    let args_struct = (!m.plain.is_empty()).then(|| crate::plain::args_struct(m, &m.plain));
    let output_schema = match &f.output {
        Output::Type(ty) => Some(quote! {{
            use #p::{
                NoSuccessSchema as _, NoValueSchema as _, SuccessSchema as _, UnitSchema as _,
                ValueSchema as _,
            };
            if let ::core::option::Option::Some(schema) =
                (&&&&&#p::ReturnSchemaProbe::<#ty>::new()).output_schema()
            {
                builder = builder.output_schema(schema);
            }
        }}),
        _ => None,
    };
    let injected = f.params.iter().filter(|p| p.inject.is_some()).map(|param| {
        let ty = &param.ty;
        let pname = &param.name;
        let tname = type_string(ty);
        quote! {
            .injected(#pname, #tname, {
                use #p::{InjectableKind as _, UninjectableKind as _};
                (&&#p::KindProbe::<#ty, #s_spec, #c_spec>::new()).kind()
            })
        }
    });
    let safety = safety_tokens(m);
    let timeout = m
        .timeout_ms
        .map(|ms| quote!(.timeout(::core::time::Duration::from_millis(#ms))));
    let retry = m.retry.map(|(n, backoff)| {
        quote!(.retry(#krate::RetryPolicy::attempts(#n, ::core::time::Duration::from_millis(#backoff))))
    });
    let sequential = m.sequential.then(|| quote!(.sequential()));
    let max_concurrency = m.max_concurrency.map(|n| {
        quote!(.max_concurrency(::core::num::NonZeroUsize::new(#n).expect("checked by #[tool]")))
    });
    let tags = &m.tags;
    let examples = &m.examples;
    let task = match m.task {
        crate::attr::TaskMode::Forbidden => None,
        crate::attr::TaskMode::Optional => {
            Some(quote!(.task_support(#krate::spec::TaskSupport::Optional)))
        }
        crate::attr::TaskMode::Required => {
            Some(quote!(.task_support(#krate::spec::TaskSupport::Required)))
        }
    };
    let escalates = m
        .escalates
        .then(|| quote!(.task_start(#krate::spec::TaskStart::OnEscalate)));
    // An isolated fn runs in its worker, never on this process's blocking pool.
    let blocking = m.blocking && m.isolated.is_none();

    // The call.
    let locals: Vec<_> = (0..f.params.len())
        .map(|i| format_ident!("__tinyagents_arg{}", i))
        .collect();
    let plain_bind = (!m.plain.is_empty()).then(|| {
        crate::plain::bind(
            m,
            &m.plain,
            &locals,
            quote!(#p::Arguments::from(::core::mem::take(&mut __arguments))),
        )
    });
    let bind = f
        .params
        .iter()
        .enumerate()
        .zip(&locals)
        .map(|((i, param), local)| {
            let ty = &param.ty;
            if m.plain.contains(&i) {
                quote!()
            } else if param.inject.is_some() {
                quote_spanned! {ty.span()=>
                    let #local = <#ty as #krate::Inject<#s_ty, #c_ty>>::inject(__state, __runtime)
                        .map_err(#krate::inject::InjectError::into_tool_error)?;
                }
            } else {
                let decode = quote_spanned! {ty.span()=>
                    (&&#p::DecodeProbe::<#ty>::new())
                        .decode(#p::Arguments::from(::core::mem::take(&mut __arguments)))
                };
                quote! {
                    let #local = {
                        use #p::{Decodable as _, Undecodable as _};
                        #decode?
                    };
                }
            }
        });
    let ret_span = match &item.sig.output {
        syn::ReturnType::Type(_, ty) => ty.span(),
        syn::ReturnType::Default => Span::call_site(),
    };
    // The error type's span when it is written out (`Result<T, E>`), else
    // the return type's.
    let err_span = match &f.output {
        Output::Type(ty) => last_segment(ty)
            .map(type_args)
            .and_then(|args| (args.len() == 2).then(|| args[1].span()))
            .unwrap_or(ret_span),
        _ => ret_span,
    };
    // A free fn is called by name; a method on the tool's service.
    let (callee, receiver) = match &f.service {
        None => (quote!(#fn_ident), None),
        Some(service) => {
            let ty = &service.ty;
            (quote!(<#ty>::#fn_ident), Some(quote!(&__service,)))
        }
    };
    let service = f
        .service
        .as_ref()
        .map(|_| quote!(let __service = ::std::sync::Arc::clone(&self.0);));
    let invoke = if m.blocking {
        // Spanned at the return type: a value that cannot leave the blocking
        // pool is reported there.
        let run = respan(
            quote!(#p::run_blocking(move || #callee(#receiver #(#locals),*)).await),
            ret_span,
        );
        quote!(#run?)
    } else {
        quote!(#callee(#receiver #(#locals),*).await)
    };
    let err_conv = quote_spanned! {err_span=>
        (&&&#p::ErrorProbe::of(&err)).error_kind().convert(err)
    };
    let unwrap_result = quote! {
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
    };
    let convert = quote_spanned! {ret_span=>
        (&&&#p::OutputProbe::of(&__value)).output_kind().convert(__value)
    };

    let arguments_mut = (m.argument.is_some() || !m.plain.is_empty()).then(|| quote!(mut));
    let result = quote!(::core::result::Result<#krate::ToolOutput, #krate::ToolError>);
    let bounds = m.isolated.as_ref().map(crate::isolated::spec_bounds);
    let parts = Parts {
        tool: &tool,
        generics: &generics,
        s_ty: &s_ty,
        c_ty: &c_ty,
        locals: &locals,
        unwrap_result: &unwrap_result,
        convert: &convert,
    };
    let tool_impl = if m.isolated.is_some() {
        crate::isolated::tool_impl(m, &parts)
    } else if f.service.is_none() && !m.blocking && crate::ready::never_waits(&item.block) {
        let binds = quote!(#plain_bind #(#bind)*);
        crate::ready::tool_impl(m, &parts, binds, arguments_mut)
    } else {
        let types = parts.call_params(&krate, arguments_mut);
        // The body carries the span of the fn's name, so that a future that
        // is not `Send` is reported at the user's fn, not at the attribute.
        let mut call_body = proc_macro2::Group::new(
            proc_macro2::Delimiter::Brace,
            quote! {
                use #p::{ViaIntoToolOutput as _, ViaSerialize as _, ViaUnsupported as _};
                #plain_bind
                #(#bind)*
                #service
                let __value = #invoke;
                #unwrap_result
                #convert
            },
        );
        call_body.set_span(fn_ident.span());
        let call_sig = respan(
            quote!(async fn call(&self, #types) -> #result),
            fn_ident.span(),
        );
        parts.tool_trait_impl(&krate, quote!(#call_sig #call_body))
    };

    let collect = m.collect.then(|| quote!(#krate::__collect_tool!(#tool);));
    let tool_struct = match &f.service {
        None => {
            let tool_doc = format!(
                "The `{name}` tool, generated by `#[tool]` from [`{fn_ident}`]. Register it with `registry.register({tool})?`."
            );
            quote! {
                #[doc = #tool_doc]
                #[derive(::core::fmt::Debug, ::core::clone::Clone, ::core::marker::Copy, ::core::default::Default)]
                #vis struct #tool;
            }
        }
        Some(service) => crate::service::tool_struct(m, &tool, service),
    };
    // A method stays in its `impl` block, emitted by `#[tools]`.
    let item = f.service.is_none().then_some(item);
    quote! {
        #item

        #args_struct
        #collect

        #tool_struct

        impl #tool {
            /// The tool's spec, built on first use and shared afterwards.
            #vis fn spec() -> &'static #krate::ToolSpec {
                static SPEC: #p::OnceLock<#krate::ToolSpec> = #p::OnceLock::new();
                SPEC.get_or_init(|| {
                    let mut builder = #krate::ToolSpec::builder(#name, #description)
                        #title
                        .input_schema(#input_schema)
                        #(#injected)*
                        .safety(#safety)
                        #timeout
                        #retry
                        #sequential
                        #max_concurrency
                        #(.tag(#tags))*
                        #task
                        #escalates
                        #bounds
                        #(.example(#p::serde_json::from_str(#examples)
                            .expect("#[tool] checked this example's JSON at compile time")))*
                        .blocking(#blocking);
                    #output_schema
                    builder.build().expect("#[tool] checked this spec at compile time")
                })
            }
        }

        #tool_impl
    }
}
