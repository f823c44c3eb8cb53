//! The state one program run shares between the sandbox and the functions
//! the program calls: why it stopped (a [`Limit`] it reached, or a pause),
//! its deadline, what it printed, and the `run_code` call's cancellation.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// A bound the sandbox enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Limit {
    /// Its own running time ([`SandboxLimits::max_time`](crate::SandboxLimits::max_time)).
    Time,
    /// Its heap ([`SandboxLimits::max_memory`](crate::SandboxLimits::max_memory)).
    Memory,
    /// Its stack ([`SandboxLimits::max_stack`](crate::SandboxLimits::max_stack)).
    Stack,
    /// What it printed and returned ([`SandboxLimits::max_output`](crate::SandboxLimits::max_output)).
    Output,
    /// Its number of tool calls ([`SandboxLimits::max_calls`](crate::SandboxLimits::max_calls)).
    Calls,
}

impl Limit {
    /// The resource's name, as errors and events spell it.
    pub(crate) fn resource(self) -> &'static str {
        match self {
            Limit::Time => "time",
            Limit::Memory => "memory",
            Limit::Stack => "stack",
            Limit::Output => "output",
            Limit::Calls => "calls",
        }
    }
}

/// Why the host stopped the program from inside (read by the interrupt
/// handler, which then ends it with an error the program cannot catch).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    Running,
    Paused,
    Limit(Limit),
}

/// What the program's run shares with the functions it calls.
pub(crate) struct Shared<H> {
    pub(crate) host: Rc<RefCell<H>>,
    pub(crate) stop: Rc<Cell<Stop>>,
    /// When the program's own running time is up; each tool call moves it
    /// on by the call's duration.
    pub(crate) deadline: Rc<Cell<Instant>>,
    pub(crate) printed: Rc<RefCell<String>>,
    /// The `run_code` call was cancelled (or timed out): the program stops
    /// as at its time limit.
    pub(crate) cancelled: Arc<AtomicBool>,
}
