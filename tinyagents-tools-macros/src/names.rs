//! The canonical tool-name rule, checked at compile time.
//!
//! The runtime crate applies the same rule when a tool registers
//! (`ToolName::new`); the two are written apart on purpose (this crate
//! cannot depend on the runtime), and `tests/schema/name_rules_agree.rs` checks
//! that both give the same verdict and the same message on a list of names.
//! This file depends on nothing but `core` so that test can include it.

/// The longest canonical tool name, in bytes.
pub const MAX_NAME_LEN: usize = 64;

/// Checks `name`: ASCII snake_case, a lowercase letter or `_` first, 1 to
/// [`MAX_NAME_LEN`] bytes. The error says which rule is broken.
pub fn check_tool_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("a tool name cannot be empty".into());
    }
    for ch in name.chars() {
        if ch.is_whitespace() {
            return Err(
                "a tool name cannot contain whitespace; use `_` between words (snake_case)".into(),
            );
        }
        if !ch.is_ascii() {
            return Err("a tool name must be ASCII: lowercase letters, digits and `_` only".into());
        }
        if ch.is_ascii_uppercase() {
            return Err("a tool name cannot contain upper-case letters; use snake_case".into());
        }
        if !(ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '_') {
            return Err(format!(
                "a tool name cannot contain `{ch}`: use lowercase letters, digits and `_` only"
            ));
        }
    }
    if name.len() > MAX_NAME_LEN {
        return Err(format!(
            "a tool name has at most {MAX_NAME_LEN} characters, this one has {}",
            name.len()
        ));
    }
    if name.as_bytes()[0].is_ascii_digit() {
        return Err("a tool name must start with a lowercase letter or `_`, not a digit".into());
    }
    Ok(())
}
