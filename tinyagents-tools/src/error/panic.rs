//! [`PanicMessage`]: the text of a tool's panic, kept out of sight.

use std::fmt;

/// The message of a tool's panic, kept as the source of its `panicked`
/// error (never shown to the model; masked before it reaches an event).
#[derive(Debug, Clone)]
pub struct PanicMessage(pub(crate) String);

impl PanicMessage {
    /// The message.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for PanicMessage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PanicMessage {}
