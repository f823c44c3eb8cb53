//! What an event is: its kind ([`EventKind`]) and what it carries
//! ([`ToolEvent`], with [`Progress`] for `tool.progress`).

use std::borrow::Cow;
use std::cell::Cell;
use std::fmt;
use std::time::{Duration, SystemTime};

use serde::Serialize;
use serde_json::Value;
use tokio::time::Instant;

use super::Digest;
use crate::error::ErrorClass;
use crate::ids::{CallName, RunId, ThreadId, ToolCallId};
use crate::spec::ResourceBounds;

/// Which step of a call an event reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[non_exhaustive]
pub enum EventKind {
    /// `tool.started`: the call passed every check and is about to run.
    #[serde(rename = "tool.started")]
    Started,
    /// `tool.completed`: the call produced a result.
    #[serde(rename = "tool.completed")]
    Completed,
    /// `tool.failed`: the call ran and failed.
    #[serde(rename = "tool.failed")]
    Failed,
    /// `tool.rejected`: the call was refused before it ran.
    #[serde(rename = "tool.rejected")]
    Rejected,
    /// `tool.retrying`: an attempt failed and another follows.
    #[serde(rename = "tool.retrying")]
    Retrying,
    /// `tool.progress`: the tool reported progress through its stream writer.
    #[serde(rename = "tool.progress")]
    Progress,
    /// `tool.custom`: the tool emitted an event of its own.
    #[serde(rename = "tool.custom")]
    Custom,
    /// `tool.events_dropped`: events were dropped for this subscriber because
    /// its queue was full; [`ToolEvent::dropped`] says how many. Delivered
    /// only to the subscriber that lost them, before the next event it
    /// receives or as soon as its queue runs empty. Its ids are those of a
    /// neighbouring event of that subscriber; the lost events may belong to
    /// other calls.
    #[serde(rename = "tool.events_dropped")]
    EventsDropped,
}

impl EventKind {
    /// Every kind, in declaration order.
    pub const ALL: [EventKind; 8] = [
        EventKind::Started,
        EventKind::Completed,
        EventKind::Failed,
        EventKind::Rejected,
        EventKind::Retrying,
        EventKind::Progress,
        EventKind::Custom,
        EventKind::EventsDropped,
    ];

    /// The event's wire name (`tool.started`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Started => "tool.started",
            EventKind::Completed => "tool.completed",
            EventKind::Failed => "tool.failed",
            EventKind::Rejected => "tool.rejected",
            EventKind::Retrying => "tool.retrying",
            EventKind::Progress => "tool.progress",
            EventKind::Custom => "tool.custom",
            EventKind::EventsDropped => "tool.events_dropped",
        }
    }

    /// This kind's bit in a subscriber's interest mask.
    pub(super) const fn bit(self) -> u16 {
        1 << self as u16
    }
}

impl fmt::Display for EventKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Progress reported by a running tool.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Progress {
    /// Work done so far.
    pub progress: f64,
    /// Total work, when known.
    pub total: Option<f64>,
    /// A short message.
    pub message: Option<String>,
}

