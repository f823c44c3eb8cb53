//! The executor: the ten steps of a call, batches, events, delivery, outputs and refusals.
//!
//! One test binary for the folder, one module per file.

mod accounting;
mod allocations;
mod batch;
mod cancellation;
mod canonical_message;
mod delivery;
mod events;
mod generated_inline;
mod inline_subscribers;
mod inline_tools;
mod middleware;
mod output;
mod refusals;
mod running;
mod streamed;
mod subscriber_delivery;
