//! A tool fn's own error types, turned into a classified [`ToolError`].
//!
//! A tool returning `Result<T, E>` may use for `E`:
//! - [`ToolError`] itself, `String` or `&str` (class `repair`),
//!   `std::io::Error` (class by its kind), or any type with a
//!   `From<E> for ToolError` impl of your own (it decides everything);
//! - any `E: std::error::Error + Send + Sync + 'static`, such as a
//!   `thiserror` enum: class `repair` unless `E` implements [`ClassifyError`];
//! - `Box<dyn std::error::Error + Send + Sync>` (a boxed `ToolError` or
//!   `std::io::Error` keeps its class, anything else is `repair`);
//! - `anyhow::Error`, or any other type that converts into
//!   `Box<dyn std::error::Error + Send + Sync>` (class `repair`).
//!
//! The model reads the error's `Display` text only (never its `Debug` form
//! nor its source chain), cut to [`MAX_ERROR_TEXT`] bytes; the error itself
//! is kept as the [`ToolError`]'s source for the application.

use std::error::Error as StdError;

use super::{ErrorClass, ErrorKind, ToolError};

/// The most bytes of an error's `Display` text the model reads; longer text
/// is cut at a character boundary and ends with `…`.
pub const MAX_ERROR_TEXT: usize = 500;

/// Chooses the [`ErrorClass`] of your own error type when a tool returns it.
///
/// Without it an error type of yours is class [`ErrorClass::Repair`]: the
/// model reads its message and may call differently.
///
/// ```
/// use tinyagents_tools::ErrorClass;
/// use tinyagents_tools::error::ClassifyError;
///
/// #[derive(Debug)]
/// enum FetchError { Timeout, NotFound }
///
/// impl std::fmt::Display for FetchError {
///     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
///         f.write_str(match self { FetchError::Timeout => "timed out", FetchError::NotFound => "no such page" })
///     }
/// }
/// impl std::error::Error for FetchError {}
///
/// impl ClassifyError for FetchError {
///     fn error_class(&self) -> ErrorClass {
///         match self {
///             FetchError::Timeout => ErrorClass::Retry,
///             FetchError::NotFound => ErrorClass::Repair,
///         }
///     }
/// }
/// ```
pub trait ClassifyError {
    /// The class of this error value.
    fn error_class(&self) -> ErrorClass;
}

/// `text` cut to at most [`MAX_ERROR_TEXT`] bytes at a character boundary.
fn bounded(mut text: String) -> String {
    if text.len() > MAX_ERROR_TEXT {
        let mut end = MAX_ERROR_TEXT - '…'.len_utf8();
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}

impl ToolError {
    /// A tool error of `class` from an error of your own: its `Display`
    /// text (bounded to [`MAX_ERROR_TEXT`] bytes) is the message, the error
    /// is kept as the source.
    pub fn from_error(err: impl StdError + Send + Sync + 'static, class: ErrorClass) -> Self {
        let message = bounded(err.to_string());
        ToolError::new(class, ErrorKind::Tool, message).with_source(err)
    }

    /// A tool error of `class` from a boxed error, as [`ToolError::from_error`].
    pub fn from_boxed(err: Box<dyn StdError + Send + Sync>, class: ErrorClass) -> Self {
        let message = bounded(err.to_string());
        let mut error = ToolError::new(class, ErrorKind::Tool, message);
        error.0.source = Some(err.into());
        error
    }
}

impl From<Box<dyn StdError + Send + Sync>> for ToolError {
    /// A boxed [`ToolError`] or `std::io::Error` keeps its own conversion;
    /// any other error is class [`ErrorClass::Repair`].
    fn from(err: Box<dyn StdError + Send + Sync>) -> Self {
        let err = match err.downcast::<ToolError>() {
            Ok(tool_error) => return *tool_error,
            Err(err) => err,
        };
        match err.downcast::<std::io::Error>() {
            Ok(io) => ToolError::from(*io),
            Err(err) => ToolError::from_boxed(err, ErrorClass::Repair),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Long(String);
    impl std::fmt::Display for Long {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(&self.0)
        }
    }
    impl StdError for Long {}

    #[test]
    fn a_long_error_text_is_cut_at_a_character_boundary() {
        let err = ToolError::from_error(Long("é".repeat(400)), ErrorClass::Retry);
        assert!(
            err.message().len() <= MAX_ERROR_TEXT,
            "{}",
            err.message().len()
        );
        assert!(err.message().ends_with('…'));
        assert_eq!(err.class(), ErrorClass::Retry);
        assert!(err.source().is_some());
    }

    #[test]
    fn a_boxed_tool_error_or_io_error_keeps_its_class() {
        let boxed: Box<dyn StdError + Send + Sync> = Box::new(ToolError::retry("busy"));
        let err = ToolError::from(boxed);
        assert_eq!((err.class(), err.message()), (ErrorClass::Retry, "busy"));

        let io = std::io::Error::new(std::io::ErrorKind::TimedOut, "/secret/path");
        let err = ToolError::from(Box::new(io) as Box<dyn StdError + Send + Sync>);
        assert_eq!(err.class(), ErrorClass::Retry);
        assert!(!err.message().contains("/secret/path"), "{}", err.message());

        let other: Box<dyn StdError + Send + Sync> = "plain".into();
        let err = ToolError::from(other);
        assert_eq!((err.class(), err.message()), (ErrorClass::Repair, "plain"));
    }
}
