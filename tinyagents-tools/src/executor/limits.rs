//! Call limits (per turn, per run, per tool) and the counters they read.
//!
//! Counters live with what they count: the per-run counter is part of the
//! [`RunContext`](crate::RunContext) (so it lives exactly as long as the run
//! and is shared by every executor that serves it), the per-turn counter is
//! part of the [`Turn`](crate::Turn). A call is counted when it has passed
//! every argument check and is admitted; refused calls are not counted.
//! Admission reserves a slot in all three counters at once and gives every
//! slot back when one of them is full, so concurrent calls never overshoot.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::error::{ErrorClass, ToolError};
use crate::fasthash::NameMap;

/// How many calls may be admitted. `None` means unlimited.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CallLimits {
    /// Calls per turn (one [`Turn`](crate::Turn) value).
    pub per_turn: Option<u32>,
    /// Calls per run (one [`RunContext`](crate::RunContext)).
    pub per_run: Option<u32>,
    /// Calls per run of one tool, by canonical name.
    pub per_tool: HashMap<String, u32>,
    /// The class of the error a call gets at a limit: [`ErrorClass::Repair`]
    /// (the default: the model is told and may answer without the tool) or
    /// [`ErrorClass::Fatal`] (the run must stop).
    pub on_limit: ErrorClass,
}

impl Default for CallLimits {
    fn default() -> Self {
        CallLimits {
            per_turn: None,
            per_run: None,
            per_tool: HashMap::new(),
            on_limit: ErrorClass::Repair,
        }
    }
}

impl CallLimits {
    /// No limit.
    pub fn none() -> Self {
        CallLimits::default()
    }

    /// Sets the per-turn limit.
    pub fn per_turn(mut self, n: u32) -> Self {
        self.per_turn = Some(n);
        self
    }

    /// Sets the per-run limit.
    pub fn per_run(mut self, n: u32) -> Self {
        self.per_run = Some(n);
        self
    }

    /// Sets the per-run limit of the tool `name` (checked against the
    /// registry when the executor is built).
    pub fn per_tool(mut self, name: impl Into<String>, n: u32) -> Self {
        self.per_tool.insert(name.into(), n);
        self
    }

    /// Sets the class of the error at a limit.
    pub fn on_limit(mut self, class: ErrorClass) -> Self {
        self.on_limit = class;
        self
    }
}

/// A counter of admitted calls; the per-turn one lives in a
/// [`Turn`](crate::Turn).
#[derive(Debug, Default)]
pub struct CallCounter {
    calls: AtomicU32,
}

impl CallCounter {
    /// Calls admitted so far.
    pub fn get(&self) -> u32 {
        self.calls.load(Ordering::Acquire)
    }

    /// Takes a slot unless `limit` is reached.
    fn reserve(&self, limit: Option<u32>) -> bool {
        let n = self.calls.fetch_add(1, Ordering::AcqRel);
        if limit.is_some_and(|max| n >= max) {
            self.calls.fetch_sub(1, Ordering::AcqRel);
            return false;
        }
        true
    }

    fn release(&self) {
        self.calls.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The calls admitted in one run, in total and per tool. Part of every
/// [`RunContext`](crate::RunContext) (see
/// [`RunContext::call_counts`](crate::RunContext::call_counts)).
#[derive(Debug, Default)]
pub struct RunCallCounts {
    total: CallCounter,
    per_tool: Mutex<NameMap<String, u32>>,
}

impl RunCallCounts {
    /// Calls admitted in the run.
    pub fn total(&self) -> u32 {
        self.total.get()
    }

    /// Calls of the tool `name` (canonical) admitted in the run.
    pub fn of_tool(&self, name: &str) -> u32 {
        self.lock().get(name).copied().unwrap_or(0)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, NameMap<String, u32>> {
        self.per_tool.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Admits one call of `tool` or says which limit is full.
pub(crate) fn admit(
    limits: &CallLimits,
    turn: &CallCounter,
    run: &RunCallCounts,
    tool: &str,
) -> Result<(), ToolError> {
    let refuse = |which: &'static str, max: u32| {
        let scope = match which {
            "calls_per_turn" => Cow::Borrowed("this turn"),
            "calls_per_run" => Cow::Borrowed("this run"),
            _ => Cow::Owned(format!("the tool `{tool}` in this run")),
        };
        ToolError::limit_exceeded(
            limits.on_limit,
            which,
            format!(
                "the limit of {max} tool calls for {scope} is reached; answer without calling it again"
            ),
        )
    };
    if !turn.reserve(limits.per_turn) {
        return Err(refuse("calls_per_turn", limits.per_turn.unwrap_or(0)));
    }
    if !run.total.reserve(limits.per_run) {
        turn.release();
        return Err(refuse("calls_per_run", limits.per_run.unwrap_or(0)));
    }
    let tool_limit = if limits.per_tool.is_empty() {
        None
    } else {
        limits.per_tool.get(tool).copied()
    };
    let mut counts = run.lock();
    // One lookup for a tool already counted in this run (the common case).
    let n = match counts.get_mut(tool) {
        Some(n) => n,
        None => counts.entry(tool.to_owned()).or_insert(0),
    };
    if tool_limit.is_some_and(|max| *n >= max) {
        drop(counts);
        run.total.release();
        turn.release();
        return Err(refuse("calls_per_tool", tool_limit.unwrap_or(0)));
    }
    *n += 1;
    Ok(())
}
