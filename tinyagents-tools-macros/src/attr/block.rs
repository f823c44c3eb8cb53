//! The options of `#[tools(...)]`, and those of each `#[tool(...)]` method
//! of the block, which take the block's `state`, `context` and `crate` as
//! defaults.

use proc_macro2::{Span, TokenStream};
use syn::Type;

use super::{CratePath, ToolOptions};
use crate::util::{Errors, type_string};

/// The highest block number; the main block is 1.
pub const MAX_BLOCK: u8 = 16;

/// The options of `#[tools(...)]`.
#[derive(Default)]
pub struct BlockOptions {
    /// `block = N`, with where `N` is.
    pub block: Option<(u8, Span)>,
    /// `state = Type`.
    pub state: Option<Type>,
    /// `context = Type`.
    pub context: Option<Type>,
    /// `crate = path`.
    pub krate: Option<syn::Path>,
}

const TOOLS_FORM: &str = "`#[tools]` takes `block = 2` (a further block of the type, 2 to 16), `state = Type`, `context = Type` and `crate = \"path\"`";

impl BlockOptions {
    /// Parses the attribute's arguments; a mistake goes to `errors` and
    /// leaves the options read before it.
    pub fn parse(args: TokenStream, errors: &mut Errors) -> BlockOptions {
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
                    type_string(&meta.path)
                )));
            }
            Ok(())
        });
        if let Err(err) = syn::parse::Parser::parse2(parser, args) {
            errors.push_error(err);
        }
        o
    }

    /// The block's number: 1 for the main block.
    pub fn number(&self) -> u8 {
        self.block.map_or(1, |(n, _)| n)
    }

    /// The path of the runtime crate.
    pub fn krate(&self) -> syn::Path {
        self.krate
            .clone()
            .unwrap_or_else(|| syn::parse_quote!(::tinyagents_tools))
    }

    /// A method's `#[tool(...)]` options, with the block's `state`,
    /// `context` and `crate` as defaults.
    pub fn method_options(&self, attr: &syn::Attribute) -> darling::Result<ToolOptions> {
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
            options.state = self.state.clone();
        }
        if options.context.is_none() {
            options.context = self.context.clone();
        }
        if options.krate.is_none() {
            options.krate = self.krate.clone().map(CratePath);
        }
        Ok(options)
    }
}
