//! The rule every canonical tool name follows.
//!
//! The macro crate has its own copy of this rule (it cannot depend on this
//! crate) to refuse a bad name at compile time; `tests/schema/name_rules_agree.rs`
//! checks that both copies agree.

use core::fmt;

/// The longest canonical tool name, in bytes (every provider accepts 64).
pub const MAX_NAME_LEN: usize = 64;

/// Why a string is not a valid canonical tool name.
///
/// Canonical names are ASCII snake_case: a lowercase letter or `_` first, then
/// lowercase letters, digits and `_`, 1 to [`MAX_NAME_LEN`] characters. That is
/// the intersection of what OpenAI, Anthropic, Gemini and MCP accept, so a
/// canonical name never needs escaping or aliasing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NameError {
    /// The name is empty.
    Empty,
    /// The name is longer than [`MAX_NAME_LEN`] bytes.
    TooLong {
        /// The name's length in bytes.
        len: usize,
    },
    /// The name contains whitespace.
    Whitespace,
    /// The name contains an upper-case ASCII letter.
    Uppercase,
    /// The name contains a character outside ASCII.
    NonAscii,
    /// The name contains an ASCII character a provider would refuse or escape.
    InvalidChar {
        /// The offending character.
        ch: char,
    },
    /// The name starts with a digit.
    LeadingDigit,
}

impl NameError {
    /// A short stable identifier of the rule that was broken.
    pub fn rule(&self) -> &'static str {
        match self {
            NameError::Empty => "empty",
            NameError::TooLong { .. } => "too_long",
            NameError::Whitespace => "whitespace",
            NameError::Uppercase => "uppercase",
            NameError::NonAscii => "non_ascii",
            NameError::InvalidChar { .. } => "invalid_char",
            NameError::LeadingDigit => "leading_digit",
        }
    }
}

impl fmt::Display for NameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NameError::Empty => f.write_str("a tool name cannot be empty"),
            NameError::TooLong { len } => write!(
                f,
                "a tool name has at most {MAX_NAME_LEN} characters, this one has {len}"
            ),
            NameError::Whitespace => f.write_str(
                "a tool name cannot contain whitespace; use `_` between words (snake_case)",
            ),
            NameError::Uppercase => {
                f.write_str("a tool name cannot contain upper-case letters; use snake_case")
            }
            NameError::NonAscii => {
                f.write_str("a tool name must be ASCII: lowercase letters, digits and `_` only")
            }
            NameError::InvalidChar { ch } => write!(
                f,
                "a tool name cannot contain `{ch}`: use lowercase letters, digits and `_` only"
            ),
            NameError::LeadingDigit => {
                f.write_str("a tool name must start with a lowercase letter or `_`, not a digit")
            }
        }
    }
}

/// Checks `name` against the canonical tool-name rule.
pub fn check_tool_name(name: &str) -> Result<(), NameError> {
    if name.is_empty() {
        return Err(NameError::Empty);
    }
    // Character classes first: they say more than the length does.
    for ch in name.chars() {
        if ch.is_whitespace() {
            return Err(NameError::Whitespace);
        }
        if !ch.is_ascii() {
            return Err(NameError::NonAscii);
        }
        if ch.is_ascii_uppercase() {
            return Err(NameError::Uppercase);
        }
        if !(ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '_') {
            return Err(NameError::InvalidChar { ch });
        }
    }
    if name.len() > MAX_NAME_LEN {
        return Err(NameError::TooLong { len: name.len() });
    }
    if name.as_bytes()[0].is_ascii_digit() {
        return Err(NameError::LeadingDigit);
    }
    Ok(())
}
