//! One streamed turn, from the model's output to the answers: the output is
//! read piece by piece, every event is shown as it comes, and each call runs
//! the moment its arguments close, while the model is still writing.
//!
//! [`execute_streamed`] drives a reader ([`OutputReader`]: a provider
//! stream's or a text format's) and [`ToolExecutor::execute_stream`] side by
//! side in one task: a ready call goes to the executor as soon as the reader
//! yields it, and the executor runs it while the next pieces are read.

use std::pin::pin;

use futures_util::{Stream, StreamExt};
use tokio::sync::mpsc;

use super::{ModelOutput, OutputReader, StreamEvent};
use crate::executor::ToolExecutor;
use crate::output::ToolResult;
use crate::runtime::{RunContext, Turn};
use crate::tool::Shared;

#[cfg(doc)]
use super::{FailedCall, TruncatedCall};

/// What one streamed turn gave: the model's output, the answers to its
/// calls, and the error that cut the stream short, if one did.
#[derive(Debug)]
pub struct StreamedTurn<E> {
    /// Everything the model wrote, collected from the events (equal to the
    /// whole-output parse of what arrived).
    pub output: ModelOutput,
    /// One answer per call that has an id and a name, in the order the
    /// model wrote the calls: the executor's for ready calls, a refusal for
    /// failed and truncated ones (see [`execute_streamed`]).
    pub results: Vec<ToolResult>,
    /// The pieces' error, when the stream failed before its end; the output
    /// and the answers are then those of what arrived before it.
    pub error: Option<E>,
}

/// Where one answer of the turn comes from.
enum Answer {
    /// The executor's answer to the next call handed to it.
    Executed,
    /// Made without running anything (boxed: the executed answers, far
    /// more common, need no room for it).
    Refused(Box<ToolResult>),
}

