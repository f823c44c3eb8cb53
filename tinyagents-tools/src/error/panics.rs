//! Panics inside tool calls: kept out of the process's panic output, their
//! message kept as the call error's [`PanicMessage`] source.
//!
//! A tool's panic message may hold anything the tool had in hand, secrets
//! included. The executor catches every panic of a call and answers it with
//! a `panicked` error; this module keeps the message from reaching stderr
//! through the process's panic hook on the way. [`install`] (run once, when
//! the first executor is built) puts a hook in front of the one already set:
//! a panic raised while a call's steps run on this thread ([`quietly`],
//! [`Quiet`]) is not shown; any other panic goes to the previous hook as
//! before. An application that sets its own hook after building an executor
//! replaces this one, and then sees tool panics again.
//!
//! The message itself travels with the call's error as a [`PanicMessage`]
//! source, and the executor masks it before it puts it in the call's
//! `tool.failed` event.

use std::any::Any;
use std::cell::Cell;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Once;
use std::task::{Context, Poll};

use crate::error::ToolError;

thread_local! {
    /// How many call steps this thread is running (nested steps count).
    static IN_CALL: Cell<u32> = const { Cell::new(0) };
}

static INSTALL: Once = Once::new();

/// Puts the quiet hook in front of the current panic hook, once per
/// process.
pub(crate) fn install() {
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if IN_CALL.with(Cell::get) == 0 {
                previous(info);
            }
        }));
    });
}

/// Leaves the step's mark on this thread when dropped (also on unwind).
struct Mark;

impl Mark {
    fn enter() -> Mark {
        IN_CALL.with(|n| n.set(n.get() + 1));
        Mark
    }
}

impl Drop for Mark {
    fn drop(&mut self) {
        IN_CALL.with(|n| n.set(n.get().saturating_sub(1)));
    }
}

/// Runs `step` as part of a call: a panic in it is not shown by the hook.
pub(crate) fn quietly<T>(step: impl FnOnce() -> T) -> T {
    let _mark = Mark::enter();
    step()
}

/// A future whose polls run as part of a call ([`quietly`]).
pub(crate) struct Quiet<F>(pub(crate) F);

impl<F: Future + Unpin> Future for Quiet<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let _mark = Mark::enter();
        Pin::new(&mut self.0).poll(cx)
    }
}

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

/// The `panicked` error for a caught panic, its message as the source.
pub(crate) fn panicked(payload: &(dyn Any + Send)) -> ToolError {
    let message = if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a payload that is not text".to_owned()
    };
    ToolError::panicked().with_source(PanicMessage(message))
}
