//! The values of `#[tool(...)]` options: each parses its own form and, when
//! it is written another way, says how to write it.

use darling::FromMeta;
use proc_macro2::Span;
use syn::LitStr;
use syn::spanned::Spanned;

use crate::util::type_string;

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

/// An option's name as written.
pub(super) fn path_name(path: &syn::Path) -> String {
    type_string(path)
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
                        type_string(other)
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
    pub secrets: Option<syn::LitBool>,
}
