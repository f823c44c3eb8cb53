//! Whether a tool fn's body can never wait: then the executor may run its
//! calls at once, with no future on the heap (`Tool::call_now`).
//!
//! The check is syntactic and conservative. A body waits only at an
//! `.await`, so a body without the `await` keyword anywhere in its tokens
//! (nested blocks, closures and macro arguments included) never waits,
//! unless a macro expands to an `.await` of its own. Macros are therefore
//! allowed only from a list of well-known ones that expand to plain code;
//! any other macro invocation keeps the usual async call.

use proc_macro2::{TokenStream, TokenTree};
use quote::ToTokens;

/// Macros whose expansion never contains an `.await` of its own (they are
/// recognized by their last path segment).
const PLAIN_MACROS: &[&str] = &[
    "assert",
    "assert_eq",
    "assert_ne",
    "bail",
    "cfg",
    "column",
    "concat",
    "dbg",
    "debug",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_ne",
    "ensure",
    "env",
    "eprint",
    "eprintln",
    "error",
    "file",
    "format",
    "format_args",
    "include_str",
    "info",
    "json",
    "line",
    "matches",
    "module_path",
    "panic",
    "print",
    "println",
    "stringify",
    "todo",
    "trace",
    "unimplemented",
    "unreachable",
    "vec",
    "warn",
    "write",
    "writeln",
];

/// Keywords that a `!` may follow without a macro call (`if !(a && b)`).
const KEYWORDS: &[&str] = &[
    "as", "break", "else", "if", "in", "let", "match", "mut", "return", "while",
];

/// True when `block` can never wait (see the module docs).
pub fn never_waits(block: &syn::Block) -> bool {
    plain(block.to_token_stream())
}

fn plain(tokens: TokenStream) -> bool {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    for (i, token) in tokens.iter().enumerate() {
        match token {
            TokenTree::Ident(ident) => {
                let name = ident.to_string();
                if name == "await" {
                    return false;
                }
                let invoked = matches!(
                    (tokens.get(i + 1), tokens.get(i + 2)),
                    (Some(TokenTree::Punct(bang)), Some(TokenTree::Group(_)))
                        if bang.as_char() == '!'
                );
                if invoked
                    && !KEYWORDS.contains(&name.as_str())
                    && !PLAIN_MACROS.contains(&name.as_str())
                {
                    return false;
                }
            }
            TokenTree::Group(group) => {
                if !plain(group.stream()) {
                    return false;
                }
            }
            TokenTree::Punct(_) | TokenTree::Literal(_) => {}
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::never_waits;

    fn body(code: &str) -> syn::Block {
        syn::parse_str(code).expect("a block")
    }

    #[test]
    fn plain_bodies_never_wait() {
        for code in [
            "{ add(args) }",
            "{ let s = format!(\"{}\", a.b); if !(x && y) { return Err(e.into()); } Ok(vec![s]) }",
            "{ tracing::info!(n = 1, \"x\"); serde_json::json!({\"a\": [1]}) }",
            "{ let f = |x: u8| x + 1; match !flag { true => f(1), _ => 2 } }",
        ] {
            assert!(never_waits(&body(code)), "{code}");
        }
    }

    #[test]
    fn awaits_and_unknown_macros_may_wait() {
        for code in [
            "{ fetch(url).await }",
            "{ let r = { inner().await }; r }",
            "{ tokio::select! { _ = a => 1 } }",
            "{ my_wait!(x) }",
            "{ format!(\"{}\", slow().await) }",
            "{ let c = async { 1 }; c.await }",
        ] {
            assert!(!never_waits(&body(code)), "{code}");
        }
    }
}
