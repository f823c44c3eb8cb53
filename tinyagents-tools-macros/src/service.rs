//! `#[tools]` on an `impl` block: each `#[tool]` method becomes a tool type
//! holding the service in an `Arc`, and the block implements the hidden
//! `BlockTools<N, S, C>` (block `N` of the type: 1 for `#[tools]`, `N` for
//! `#[tools(block = N)]`). The main block also implements `ToolService`,
//! which adds the tools of blocks 2 to 16 found by autoref specialization on
//! the concrete type, so that no list of blocks is kept anywhere.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::spanned::Spanned;
use syn::{ImplItem, Type};

use crate::ast::{ServiceOf, ToolFn};
use crate::attr::ToolOptions;
use crate::valid::{self, Errors, Model};

/// The highest block number; the main block is 1.
const MAX_BLOCK: u8 = 16;

/// The options of `#[tools(...)]`.
#[derive(Default)]
struct BlockOptions {
    block: Option<(u8, Span)>,
    state: Option<Type>,
    context: Option<Type>,
    krate: Option<syn::Path>,
}

const TOOLS_FORM: &str = "`#[tools]` takes `block = 2` (a further block of the type, 2 to 16), `state = Type`, `context = Type` and `crate = \"path\"`";

fn parse_options(args: TokenStream, errors: &mut Errors) -> BlockOptions {
    let mut o = BlockOptions::default();
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("block") {
            let lit: syn::LitInt = meta.value()?.parse()?;
            match lit.base10_parse::<u8>() {
                Ok(n) if (1..=MAX_BLOCK).contains(&n) => o.block = Some((n, lit.span())),
                _ => {
                    return Err(syn::Error::new(
                        lit.span(),
                        format_args!(
                            "a block number is 2 to {MAX_BLOCK}, one per further `impl` block of the type (the main block is `#[tools]`, without `block`)"
                        ),
                    ));
                }
            }
        } else if meta.path.is_ident("state") {
            o.state = Some(meta.value()?.parse()?);
        } else if meta.path.is_ident("context") {
            o.context = Some(meta.value()?.parse()?);
        } else if meta.path.is_ident("crate") {
            let value = meta.value()?;
            o.krate = Some(if value.peek(syn::LitStr) {
                value.parse::<syn::LitStr>()?.parse()?
            } else {
                value.parse()?
            });
        } else {
            return Err(meta.error(format_args!(
                "unknown `#[tools]` option `{}`: {TOOLS_FORM}",
                crate::ast::type_string(&meta.path)
            )));
        }
        Ok(())
    });
    if let Err(err) = syn::parse::Parser::parse2(parser, args) {
        errors.push_error(err);
    }
    o
}

