//! The digests events carry, computed when a subscriber first reads them.

use std::cell::RefCell;
use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, OnceLock};

use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::hash::canonical_hash;
use crate::output::{ContentBlock, ToolMessage};

/// A SHA-256 digest of a value's canonical JSON
/// ([`canonical_hash`](crate::hash::canonical_hash)), as 64 lowercase hex
/// digits, computed the first time it is read and then kept.
///
/// An event's [`args_hash`](crate::events::ToolEvent::args_hash) and
/// [`result_hash`](crate::events::ToolEvent::result_hash) are digests: a
/// subscriber that never reads them costs no hashing (nor any copy of what
/// they digest: an event delivered in line digests the call's own values,
/// borrowed), one that does gets the same text as `canonical_hash` of the
/// value the call had when the event was made. Clones share the one
/// computation. It reads as a `&str` (through `Deref`), compares, displays
/// and serializes as its hex text; [`into_owned`](Self::into_owned) keeps it
/// past the call.
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
pub struct Digest<'a>(Repr<'a>);

#[derive(Clone)]
enum Repr<'a> {
    /// Its own source (or a copy of it), shared by clones.
    Shared(Arc<Lazy>),
    /// A value the call holds (its arguments as they are now), and the
    /// call's digest of it, made when first read by any of its events.
    Value(&'a Value, &'a OnceLock<Digest<'static>>),
    /// A message the call holds (its result; `bool`: the content is the
    /// structured value's JSON text), and the event's digest of it.
    Message(&'a ToolMessage, bool, &'a OnceLock<Digest<'static>>),
}

/// What a digest is of, and its hex text once computed.
struct Lazy {
    source: Source,
    hex: OnceLock<String>,
}

enum Source {
    /// A JSON value (arguments, a structured result).
    Value(Value),
    /// A message's content blocks, digested as their JSON array.
    Content(Vec<ContentBlock>),
    /// A value's canonical JSON text (UTF-8 by construction, kept as the
    /// bytes it hashes), written when the digest was made: in line when it
    /// is short (the digest is then one allocation), else on the heap.
    Short {
        len: u8,
        bytes: [u8; SHORT],
    },
    Text(Box<[u8]>),
}

impl Source {
    /// Canonical text, kept in line when it is short.
    fn canonical(text: &[u8]) -> Self {
        match u8::try_from(text.len()) {
            Ok(len) if text.len() <= SHORT => {
                let mut bytes = [0; SHORT];
                bytes[..text.len()].copy_from_slice(text);
                Source::Short { len, bytes }
            }
            _ => Source::Text(Box::from(text)),
        }
    }
}

/// The longest canonical text a digest keeps in line.
const SHORT: usize = 62;

thread_local! {
    /// Where a digest's canonical text is written before it is kept: a
    /// short text then needs no allocation of its own.
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// The most the scratch buffer keeps between digests: a large value's text
/// is not held on to by the thread.
const SCRATCH_KEPT: usize = 4096;

impl<'a> Digest<'a> {
    /// The digest of `value`, a value the call holds, made when first read
    /// (by any event that shares `made`).
    pub(crate) fn of_borrowed(value: &'a Value, made: &'a OnceLock<Digest<'static>>) -> Self {
        Digest(Repr::Value(value, made))
    }

    /// The digest of what `message` says, made when first read (see
    /// [`Digest::of_message`]).
    pub(crate) fn of_borrowed_message(
        message: &'a ToolMessage,
        json_copy: bool,
        made: &'a OnceLock<Digest<'static>>,
    ) -> Self {
        Digest(Repr::Message(message, json_copy, made))
    }

    /// The same digest, kept past the call: what it digests is written
    /// down (not hashed) if it was borrowed.
    pub fn into_owned(self) -> Digest<'static> {
        match self.0 {
            Repr::Shared(lazy) => Digest(Repr::Shared(lazy)),
            Repr::Value(value, made) => made.get_or_init(|| Digest::of_text(value)).clone(),
            Repr::Message(message, json_copy, made) => made
                .get_or_init(|| Digest::of_message(message, json_copy))
                .clone(),
        }
    }

    /// The hex text (computed now if it was not yet).
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Shared(lazy) => lazy.hex(),
            Repr::Value(value, made) => made.get_or_init(|| Digest::of_text(value)).as_str(),
            Repr::Message(message, json_copy, made) => made
                .get_or_init(|| Digest::of_message(message, *json_copy))
                .as_str(),
        }
    }
}