/// One lifecycle event.
///
/// An [in-line](super::Delivery::Inline) subscriber receives it borrowed
/// (`'a` is the time of the delivery): its digests are then made from the
/// call's own values, and only if read. A queued subscriber receives a
/// `ToolEvent<'static>`; [`into_owned`](Self::into_owned) makes one from any
/// event, to keep it past the delivery.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ToolEvent<'a> {
    /// The step.
    pub kind: EventKind,
    /// The run.
    pub run_id: RunId,
    /// The thread.
    pub thread_id: ThreadId,
    /// The call.
    pub call_id: ToolCallId,
    /// The tool name as called (compares with and prints as a string).
    pub tool: CallName,
    /// The attempt (1 for the first).
    pub attempt: u32,
    /// When the event was made, on the wall clock. The call's first date
    /// is counted on the call clock from a reading of the wall clock within
    /// 10 ms of it (so within microseconds of reading it then, unless the
    /// wall clock was set in between), and its later events count on from
    /// that date, so a call's dates and its own times move together.
    pub timestamp: SystemTime,
    /// The call's own time so far: since it was received, less
    /// [`waited`](Self::waited) (the same measure as
    /// [`ToolResult::elapsed`](crate::ToolResult::elapsed)). Set on the
    /// executor's lifecycle events.
    pub elapsed: Option<Duration>,
    /// Time the call spent waiting so far: in its batch's queue, for a
    /// concurrency permit and in `before_tool` middleware such as an
    /// approver (as [`ToolResult::waited`](crate::ToolResult::waited)). Set
    /// on the executor's lifecycle events.
    pub waited: Option<Duration>,
    /// The error class, for failures and refusals.
    pub error_class: Option<ErrorClass>,
    /// The error kind (`invalid_arguments`, `timeout`, ...).
    pub error_kind: Option<&'static str>,
    /// The policy that refused the call, for refusals.
    pub policy: Option<Cow<'static, str>>,
    /// Keys of artifacts the call stored.
    pub artifact_keys: Vec<String>,
    /// SHA-256 of the canonical arguments (stable key order), hex, computed
    /// when first read.
    pub args_hash: Option<Digest<'a>>,
    /// SHA-256 of the canonical result, hex, computed when first read.
    pub result_hash: Option<Digest<'a>>,
    /// Progress, for `tool.progress`.
    pub progress: Option<Progress>,
    /// A custom event's name, for `tool.custom`.
    pub name: Option<String>,
    /// A custom event's payload (redacted before delivery).
    pub data: Option<Value>,
    /// How many events this subscriber lost, for `tool.events_dropped`.
    pub dropped: Option<u64>,
    /// The tool's resource bounds, on `tool.started` when it declares any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bounds: Option<ResourceBounds>,
}

impl ToolEvent<'_> {
    /// The same event, kept past its delivery (its digests keep what they
    /// digest: written down, not hashed, if they were borrowed).
    pub fn into_owned(self) -> ToolEvent<'static> {
        ToolEvent {
            kind: self.kind,
            run_id: self.run_id,
            thread_id: self.thread_id,
            call_id: self.call_id,
            tool: self.tool,
            attempt: self.attempt,
            timestamp: self.timestamp,
            elapsed: self.elapsed,
            waited: self.waited,
            error_class: self.error_class,
            error_kind: self.error_kind,
            policy: self.policy,
            artifact_keys: self.artifact_keys,
            args_hash: self.args_hash.map(Digest::into_owned),
            result_hash: self.result_hash.map(Digest::into_owned),
            progress: self.progress,
            name: self.name,
            data: self.data,
            dropped: self.dropped,
            bounds: self.bounds,
        }
    }
}

impl ToolEvent<'static> {
    /// An event of `kind` for one call, every optional field empty, dated
    /// now.
    pub fn new(
        kind: EventKind,
        run_id: RunId,
        thread_id: ThreadId,
        call_id: ToolCallId,
        tool: impl Into<CallName>,
        attempt: u32,
    ) -> Self {
        let timestamp = SystemTime::now();
        let tool = tool.into();
        ToolEvent {
            kind,
            run_id,
            thread_id,
            call_id,
            tool,
            attempt,
            timestamp,
            elapsed: None,
            waited: None,
            error_class: None,
            error_kind: None,
            policy: None,
            artifact_keys: Vec::new(),
            args_hash: None,
            result_hash: None,
            progress: None,
            name: None,
            data: None,
            dropped: None,
            bounds: None,
        }
    }
}

/// How far (on the call clock) from a thread's last reading of both clocks
/// the wall clock is counted on from it instead of read again. The two
/// clocks run at one rate (the system slews both alike), so a date counted
/// on is the wall clock's own unless the wall clock was set (stepped) in
/// between; such a step shows in the dates within this long.
const WALL_COUNTED_ON: Duration = Duration::from_millis(10);

