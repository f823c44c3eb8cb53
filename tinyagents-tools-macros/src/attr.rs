//! The options of `#[tool(...)]`, parsed with darling (unknown options get a
//! did-you-mean suggestion, a repeated option is an error at the repeat).

use darling::FromMeta;
use darling::util::SpannedValue;
use proc_macro2::{Span, TokenStream};
use syn::spanned::Spanned;
use syn::{LitBool, LitInt, LitStr, Type};

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

/// A flag option (`read_only`): a bare word, never `read_only = false`.
#[derive(Default, Clone, Copy)]
pub struct Switch(Option<Span>);

impl Switch {
    pub fn is_present(&self) -> bool {
        self.0.is_some()
    }

    pub fn span(&self) -> Span {
        self.0.unwrap_or_else(Span::call_site)
    }
}

impl FromMeta for Switch {
    fn from_meta(item: &syn::Meta) -> darling::Result<Self> {
        let name = path_name(item.path());
        match item {
            syn::Meta::Path(path) => Ok(Switch(Some(path.span()))),
            _ => Err(darling::Error::custom(format_args!(
                "`{name}` is a flag and takes no value: write `{name}` to set it, leave it out otherwise"
            ))
            .with_span(item)),
        }
    }
}

fn path_name(path: &syn::Path) -> String {
    crate::ast::type_string(path)
}

/// `filesystem = "read" | "write"`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Filesystem {
    Read,
    Write,
}

const FILESYSTEM_FORM: &str =
    "`filesystem` takes its access mode: write `filesystem = \"read\"` or `filesystem = \"write\"`";

impl FromMeta for Filesystem {
    fn from_word() -> darling::Result<Self> {
        Err(darling::Error::custom(FILESYSTEM_FORM))
    }

    fn from_list(_: &[darling::ast::NestedMeta]) -> darling::Result<Self> {
        Err(darling::Error::custom(FILESYSTEM_FORM))
    }

    fn from_expr(expr: &syn::Expr) -> darling::Result<Self> {
        match expr {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => match s.value().as_str() {
                "read" => Ok(Filesystem::Read),
                "write" => Ok(Filesystem::Write),
                _ => Err(darling::Error::custom(format_args!(
                    "`filesystem` is \"read\" or \"write\", not {:?}",
                    s.value()
                ))
                .with_span(s)),
            },
            _ => Err(darling::Error::custom(FILESYSTEM_FORM).with_span(expr)),
        }
    }
}

/// `task = "optional" | "required" | "forbidden"`: whether the tool may run
/// as an MCP task.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum TaskMode {
    Forbidden,
    Optional,
    Required,
}

const TASK_FORM: &str =
    "`task` takes the tool's task support: write `task = \"optional\"` or `task = \"required\"`";

impl FromMeta for TaskMode {
    fn from_word() -> darling::Result<Self> {
        Err(darling::Error::custom(TASK_FORM))
    }

    fn from_list(_: &[darling::ast::NestedMeta]) -> darling::Result<Self> {
        Err(darling::Error::custom(TASK_FORM))
    }

    fn from_expr(expr: &syn::Expr) -> darling::Result<Self> {
        match expr {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => match s.value().as_str() {
                "optional" => Ok(TaskMode::Optional),
                "required" => Ok(TaskMode::Required),
                "forbidden" => Ok(TaskMode::Forbidden),
                _ => Err(darling::Error::custom(format_args!(
                    "`task` is \"optional\" or \"required\" (or \"forbidden\", the default), not {:?}",
                    s.value()
                ))
                .with_span(s)),
            },
            _ => Err(darling::Error::custom(TASK_FORM).with_span(expr)),
        }
    }
}

/// The string of a `name = "..."` option; any other form is refused with
/// `form`, which says how to write it.
fn string_value(item: &syn::Meta, form: &str) -> darling::Result<LitStr> {
    match item {
        syn::Meta::NameValue(syn::MetaNameValue {
            value:
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }),
            ..
        }) => Ok(s.clone()),
        syn::Meta::NameValue(nv) => Err(darling::Error::custom(form).with_span(&nv.value)),
        other => Err(darling::Error::custom(form).with_span(other)),
    }
}

/// A duration string option (`timeout = "30s"`, `max_cpu = "2s"`).
pub struct DurationLit(pub LitStr);

impl FromMeta for DurationLit {
    fn from_meta(item: &syn::Meta) -> darling::Result<Self> {
        let name = path_name(item.path());
        let form = format!(
            "`{name}` takes a duration string such as \"30s\" or \"500ms\": write `{name} = \"30s\"`"
        );
        string_value(item, &form).map(DurationLit)
    }
}

/// A memory size string option (`max_memory = "256MiB"`).
pub struct SizeLit(pub LitStr);

impl FromMeta for SizeLit {
    fn from_meta(item: &syn::Meta) -> darling::Result<Self> {
        const FORM: &str = "`max_memory` takes a size string such as \"256MiB\": write `max_memory = \"256MiB\"` (units KiB, MiB, GiB)";
        string_value(item, FORM).map(SizeLit)
    }
}