/// Reads one turn of the model's output from `pieces` with `reader`,
/// hands every event to `on_event` as it comes, runs each ready call
/// through `executor` the moment the reader yields it, and returns the
/// output, the answers in call order and the pieces' error.
///
/// What it answers, in the order the model wrote the calls (one
/// [`ToolResult`] per call that has an id and a name):
///
/// - a **ready** call: the executor's answer, with every guarantee of a
///   batch (the turn's advertised tools, validation, limits, concurrency
///   caps, `sequential` tools in order, approvals, the journal);
/// - a **failed** call: [`FailedCall::answer`], a classified refusal naming
///   the problem; nothing runs, not even a call with a reused id whose
///   arguments are good;
/// - a **truncated** call: [`TruncatedCall::answer`], "cut off by the end of
///   the output; it did not run";
/// - a call without an id or a name cannot be answered (the provider expects
///   no answer for it): it is only in the [`ModelOutput`].
///
/// The answers to failed and truncated calls are made here, not by the
/// executor: they emit no executor events and leave no journal record (they
/// depend on the output alone, so the same output is answered the same way
/// again).
///
/// **When the pieces fail.** Reading stops at the first error: the reader
/// is finished as at a normal end (a call whose arguments were still open is
/// truncated, and answered so; [`Finished`](StreamEvent::Finished) comes with
/// [`FinishReason::EndOfStream`](super::FinishReason::EndOfStream) unless the
/// output had said why it stopped), the calls already handed to the
/// executor run to their end and are answered, nothing more starts, and the
/// error is kept in [`StreamedTurn::error`]. To stop the calls already
/// running as well, cancel the run
/// ([`RunContext::cancellation`](crate::RunContext::cancellation)).
///
/// ```
/// # use std::sync::OnceLock;
/// # use serde_json::Value;
/// # use tinyagents_tools::*;
/// use std::convert::Infallible;
/// use tinyagents_tools::stream::native::{NativeFormat, NativeReader};
/// use tinyagents_tools::stream::{StreamEvent, execute_streamed};
/// # struct Weather;
/// # #[async_trait]
/// # impl Tool for Weather {
/// #     fn spec(&self) -> &ToolSpec {
/// #         static S: OnceLock<ToolSpec> = OnceLock::new();
/// #         S.get_or_init(|| ToolSpec::builder("weather", "The weather in a city.")
/// #             .input_schema(ToolSchema::from_value(serde_json::json!({"type": "object", "properties": {"city": {"type": "string"}}})))
/// #             .safety(ToolSafety::pure()).build().unwrap())
/// #     }
/// #     async fn call(&self, _: &(), _: &ToolRuntime, _: Value) -> Result<ToolOutput, ToolError> {
/// #         Ok(ToolOutput::text("sunny"))
/// #     }
/// # }
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// # let mut registry = ToolRegistry::new();
/// # registry.register(Weather)?;
/// let executor = ToolExecutor::builder(registry, ()).build()?;
/// // The body of a streamed Chat Completions response, as it arrives.
/// let body = [
///     "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Checking.\"}}]}\n\n",
///     "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",",
///     "\"function\":{\"name\":\"weather\",\"arguments\":\"{\\\"city\\\": \\\"Paris\\\"}\"}}]}}]}\n\n",
///     "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
///     "data: [DONE]\n\n",
/// ];
/// let pieces = futures_util::stream::iter(body.map(Ok::<_, Infallible>));
/// let mut shown = String::new();
/// let turn = execute_streamed(
///     &executor,
///     &RunContext::empty(),
///     &Turn::new(1),
///     NativeReader::new(NativeFormat::OpenAiChat),
///     pieces,
///     |event| {
///         if let StreamEvent::Text(text) = event {
///             shown.push_str(text); // a UI shows it as it comes
///         }
///     },
/// )
/// .await;
/// assert_eq!(shown, "Checking.");
/// assert_eq!(turn.results.len(), 1);
/// assert_eq!(turn.results[0].tool_call_id.as_str(), "call_1");
/// assert_eq!(turn.results[0].text(), "sunny");
/// assert!(turn.error.is_none());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// ```
///
/// `on_event` sees every event in the order the reader yields them, before
/// the call it carries starts; it runs in the reading, so a slow one holds
/// the reading back (not the calls already running).
pub async fn execute_streamed<S, C, R, P, B, E>(
    executor: &ToolExecutor<S, C>,
    run: &RunContext<C>,
    turn: &Turn,
    mut reader: R,
    pieces: P,
    mut on_event: impl FnMut(&StreamEvent),
) -> StreamedTurn<E>
where
    S: Shared,
    C: Shared,
    R: OutputReader,
    P: Stream<Item = Result<B, E>>,
    B: AsRef<[u8]>,
{
    let (calls, queue) = mpsc::unbounded_channel();
    let read = async move {
        let mut pieces = pin!(pieces);
        let mut output = ModelOutput::new();
        let mut answers = Vec::new();
        let mut events = Vec::new();
        let mut error = None;
        loop {
            let ended = match pieces.next().await {
                Some(Ok(piece)) => {
                    reader.push(piece.as_ref(), &mut events);
                    false
                }
                Some(Err(e)) => {
                    error = Some(e);
                    reader.finish(&mut events);
                    true
                }
                None => {
                    reader.finish(&mut events);
                    true
                }
            };
            let mut started = false;
            for event in events.drain(..) {
                on_event(&event);
                match &event {
                    StreamEvent::CallReady(ready) => {
                        // The executor is awaited beside the reading and
                        // takes calls until the sender is dropped, so the
                        // call is always received.
                        let _ = calls.send(ready.call.clone());
                        answers.push(Answer::Executed);
                        started = true;
                    }
                    StreamEvent::CallFailed(failed) => {
                        answers.extend(failed.answer().map(|r| Answer::Refused(Box::new(r))));
                    }
                    StreamEvent::Truncated(cut) => {
                        answers.extend(cut.answer().map(|r| Answer::Refused(Box::new(r))));
                    }
                    _ => {}
                }
                output.push(event);
            }
            if ended {
                break;
            }
            if started {
                // The executor takes the call now, even when the next piece
                // is already there.
                tokio::task::yield_now().await;
            }
        }
        // No more calls: the executor finishes those it has, then returns.
        drop(calls);
        (output, answers, error)
    };
    let received = futures_util::stream::unfold(queue, |mut queue| async move {
        queue.recv().await.map(|call| (call, queue))
    });
    let ((output, answers, error), executed) =
        tokio::join!(read, executor.execute_stream(run, turn, received));
    // The executor answers every call it was handed, in the order handed.
    let mut executed = executed.into_iter();
    let results = answers
        .into_iter()
        .filter_map(|answer| match answer {
            Answer::Refused(result) => Some(*result),
            Answer::Executed => executed.next(),
        })
        .collect();
    StreamedTurn {
        output,
        results,
        error,
    }
}