/// The most a reading of both clocks may take to be counted on: the wall
/// clock is read between two readings of the call clock and paired with
/// their midpoint, so a date counted on from it is off by at most half of
/// this (a thread preempted between the readings makes one that is not
/// kept).
const READING_AT_MOST: Duration = Duration::from_micros(20);

thread_local! {
    /// This thread's last reading of both clocks: the call clock, then the
    /// wall clock.
    static LAST_READING: Cell<Option<(Instant, SystemTime)>> = const { Cell::new(None) };
}

/// The wall-clock time at `at`, a reading of the call clock (tokio's) made
/// no later than now. Counted on from this thread's last reading of both
/// clocks when `at` is within [`WALL_COUNTED_ON`] of it (a reading of the
/// clock costs about as much as the rest of an event), from a new reading
/// otherwise.
pub(crate) fn wall_clock_at(at: Instant) -> SystemTime {
    LAST_READING.with(|last| {
        if let Some(counted) = last.get().and_then(|reading| counted_on(reading, at)) {
            return counted;
        }
        let before = Instant::now();
        let wall = SystemTime::now();
        let taken = before.elapsed();
        let mid = before + taken / 2;
        if taken <= READING_AT_MOST {
            last.set(Some((mid, wall)));
        }
        wall.checked_sub(mid.saturating_duration_since(at))
            .unwrap_or(wall)
    })
}

/// The wall-clock time at `at` counted on from a reading of both clocks,
/// `(then, wall)`; `None` when `at` is further than [`WALL_COUNTED_ON`]
/// from `then`, either way.
fn counted_on((then, wall): (Instant, SystemTime), at: Instant) -> Option<SystemTime> {
    if at >= then {
        let ahead = at - then;
        (ahead <= WALL_COUNTED_ON).then(|| wall.checked_add(ahead))?
    } else {
        let behind = then - at;
        (behind <= WALL_COUNTED_ON).then(|| wall.checked_sub(behind))?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_earlier_reading_of_the_call_clock_is_dated_back() {
        let slack = Duration::from_millis(5);
        let earlier = Instant::now();
        let wall_then = SystemTime::now();
        std::thread::sleep(Duration::from_millis(20));
        let dated = wall_clock_at(earlier);
        let diff =
            |a: SystemTime, b: SystemTime| a.duration_since(b).unwrap_or_else(|e| e.duration());
        assert!(diff(dated, wall_then) < slack, "{dated:?} {wall_then:?}");
        assert!(wall_clock_at(Instant::now()) > dated);
    }

    #[test]
    fn the_wall_clock_is_counted_on_from_a_near_reading_only() {
        let then = Instant::now();
        let wall = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        let ms = Duration::from_millis;
        assert_eq!(counted_on((then, wall), then), Some(wall));
        assert_eq!(counted_on((then, wall), then + ms(4)), Some(wall + ms(4)));
        assert_eq!(counted_on((then + ms(4), wall), then), Some(wall - ms(4)));
        assert_eq!(
            counted_on((then, wall), then + WALL_COUNTED_ON),
            Some(wall + WALL_COUNTED_ON)
        );
        let past = WALL_COUNTED_ON + Duration::from_nanos(1);
        assert_eq!(counted_on((then, wall), then + past), None);
        assert_eq!(counted_on((then + past, wall), then), None);
    }

    #[test]
    fn dates_counted_on_agree_with_the_wall_clock() {
        // Within half of READING_AT_MOST of the wall clock; the slack is
        // for a thread preempted between the readings below.
        let slack = Duration::from_millis(1);
        for _ in 0..10_000 {
            let before = SystemTime::now();
            let dated = wall_clock_at(Instant::now());
            let after = SystemTime::now();
            assert!(
                dated + slack >= before && dated <= after + slack,
                "{before:?} {dated:?} {after:?}"
            );
        }
    }
}
