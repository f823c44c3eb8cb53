//! Each provider's tool-name rule, and reversible aliases for names that
//! break it.
//!
//! Canonical names ([`crate::ids::ToolName`]) satisfy every provider, so an export
//! only checks them. Names that come from elsewhere (tools imported from an
//! MCP server, say `files.read`) may not: a [`ToolNameMap`] gives each one a
//! provider-valid alias, maps the provider's calls back, and refuses two names
//! that would share an alias.

use std::collections::HashMap;
use std::fmt::Write as _;

use sha2::{Digest, Sha256};

use super::Provider;
use crate::call::ToolCall;

/// Why a name breaks a provider's rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProviderNameError {
    /// The name is empty.
    #[error("the name is empty")]
    Empty,
    /// The name is too long.
    #[error("the name has {len} characters, at most {max} are allowed")]
    TooLong {
        /// Its length in bytes.
        len: usize,
        /// The provider's maximum.
        max: usize,
    },
    /// A character the provider refuses.
    #[error("the name contains `{ch}`")]
    InvalidChar {
        /// The character.
        ch: char,
    },
    /// A first character the provider refuses.
    #[error("the name cannot start with `{ch}`")]
    InvalidStart {
        /// The character.
        ch: char,
    },
}

/// A character class.
type CharRule = fn(char) -> bool;

/// The provider's longest name, its allowed characters and allowed first
/// characters.
fn rule(provider: Provider) -> (usize, CharRule, CharRule) {
    fn openai(c: char) -> bool {
        c.is_ascii_alphanumeric() || c == '_' || c == '-'
    }
    fn gemini(c: char) -> bool {
        c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-')
    }
    fn gemini_start(c: char) -> bool {
        c.is_ascii_alphabetic() || c == '_'
    }
    fn mcp(c: char) -> bool {
        c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')
    }
    match provider {
        Provider::OpenAiChat | Provider::OpenAiResponses | Provider::Anthropic => {
            (64, openai, openai)
        }
        Provider::Gemini => (64, gemini, gemini_start),
        Provider::Mcp => (128, mcp, mcp),
    }
}

/// Checks `name` against the provider's rule: OpenAI and Anthropic
/// `^[a-zA-Z0-9_-]{1,64}$`; Gemini a letter or `_` first, then
/// `[A-Za-z0-9_.:-]`, at most 64; MCP `[A-Za-z0-9_.-]`, 1 to 128.
pub fn check_provider_name(provider: Provider, name: &str) -> Result<(), ProviderNameError> {
    let (max, allowed, start) = rule(provider);
    let Some(first) = name.chars().next() else {
        return Err(ProviderNameError::Empty);
    };
    if let Some(ch) = name.chars().find(|c| !allowed(*c)) {
        return Err(ProviderNameError::InvalidChar { ch });
    }
    if !start(first) {
        return Err(ProviderNameError::InvalidStart { ch: first });
    }
    if name.len() > max {
        return Err(ProviderNameError::TooLong {
            len: name.len(),
            max,
        });
    }
    Ok(())
}

/// A name the provider accepts, made from `name`: itself when valid;
/// otherwise each refused character becomes `_`, a refused first character
/// gets a `_` before it, and a name still too long keeps its start and ends in
/// `_` and 8 hex digits of a hash of the whole name. Returns `None` for an
/// empty name. Deterministic, but not reversible on its own: keep the
/// mapping (see [`ToolNameMap`]).
pub fn provider_alias(provider: Provider, name: &str) -> Option<String> {
    if name.is_empty() {
        return None;
    }
    if check_provider_name(provider, name).is_ok() {
        return Some(name.to_owned());
    }
    let (max, allowed, start) = rule(provider);
    let mut alias: String = name
        .chars()
        .map(|c| if allowed(c) { c } else { '_' })
        .collect();
    if !alias.starts_with(start) {
        alias.insert(0, '_');
    }
    if alias.len() > max {
        let digest = Sha256::digest(name.as_bytes());
        let mut suffix = String::from("_");
        for byte in &digest[..4] {
            let _ = write!(suffix, "{byte:02x}");
        }
        alias.truncate(max - suffix.len());
        alias.push_str(&suffix);
    }
    Some(alias)
}

/// Why a [`ToolNameMap`] could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NameMapError {
    /// Two names would be sent to the provider under one name.
    #[error("`{first}` and `{second}` would both be sent to {provider} as `{alias}`")]
    Collision {
        /// The provider.
        provider: Provider,
        /// The shared provider name.
        alias: String,
        /// The first name.
        first: String,
        /// The second name.
        second: String,
    },
    /// A name appears twice.
    #[error("the name `{0}` appears twice")]
    Duplicate(String),
    /// An empty name.
    #[error("a tool name is empty")]
    Empty,
}

/// A two-way table between tool names and the names one provider sees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolNameMap {
    provider: Provider,
    to_provider: HashMap<String, String>,
    to_name: HashMap<String, String>,
}

impl ToolNameMap {
    /// Builds the table for `names`, refusing duplicates and collisions.
    pub fn new<'a>(
        provider: Provider,
        names: impl IntoIterator<Item = &'a str>,
    ) -> Result<Self, NameMapError> {
        let mut map = ToolNameMap {
            provider,
            to_provider: HashMap::new(),
            to_name: HashMap::new(),
        };
        for name in names {
            let alias = provider_alias(provider, name).ok_or(NameMapError::Empty)?;
            if map.to_provider.contains_key(name) {
                return Err(NameMapError::Duplicate(name.to_owned()));
            }
            if let Some(first) = map.to_name.get(&alias) {
                return Err(NameMapError::Collision {
                    provider,
                    alias,
                    first: first.clone(),
                    second: name.to_owned(),
                });
            }
            map.to_provider.insert(name.to_owned(), alias.clone());
            map.to_name.insert(alias, name.to_owned());
        }
        Ok(map)
    }

    /// The provider the table is for.
    pub fn provider(&self) -> Provider {
        self.provider
    }

    /// The name the provider sees for `name`.
    pub fn provider_name(&self, name: &str) -> Option<&str> {
        self.to_provider.get(name).map(String::as_str)
    }

    /// The tool name behind a provider name.
    pub fn tool_name(&self, provider_name: &str) -> Option<&str> {
        self.to_name.get(provider_name).map(String::as_str)
    }

    /// True when `name` is sent under another name.
    pub fn is_aliased(&self, name: &str) -> bool {
        self.provider_name(name).is_some_and(|alias| alias != name)
    }

    /// Gives a provider's call the tool name behind the name it used (a name
    /// the table does not know is left as called, for the executor to refuse).
    pub fn resolve_call(&self, mut call: ToolCall) -> ToolCall {
        if let Some(name) = self.tool_name(&call.name) {
            call.name = name.into();
        }
        call
    }
}
