//! darling's messages in this crate's words.

/// darling's messages in this crate's words: what is wrong, what to write;
/// never its location suffix (` at retry`).
pub(super) fn reword(error: darling::Error) -> darling::Error {
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