/// The attribute's entry point.
pub fn tools(args: TokenStream, input: TokenStream) -> TokenStream {
    let mut block: syn::ItemImpl = match syn::parse2(input.clone()) {
        Ok(block) => block,
        Err(err) => {
            let err = syn::Error::new(
                err.span(),
                format_args!("#[tools] goes on an `impl` block of a service type: `#[tools] impl Service {{ ... }}` ({err})"),
            )
            .to_compile_error();
            return quote!(#input #err);
        }
    };
    let mut errors = Errors::default();
    let o = parse_options(args, &mut errors);
    // Only a block known to be the main one stands in for the service when
    // refused: a mistyped `block` must not claim to be it.
    let known_main = errors.is_empty() && o.block.is_none_or(|(n, _)| n == 1);
    let krate: syn::Path = o
        .krate
        .clone()
        .unwrap_or_else(|| syn::parse_quote!(::tinyagents_tools));
    let number = o.block.map_or(1, |(n, _)| n);

    if let Some((path, _)) = &block.trait_ {
        errors.push_spanned(
            path,
            "#[tools] goes on an inherent `impl` block (`impl Service { ... }`), not a trait impl: move the tool methods into `impl Service`",
        );
        // The methods are the trait's: keep them, without their `#[tool]`.
        for item in block.items.iter_mut() {
            if let ImplItem::Fn(method) = item {
                method.attrs.retain(|attr| !is_tool_attr(attr));
            }
        }
        let err = errors
            .finish()
            .expect_err("an error was pushed")
            .to_compile_error();
        return quote!(#block #err);
    }
    if !block.generics.params.is_empty() || block.generics.where_clause.is_some() {
        errors.push_spanned(
            &block.generics,
            "a tool service cannot be generic: each tool's schema and types must be known; put `#[tools]` on an `impl` block of a concrete type (`impl Service<Postgres> { ... }`)",
        );
    }
    let ident = match crate::ast::last_segment(&block.self_ty) {
        Some(seg) => seg.ident.clone(),
        None => {
            errors.push_spanned(
                &block.self_ty,
                "#[tools] goes on an `impl` block of a named type (a struct or an enum)",
            );
            format_ident!("Service")
        }
    };
    let service_ty = (*block.self_ty).clone();

    let mut tools = Vec::new();
    let mut expansions = Vec::new();
    for item in block.items.iter_mut() {
        let ImplItem::Fn(method) = item else { continue };
        let Some(at) = method.attrs.iter().position(is_tool_attr) else {
            continue;
        };
        let attr = method.attrs.remove(at);
        let options = tool_options(&attr, &o);
        // The tool's types are written outside the block, where `Self`
        // would name the tool: its signature names the service instead.
        let mut sig = method.sig.clone();
        for input in &mut sig.inputs {
            if let syn::FnArg::Typed(param) = input {
                crate::ast::replace_self(&mut param.ty, &service_ty);
            }
        }
        if let syn::ReturnType::Type(_, ty) = &mut sig.output {
            crate::ast::replace_self(ty, &service_ty);
        }
        let mut f = ToolFn::new(syn::ItemFn {
            attrs: method.attrs.clone(),
            vis: method.vis.clone(),
            modifiers: Default::default(),
            sig,
            block: Box::new(method.block.clone()),
        });
        f.service = Some(ServiceOf {
            ty: service_ty.clone(),
            ident: ident.clone(),
        });
        // The method as emitted: its parameters' `#[inject]`, `#[arg]` and
        // doc attributes removed.
        method.sig = f.item.sig.clone();
        match valid::check(options, &f) {
            Ok(model) => {
                tools.push(format_ident!(
                    "{}Tool",
                    valid::pascal_case(&f.type_base()),
                    span = f.item.sig.ident.span()
                ));
                expansions.push(crate::expand::expand(&model));
            }
            Err(err) => errors.push_error(err),
        }
    }
    if tools.is_empty() && errors.is_empty() {
        errors.push(
            block.impl_token.span(),
            "#[tools] found no `#[tool]` method in this block: mark each method that is a tool with `#[tool]`",
        );
    }

    let main = number == 1;
    if let Err(err) = errors.finish() {
        // Keep the block, and the main block's `ToolService`, so that one
        // mistake is one error: `register_service` adds none of its own.
        let err = err.to_compile_error();
        let stub = (main && known_main).then(|| stub_service(&service_ty, &krate));
        return quote!(#block #stub #err);
    }

    let p = quote!(#krate::tool_macro);
    let (s_ty, c_ty, generics) = state_and_context(&o);
    let block_tools = quote! {
        impl #p::ToolBlock<#number> for #service_ty {}

        impl<#(#generics),*> #p::BlockTools<#number, #s_ty, #c_ty> for #service_ty
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
    let service = main.then(|| {
        let further = 2..=MAX_BLOCK;
        quote! {
            impl<#(#generics),*> #krate::ToolService<#s_ty, #c_ty> for #service_ty
            where
                #service_ty: #p::BlockTools<1, #s_ty, #c_ty>,
            {
                fn tools(
                    service: &::std::sync::Arc<Self>,
                ) -> ::std::vec::Vec<::std::sync::Arc<dyn #krate::Tool<#s_ty, #c_ty>>> {
                    use #p::{BlockAbsent as _, BlockPresent as _};
                    let mut out = ::std::vec::Vec::new();
                    <#service_ty as #p::BlockTools<1, #s_ty, #c_ty>>::block_tools(service, &mut out);
                    #((&&#p::BlockProbe::<#service_ty, #further>::new()).add::<#s_ty, #c_ty>(service, &mut out);)*
                    out
                }
            }
        }
    });
    quote! {
        #block
        #(#expansions)*
        #block_tools
        #service
    }
}

/// True for `#[tool]` and `#[tool(...)]` (under any path).
fn is_tool_attr(attr: &syn::Attribute) -> bool {
    attr.path()
        .segments
        .last()
        .is_some_and(|s| s.ident == "tool")
}

/// The method's `#[tool(...)]` options, with the block's `state`,
/// `context` and `crate` as defaults.
fn tool_options(attr: &syn::Attribute, o: &BlockOptions) -> darling::Result<ToolOptions> {
    let tokens = match &attr.meta {
        syn::Meta::Path(_) => TokenStream::new(),
        syn::Meta::List(list) => list.tokens.clone(),
        syn::Meta::NameValue(nv) => {
            return Err(darling::Error::custom(
                "write `#[tool]` or `#[tool(option, ...)]`, not `#[tool = ...]`",
            )
            .with_span(&nv.eq_token));
        }
    };
    let mut options = ToolOptions::parse(tokens)?;
    if options.state.is_none() {
        options.state = o.state.clone();
    }
    if options.context.is_none() {
        options.context = o.context.clone();
    }
    if options.krate.is_none() {
        options.krate = o.krate.clone().map(crate::attr::CratePath);
    }
    Ok(options)
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

/// The main block's `ToolService` when the block was refused: it compiles
/// for every state and context, and never runs (the crate does not build).
fn stub_service(service: &Type, krate: &syn::Path) -> TokenStream {
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

/// The tool type of a method: the service in an `Arc`, its spec, `new`.
pub fn tool_struct(m: &Model<'_>, tool: &syn::Ident, service: &ServiceOf) -> TokenStream {
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
