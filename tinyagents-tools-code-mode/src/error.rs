//! How a program failed: [`ProgramError`], the source of the `ToolError` a
//! `run_code` call answers with when its program did not return a value
//! (a program stopped at a bound answers `resource_exhausted` instead, and
//! one paused for an approval a [`ProgramPause`](crate::ProgramPause)).

use std::fmt;

/// Why a program ended without a value it could answer with. The
/// `ToolError` of the `run_code` call carries it as its source
/// (`std::error::Error::source`, then `downcast_ref`); the model reads the
/// same text as the error's message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProgramError {
    /// The program does not parse as the body of an async function (the
    /// error is `invalid_arguments`, on `/code`).
    #[error("the program does not parse: {at}: {message}")]
    Syntax {
        /// The parser's message.
        message: String,
        /// Where, in the program as written.
        at: Position,
    },
    /// The program parses only as text that closes the function body
    /// before its end and goes on outside it: refused before anything
    /// runs (the error is `invalid_arguments`, on `/code`).
    #[error(
        "the program does not parse as the body of a function: a `}}` closes the body before the program ends"
    )]
    ClosesEarly,
    /// The program threw a value it did not catch (a refused tool call's
    /// `ToolError` included).
    #[error("the program threw an error it did not catch: {error}{}", .at.map_or_else(String::new, |p| format!(" ({p})")))]
    Threw {
        /// `name: message` of the thrown error (or the thrown value as a
        /// string).
        error: String,
        /// Where it was thrown, when the engine knows (it does for an
        /// `Error`, not for a thrown string).
        at: Option<Position>,
    },
    /// The program's promise was still pending when nothing was left to
    /// run: it awaits something that can never settle, and it did not
    /// reach its `return`.
    #[error(
        "the program did not finish: it awaits a promise that nothing is left to settle, after {calls} tool call(s); it never reached its return"
    )]
    Unsettled {
        /// The tool calls it made before it stalled.
        calls: u32,
    },
    /// The program returned a value that JSON cannot carry as it is.
    #[error("the program's return value cannot be sent: {} is {what}", path_words(.path))]
    Uncarried {
        /// What could not be carried.
        what: Uncarried,
        /// Where, as a JSON Pointer into the returned value (`""` for the
        /// value itself, `/items/2` for the third element of `items`).
        path: String,
    },
}

/// `the value` or `the value at `/a/0``.
fn path_words(path: &str) -> String {
    if path.is_empty() {
        String::from("the value")
    } else {
        format!("the value at `{path}`")
    }
}

/// A place in the program as written: line and column, both from 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    /// The line, from 1.
    pub line: u32,
    /// The column, from 1.
    pub column: u32,
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)
    }
}

/// The deepest nesting of arrays and objects in a returned value, as the
/// executor bounds call arguments: an array or object inside this many
/// others is refused ([`Uncarried::TooDeep`], at its path).
pub const MAX_RESULT_DEPTH: usize = 64;

/// What in a returned value JSON cannot carry as it is: each is refused
/// rather than written as `null`, left out or emptied, as
/// `JSON.stringify` would.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Uncarried {
    /// An object or array that contains itself.
    Cycle,
    /// A `BigInt` (`JSON.stringify` throws on one).
    BigInt,
    /// An array or object nested deeper than [`MAX_RESULT_DEPTH`].
    TooDeep,
    /// A string holding an unpaired (lone) surrogate: not Unicode text.
    LoneSurrogate,
    /// An object with a key holding an unpaired surrogate.
    LoneSurrogateKey,
    /// A function (`JSON.stringify` leaves it out, or writes `null` in an
    /// array).
    Function,
    /// A symbol (as a function).
    Symbol,
    /// `undefined`, or an empty slot, in an array (`JSON.stringify` writes
    /// `null`).
    UndefinedInArray,
    /// `NaN` or an infinite number (`JSON.stringify` writes `null`).
    NonFinite,
    /// A built-in object `JSON.stringify` would write empty (a `Map`'s
    /// entries are not its properties) or as what it is not (a typed
    /// array as an object of indexes): its kind (`Map`, `Set`, `WeakMap`, `WeakSet`, `WeakRef`,
    /// `FinalizationRegistry`, `Promise`, `Error`, `RegExp`, `ArrayBuffer`,
    /// `SharedArrayBuffer`, `DataView`, `typed array`, `iterator`,
    /// `DisposableStack`, `AsyncDisposableStack`).
    BuiltIn(&'static str),
    /// A `Proxy`.
    Proxy,
}

impl fmt::Display for Uncarried {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Uncarried::Cycle => f.write_str("an object or array that contains itself (a cycle)"),
            Uncarried::BigInt => {
                f.write_str("a BigInt (JSON has none: return String(n) or Number(n))")
            }
            Uncarried::TooDeep => write!(
                f,
                "nested deeper than {MAX_RESULT_DEPTH} arrays and objects"
            ),
            Uncarried::LoneSurrogate => {
                f.write_str("a string with an unpaired surrogate (not Unicode text)")
            }
            Uncarried::LoneSurrogateKey => {
                f.write_str("an object with a key holding an unpaired surrogate (not Unicode text)")
            }
            Uncarried::Function => f.write_str("a function"),
            Uncarried::Symbol => f.write_str("a symbol"),
            Uncarried::UndefinedInArray => f.write_str(
                "`undefined` or an empty slot in an array (return null where you mean null)",
            ),
            Uncarried::NonFinite => f.write_str("NaN or an infinite number"),
            Uncarried::BuiltIn(kind) => write!(
                f,
                "a {kind}, whose contents JSON does not carry (return plain objects and arrays: Object.fromEntries(map), [...set])"
            ),
            Uncarried::Proxy => f.write_str("a Proxy (return the plain object behind it)"),
        }
    }
}
