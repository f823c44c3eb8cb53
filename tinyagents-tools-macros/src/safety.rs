//! Code generation of a tool's declared safety: the `ToolSafety` value its
//! spec carries, from the checked options.

use proc_macro2::TokenStream;
use quote::quote;

use crate::attr::Filesystem;
use crate::valid::{Determinism, Effect, Model};

/// The `ToolSafety` expression for the tool's options.
pub fn safety_tokens(m: &Model<'_>) -> TokenStream {
    let k = &m.krate;
    let effect = match m.effect {
        Effect::ReadOnly => quote!(ReadOnly),
        Effect::Mutating => quote!(Mutating),
        Effect::Destructive => quote!(Destructive),
    };
    let idempotency = if m.idempotent {
        quote!(Idempotent)
    } else {
        quote!(NotIdempotent)
    };
    let reach = if m.local {
        quote!(Local)
    } else {
        quote!(Networked)
    };
    let filesystem = match m.filesystem {
        None => quote!(None),
        Some(Filesystem::Read) => quote!(Read),
        Some(Filesystem::Write) => quote!(Write),
    };
    let determinism = match m.determinism {
        Determinism::Deterministic => quote!(Deterministic),
        Determinism::GivenInjected => quote!(GivenInjected),
        Determinism::NonDeterministic => quote!(NonDeterministic),
    };
    let (shell, spend, confirm, workspace) =
        (m.shell, m.spend, m.requires_confirmation, m.workspace);
    let secrets = m.redact_secrets;
    let unredacted = m.unredacted_secrets;
    let fields = &m.redact_fields;
    let patterns = &m.redact_patterns;
    quote! {
        #k::ToolSafety::default()
            .effect(#k::safety::Effect::#effect)
            .idempotency(#k::safety::Idempotency::#idempotency)
            .reach(#k::safety::Reach::#reach)
            .filesystem(#k::safety::FilesystemAccess::#filesystem)
            .shell(#shell)
            .spend(#spend)
            .requires_confirmation(#confirm)
            .workspace(#workspace)
            .redaction(#k::safety::RedactionPolicy {
                secrets: #secrets,
                fields: ::std::vec![#(::std::string::String::from(#fields)),*],
                patterns: ::std::vec![#(::std::string::String::from(#patterns)),*],
            })
            .determinism(#k::safety::Determinism::#determinism)
            .allow_unredacted_secrets(#unredacted)
    }
}
