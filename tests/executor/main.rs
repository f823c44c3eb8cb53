//! The executor: the ten steps of a call, batches, events, delivery, outputs and refusals.
//!
//! One test binary for the folder, one module per file.

mod accounting;
mod allocations;
mod batch;
mod call_now;
mod call_now_generated;
mod cancellation;
mod canonical_message;
mod delivery;
mod event_ref;
mod event_ref_cost;
mod events;
mod middleware;
mod output;
mod refusals;
mod running;
