//! An event lent to an in-line subscriber ([`EventRef`]): the executor's
//! lifecycle events are read from what the call already holds, built into
//! an owned [`ToolEvent`] only for a subscriber that asks for one.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::fmt;
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

use serde_json::Value;

use super::{Digest, EventKind, Progress, ToolEvent};
use crate::error::ErrorClass;
use crate::ids::{CallName, RunId, ThreadId, ToolCallId};
use crate::output::{ArtifactRef, ToolMessage};
use crate::spec::ResourceBounds;

/// An event as an [in-line](super::Delivery::Inline) subscriber receives it
/// ([`EventSubscriber::on_event_ref`](super::EventSubscriber::on_event_ref)):
/// borrowed, for the time of the call.
///
/// Its accessors read the same fields as [`ToolEvent`]'s, and
/// [`to_event`](Self::to_event) gives the [`ToolEvent`] a queued subscriber
/// receives for the same step. The executor's lifecycle events
/// (`tool.started`, `tool.completed`, `tool.failed`, `tool.rejected`,
/// `tool.retrying`) are lent from what the call holds: making one copies no
/// id, allocates nothing and hashes nothing. The digests
/// ([`args_hash`](Self::args_hash), [`result_hash`](Self::result_hash)) are
/// computed when first asked for, once for every subscriber of the event. A
/// subscriber that keeps the event past the call takes
/// [`to_event`](Self::to_event).
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use tinyagents_tools::events::{Delivery, EventKind, EventRef, EventSubscriber, ToolEvent};
///
/// /// Counts completed calls: reads the kind of each event and nothing else.
/// #[derive(Default)]
/// struct Completed(AtomicU64);
///
/// impl EventSubscriber for Completed {
///     fn on_event(&self, event: &ToolEvent) {
///         self.on_event_ref(&EventRef::from(event));
///     }
///     fn on_event_ref(&self, event: &EventRef<'_>) {
///         if event.kind() == EventKind::Completed {
///             self.0.fetch_add(1, Ordering::Relaxed);
///         }
///     }
///     fn delivery(&self) -> Delivery {
///         Delivery::Inline
///     }
/// }
/// ```
pub struct EventRef<'a>(Repr<'a>);

enum Repr<'a> {
    /// An event that exists as a [`ToolEvent`] (progress, custom events,
    /// and lifecycle events also shared with a queued subscriber).
    Owned(&'a ToolEvent),
    /// A lifecycle event read from its call.
    Lent(&'a Lent<'a>),
}

/// A lifecycle event of one call, as the executor holds its parts.
pub(crate) struct Lent<'a> {
    pub(crate) kind: EventKind,
    pub(crate) run_id: &'a RunId,
    pub(crate) thread_id: &'a ThreadId,
    pub(crate) call_id: &'a ToolCallId,
    pub(crate) tool: &'a CallName,
    pub(crate) attempt: u32,
    pub(crate) timestamp: SystemTime,
    pub(crate) elapsed: Duration,
    pub(crate) waited: Duration,
    pub(crate) error: Option<(ErrorClass, &'static str)>,
    pub(crate) policy: Option<&'a Cow<'static, str>>,
    pub(crate) artifacts: &'a [ArtifactRef],
    pub(crate) args: Option<LentArgs<'a>>,
    pub(crate) result: Option<(&'a ToolMessage, bool)>,
    pub(crate) bounds: Option<ResourceBounds>,
    /// A tool's panic message (masked), for `tool.failed`.
    pub(crate) panic: Option<&'a str>,
    result_hash: OnceCell<Option<Digest>>,
}

/// Where a lent event's argument digest comes from.
#[derive(Clone, Copy)]
pub(crate) enum LentArgs<'a> {
    /// The arguments themselves, as the call holds them now, and the
    /// call's digest of them as they are now, made when first read (by a
    /// subscriber of this event or of an earlier one).
    Value(&'a Value, &'a OnceLock<Digest>),
    /// A digest the call made of them earlier.
    Digest(&'a Digest),
}

impl<'a> Lent<'a> {
    /// A lifecycle event of `kind` for the call of `ids` (its run, thread
    /// and call) and the `tool` name it spells, every optional part empty.
    pub(crate) fn new(
        kind: EventKind,
        ids: (&'a RunId, &'a ThreadId, &'a ToolCallId),
        tool: &'a CallName,
        attempt: u32,
        timestamp: SystemTime,
    ) -> Self {
        let (run_id, thread_id, call_id) = ids;
        Lent {
            kind,
            run_id,
            thread_id,
            call_id,
            tool,
            attempt,
            timestamp,
            elapsed: Duration::ZERO,
            waited: Duration::ZERO,
            error: None,
            policy: None,
            artifacts: &[],
            args: None,
            result: None,
            bounds: None,
            panic: None,
            result_hash: OnceCell::new(),
        }
    }

    fn args_hash(&self) -> Option<&'a Digest> {
        match self.args? {
            LentArgs::Value(value, digest) => Some(digest.get_or_init(|| Digest::of_text(value))),
            LentArgs::Digest(digest) => Some(digest),
        }
    }

    fn result_hash(&self) -> Option<&Digest> {
        self.result_hash
            .get_or_init(|| {
                let (message, json_copy) = self.result?;
                Some(Digest::of_message(message, json_copy))
            })
            .as_ref()
    }

    fn data(&self) -> Option<Value> {
        self.panic
            .map(|message| serde_json::json!({ "panic": message }))
    }

    /// The owned event a queued subscriber receives.
    pub(crate) fn to_event(&self) -> ToolEvent {
        ToolEvent {
            kind: self.kind,
            run_id: self.run_id.clone(),
            thread_id: self.thread_id.clone(),
            call_id: self.call_id.clone(),
            tool: self.tool.clone(),
            attempt: self.attempt,
            timestamp: self.timestamp,
            elapsed: Some(self.elapsed),
            waited: Some(self.waited),
            error_class: self.error.map(|(class, _)| class),
            error_kind: self.error.map(|(_, kind)| kind),
            policy: self.policy.cloned(),
            artifact_keys: self.artifacts.iter().map(|a| a.key.clone()).collect(),
            args_hash: self.args_hash().cloned(),
            result_hash: self.result_hash().cloned(),
            progress: None,
            name: None,
            data: self.data(),
            dropped: None,
            bounds: self.bounds,
        }
    }
}

impl<'a> From<&'a ToolEvent> for EventRef<'a> {
    fn from(event: &'a ToolEvent) -> Self {
        EventRef(Repr::Owned(event))
    }
}

