//! A turn's calls: bounded concurrency, `sequential` exclusion, results in
//! call order.
//!
//! At most `max_concurrency` calls are in flight; the rest wait, in call
//! order, without being started (so a large batch holds a bounded number of
//! call futures). A `sequential` tool takes the batch's lock exclusively
//! while every other call holds it shared, so it never overlaps another call
//! of the batch; the lock is fair, so calls still start in order.
//!
//! Every call of a batch is received when the batch is: the time a call
//! waits for its place among the calls in flight is part of its
//! [`waited`](crate::ToolResult::waited), not of its `elapsed` (read only
//! for the calls beyond the first `max_concurrency`, the ones that can
//! wait).

use futures_util::StreamExt;
use tokio::sync::RwLock;

use crate::call::ToolCall;
use crate::error::ToolError;
use crate::executor::ToolExecutor;
use crate::output::ToolResult;
use crate::runtime::RunContext;
use crate::runtime::Turn;

/// What the calls of one batch share.
pub(crate) struct Batch {
    /// Held shared by every call, exclusively by a `sequential` one.
    pub(crate) lock: RwLock<()>,
    /// When the batch (so each of its calls) was received, on tokio's
    /// clock.
    pub(crate) received: tokio::time::Instant,
}

/// One call's place in a batch.
#[derive(Clone, Copy)]
pub(crate) struct Place<'b> {
    pub(crate) batch: &'b Batch,
    /// False for the first `max_concurrency` calls, which start at once.
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
    let batch = Batch {
        lock: RwLock::new(()),
        received: tokio::time::Instant::now(),
    };
    let batch = &batch;
    let bound = executor.config.max_concurrency.get();
    let mut in_flight = futures_util::stream::iter(calls.into_iter().enumerate())
        .map(|(i, call)| async move {
            let place = Place {
                batch,
                queued: i >= bound,
            };
            (i, executor.execute_in(run, turn, call, Some(place)).await)
        })
        .buffer_unordered(bound);
    while let Some((i, result)) = in_flight.next().await {
        slots[i] = Some(Box::new(result));
    }
    slots
        .into_iter()
        .zip(ids)
        .map(|(slot, (id, name))| {
            // `execute_in` always answers; this only guards the promise of
            // one result per call.
            slot.map_or_else(
                || ToolResult::from_error(id, name, ToolError::panicked(), Default::default()),
                |result| *result,
            )
        })
        .collect()
}
