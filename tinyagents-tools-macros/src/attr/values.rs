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

impl FromMeta for Filesystem {
    fn from_meta(item: &syn::Meta) -> darling::Result<Self> {
        keyword(
            item,
            "`filesystem` takes its access mode: write `filesystem = \"read\"` or `filesystem = \"write\"`",
            &[("read", Filesystem::Read), ("write", Filesystem::Write)],
            "`filesystem` is \"read\" or \"write\"",
        )
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

impl FromMeta for TaskMode {
    fn from_meta(item: &syn::Meta) -> darling::Result<Self> {
        keyword(
            item,
            "`task` takes the tool's task support: write `task = \"optional\"` or `task = \"required\"`",
            &[
                ("optional", TaskMode::Optional),
                ("required", TaskMode::Required),
                ("forbidden", TaskMode::Forbidden),
            ],
            "`task` is \"optional\" or \"required\" (or \"forbidden\", the default)",
        )
    }
}

/// The value of a `name = "keyword"` option: the keyword's in `keywords`.
/// Any other string is refused with `unknown` and the string, at the string;
/// any other form (a bare word, a list, another literal) with `form`, which
/// says how to write it.
fn keyword<T: Copy>(
    item: &syn::Meta,
    form: &str,
    keywords: &[(&str, T)],
    unknown: &str,
) -> darling::Result<T> {
    if let syn::Meta::List(list) = item {
        // Read as darling reads a list, so that a malformed one keeps its
        // parse error.
        darling::ast::NestedMeta::parse_meta_list(list.tokens.clone())?;
    }
    let lit = string_value(item, form)?;
    let value = lit.value();
    keywords
        .iter()
        .find(|(word, _)| *word == value)
        .map(|&(_, keyword)| keyword)
        .ok_or_else(|| {
            darling::Error::custom(format_args!("{unknown}, not {value:?}")).with_span(&lit)
        })
}

/// The value of a `name = value` option; any other form (a bare word, a
/// list) is refused with `form`, which says how to write it.
fn name_value<'a>(item: &'a syn::Meta, form: &str) -> darling::Result<&'a syn::Expr> {
    match item {
        syn::Meta::NameValue(nv) => Ok(&nv.value),
        other => Err(darling::Error::custom(form).with_span(other)),
    }
}

/// The string of a `name = "..."` option; any other form is refused with
/// `form`, which says how to write it.
fn string_value(item: &syn::Meta, form: &str) -> darling::Result<LitStr> {
    match name_value(item, form)? {
        syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => Ok(s.clone()),
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
        match name_value(item, FORM)? {
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
        let value = name_value(item, FORM)?;
        let syn::Expr::Array(array) = value else {
            return Err(darling::Error::custom(FORM).with_span(value));
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
        match name_value(item, FORM)? {
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
