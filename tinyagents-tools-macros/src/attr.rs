//! The options of `#[tool(...)]`, parsed with darling (unknown options get a
//! did-you-mean suggestion, a repeated option is an error at the repeat).

use darling::FromMeta;
use darling::util::{Flag, SpannedValue};
use proc_macro2::TokenStream;
use syn::{LitBool, LitInt, LitStr, Type};

/// Everything `#[tool(...)]` accepts; see the attribute's rustdoc.
#[derive(FromMeta, Default)]
#[darling(default)]
pub struct ToolOptions {
    pub name: Option<LitStr>,
    pub description: Option<LitStr>,
    pub title: Option<LitStr>,
    pub read_only: Flag,
    pub mutating: Flag,
    pub destructive: Flag,
    pub idempotent: Flag,
    pub local: Flag,
    pub networked: Flag,
    pub filesystem: Option<SpannedValue<Filesystem>>,
    pub shell: Flag,
    pub spend: Flag,
    pub requires_confirmation: Flag,
    pub workspace: Flag,
    pub redact: Option<RedactOptions>,
    pub deterministic: Flag,
    pub deterministic_given_injected: Flag,
    pub timeout: Option<LitStr>,
    pub retry: Option<Retry>,
    pub sequential: Flag,
    pub max_concurrency: Option<LitInt>,
    pub tags: Vec<LitStr>,
    pub blocking: Flag,
    pub state: Option<Type>,
    pub context: Option<Type>,
}

/// `filesystem = "read" | "write"`.
#[derive(FromMeta, Clone, Copy, PartialEq, Eq)]
#[darling(rename_all = "snake_case")]
pub enum Filesystem {
    Read,
    Write,
}

/// `redact(fields = [..], patterns = [..], secrets = false)`.
#[derive(FromMeta, Default)]
#[darling(default)]
pub struct RedactOptions {
    pub fields: Vec<LitStr>,
    pub patterns: Vec<LitStr>,
    pub secrets: Option<LitBool>,
}

/// `retry(...)` with the span of the word `retry`.
pub struct Retry {
    pub span: proc_macro2::Span,
    pub options: RetryOptions,
}

impl FromMeta for Retry {
    fn from_meta(item: &syn::Meta) -> darling::Result<Self> {
        use syn::spanned::Spanned;
        Ok(Retry {
            span: item.path().span(),
            options: RetryOptions::from_meta(item)?,
        })
    }
}

/// `retry(max_attempts = N, backoff = "100ms")`.
#[derive(FromMeta)]
pub struct RetryOptions {
    pub max_attempts: LitInt,
    #[darling(default)]
    pub backoff: Option<LitStr>,
}

impl ToolOptions {
    /// Parses the attribute's arguments.
    pub fn parse(args: TokenStream) -> darling::Result<ToolOptions> {
        let items = darling::ast::NestedMeta::parse_meta_list(args)?;
        ToolOptions::from_list(&items).map_err(reword)
    }
}

/// darling's messages in this crate's words: what is wrong, what to write.
fn reword(error: darling::Error) -> darling::Error {
    let errors: Vec<_> = error
        .into_iter()
        .map(|e| {
            let text = e.to_string();
            let new = if let Some(rest) = text.strip_prefix("Unknown field: ") {
                let rest = rest.replacen(". Did you mean", "; did you mean", 1);
                let rest = rest.replacen(". Available values:", "; the options are:", 1);
                format!("unknown #[tool] option {rest}")
            } else if let Some(rest) = text.strip_prefix("Duplicate field ") {
                format!("{rest} is given twice: keep one")
            } else {
                return e;
            };
            darling::Error::from(syn::Error::new(e.span(), new))
        })
        .collect();
    darling::Error::multiple(errors)
}

/// Why a duration literal is not valid.
#[derive(Debug, PartialEq, Eq)]
pub enum DurationError {
    NoNumber,
    NoUnit,
    Fraction,
    UnknownUnit,
    TooLong,
}

/// Parses `"30s"`, `"250ms"`, `"5m"`, `"1h"` into milliseconds.
pub fn parse_duration_ms(text: &str) -> Result<u64, DurationError> {
    let text = text.trim();
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return Err(DurationError::NoNumber);
    }
    let value: u64 = text[..digits].parse().map_err(|_| DurationError::TooLong)?;
    let factor = match text[digits..].trim_start() {
        "" => return Err(DurationError::NoUnit),
        unit if unit.starts_with('.') => return Err(DurationError::Fraction),
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        _ => return Err(DurationError::UnknownUnit),
    };
    value.checked_mul(factor).ok_or(DurationError::TooLong)
}

impl DurationError {
    /// What to write instead.
    pub fn message(&self, what: &str) -> String {
        let problem = match self {
            DurationError::NoNumber => "does not start with a whole number",
            DurationError::NoUnit => "has no unit",
            DurationError::Fraction => "has a fraction (use a smaller unit)",
            DurationError::UnknownUnit => "has an unknown unit",
            DurationError::TooLong => "is too long",
        };
        format!(
            "this {what} {problem}; write a whole number and a unit: ms, s, m or h (for example \"30s\" or \"250ms\")"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_take_a_whole_number_and_a_unit() {
        assert_eq!(parse_duration_ms("250ms"), Ok(250));
        assert_eq!(parse_duration_ms("30s"), Ok(30_000));
        assert_eq!(parse_duration_ms("5m"), Ok(300_000));
        assert_eq!(parse_duration_ms("1h"), Ok(3_600_000));
        assert_eq!(parse_duration_ms("0s"), Ok(0));
        assert_eq!(parse_duration_ms("30"), Err(DurationError::NoUnit));
        assert_eq!(parse_duration_ms("1.5s"), Err(DurationError::Fraction));
        assert_eq!(parse_duration_ms("s"), Err(DurationError::NoNumber));
        assert_eq!(parse_duration_ms("3d"), Err(DurationError::UnknownUnit));
    }
}
