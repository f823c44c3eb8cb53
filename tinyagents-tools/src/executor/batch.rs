//! A turn's calls: bounded concurrency, `sequential` exclusion, results in
//! call order, whether the calls arrive together or one by one while the
//! model is still writing.
//!
//! At most `max_concurrency` calls are in flight; the rest wait, in call
//! order, without being started (so a large batch holds a bounded number of
//! call futures). A `sequential` tool takes the turn's lock exclusively
//! while every other call holds it shared, so it never overlaps another call
//! of the turn; the lock is fair and calls ask for it in call order, so they
//! still start in order.
//!
//! Every call of a batch is received when the batch is; a streamed call is
//! received when it arrives. The time a call waits for its place among the
//! calls in flight is part of its [`waited`](crate::ToolResult::waited), not
//! of its `elapsed` (read only for the calls that can wait: those beyond
//! the first `max_concurrency` of a batch, and streamed calls that arrived
//! while every place was taken).

use std::collections::VecDeque;
use std::pin::pin;

use futures_util::StreamExt;
use futures_util::stream::{FuturesUnordered, Stream};
use tokio::sync::RwLock;
use tokio::time::Instant;

use crate::call::ToolCall;
use crate::error::ToolError;
use crate::executor::ToolExecutor;
use crate::output::ToolResult;
use crate::runtime::RunContext;
use crate::runtime::Turn;

/// One call's place among the calls of its turn.
#[derive(Clone, Copy)]
pub(crate) struct Place<'b> {
    /// Held shared by every call of the turn, exclusively by a
    /// `sequential` one.
    pub(crate) lock: &'b RwLock<()>,
    /// When the call was received, on tokio's clock.
    pub(crate) received: Instant,
    /// Whether the call may have waited for its place (false for the calls
    /// that start as they are received).
    pub(crate) queued: bool,
}

pub(crate) async fn execute_batch<S, C>(
    executor: &ToolExecutor<S, C>,
    run: &RunContext<C>,
    turn: &Turn,
    calls: Vec<ToolCall>,
) -> Vec<ToolResult>
where
    S: Send + Sync + 'static,
    C: Send + Sync + 'static,
{
    let ids: Vec<_> = calls
        .iter()
        .map(|c| (c.id.clone(), c.name.clone()))
        .collect();
    // A result is boxed into its slot when it comes: a batch keeps a
    // pointer per call waiting to answer, not room for a whole result.
    let mut slots: Vec<Option<Box<ToolResult>>> =
        std::iter::repeat_with(|| None).take(calls.len()).collect();
    let lock = &RwLock::new(());
    let received = Instant::now();
    let bound = executor.config.max_concurrency.get();
    let mut in_flight = futures_util::stream::iter(calls.into_iter().enumerate())
        .map(|(i, call)| async move {
            let place = Place {
                lock,
                received,
                queued: i >= bound,
            };
            (i, executor.execute_in(run, turn, call, Some(place)).await)
        })
        .buffer_unordered(bound);
    while let Some((i, result)) = in_flight.next().await {
        slots[i] = Some(Box::new(result));
    }
    answers(slots, ids)
}

/// The results in call order, one per call. `execute_in` always answers;
/// an empty slot only guards the promise of one result per call.
fn answers(
    slots: Vec<Option<Box<ToolResult>>>,
    ids: Vec<(crate::ids::ToolCallId, crate::ids::CallName)>,
) -> Vec<ToolResult> {
    slots
        .into_iter()
        .zip(ids)
        .map(|(slot, (id, name))| {
            slot.map_or_else(
                || ToolResult::from_error(id, name, ToolError::panicked(), Default::default()),
                |result| *result,
            )
        })
        .collect()
}

/// Runs a turn's calls as they arrive from `calls`: each starts the moment
/// it arrives (when a place is free, else as soon as one is), while later
/// ones are still being written; the results come back in call order when
/// the stream has ended and every call is answered.
pub(crate) async fn execute_stream<S, C, St>(
    executor: &ToolExecutor<S, C>,
    run: &RunContext<C>,
    turn: &Turn,
    calls: St,
) -> Vec<ToolResult>
where
    S: Send + Sync + 'static,
    C: Send + Sync + 'static,
    St: Stream<Item = ToolCall> + Send,
{
    let lock = &RwLock::new(());
    let bound = executor.config.max_concurrency.get();
    let mut calls = pin!(calls.fuse());
    let mut ids = Vec::new();
    let mut slots: Vec<Option<Box<ToolResult>>> = Vec::new();
    // Calls received while every place was taken, in call order.
    let mut waiting: VecDeque<(usize, ToolCall, Instant)> = VecDeque::new();
    let mut in_flight = FuturesUnordered::new();
    let mut ended = false;
    let start = |i: usize, call: ToolCall, received: Instant, queued: bool| async move {
        let place = Place {
            lock,
            received,
            queued,
        };
        (i, executor.execute_in(run, turn, call, Some(place)).await)
    };
    loop {
        while in_flight.len() < bound
            && let Some((i, call, received)) = waiting.pop_front()
        {
            in_flight.push(start(i, call, received, true));
        }
        if ended && in_flight.is_empty() && waiting.is_empty() {
            break;
        }
        tokio::select! {
            // A call that arrives is taken first, so that it asks for the
            // turn's lock before calls that arrive after it.
            biased;
            next = calls.next(), if !ended => match next {
                Some(call) => {
                    let i = ids.len();
                    ids.push((call.id.clone(), call.name.clone()));
                    slots.push(None);
                    let received = Instant::now();
                    if in_flight.len() < bound && waiting.is_empty() {
                        in_flight.push(start(i, call, received, false));
                    } else {
                        waiting.push_back((i, call, received));
                    }
                }
                None => ended = true,
            },
            Some((i, result)) = in_flight.next(), if !in_flight.is_empty() => {
                slots[i] = Some(Box::new(result));
            }
        }
    }
    answers(slots, ids)
}
