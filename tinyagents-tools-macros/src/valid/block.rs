//! The rules of an `impl` block under `#[tools]` itself; its methods go
//! through [`check`](super::check) each, as free fns do.

use syn::spanned::Spanned;

use crate::ast::ToolBlock;
use crate::util::{Errors, last_segment};

/// Checks the block: an inherent `impl` of a named, concrete type, with
/// `#[tool]` methods. `false` when it is a trait impl, whose methods are
/// then not tools at all and not checked.
pub fn check_block(block: &ToolBlock, errors: &mut Errors) -> bool {
    let item = &block.item;
    if let Some((path, _)) = &item.trait_ {
        errors.push_spanned(
            path,
            "#[tools] goes on an inherent `impl` block (`impl Service { ... }`), not a trait impl: move the tool methods into `impl Service`",
        );
        return false;
    }
    if !item.generics.params.is_empty() || item.generics.where_clause.is_some() {
        errors.push_spanned(
            &item.generics,
            "a tool service cannot be generic: each tool's schema and types must be known; put `#[tools]` on an `impl` block of a concrete type (`impl Service<Postgres> { ... }`)",
        );
    }
    if last_segment(&item.self_ty).is_none() {
        errors.push_spanned(
            &item.self_ty,
            "#[tools] goes on an `impl` block of a named type (a struct or an enum)",
        );
    }
    if block.methods.is_empty() && errors.is_empty() {
        errors.push(
            item.impl_token.span(),
            "#[tools] found no `#[tool]` method in this block: mark each method that is a tool with `#[tool]`",
        );
    }
    true
}
