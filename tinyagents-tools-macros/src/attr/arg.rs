//! The options of `#[arg(...)]` on a plain parameter: its description, its
//! default, and the name of its property when a pattern takes it apart.

use proc_macro2::Span;
use syn::LitStr;
use syn::spanned::Spanned;

use crate::util::type_string;

/// The `#[arg(...)]` options of one parameter.
#[derive(Default)]
pub struct ArgOptions {
    /// Where the (first) attribute is.
    pub span: Option<Span>,
    /// `description = "..."`.
    pub description: Option<LitStr>,
    /// `default` or `default = "path"`.
    pub default: Option<ArgDefault>,
    /// `name = "..."`: the property's name, for a parameter taken apart by
    /// a pattern.
    pub name: Option<LitStr>,
    /// Mistakes in the attributes, reported with the fn's other errors.
    pub errors: Vec<syn::Error>,
}

/// `#[arg(default)]` or `#[arg(default = "path")]`.
pub enum ArgDefault {
    /// `Default::default()`.
    Trait,
    /// The fn at this path.
    Path(LitStr),
}

const ARG_FORM: &str = "write `#[arg(description = \"...\")]`, `#[arg(default)]`, `#[arg(default = \"path::to::fn\")]` or `#[arg(name = \"...\")]`";

impl ArgOptions {
    /// Reads a parameter's `#[arg(...)]` attributes.
    pub fn parse(attrs: &[syn::Attribute]) -> ArgOptions {
        let mut options = ArgOptions::default();
        for attr in attrs {
            options.read(attr);
        }
        options
    }

    fn read(&mut self, attr: &syn::Attribute) {
        self.span.get_or_insert(attr.span());
        let syn::Meta::List(_) = &attr.meta else {
            self.errors.push(syn::Error::new_spanned(
                attr,
                format_args!("`#[arg]` takes its options in parentheses: {ARG_FORM}"),
            ));
            return;
        };
        let result = attr.parse_nested_meta(|meta| {
            let once = |slot: bool, option: &str| {
                if slot {
                    Err(meta.error(format_args!("`{option}` is given twice: keep one")))
                } else {
                    Ok(())
                }
            };
            if meta.path.is_ident("description") {
                let lit: LitStr = meta.value()?.parse()?;
                once(self.description.replace(lit).is_some(), "description")
            } else if meta.path.is_ident("name") {
                let lit: LitStr = meta.value()?.parse()?;
                once(self.name.replace(lit).is_some(), "name")
            } else if meta.path.is_ident("default") {
                let default = if meta.input.peek(syn::Token![=]) {
                    ArgDefault::Path(meta.value()?.parse()?)
                } else {
                    ArgDefault::Trait
                };
                once(self.default.replace(default).is_some(), "default")
            } else {
                Err(meta.error(format_args!(
                    "unknown `#[arg]` option `{}`: {ARG_FORM}",
                    type_string(&meta.path)
                )))
            }
        });
        if let Err(err) = result {
            self.errors.push(err);
        }
    }
}
