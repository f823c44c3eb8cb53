//! `retry(max_attempts = N, backoff = "100ms")`, parsed by hand so that
//! every message names `retry(...)`.

use darling::FromMeta;
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{LitInt, LitStr};

use super::values::path_name;

/// `retry(max_attempts = N, backoff = "100ms")`, parsed by hand so that
/// every message names `retry(...)`.
pub struct Retry {
    pub span: Span,
    pub max_attempts: Option<LitInt>,
    pub backoff: Option<LitStr>,
}

const RETRY_FORM: &str =
    "write `retry(max_attempts = 3)` or `retry(max_attempts = 3, backoff = \"100ms\")`";

impl FromMeta for Retry {
    fn from_meta(item: &syn::Meta) -> darling::Result<Self> {
        let span = item.path().span();
        let syn::Meta::List(list) = item else {
            return Err(darling::Error::custom(format_args!(
                "`retry` takes its options in parentheses: {RETRY_FORM}"
            ))
            .with_span(item));
        };
        let items = darling::ast::NestedMeta::parse_meta_list(list.tokens.clone())?;
        let mut errors: Vec<darling::Error> = Vec::new();
        let mut retry = Retry {
            span,
            max_attempts: None,
            backoff: None,
        };
        for nested in &items {
            let darling::ast::NestedMeta::Meta(meta) = nested else {
                errors.push(
                    darling::Error::custom(format_args!(
                        "`retry(...)` takes named options: {RETRY_FORM}"
                    ))
                    .with_span(nested),
                );
                continue;
            };
            let name = path_name(meta.path());
            let value = match meta {
                syn::Meta::NameValue(nv) => Some(&nv.value),
                _ => None,
            };
            match name.as_str() {
                "max_attempts" => set_once(
                    &mut retry.max_attempts,
                    value,
                    |lit| match lit {
                        syn::Lit::Int(n) => Some(n.clone()),
                        _ => None,
                    },
                    meta,
                    "takes a whole number, every attempt counted: write `max_attempts = 3`",
                    &mut errors,
                ),
                "backoff" => set_once(
                    &mut retry.backoff,
                    value,
                    |lit| match lit {
                        syn::Lit::Str(s) => Some(s.clone()),
                        _ => None,
                    },
                    meta,
                    "takes a duration string such as \"100ms\" or \"1s\": write `backoff = \"100ms\"`",
                    &mut errors,
                ),
                other => errors.push(
                    darling::Error::custom(format_args!(
                        "unknown `retry(...)` option `{other}`: the options are `max_attempts` (required) and `backoff`"
                    ))
                    .with_span(meta.path()),
                ),
            }
        }
        if retry.max_attempts.is_none() && errors.is_empty() {
            errors.push(
                darling::Error::custom(format_args!(
                    "`retry(...)` needs `max_attempts`: {RETRY_FORM}"
                ))
                .with_span(list),
            );
        }
        if errors.is_empty() {
            Ok(retry)
        } else {
            Err(darling::Error::multiple(errors))
        }
    }
}

/// Sets the `retry(...)` option `meta` into `slot` from the literal `read`
/// accepts; otherwise an error: the option given twice, or of the wrong form
/// (`form` says what it takes and what to write).
fn set_once<T>(
    slot: &mut Option<T>,
    value: Option<&syn::Expr>,
    read: impl Fn(&syn::Lit) -> Option<T>,
    meta: &syn::Meta,
    form: &str,
    errors: &mut Vec<darling::Error>,
) {
    let option = path_name(meta.path());
    let literal = match value {
        Some(syn::Expr::Lit(syn::ExprLit { lit, .. })) => read(lit),
        _ => None,
    };
    match literal {
        _ if slot.is_some() => errors.push(
            darling::Error::custom(format_args!("`retry({option})` is given twice: keep one"))
                .with_span(meta),
        ),
        Some(literal) => *slot = Some(literal),
        None => errors
            .push(darling::Error::custom(format_args!("`retry({option})` {form}")).with_span(meta)),
    }
}
