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
    let mut out = Vec::new();
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
    let mut hasher = HashWriter(Sha256::new());
    write_canonical(&mut hasher, value).expect("hashing never fails");
    hex(&hasher.0.finalize())
}

/// The SHA-256 of `bytes`, as 64 lowercase hex digits.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

fn hex(digest: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(digest.len() * 2);
    for b in digest {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 0xf)] as char);
    }
    s
}

struct HashWriter(Sha256);

impl Write for HashWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
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
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            out.write_all(b"{")?;
            for (i, (key, item)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.write_all(b",")?;
                }
                serde_json::to_writer(&mut *out, key)?;
                out.write_all(b":")?;
                write_canonical(out, item)?;
            }
            out.write_all(b"}")
        }
        scalar => serde_json::to_writer(out, scalar).map_err(io::Error::other),
    }
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
