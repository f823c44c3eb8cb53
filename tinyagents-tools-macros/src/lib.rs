//! The `#[tool]` and `#[tools]` attributes of `tinyagents-tools`. Use them
//! through `tinyagents_tools::tool` (or the prelude); this crate has no other
//! API.
//!
//! Stages, one module each, each using only those before it: `ast` reads
//! the item, `attr` parses the options, `valid` checks every rule (all
//! errors of one item together), `expand` writes the tool types. `util`
//! holds what they share; `names` is the tool-name rule.

#![deny(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod ast;
mod attr;
mod expand;
mod names;
mod util;
mod valid;

use proc_macro::TokenStream;

#[doc = include_str!("../doc/tool.md")]
#[proc_macro_attribute]
pub fn tool(args: TokenStream, input: TokenStream) -> TokenStream {
    expand::tool(args.into(), input.into()).into()
}

#[doc = include_str!("../doc/tools.md")]
#[proc_macro_attribute]
pub fn tools(args: TokenStream, input: TokenStream) -> TokenStream {
    expand::tools(args.into(), input.into()).into()
}