impl<'a> EventRef<'a> {
    /// The event lent from its call's parts.
    pub(crate) fn lent(lent: &'a Lent<'a>) -> Self {
        EventRef(Repr::Lent(lent))
    }

    /// The event as an owned [`ToolEvent`]: the event itself when there is
    /// one, otherwise built now (ids copied, digests taken).
    pub fn to_event(&self) -> Cow<'a, ToolEvent> {
        match self.0 {
            Repr::Owned(event) => Cow::Borrowed(event),
            Repr::Lent(lent) => Cow::Owned(lent.to_event()),
        }
    }

    /// The step ([`ToolEvent::kind`]).
    pub fn kind(&self) -> EventKind {
        match self.0 {
            Repr::Owned(event) => event.kind,
            Repr::Lent(lent) => lent.kind,
        }
    }

    /// The run ([`ToolEvent::run_id`]).
    pub fn run_id(&self) -> &'a RunId {
        match self.0 {
            Repr::Owned(event) => &event.run_id,
            Repr::Lent(lent) => lent.run_id,
        }
    }

    /// The thread ([`ToolEvent::thread_id`]).
    pub fn thread_id(&self) -> &'a ThreadId {
        match self.0 {
            Repr::Owned(event) => &event.thread_id,
            Repr::Lent(lent) => lent.thread_id,
        }
    }

    /// The call ([`ToolEvent::call_id`]).
    pub fn call_id(&self) -> &'a ToolCallId {
        match self.0 {
            Repr::Owned(event) => &event.call_id,
            Repr::Lent(lent) => lent.call_id,
        }
    }

    /// The tool name as called ([`ToolEvent::tool`]).
    pub fn tool(&self) -> &'a CallName {
        match self.0 {
            Repr::Owned(event) => &event.tool,
            Repr::Lent(lent) => lent.tool,
        }
    }

    /// The attempt, 1 for the first ([`ToolEvent::attempt`]).
    pub fn attempt(&self) -> u32 {
        match self.0 {
            Repr::Owned(event) => event.attempt,
            Repr::Lent(lent) => lent.attempt,
        }
    }

    /// When the event was made ([`ToolEvent::timestamp`]).
    pub fn timestamp(&self) -> SystemTime {
        match self.0 {
            Repr::Owned(event) => event.timestamp,
            Repr::Lent(lent) => lent.timestamp,
        }
    }

    /// The call's own time so far ([`ToolEvent::elapsed`]).
    pub fn elapsed(&self) -> Option<Duration> {
        match self.0 {
            Repr::Owned(event) => event.elapsed,
            Repr::Lent(lent) => Some(lent.elapsed),
        }
    }

    /// The time the call waited so far ([`ToolEvent::waited`]).
    pub fn waited(&self) -> Option<Duration> {
        match self.0 {
            Repr::Owned(event) => event.waited,
            Repr::Lent(lent) => Some(lent.waited),
        }
    }

    /// The error class, for failures and refusals
    /// ([`ToolEvent::error_class`]).
    pub fn error_class(&self) -> Option<ErrorClass> {
        match self.0 {
            Repr::Owned(event) => event.error_class,
            Repr::Lent(lent) => lent.error.map(|(class, _)| class),
        }
    }

    /// The error kind ([`ToolEvent::error_kind`]).
    pub fn error_kind(&self) -> Option<&'static str> {
        match self.0 {
            Repr::Owned(event) => event.error_kind,
            Repr::Lent(lent) => lent.error.map(|(_, kind)| kind),
        }
    }

    /// The policy that refused the call ([`ToolEvent::policy`]).
    pub fn policy(&self) -> Option<&'a str> {
        match self.0 {
            Repr::Owned(event) => event.policy.as_deref(),
            Repr::Lent(lent) => lent.policy.map(|policy| &**policy),
        }
    }

    /// Keys of artifacts the call stored ([`ToolEvent::artifact_keys`]).
    pub fn artifact_keys(&self) -> impl ExactSizeIterator<Item = &'a str> + use<'a> {
        let (owned, lent): (&[String], &[ArtifactRef]) = match self.0 {
            Repr::Owned(event) => (&event.artifact_keys, &[]),
            Repr::Lent(lent) => (&[], lent.artifacts),
        };
        let keys = owned.iter().map(String::as_str);
        let lent = lent.iter().map(|a| a.key.as_str());
        Keys(keys, lent)
    }

    /// The digest of the canonical arguments ([`ToolEvent::args_hash`]),
    /// computed the first time any subscriber of this event asks.
    pub fn args_hash(&self) -> Option<&Digest> {
        match self.0 {
            Repr::Owned(event) => event.args_hash.as_ref(),
            Repr::Lent(lent) => lent.args_hash(),
        }
    }

    /// The digest of the canonical result ([`ToolEvent::result_hash`]),
    /// computed the first time any subscriber of this event asks.
    pub fn result_hash(&self) -> Option<&Digest> {
        match self.0 {
            Repr::Owned(event) => event.result_hash.as_ref(),
            Repr::Lent(lent) => lent.result_hash(),
        }
    }

    /// Progress, for `tool.progress` ([`ToolEvent::progress`]).
    pub fn progress(&self) -> Option<&'a Progress> {
        match self.0 {
            Repr::Owned(event) => event.progress.as_ref(),
            Repr::Lent(_) => None,
        }
    }

    /// A custom event's name ([`ToolEvent::name`]).
    pub fn name(&self) -> Option<&'a str> {
        match self.0 {
            Repr::Owned(event) => event.name.as_deref(),
            Repr::Lent(_) => None,
        }
    }

    /// A custom event's payload, or a failed call's panic message
    /// ([`ToolEvent::data`]).
    pub fn data(&self) -> Option<Cow<'a, Value>> {
        match self.0 {
            Repr::Owned(event) => event.data.as_ref().map(Cow::Borrowed),
            Repr::Lent(lent) => lent.data().map(Cow::Owned),
        }
    }

    /// How many events this subscriber lost ([`ToolEvent::dropped`]).
    pub fn dropped(&self) -> Option<u64> {
        match self.0 {
            Repr::Owned(event) => event.dropped,
            Repr::Lent(_) => None,
        }
    }

    /// The tool's resource bounds, on `tool.started`
    /// ([`ToolEvent::bounds`]).
    pub fn bounds(&self) -> Option<ResourceBounds> {
        match self.0 {
            Repr::Owned(event) => event.bounds,
            Repr::Lent(lent) => lent.bounds,
        }
    }
}

/// The keys of an event's artifacts, from either form.
struct Keys<A, B>(A, B);

impl<'a, A, B> Iterator for Keys<A, B>
where
    A: Iterator<Item = &'a str>,
    B: Iterator<Item = &'a str>,
{
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        self.0.next().or_else(|| self.1.next())
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let (a, b) = (self.0.size_hint().0, self.1.size_hint().0);
        (a + b, Some(a + b))
    }
}

impl<'a, A, B> ExactSizeIterator for Keys<A, B>
where
    A: ExactSizeIterator<Item = &'a str>,
    B: ExactSizeIterator<Item = &'a str>,
{
}

impl fmt::Debug for EventRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventRef")
            .field("kind", &self.kind())
            .field("call_id", self.call_id())
            .field("tool", self.tool())
            .field("attempt", &self.attempt())
            .finish_non_exhaustive()
    }
}
