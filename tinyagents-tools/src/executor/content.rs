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

/// The model-facing content, and the artifact the full text went to.
pub(crate) struct Formatted {
    pub content: Vec<ContentBlock>,
    pub stored: Option<ArtifactRef>,
}

/// Formats `content` (taken out of the output, never copied) or, when it
/// is empty, a JSON text copy of `structured`.
pub(crate) async fn format(
    content: Vec<ContentBlock>,
    structured: Option<&Value>,
    limits: ContentLimits,
    store: Option<&dyn ArtifactStore>,
) -> Result<Formatted, ArtifactError> {
    let mut mime = "text/plain; charset=utf-8";
    let content = match structured {
        Some(value) if content.is_empty() => {
            mime = "application/json";
            vec![ContentBlock::text(json_text(value))]
        }
        _ => content,
    };
    let size: usize = content.iter().map(block_size).sum();
    if let Some(store) = store.filter(|_| size > limits.artifact_threshold) {
        let full = joined(&content);
        let preview = cut(&full, limits.preview_bytes.min(limits.max_bytes)).to_owned();
        let artifact = store.put(full.into_bytes(), mime).await?;
        let text = format!(
            "{preview}\n[output truncated: the full {} bytes are stored as artifact {}]",
            artifact.size, artifact.key
        );
        return Ok(Formatted {
            content: vec![ContentBlock::text(text)],
            stored: Some(artifact),
        });
    }
    if size > limits.max_bytes {
        let full = joined(&content);
        let shown = cut(&full, limits.max_bytes);
        let text = format!(
            "{shown}\n[output truncated: showing {} of {} bytes]",
            shown.len(),
            full.len()
        );
        return Ok(Formatted {
            content: vec![ContentBlock::text(text)],
            stored: None,
        });
    }
    Ok(Formatted {
        content,
        stored: None,
    })
}

/// Compact JSON text of `value` (serde_json writes into a buffer sized up
/// front and, its output being UTF-8 by construction, does not check it
/// again).
fn json_text(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| value.to_string())
}

fn block_size(block: &ContentBlock) -> usize {
    match block {
        ContentBlock::Text { text } => text.len(),
        ContentBlock::Image { data, .. } => data.len(),
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