/// Parses `"256MiB"`, `"512KiB"`, `"2GiB"` into bytes; `None` when the text
/// is not a whole number and one of those units, or overflows.
pub fn parse_size_bytes(text: &str) -> Option<u64> {
    let text = text.trim();
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    let value: u64 = text[..digits].parse().ok()?;
    let shift = match text[digits..].trim_start() {
        "KiB" => 10,
        "MiB" => 20,
        "GiB" => 30,
        _ => return None,
    };
    value.checked_mul(1u64 << shift)
}

/// `max_concurrency = N`, N a whole number of at least 1.
pub struct Concurrency {
    pub value: usize,
    pub span: Span,
}

impl FromMeta for Concurrency {
    fn from_meta(item: &syn::Meta) -> darling::Result<Self> {
        const FORM: &str = "`max_concurrency` takes a whole number of at least 1, such as `max_concurrency = 4` (use `sequential` to keep the tool apart from every other call)";
        let syn::Meta::NameValue(nv) = item else {
            return Err(darling::Error::custom(FORM).with_span(item));
        };
        match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(n),
                ..
            }) => match n.base10_parse::<usize>() {
                Ok(0) => Err(darling::Error::custom(
                    "`max_concurrency` must be at least 1: use `sequential` to keep the tool apart from every other call",
                )
                .with_span(n)),
                Ok(value) => Ok(Concurrency {
                    value,
                    span: n.span(),
                }),
                Err(_) => Err(darling::Error::custom(FORM).with_span(n)),
            },
            other => Err(darling::Error::custom(FORM).with_span(other)),
        }
    }
}

/// `tags = ["files", "search"]`: string literals only.
#[derive(Default)]
pub struct Tags(pub Vec<LitStr>);

impl FromMeta for Tags {
    fn from_meta(item: &syn::Meta) -> darling::Result<Self> {
        const FORM: &str =
            "`tags` takes a list of string literals: write `tags = [\"files\", \"search\"]`";
        let syn::Meta::NameValue(nv) = item else {
            return Err(darling::Error::custom(FORM).with_span(item));
        };
        let syn::Expr::Array(array) = &nv.value else {
            return Err(darling::Error::custom(FORM).with_span(&nv.value));
        };
        let mut errors = darling::Error::accumulator();
        let mut tags = Vec::new();
        for elem in &array.elems {
            match elem {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => tags.push(s.clone()),
                other => errors.push(
                    darling::Error::custom(format_args!(
                        "tags are string literals: write `\"{}\"`",
                        crate::ast::type_string(other)
                    ))
                    .with_span(other),
                ),
            }
        }
        errors.finish_with(Tags(tags))
    }
}

/// `crate = "path"` or `crate = path`: where the runtime crate is.
pub struct CratePath(pub syn::Path);

impl FromMeta for CratePath {
    fn from_meta(item: &syn::Meta) -> darling::Result<Self> {
        const FORM: &str = "`crate` takes the path the runtime crate is reachable at: write `crate = \"my_crate::tools\"` or `crate = my_crate::tools`";
        let syn::Meta::NameValue(nv) = item else {
            return Err(darling::Error::custom(FORM).with_span(item));
        };
        match &nv.value {
            syn::Expr::Path(p) if p.qself.is_none() => Ok(CratePath(p.path.clone())),
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => s
                .parse::<syn::Path>()
                .map(CratePath)
                .map_err(|_| darling::Error::custom(FORM).with_span(s)),
            other => Err(darling::Error::custom(FORM).with_span(other)),
        }
    }
}

/// `redact(fields = [..], patterns = [..], secrets = false)`.
#[derive(FromMeta, Default)]
#[darling(default)]
pub struct RedactOptions {
    pub fields: Vec<LitStr>,
    pub patterns: Vec<LitStr>,
    pub secrets: Option<LitBool>,
}

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

impl ToolOptions {
    /// Parses the attribute's arguments.
    pub fn parse(args: TokenStream) -> darling::Result<ToolOptions> {
        if let Some(span) = crate::json::unquoted_example(&args) {
            return Err(syn::Error::new(span, crate::json::EXAMPLE_FORM).into());
        }
        let items = darling::ast::NestedMeta::parse_meta_list(args)?;
        ToolOptions::from_list(&items).map_err(reword)
    }
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

    #[test]
    fn sizes_take_a_whole_number_and_a_binary_unit() {
        for refused in ["256MB", "256", "MiB", "1.5GiB", "99999999999999GiB"] {
            assert_eq!(parse_size_bytes(refused), None, "{refused}");
        }
        assert_eq!(parse_size_bytes("256MiB"), Some(268_435_456));
        assert_eq!(parse_size_bytes("512KiB"), Some(524_288));
        assert_eq!(parse_size_bytes("2 GiB"), Some(2_147_483_648));
        assert_eq!(parse_size_bytes("0MiB"), Some(0));
    }
}

mod reword;

use reword::reword;
