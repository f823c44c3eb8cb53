//! Steps 8 and 9 of a call: the model-facing content of an output, bounded,
//! with large outputs moved to the artifact store.
//!
//! - A structured value with no content blocks gets a JSON text copy.
//! - Content larger than the artifact threshold is stored whole (when the
//!   executor has a store) and the model sees a preview and the key.
//! - Content larger than the content bound is cut at a character boundary,
//!   with a note saying how much was shown.

use crate::artifacts::{ArtifactError, ArtifactStore};
use serde_json::Value;

use crate::output::{ArtifactRef, ContentBlock};

/// Bounds on model-facing content, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ContentLimits {
    pub max_bytes: usize,
    pub artifact_threshold: usize,
    pub preview_bytes: usize,
}

/// The model-facing content of an output, or the full text that has to go
/// to the artifact store first.
pub(crate) enum Shaped {
    /// Ready to show; `json_copy` when it is the one text block holding
    /// the structured value's compact JSON, whole.
    Ready {
        content: Vec<ContentBlock>,
        json_copy: bool,
    },
    /// Larger than the artifact threshold, with a store to put it in
    /// (boxed: the common, small output moves less).
    ToStore(Box<ToStore>),
}

/// An output's full text on its way to the artifact store.
pub(crate) struct ToStore {
    full: String,
    preview: String,
    mime: &'static str,
}

/// Formats `content` (taken out of the output, never copied) or, when it
/// is empty, a JSON text copy of `structured`. Synchronous: only an output
/// over the artifact threshold, when the executor has a store
/// (`has_store`), needs the store's `put` ([`ToStore::put`]).
pub(crate) fn format(
    content: Vec<ContentBlock>,
    structured: Option<&Value>,
    limits: ContentLimits,
    has_store: bool,
) -> Shaped {
    let mut mime = "text/plain; charset=utf-8";
    let json_copy = structured.is_some() && content.is_empty();
    let content = match structured {
        Some(value) if json_copy => {
            mime = "application/json";
            vec![ContentBlock::text(json_text(value))]
        }
        _ => content,
    };
    let size: usize = content.iter().map(block_size).sum();
    if has_store && size > limits.artifact_threshold {
        let full = joined(&content);
        let preview = cut(&full, limits.preview_bytes.min(limits.max_bytes)).to_owned();
        return Shaped::ToStore(Box::new(ToStore {
            full,
            preview,
            mime,
        }));
    }
    if size > limits.max_bytes {
        let full = joined(&content);
        let shown = cut(&full, limits.max_bytes);
        let text = format!(
            "{shown}\n[output truncated: showing {} of {} bytes]",
            shown.len(),
            full.len()
        );
        return Shaped::Ready {
            content: vec![ContentBlock::text(text)],
            json_copy: false,
        };
    }
    Shaped::Ready { content, json_copy }
}

impl ToStore {
    /// Stores the full text; the model sees the preview and the key.
    pub(crate) async fn put(
        self,
        store: &dyn ArtifactStore,
    ) -> Result<(Vec<ContentBlock>, ArtifactRef), ArtifactError> {
        let artifact = store.put(self.full.into_bytes(), self.mime).await?;
        let text = format!(
            "{}\n[output truncated: the full {} bytes are stored as artifact {}]",
            self.preview, artifact.size, artifact.key
        );
        Ok((vec![ContentBlock::text(text)], artifact))
    }
}

/// Compact JSON text of `value` (serde_json writes into a buffer sized up
/// front and, its output being UTF-8 by construction, does not check it
/// again; measured faster here than the canonical writer without sorting).
fn json_text(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| value.to_string())
}

fn block_size(block: &ContentBlock) -> usize {
    match block {
        ContentBlock::Text { text } => text.len(),
        ContentBlock::Image { data, .. } | ContentBlock::Audio { data, .. } => data.len(),
        ContentBlock::ResourceBlob { blob, .. } => blob.len(),
        other => other.to_text().len(),
    }
}

fn joined(content: &[ContentBlock]) -> String {
    content
        .iter()
        .map(ContentBlock::to_text)
        .collect::<Vec<_>>()
        .join("\n")
}

/// The longest prefix of `text` of at most `max` bytes that ends on a
/// character boundary.
fn cut(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cutting_never_splits_a_character() {
        assert_eq!(cut("héllo", 2), "h");
        assert_eq!(cut("héllo", 3), "hé");
        assert_eq!(cut("abc", 10), "abc");
    }
}