impl Digest<'static> {
    /// The digest of `value`'s canonical JSON, computed when first read.
    pub fn of(value: Value) -> Self {
        Digest::from_source(Source::Value(value))
    }

    /// The digest of `content` as a JSON array, computed when first read.
    pub(crate) fn of_content(content: Vec<ContentBlock>) -> Self {
        Digest::from_source(Source::Content(content))
    }

    /// The digest of `value`'s canonical JSON, its text written now (no
    /// copy of the value is kept: the text is smaller and cheaper to make
    /// than a deep copy) and hashed when first read.
    pub(crate) fn of_text(value: &Value) -> Self {
        let source = SCRATCH.with(|scratch| {
            let Ok(mut text) = scratch.try_borrow_mut() else {
                // Re-entered (a subscriber digesting inside a digest): a
                // buffer of its own.
                let mut text = Vec::new();
                crate::hash::write_canonical(&mut text, value);
                return Source::Text(text.into_boxed_slice());
            };
            text.clear();
            crate::hash::write_canonical(&mut text, value);
            let source = Source::canonical(&text);
            if text.capacity() > SCRATCH_KEPT {
                *text = Vec::new();
            }
            source
        });
        Digest::from_source(source)
    }

    /// The digest of a value whose canonical JSON text is `text` (the
    /// caller knows it is), hashed when first read.
    pub(crate) fn of_canonical_text(text: &str) -> Self {
        Digest::from_source(Source::canonical(text.as_bytes()))
    }

    /// The digest of what a message says (its structured value when it
    /// has one, otherwise its content), hashed when first read.
    ///
    /// When the content is the structured value's compact JSON
    /// (`json_copy`) and every object in the value has its keys in order,
    /// that text is already the value's canonical JSON: it is copied, not
    /// written again.
    pub(crate) fn of_message(message: &ToolMessage, json_copy: bool) -> Self {
        match (&message.structured, message.content.as_slice()) {
            (Some(value), [ContentBlock::Text { text }])
                if json_copy && crate::hash::in_canonical_order(value) =>
            {
                Digest::of_canonical_text(text)
            }
            (Some(value), _) => Digest::of_text(value),
            (None, _) => Digest::of_content(message.content.clone()),
        }
    }

    fn from_source(source: Source) -> Self {
        Digest(Repr::Shared(Arc::new(Lazy {
            source,
            hex: OnceLock::new(),
        })))
    }
}

impl Lazy {
    /// The hex text (computed now if it was not yet).
    fn hex(&self) -> &str {
        self.hex.get_or_init(|| match &self.source {
            Source::Value(value) => canonical_hash(value),
            Source::Short { len, bytes } => crate::hash::sha256_hex(&bytes[..usize::from(*len)]),
            Source::Text(text) => crate::hash::sha256_hex(text),
            Source::Content(content) => {
                canonical_hash(&serde_json::to_value(content).unwrap_or(Value::Null))
            }
        })
    }
}

impl Deref for Digest<'_> {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Digest<'_> {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq<Digest<'_>> for Digest<'_> {
    fn eq(&self, other: &Digest<'_>) -> bool {
        match (&self.0, &other.0) {
            (Repr::Shared(a), Repr::Shared(b)) if Arc::ptr_eq(a, b) => true,
            _ => self.as_str() == other.as_str(),
        }
    }
}

impl Eq for Digest<'_> {}

impl fmt::Debug for Digest<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Digest").field(&self.as_str()).finish()
    }
}

impl fmt::Display for Digest<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Digest<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn short_and_long_texts_digest_alike() {
        for len in [
            0,
            1,
            SHORT - 10,
            SHORT - 9,
            SHORT - 8,
            SHORT,
            SHORT + 1,
            5000,
        ] {
            // `{"k":"…"}` is 8 bytes around the string.
            let value = json!({"k": "x".repeat(len)});
            let digest = Digest::of_text(&value);
            let Repr::Shared(lazy) = &digest.0 else {
                panic!("an own source")
            };
            let short = matches!(lazy.source, Source::Short { .. });
            assert_eq!(short, len + 8 <= SHORT, "{len}");
            assert_eq!(digest.as_str(), canonical_hash(&value), "{len}");
        }
        // The scratch buffer does not keep a large text's room.
        let kept = SCRATCH.with(|s| s.borrow().capacity());
        assert!(kept <= SCRATCH_KEPT, "{kept}");
    }

    #[test]
    fn a_digest_of_written_text_equals_the_digest_of_the_value() {
        let value = json!({"b": [1, {"d": null, "c": "x\u{1}"}], "a": 1.5});
        let digest = Digest::of_text(&value);
        assert!(!is_hashed(&digest), "written, not hashed");
        assert_eq!(digest.as_str(), canonical_hash(&value));
        assert_eq!(digest, Digest::of(value));
    }

    #[test]
    fn a_digest_is_computed_only_when_read_and_only_once() {
        let digest = Digest::of(json!({"a": 1}));
        let copy = digest.clone();
        assert!(!is_hashed(&digest), "made and cloned, not read");
        assert_eq!(copy.as_str(), canonical_hash(&json!({"a": 1})));
        assert!(is_hashed(&digest), "clones share the computation");
    }

    fn is_hashed(digest: &Digest<'_>) -> bool {
        match &digest.0 {
            Repr::Shared(lazy) => lazy.hex.get().is_some(),
            _ => false,
        }
    }

    #[test]
    fn a_borrowed_digest_is_written_only_when_read_and_shared_by_its_events() {
        let value = json!({"b": 1, "a": [true]});
        let made = OnceLock::new();
        let first = Digest::of_borrowed(&value, &made);
        let second = Digest::of_borrowed(&value, &made);
        assert!(made.get().is_none(), "nothing written until read");
        assert_eq!(first.as_str(), canonical_hash(&value));
        assert!(made.get().is_some());
        assert_eq!(second, first);
        let kept: Digest<'static> = second.into_owned();
        assert_eq!(kept.as_str(), canonical_hash(&value));
    }

    #[test]
    fn a_content_digest_is_the_digest_of_the_blocks_as_json() {
        let blocks = vec![ContentBlock::text("hi")];
        let expected = canonical_hash(&serde_json::to_value(&blocks).unwrap());
        let digest = Digest::of_content(blocks);
        assert_eq!(digest.as_str(), expected);
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
        assert_eq!(format!("{a:?}"), format!("Digest({hex:?})"));
        assert_eq!(serde_json::to_value(&a).unwrap(), json!(hex));
    }
}
