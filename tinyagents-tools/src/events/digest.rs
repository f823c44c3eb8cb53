//! The digests events carry, computed when a subscriber first reads them.

use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, LazyLock};

use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::hash::canonical_hash;

/// How a digest is computed, once.
type Compute = Box<dyn FnOnce() -> String + Send>;

/// A SHA-256 digest of a value's canonical JSON
/// ([`canonical_hash`](crate::hash::canonical_hash)), as 64 lowercase hex
/// digits, computed the first time it is read and then kept.
///
/// An event's [`args_hash`](crate::events::ToolEvent::args_hash) and
/// [`result_hash`](crate::events::ToolEvent::result_hash) are digests: a
/// subscriber that never reads them costs no hashing, one that does gets
/// the same text as `canonical_hash` of the value the call had when the
/// event was made. Clones share the one computation. It reads as a `&str`
/// (through `Deref`), compares, prints and serializes as its hex text.
///
/// ```
/// use serde_json::json;
/// use tinyagents_tools::events::Digest;
/// use tinyagents_tools::hash::canonical_hash;
/// let digest = Digest::of(json!({"b": 2, "a": 1}));
/// assert_eq!(&*digest, canonical_hash(&json!({"a": 1, "b": 2})));
/// assert_eq!(digest.len(), 64);
/// ```
#[derive(Clone)]
pub struct Digest(Arc<LazyLock<String, Compute>>);

impl Digest {
    /// The digest of `value`'s canonical JSON, computed when first read.
    pub fn of(value: Value) -> Self {
        Digest::later(move || canonical_hash(&value))
    }

    /// A digest `compute` gives when first read.
    pub(crate) fn later(compute: impl FnOnce() -> String + Send + 'static) -> Self {
        Digest(Arc::new(LazyLock::new(Box::new(compute))))
    }

    /// The hex text (computed now if it was not yet).
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Deref for Digest {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Digest {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq for Digest {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || self.as_str() == other.as_str()
    }
}

impl Eq for Digest {}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Digest {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use serde_json::json;

    use super::*;

    #[test]
    fn a_digest_is_computed_only_when_read_and_only_once() {
        let runs = Arc::new(AtomicU32::new(0));
        let counted = Arc::clone(&runs);
        let digest = Digest::later(move || {
            counted.fetch_add(1, Ordering::Relaxed);
            canonical_hash(&json!({"a": 1}))
        });
        let copy = digest.clone();
        assert_eq!(runs.load(Ordering::Relaxed), 0, "made and cloned, not read");
        assert_eq!(copy.as_str(), canonical_hash(&json!({"a": 1})));
        assert_eq!(&*digest, copy.as_str());
        assert_eq!(runs.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn a_digest_prints_compares_and_serializes_as_its_hex_text() {
        let (a, b) = (
            Digest::of(json!({"x": [1, 2]})),
            Digest::of(json!({"x": [1, 2]})),
        );
        let hex = canonical_hash(&json!({"x": [1, 2]}));
        assert_eq!(a, b);
        assert_ne!(a, Digest::of(json!({"x": [2, 1]})));
        assert_eq!(a.to_string(), hex);
        assert_eq!(format!("{a:?}"), format!("{hex:?}"));
        assert_eq!(serde_json::to_value(&a).unwrap(), json!(hex));
    }
}
