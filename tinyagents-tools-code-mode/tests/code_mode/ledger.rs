//! The ledger the side-effecting test tools write to, one line per body
//! run.

use std::fmt::Display;
use std::sync::Mutex;

use tinyagents_tools::inject::InjectError;
use tinyagents_tools::prelude::*;
use tinyagents_tools::{Inject, ToolRuntime};

/// What the side-effecting tools did, one line per body run.
#[derive(Default)]
pub struct Ledger(Mutex<Vec<String>>);

impl Ledger {
    /// The lines written so far, oldest first.
    pub fn lines(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }

    /// Writes `line`.
    pub fn push(&self, line: String) {
        self.0.lock().unwrap().push(line);
    }
}

/// The run's ledger (a `Store<Ledger>`) as one call sees it: every line it
/// records ends with the call's id.
pub struct CallLedger {
    ledger: Store<Ledger>,
    call: ToolCallId,
}

impl<S, C: Send + Sync> Inject<S, C> for CallLedger {
    fn inject(state: &S, runtime: &ToolRuntime<C>) -> Result<Self, InjectError> {
        Ok(CallLedger {
            ledger: Store::inject(state, runtime)?,
            call: ToolCallId::inject(state, runtime)?,
        })
    }
}

impl CallLedger {
    /// Writes `what`, then the call's id.
    pub fn record(&self, what: impl Display) {
        self.ledger.push(format!("{what} {}", self.call.as_str()));
    }
}
