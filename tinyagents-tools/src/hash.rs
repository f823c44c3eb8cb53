//! Canonical JSON and its SHA-256 digest.
//!
//! Events carry digests of a call's arguments and result instead of the
//! values, so runs can be audited and compared without storing them. The
//! canonical form is compact JSON with object keys sorted by their UTF-8
//! bytes at every level, whatever order the value was built in; equal values
//! always give equal digests. Policies use the same digest as an argument
//! fingerprint.

use std::io::{self, Write};

use serde_json::Value;
use sha2::{Digest, Sha256};

/// The canonical JSON text of `value`: compact, with every object's keys
/// sorted.
///
/// ```
/// use serde_json::json;
/// use tinyagents_tools::hash::canonical_json;
/// assert_eq!(canonical_json(&json!({"b": 1, "a": [true, null]})), r#"{"a":[true,null],"b":1}"#);
/// ```
pub fn canonical_json(value: &Value) -> String {
    let mut out = Vec::with_capacity(64);
    write_canonical(&mut out, value).expect("writing to a Vec never fails");
    String::from_utf8(out).expect("JSON text is UTF-8")
}

/// The SHA-256 of [`canonical_json`] of `value`, as 64 lowercase hex digits.
///
/// ```
/// use serde_json::json;
/// use tinyagents_tools::hash::canonical_hash;
/// assert_eq!(canonical_hash(&json!({"a": 1, "b": 2})), canonical_hash(&json!({"b": 2, "a": 1})));
/// ```
pub fn canonical_hash(value: &Value) -> String {
    // The text is written to a buffer and hashed in one pass: feeding the
    // hasher token by token costs more than the copy.
    let mut text = Vec::with_capacity(128);
    write_canonical(&mut text, value).expect("writing to a Vec never fails");
    hex(&Sha256::digest(&text).into())
}

/// The SHA-256 of `bytes`, as 64 lowercase hex digits.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes).into())
}

fn hex(digest: &[u8; 32]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = [0u8; 64];
    for (pair, b) in out.chunks_exact_mut(2).zip(digest) {
        pair[0] = DIGITS[usize::from(b >> 4)];
        pair[1] = DIGITS[usize::from(b & 0xf)];
    }
    std::str::from_utf8(&out)
        .expect("hex digits are ASCII")
        .to_owned()
}

fn write_canonical(out: &mut dyn Write, value: &Value) -> io::Result<()> {
    match value {
        Value::Array(items) => {
            out.write_all(b"[")?;
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.write_all(b",")?;
                }
                write_canonical(out, item)?;
            }
            out.write_all(b"]")
        }
        Value::Object(map) => {
            // Keys already in order (the usual case) are written as they
            // are, without sorting a copy of the entries.
            if map.keys().is_sorted_by(|a, b| a.as_bytes() <= b.as_bytes()) {
                write_entries(out, map.iter())
            } else {
                let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                entries.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
                write_entries(out, entries.into_iter())
            }
        }
        scalar => serde_json::to_writer(out, scalar).map_err(io::Error::other),
    }
}

fn write_entries<'v>(
    out: &mut dyn Write,
    entries: impl Iterator<Item = (&'v String, &'v Value)>,
) -> io::Result<()> {
    out.write_all(b"{")?;
    for (i, (key, item)) in entries.enumerate() {
        if i > 0 {
            out.write_all(b",")?;
        }
        serde_json::to_writer(&mut *out, key)?;
        out.write_all(b":")?;
        write_canonical(out, item)?;
    }
    out.write_all(b"}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nested_keys_are_sorted_and_strings_escaped() {
        let v = json!({"z": {"y": 1, "x": "a\"b"}, "a": [{"d": 1, "c": 2}]});
        assert_eq!(
            canonical_json(&v),
            r#"{"a":[{"c":2,"d":1}],"z":{"x":"a\"b","y":1}}"#
        );
    }

    #[test]
    fn keys_in_order_and_out_of_order_give_one_text() {
        let mut sorted = serde_json::Map::new();
        sorted.insert("a".into(), json!(1));
        sorted.insert("b".into(), json!({"c": 1, "d": [2]}));
        let mut reversed = serde_json::Map::new();
        reversed.insert("b".into(), json!({"d": [2], "c": 1}));
        reversed.insert("a".into(), json!(1));
        let (sorted, reversed) = (Value::Object(sorted), Value::Object(reversed));
        assert_eq!(canonical_json(&sorted), r#"{"a":1,"b":{"c":1,"d":[2]}}"#);
        assert_eq!(canonical_json(&reversed), canonical_json(&sorted));
        assert_eq!(canonical_hash(&reversed), canonical_hash(&sorted));
    }

    #[test]
    fn digest_is_the_sha256_of_the_canonical_text() {
        let v = json!({"b": 2, "a": 1});
        assert_eq!(
            canonical_hash(&v),
            sha256_hex(canonical_json(&v).as_bytes())
        );
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
