//! The tool's spec: built once, on first use, from the checked options, the
//! doc comment and the types of the fn's parameters and return value.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use super::call::ToolImpl;
use super::plain;
use crate::ast::Output;
use crate::attr::{Filesystem, TaskMode};
use crate::util::type_string;
use crate::valid::{Description, Determinism, Effect, Limits, Run, Safety};

/// `impl Tool { fn spec() }`: the spec, built on first use.
pub(super) fn spec_fn(t: &ToolImpl<'_>) -> TokenStream {
    let ToolImpl {
        m, krate, p, tool, ..
    } = t;
    let vis = &m.f.item.vis;
    let name = &m.name;
    let description = match &m.description {
        Description::Option(text) => quote!(#text),
        Description::Doc(parts) => quote!(#p::doc_description(&[#(#parts),*])),
    };
    let title = m.title.as_ref().map(|t| quote!(.title(#t)));
    let input_schema = input_schema(t);
    let injected = injected(t);
    let safety = safety(krate, &m.safety);
    let limits = limits(krate, &m.limits);
    let tags = &m.tags;
    let examples = &m.examples;
    let task = match m.task {
        TaskMode::Forbidden => None,
        TaskMode::Optional => Some(quote!(.task_support(#krate::spec::TaskSupport::Optional))),
        TaskMode::Required => Some(quote!(.task_support(#krate::spec::TaskSupport::Required))),
    };
    let escalates = m
        .escalates
        .then(|| quote!(.task_start(#krate::spec::TaskStart::OnEscalate)));
    let bounds = m.isolated.as_ref().map(super::isolated::spec_bounds);
    // An isolated fn runs in its worker, never on this process's blocking pool.
    let blocking = m.run == Run::Blocking && m.isolated.is_none();
    let output_schema = output_schema(t);
    quote! {
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
                        #limits
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
    }
}

/// The input schema: the argument struct's, the generated struct's, or an
/// empty object's.
fn input_schema(t: &ToolImpl<'_>) -> TokenStream {
    let ToolImpl { m, krate, p, .. } = t;
    match m.params.argument {
        Some(i) => {
            let ty = &m.f.params[i].ty;
            quote_spanned!(ty.span()=> #p::input_schema::<#ty>())
        }
        None if !m.params.plain.is_empty() => {
            let ty = plain::args_type(m.f);
            quote!(#p::input_schema::<#ty>())
        }
        None => quote!(#krate::ToolSchema::empty_object()),
    }
}

/// The output schema, when the return type has one.
fn output_schema(t: &ToolImpl<'_>) -> Option<TokenStream> {
    let p = &t.p;
    let Output::Type(ty) = &t.m.f.output else {
        return None;
    };
    Some(quote! {{
        use #p::{
            NoSuccessSchema as _, NoValueSchema as _, SuccessSchema as _, UnitSchema as _,
            ValueSchema as _,
        };
        if let ::core::option::Option::Some(schema) =
            (&&&&&#p::ReturnSchemaProbe::<#ty>::new()).output_schema()
        {
            builder = builder.output_schema(schema);
        }
    }})
}

/// `.injected(name, type, kind)` for each injected parameter.
fn injected(t: &ToolImpl<'_>) -> Vec<TokenStream> {
    let ToolImpl {
        m,
        p,
        s_spec,
        c_spec,
        ..
    } = t;
    let params = m.f.params.iter().filter(|param| param.inject.is_some());
    params
        .map(|param| {
            let ty = &param.ty;
            let pname = &param.name;
            let tname = type_string(ty);
            quote! {
                .injected(#pname, #tname, {
                    use #p::{InjectableKind as _, UninjectableKind as _};
                    (&&#p::KindProbe::<#ty, #s_spec, #c_spec>::new()).kind()
                })
            }
        })
        .collect()
}

/// The timeout, retry and concurrency calls of the builder.
fn limits(krate: &TokenStream, limits: &Limits) -> TokenStream {
    let timeout = limits
        .timeout_ms
        .map(|ms| quote!(.timeout(::core::time::Duration::from_millis(#ms))));
    let retry = limits.retry.map(|(n, backoff)| {
        quote!(.retry(#krate::RetryPolicy::attempts(#n, ::core::time::Duration::from_millis(#backoff))))
    });
    let sequential = limits.sequential.then(|| quote!(.sequential()));
    let max_concurrency = limits.max_concurrency.map(|n| {
        quote!(.max_concurrency(::core::num::NonZeroUsize::new(#n).expect("checked by #[tool]")))
    });
    quote!(#timeout #retry #sequential #max_concurrency)
}

/// The `ToolSafety` expression for the tool's declared effects.
fn safety(k: &TokenStream, declared: &Safety) -> TokenStream {
    let effect = match declared.effect {
        Effect::ReadOnly => quote!(ReadOnly),
        Effect::Mutating => quote!(Mutating),
        Effect::Destructive => quote!(Destructive),
    };
    let idempotency = if declared.idempotent {
        quote!(Idempotent)
    } else {
        quote!(NotIdempotent)
    };
    let reach = if declared.local {
        quote!(Local)
    } else {
        quote!(Networked)
    };
    let filesystem = match declared.filesystem {
        None => quote!(None),
        Some(Filesystem::Read) => quote!(Read),
        Some(Filesystem::Write) => quote!(Write),
    };
    let determinism = match declared.determinism {
        Determinism::Deterministic => quote!(Deterministic),
        Determinism::GivenInjected => quote!(GivenInjected),
        Determinism::NonDeterministic => quote!(NonDeterministic),
    };
    let (shell, spend, confirm, workspace) = (
        declared.shell,
        declared.spend,
        declared.requires_confirmation,
        declared.workspace,
    );
    let secrets = declared.redaction.secrets;
    let unredacted = declared.redaction.unredacted_secrets;
    let fields = &declared.redaction.fields;
    let patterns = &declared.redaction.patterns;
    quote! {
        #k::ToolSafety::default()
            .effect(#k::spec::Effect::#effect)
            .idempotency(#k::spec::Idempotency::#idempotency)
            .reach(#k::spec::Reach::#reach)
            .filesystem(#k::spec::FilesystemAccess::#filesystem)
            .shell(#shell)
            .spend(#spend)
            .requires_confirmation(#confirm)
            .workspace(#workspace)
            .redaction(#k::spec::RedactionPolicy {
                secrets: #secrets,
                fields: ::std::vec![#(::std::string::String::from(#fields)),*],
                patterns: ::std::vec![#(::std::string::String::from(#patterns)),*],
            })
            .determinism(#k::spec::Determinism::#determinism)
            .allow_unredacted_secrets(#unredacted)
    }
}
