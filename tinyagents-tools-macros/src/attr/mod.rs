//! The options of `#[tool(...)]`, parsed with darling (an unknown option
//! gets a did-you-mean suggestion, a repeated one an error at the repeat),
//! and of `#[arg(...)]` and `#[tools(...)]`. Parsing reads each option's
//! form; what the options mean together is `valid`'s.

mod arg;
mod block;
mod duration;
mod retry;
mod values;

use darling::FromMeta;
use darling::util::SpannedValue;
use proc_macro2::{Span, TokenStream};
use syn::{LitStr, Type};

use crate::ast::ToolFn;

pub use arg::{ArgDefault, ArgOptions};
pub use block::{BlockOptions, MAX_BLOCK};
pub use duration::{parse_duration_ms, parse_size_bytes};
pub use retry::Retry;
pub use values::{
    Concurrency, CratePath, DurationLit, Filesystem, RedactOptions, SizeLit, Switch, Tags, TaskMode,
};

/// Everything `#[tool(...)]` accepts; see the attribute's rustdoc.
#[derive(FromMeta, Default)]
#[darling(default)]
pub struct ToolOptions {
    pub name: Option<LitStr>,
    pub description: Option<LitStr>,
    pub title: Option<LitStr>,
    pub read_only: Switch,
    pub mutating: Switch,
    pub destructive: Switch,
    pub idempotent: Switch,
    pub local: Switch,
    pub networked: Switch,
    pub filesystem: Option<SpannedValue<Filesystem>>,
    pub shell: Switch,
    pub spend: Switch,
    pub requires_confirmation: Switch,
    pub workspace: Switch,
    pub redact: Option<RedactOptions>,
    pub unredacted_secrets: Switch,
    pub deterministic: Switch,
    pub deterministic_given_injected: Switch,
    pub timeout: Option<DurationLit>,
    pub retry: Option<Retry>,
    pub sequential: Switch,
    pub max_concurrency: Option<Concurrency>,
    pub tags: Tags,
    pub blocking: Switch,
    pub isolated: Switch,
    pub max_memory: Option<SizeLit>,
    pub max_cpu: Option<DurationLit>,
    pub collect: Switch,
    pub state: Option<Type>,
    pub context: Option<Type>,
    #[darling(rename = "crate")]
    pub krate: Option<CratePath>,
    #[darling(multiple)]
    pub example: Vec<LitStr>,
    pub task: Option<SpannedValue<TaskMode>>,
    pub escalates: Switch,
}

/// What `attr` read off one fn: its `#[tool]` options, and each
/// parameter's `#[arg]` options (in the parameters' order).
pub struct FnAttrs {
    /// The `#[tool(...)]` options, or why they did not parse.
    pub options: darling::Result<ToolOptions>,
    /// One per parameter.
    pub args: Vec<ArgOptions>,
}

impl FnAttrs {
    /// Reads the `#[arg]` attributes of `f`'s parameters beside `options`.
    pub fn new(options: darling::Result<ToolOptions>, f: &ToolFn) -> FnAttrs {
        let args = f.params.iter().map(|p| ArgOptions::parse(&p.arg)).collect();
        FnAttrs { options, args }
    }

    /// The path of the runtime crate: `crate = ..` when the options parsed,
    /// `::tinyagents_tools` otherwise.
    pub fn krate(&self) -> syn::Path {
        match &self.options {
            Ok(ToolOptions {
                krate: Some(path), ..
            }) => path.0.clone(),
            _ => syn::parse_quote!(::tinyagents_tools),
        }
    }
}

impl ToolOptions {
    /// Parses the attribute's arguments.
    pub fn parse(args: TokenStream) -> darling::Result<ToolOptions> {
        if let Some(span) = unquoted_example(&args) {
            return Err(syn::Error::new(span, EXAMPLE_FORM).into());
        }
        let items = darling::ast::NestedMeta::parse_meta_list(args)?;
        ToolOptions::from_list(&items).map_err(reword)
    }
}

/// How to write `example = ...`.
pub const EXAMPLE_FORM: &str = "an example is one call's arguments as a JSON object in a raw string: `example = r#\"{\"city\": \"Paris\"}\"#`";

/// Where `example = { ... }` is written without quotes (syn cannot parse
/// it as an option, and its own message would not say what to write).
fn unquoted_example(args: &TokenStream) -> Option<Span> {
    let tokens: Vec<_> = args.clone().into_iter().collect();
    tokens.windows(3).find_map(|w| match w {
        [
            proc_macro2::TokenTree::Ident(name),
            proc_macro2::TokenTree::Punct(eq),
            proc_macro2::TokenTree::Group(group),
        ] if name == "example"
            && eq.as_char() == '='
            && group.delimiter() != proc_macro2::Delimiter::None =>
        {
            Some(group.span())
        }
        _ => None,
    })
}

/// darling's messages in this crate's words: what is wrong, what to write;
/// never its location suffix (` at retry`).
fn reword(error: darling::Error) -> darling::Error {
    let errors: Vec<_> = error
        .into_iter()
        .map(|e| {
            let span = e.span();
            let mut text = e.to_string();
            if let Some(i) = text.rfind(" at ") {
                let location = &text[i + 4..];
                if !location.is_empty()
                    && location
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b == b'_' || b == b'/')
                {
                    text.truncate(i);
                }
            }
            let new = if let Some(rest) = text.strip_prefix("Unknown field: ") {
                let rest = rest.replacen(". Did you mean", "; did you mean", 1);
                let rest = rest.replacen(". Available values:", "; the options are:", 1);
                format!("unknown #[tool] option {rest}")
            } else if let Some(rest) = text.strip_prefix("Duplicate field ") {
                format!("{rest} is given twice: keep one")
            } else {
                text
            };
            darling::Error::from(syn::Error::new(span, new))
        })
        .collect();
    darling::Error::multiple(errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_retry_option_given_twice_or_in_the_wrong_form_is_named() {
        let messages = |args: TokenStream| -> Vec<String> {
            let Err(error) = ToolOptions::parse(args) else {
                panic!("the options were accepted");
            };
            error.into_iter().map(|e| e.to_string()).collect()
        };
        assert_eq!(
            messages(quote::quote!(retry(max_attempts = 3, max_attempts = 4))),
            ["`retry(max_attempts)` is given twice: keep one"]
        );
        assert_eq!(
            messages(quote::quote!(retry(max_attempts = "3"))),
            [
                "`retry(max_attempts)` takes a whole number, every attempt counted: write `max_attempts = 3`"
            ]
        );
        assert_eq!(
            messages(quote::quote!(retry(
                max_attempts = 3,
                backoff = "1s",
                backoff = 2
            ))),
            ["`retry(backoff)` is given twice: keep one"]
        );
    }
}
