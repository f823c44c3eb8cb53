//! Steps 8 to 10: an output becomes the call's result (redacted, bounded,
//! large outputs stored as artifacts), with its final event.

use std::time::Duration;

use serde_json::Value;

use super::CallCx;
use crate::error::ToolError;
use crate::events::EventKind;
use crate::executor::{ToolExecutor, canonical_hash, content};
use crate::ids::{CallName, ToolCallId};
use crate::output::{ArtifactRef, ContentBlock, ToolOutput, ToolResult};

/// How [`ToolExecutor::finish`] left a call.
pub(super) enum Finished {
    /// Succeeded; the answer takes the call's id and name last.
    Answered(Answer),
    /// Failed.
    Failed(ToolResult),
    /// The output still has to go to the artifact store.
    Store(ToolOutput, content::ToStore),
}

/// A successful call's result, all but the call's id and name: the caller
/// moves those in at the very end ([`Answer::into_result`]), after the last
/// step that could still need them, so neither is copied.
pub(super) struct Answer {
    content: Vec<ContentBlock>,
    structured: Option<Value>,
    artifacts: Vec<ArtifactRef>,
    elapsed: Duration,
    waited: Duration,
}

impl Answer {
    /// The result for the call `id` of `name` (as called).
    pub(super) fn into_result(self, id: ToolCallId, name: CallName) -> ToolResult {
        ToolResult {
            tool_call_id: id,
            name,
            content: self.content,
            structured: self.structured,
            artifacts: self.artifacts,
            is_error: false,
            error: None,
            provider_metadata: None,
            elapsed: self.elapsed,
            waited: self.waited,
        }
    }
}

impl<S, C> ToolExecutor<S, C>
where
    S: Send + Sync + 'static,
    C: Send + Sync + 'static,
{
    /// Steps 8 to 10: content, the final event; an output bound for the
    /// artifact store comes back as [`Finished::Store`] (see
    /// [`store_output`](Self::store_output)).
    pub(super) fn finish(
        &self,
        cx: &CallCx<'_, C>,
        outcome: Result<ToolOutput, ToolError>,
        attempt: u32,
    ) -> Finished {
        let mut output = match outcome {
            Ok(output) => output,
            Err(e) => return Finished::Failed(self.fail(cx, e, attempt, EventKind::Failed, None)),
        };
        if let Some(redactor) = &cx.redactor {
            redactor.output(&mut output);
        }
        let blocks = std::mem::take(&mut output.content);
        let limits = self.config.content_limits();
        let has_store = self.artifacts.is_some();
        match content::format(blocks, output.structured.as_ref(), limits, has_store) {
            content::Shaped::Ready(content) => {
                Finished::Answered(self.completed(cx, output, content, None, attempt))
            }
            content::Shaped::ToStore(pending) => Finished::Store(output, pending),
        }
    }

    /// The end of a call whose output goes to the artifact store: its
    /// answer, or the failed result when the store fails.
    pub(super) async fn store_output(
        &self,
        cx: &CallCx<'_, C>,
        output: ToolOutput,
        pending: content::ToStore,
        attempt: u32,
    ) -> Result<Answer, ToolResult> {
        let Some(store) = self.artifacts.as_deref() else {
            // `finish` only hands over an output when there is a store.
            let e = ToolError::artifact_failed();
            return Err(self.fail(cx, e, attempt, EventKind::Failed, None));
        };
        match pending.put(store).await {
            Ok((content, artifact)) => {
                Ok(self.completed(cx, output, content, Some(artifact), attempt))
            }
            Err(store_error) => {
                let e = ToolError::artifact_failed().with_source(store_error);
                let mut result = self.fail(cx, e, attempt, EventKind::Failed, None);
                result.structured = output.structured;
                result.artifacts = output.artifacts;
                Err(result)
            }
        }
    }

    /// A successful call's answer, and its `tool.completed` event.
    pub(super) fn completed(
        &self,
        cx: &CallCx<'_, C>,
        output: ToolOutput,
        content: Vec<ContentBlock>,
        stored: Option<ArtifactRef>,
        attempt: u32,
    ) -> Answer {
        let mut artifacts = output.artifacts;
        artifacts.extend(stored);
        let answer = Answer {
            content,
            structured: output.structured,
            artifacts,
            elapsed: cx.own_time(),
            waited: cx.waited,
        };
        if self.config.trace_content && !cx.span.is_disabled() {
            // Already redacted and bounded: what the model will see.
            let text = match &answer.structured {
                Some(value) => value.to_string(),
                None => serde_json::to_string(&answer.content).unwrap_or_default(),
            };
            cx.span.record("gen_ai.tool.call.result", text.as_str());
        }
        self.emit(cx, EventKind::Completed, attempt, |event| {
            event.result_hash = Some(content_hash(answer.structured.as_ref(), &answer.content));
            event.artifact_keys = answer.artifacts.iter().map(|a| a.key.clone()).collect();
        });
        answer
    }
}

/// The digest of what a result says: its structured value when it has one,
/// otherwise its model-facing content.
pub(super) fn content_hash(structured: Option<&Value>, content: &[ContentBlock]) -> String {
    match structured {
        Some(value) => canonical_hash(value),
        None => canonical_hash(&serde_json::to_value(content).unwrap_or(Value::Null)),
    }
}
