//! A lifecycle event of one call as the executor holds its parts, made
//! into the [`ToolEvent`] subscribers receive: borrowed for in-line ones
//! (its digests made from the call's values only when read), kept
//! ([`ToolEvent::into_owned`]) for queued ones.

use std::borrow::Cow;
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

use serde_json::Value;

use super::{Digest, EventKind, ToolEvent};
use crate::error::ErrorClass;
use crate::ids::{CallName, RunId, ThreadId, ToolCallId};
use crate::output::{ArtifactRef, ToolMessage};
use crate::spec::ResourceBounds;

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
    /// The result's digest, made when first read.
    result_hash: OnceLock<Digest<'static>>,
}

/// Where an event's argument digest comes from.
#[derive(Clone, Copy)]
pub(crate) enum LentArgs<'a> {
    /// The arguments themselves, as the call holds them now, and the
    /// call's digest of them as they are now, made when first read (by a
    /// subscriber of this event or of an earlier one).
    Value(&'a Value, &'a OnceLock<Digest<'static>>),
    /// A digest the call made of them earlier.
    Digest(&'a Digest<'static>),
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
            result_hash: OnceLock::new(),
        }
    }

    fn data(&self) -> Option<Value> {
        self.panic
            .map(|message| serde_json::json!({ "panic": message }))
    }

    /// The event subscribers receive, borrowed from this one.
    pub(crate) fn to_event(&self) -> ToolEvent<'_> {
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
            args_hash: self.args.map(|args| match args {
                LentArgs::Value(value, made) => Digest::of_borrowed(value, made),
                LentArgs::Digest(digest) => digest.clone(),
            }),
            result_hash: self.result.map(|(message, json_copy)| {
                Digest::of_borrowed_message(message, json_copy, &self.result_hash)
            }),
            progress: None,
            name: None,
            data: self.data(),
            dropped: None,
            bounds: self.bounds,
        }
    }
}
