//! Call limits (per turn, per run, per tool) and the counters they read.
//!
//! Counters live with what they count: the per-run counter is part of the
//! [`RunContext`](crate::RunContext) (so it lives exactly as long as the run
//! and is shared by every executor that serves it), the per-turn counter is
//! part of the [`Turn`](crate::Turn). A call is counted when it has passed
//! every argument check and is admitted; refused calls are not counted.
//! Admission reserves a slot in all three counters at once and gives every
//! slot back when one of them is full, so concurrent calls never overshoot.
//! A call refused after admission but before its tool ran (a `before_tool`
//! policy denied it, or the run was cancelled while it waited for a permit)
//! gives its slots back too: only calls that reach their tool, or that a
//! middleware answers in its place, spend a limit. While a policy decides,
//! the call holds its slots, so a concurrent call may meanwhile be refused
//! at the limit.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};

use crate::error::{ErrorClass, ToolError};
use crate::util::fasthash::NameMap;
use crate::util::names::same_name;

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
    per_tool: ToolCounts,
}

impl RunCallCounts {
    /// Calls admitted in the run.
    pub fn total(&self) -> u32 {
        self.total.get()
    }

    /// Calls of the tool `name` (canonical) admitted in the run.
    pub fn of_tool(&self, name: &str) -> u32 {
        if let Some(slot) = self.per_tool.find(name) {
            return slot.get();
        }
        let more = self.per_tool.lock();
        // A slot filled since the look above is found now, under the lock
        // that fills slots.
        match self.per_tool.find(name) {
            Some(slot) => slot.get(),
            None => more.get(name).copied().unwrap_or(0),
        }
    }
}

/// How many tools of one run get a counter of their own, counted without a
/// lock; a run that calls more distinct tools counts the rest in a map
/// under a lock.
const TOOL_SLOTS: usize = 16;

/// The per-tool counters of one run.
///
/// Slots are filled in order, each once, only while `more` is locked, so a
/// tool never gets two slots; reading a filled slot takes no lock. The
/// common call (a tool already called in this run) costs one atomic add.
#[derive(Debug, Default)]
struct ToolCounts {
    slots: [OnceLock<ToolSlot>; TOOL_SLOTS],
    /// The counts of tools beyond the slots; its lock also orders filling.
    more: Mutex<NameMap<String, u32>>,
}

#[derive(Debug)]
struct ToolSlot {
    name: Box<str>,
    calls: CallCounter,
}

impl ToolCounts {
    /// The slot of `tool`, when it has one.
    fn find(&self, tool: &str) -> Option<&CallCounter> {
        for slot in &self.slots {
            // Slots fill in order: the first empty one ends the search.
            let slot = slot.get()?;
            if same_name(&slot.name, tool) {
                return Some(&slot.calls);
            }
        }
        None
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, NameMap<String, u32>> {
        self.more.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes one call of `tool` unless `limit` is reached.
    fn reserve(&self, tool: &str, limit: Option<u32>) -> bool {
        if let Some(calls) = self.find(tool) {
            return calls.reserve(limit);
        }
        let mut more = self.lock();
        if let Some(calls) = self.find(tool) {
            return calls.reserve(limit);
        }
        // The first call of `tool` in this run: a free slot if one is left
        // (filled under the lock, so no other thread fills it).
        if let Some(free) = self.slots.iter().find(|slot| slot.get().is_none()) {
            let slot = free.get_or_init(|| ToolSlot {
                name: tool.into(),
                calls: CallCounter::default(),
            });
            return slot.calls.reserve(limit);
        }
        let n = match more.get_mut(tool) {
            Some(n) => n,
            None => more.entry(tool.to_owned()).or_insert(0),
        };
        if limit.is_some_and(|max| *n >= max) {
            return false;
        }
        *n += 1;
        true
    }

    /// Gives back one call of `tool` taken by [`reserve`](Self::reserve).
    fn release(&self, tool: &str) {
        if let Some(calls) = self.find(tool) {
            return calls.release();
        }
        let mut more = self.lock();
        if let Some(calls) = self.find(tool) {
            return calls.release();
        }
        if let Some(n) = more.get_mut(tool) {
            *n = n.saturating_sub(1);
        }
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
    if !run.per_tool.reserve(tool, tool_limit) {
        run.total.release();
        turn.release();
        return Err(refuse("calls_per_tool", tool_limit.unwrap_or(0)));
    }
    Ok(())
}

/// Gives back the slots [`admit`] took for a call of `tool` that was
/// refused before its tool ran.
pub(crate) fn release(turn: &CallCounter, run: &RunCallCounts, tool: &str) {
    run.per_tool.release(tool);
    run.total.release();
    turn.release();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits_per_tool(names: &[String], max: u32) -> CallLimits {
        names.iter().fold(CallLimits::none(), |limits, name| {
            limits.per_tool(name, max)
        })
    }

    #[test]
    fn tools_beyond_the_slots_are_counted_and_limited_too() {
        let names: Vec<String> = (0..TOOL_SLOTS + 5).map(|i| format!("tool_{i}")).collect();
        let limits = limits_per_tool(&names, 2);
        let (turn, run) = (CallCounter::default(), RunCallCounts::default());
        for _ in 0..3 {
            for name in &names {
                let _ = admit(&limits, &turn, &run, name);
            }
        }
        for name in &names {
            assert_eq!(run.of_tool(name), 2, "{name}");
        }
        assert_eq!(run.total(), 2 * names.len() as u32);
        assert_eq!(turn.get(), run.total(), "refusals gave their slots back");
        assert_eq!(run.of_tool("never_called"), 0);
    }

    #[test]
    fn a_released_call_frees_its_slot_in_every_counter() {
        let names: Vec<String> = (0..TOOL_SLOTS + 2).map(|i| format!("tool_{i}")).collect();
        let limits = limits_per_tool(&names, 1).per_run(100).per_turn(100);
        let (turn, run) = (CallCounter::default(), RunCallCounts::default());
        for name in &names {
            admit(&limits, &turn, &run, name).unwrap();
            assert!(
                admit(&limits, &turn, &run, name).is_err(),
                "{name} is at its limit"
            );
            release(&turn, &run, name);
            assert_eq!(run.of_tool(name), 0, "{name}");
            admit(&limits, &turn, &run, name).unwrap();
        }
        assert_eq!(run.total(), names.len() as u32);
        assert_eq!(turn.get(), names.len() as u32);
    }

    #[test]
    fn concurrent_first_calls_share_one_counter_per_tool() {
        // Threads released together race to make each tool's counter; a tool
        // that got two counters would admit two calls under a limit of one.
        let names: Vec<String> = (0..TOOL_SLOTS + 4).map(|i| format!("tool_{i}")).collect();
        let limits = limits_per_tool(&names, 1);
        for _ in 0..100 {
            let (turn, run) = (CallCounter::default(), RunCallCounts::default());
            let start = std::sync::Barrier::new(4);
            let admitted: u32 = std::thread::scope(|scope| {
                let threads: Vec<_> = (0..4)
                    .map(|_| {
                        scope.spawn(|| {
                            start.wait();
                            names
                                .iter()
                                .filter(|name| admit(&limits, &turn, &run, name).is_ok())
                                .count() as u32
                        })
                    })
                    .collect();
                threads.into_iter().map(|t| t.join().unwrap()).sum()
            });
            assert_eq!(admitted, names.len() as u32);
            for name in &names {
                assert_eq!(run.of_tool(name), 1, "{name}");
            }
            assert_eq!(run.total(), admitted);
        }
    }
}
