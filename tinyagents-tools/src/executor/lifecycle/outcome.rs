//! Steps 8 to 10: an output becomes the call's result (redacted, bounded,
//! large outputs stored as artifacts), with its final event.

use std::borrow::Cow;

use serde_json::Value;

use super::CallCx;
use crate::error::ToolError;
use crate::events::EventKind;
use crate::executor::{ToolExecutor, canonical_hash, content};
use crate::output::{ArtifactRef, ContentBlock, ToolOutput, ToolResult};
use crate::policy::Redactor;

/// How [`ToolExecutor::finish`] left a call.
pub(super) enum Finished {
    /// Answered.
    Done(ToolResult),
    /// The output still has to go to the artifact store.
    Store(ToolOutput, content::ToStore),
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
        cx: &mut CallCx<'_, C>,
        outcome: Result<ToolOutput, ToolError>,
        attempt: u32,
    ) -> Finished {
        let mut output = match outcome {
            Ok(output) => output,
            Err(e) => return Finished::Done(self.fail(cx, e, attempt, EventKind::Failed, None)),
        };
        if let Some(redactor) = &cx.redactor {
            redact_output(redactor, &mut output);
        }
        let blocks = std::mem::take(&mut output.content);
        let limits = self.config.content_limits();
        let has_store = self.artifacts.is_some();
        match content::format(blocks, output.structured.as_ref(), limits, has_store) {
            content::Shaped::Ready(content) => {
                Finished::Done(self.completed(cx, output, content, None, attempt))
            }
            content::Shaped::ToStore(pending) => Finished::Store(output, pending),
        }
    }

    /// The end of a call whose output goes to the artifact store.
    pub(super) async fn store_output(
        &self,
        cx: &mut CallCx<'_, C>,
        output: ToolOutput,
        pending: content::ToStore,
        attempt: u32,
    ) -> ToolResult {
        let Some(store) = self.artifacts.as_deref() else {
            // `finish` only hands over an output when there is a store.
            let e = ToolError::artifact_failed();
            return self.fail(cx, e, attempt, EventKind::Failed, None);
        };
        match pending.put(store).await {
            Ok((content, artifact)) => self.completed(cx, output, content, Some(artifact), attempt),
            Err(store_error) => {
                let e = ToolError::artifact_failed().with_source(store_error);
                let mut result = self.fail(cx, e, attempt, EventKind::Failed, None);
                result.structured = output.structured;
                result.artifacts = output.artifacts;
                result
            }
        }
    }

    /// A successful result, and its `tool.completed` event.
    pub(super) fn completed(
        &self,
        cx: &mut CallCx<'_, C>,
        output: ToolOutput,
        content: Vec<ContentBlock>,
        stored: Option<ArtifactRef>,
        attempt: u32,
    ) -> ToolResult {
        let mut artifacts = output.artifacts;
        artifacts.extend(stored);
        let result = ToolResult {
            tool_call_id: cx.id.clone(),
            // Taken from the call below, after the event that shows it.
            name: String::new(),
            content,
            structured: output.structured,
            artifacts,
            is_error: false,
            error: None,
            provider_metadata: None,
            elapsed: cx.received.elapsed(),
        };
        self.emit(cx, EventKind::Completed, attempt, |event| {
            event.result_hash = Some(result_hash(&result));
            event.artifact_keys = result.artifacts.iter().map(|a| a.key.clone()).collect();
        });
        let mut result = result;
        result.name = std::mem::take(&mut cx.name);
        result
    }
}

/// Masks every model-facing part of an output: text, JSON blocks, links and
/// the structured value (which MCP and others show to the model too).
fn redact_output(redactor: &Redactor, output: &mut ToolOutput) {
    for block in &mut output.content {
        match block {
            ContentBlock::Text { text } => {
                if let Cow::Owned(masked) = redactor.text(text) {
                    *text = masked;
                }
            }
            ContentBlock::Json { value } => redactor.json(value),
            ContentBlock::ResourceLink {
                uri,
                name,
                description,
                ..
            } => {
                for field in [Some(uri), name.as_mut(), description.as_mut()]
                    .into_iter()
                    .flatten()
                {
                    if let Cow::Owned(masked) = redactor.text(field) {
                        *field = masked;
                    }
                }
            }
            ContentBlock::Image { .. } => {}
        }
    }
    if let Some(value) = &mut output.structured {
        redactor.json(value);
    }
}

/// The digest of what a result says: its structured value when it has one,
/// otherwise its model-facing content.
pub(super) fn result_hash(result: &ToolResult) -> String {
    match &result.structured {
        Some(value) => canonical_hash(value),
        None => canonical_hash(&serde_json::to_value(&result.content).unwrap_or(Value::Null)),
    }
}
