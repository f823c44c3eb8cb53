//! Where a free fn under `#[tool]` sits. An attribute macro sees its item
//! only; a fn of an `impl` block or a trait without `#[tools]` (where the
//! tool type, a struct, cannot be written) is found by reading the fn's
//! source file, whose items are walked for the `#[tool]` fns of its name.
//!
//! Only a fn that does not start its line is looked for (a fn at column 1
//! is an item of its module), one file parsed once. The answer is `Module`
//! whenever the source cannot tell: no file (code a macro wrote), a file
//! that does not parse, or `#[tool]` fns of that name in both places.

use std::path::PathBuf;
use std::sync::Mutex;

use quote::ToTokens;
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{ImplItem, Item, TraitItem};

use crate::util::{is_tool_attr, is_tools_attr};

/// Where a fn under `#[tool]` sits.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Place {
    /// In a module (or a fn's body), or not known.
    Module,
    /// In an inherent `impl` block without `#[tools]`.
    Impl,
    /// In a trait impl.
    TraitImpl,
    /// In a trait.
    Trait,
}

/// Where `item`, a fn without a receiver, sits (see the module docs).
pub(super) fn place_of(item: &syn::ItemFn) -> Place {
    if !proc_macro::is_available() {
        return Place::Module;
    }
    // The fn's first token: its first attribute (a doc comment), else its
    // visibility, else its signature's.
    let first = item
        .attrs
        .first()
        .map(|attr| attr.pound_token.span)
        .or_else(|| {
            item.vis
                .to_token_stream()
                .into_iter()
                .next()
                .map(|t| t.span())
        })
        .unwrap_or_else(|| item.sig.span());
    let span = first.unwrap();
    if span.column() <= 1 {
        return Place::Module;
    }
    let Some(path) = span.local_file() else {
        return Place::Module;
    };
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Place::Module;
    };
    let name = item.sig.ident.unraw().to_string();
    with_tool_fns(path, text, |fns| {
        let mut places = fns.iter().filter(|(n, _)| *n == name).map(|(_, p)| *p);
        let first = places.next().unwrap_or(Place::Module);
        if places.all(|p| p == first) {
            first
        } else {
            Place::Module
        }
    })
}

/// The last file read, and its `#[tool]` fns: the fns of one file expand
/// one after another.
struct Parsed {
    path: PathBuf,
    text: String,
    fns: Vec<(String, Place)>,
}

static LAST: Mutex<Option<Parsed>> = Mutex::new(None);

/// Runs `f` on the `#[tool]` fns of the file at `path`, whose text is
/// `text`, parsing it unless it is the file parsed last, unchanged.
fn with_tool_fns<T>(path: PathBuf, text: String, f: impl FnOnce(&[(String, Place)]) -> T) -> T {
    let mut last = LAST.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(parsed) = &*last
        && parsed.path == path
        && parsed.text == text
    {
        return f(&parsed.fns);
    }
    let fns = tool_fns(&text);
    let answer = f(&fns);
    *last = Some(Parsed { path, text, fns });
    answer
}

/// The name and place of every fn of `text` marked `#[tool]`, but for the
/// methods of `#[tools]` blocks (whose `#[tool]` that block reads).
fn tool_fns(text: &str) -> Vec<(String, Place)> {
    let mut out = Vec::new();
    if let Ok(file) = syn::parse_file(text) {
        walk(&file.items, &mut out);
    }
    out
}

fn walk(items: &[Item], out: &mut Vec<(String, Place)>) {
    let mark = |out: &mut Vec<_>, attrs: &[syn::Attribute], ident: &syn::Ident, place| {
        if attrs.iter().any(is_tool_attr) {
            out.push((ident.unraw().to_string(), place));
        }
    };
    let mut bodies = Vec::new();
    for item in items {
        match item {
            Item::Fn(f) => {
                mark(out, &f.attrs, &f.sig.ident, Place::Module);
                bodies.push(&*f.block);
            }
            Item::Impl(block) => {
                let read_by_tools = block.attrs.iter().any(is_tools_attr);
                let place = match block.trait_ {
                    Some(_) => Place::TraitImpl,
                    None => Place::Impl,
                };
                for item in &block.items {
                    if let ImplItem::Fn(method) = item {
                        if !read_by_tools {
                            mark(out, &method.attrs, &method.sig.ident, place);
                        }
                        bodies.push(&method.block);
                    }
                }
            }
            Item::Trait(t) => {
                for item in &t.items {
                    if let TraitItem::Fn(method) = item {
                        mark(out, &method.attrs, &method.sig.ident, Place::Trait);
                        bodies.extend(&method.default);
                    }
                }
            }
            Item::Mod(m) => {
                if let Some((_, items)) = &m.content {
                    walk(items, out);
                }
            }
            _ => {}
        }
    }
    for body in bodies {
        for stmt in &body.stmts {
            if let syn::Stmt::Item(item) = stmt {
                walk(std::slice::from_ref(item), out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Place, tool_fns};

    #[test]
    fn tool_fns_are_found_with_their_place() {
        let text = r#"
            #[tool] async fn free() {}
            mod inner {
                fn body() {
                    #[tool] fn nested() {}
                }
            }
            impl Plain {
                #[tool] fn associated() {}
                fn helper() {}
            }
            #[tools]
            impl Service {
                #[tool] async fn method(&self) {}
            }
            impl Greet for Plain {
                #[tinyagents_tools::tool] fn greet() {}
            }
            trait Listed {
                #[tool] fn listed();
            }
        "#;
        assert_eq!(
            tool_fns(text),
            [
                ("free".to_owned(), Place::Module),
                ("nested".to_owned(), Place::Module),
                ("associated".to_owned(), Place::Impl),
                ("greet".to_owned(), Place::TraitImpl),
                ("listed".to_owned(), Place::Trait),
            ]
        );
    }

    #[test]
    fn a_file_that_does_not_parse_has_no_tool_fns() {
        assert!(tool_fns("fn broken( {").is_empty());
    }
}
