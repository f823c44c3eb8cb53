//! Canonical JSON and its SHA-256 digest.
//!
//! Events carry digests of a call's arguments and result instead of the
//! values, so runs can be audited and compared without storing them. The
//! canonical form is compact JSON with object keys sorted by their UTF-8
//! bytes at every level, whatever order the value was built in; equal values
//! always give equal digests. Policies use the same digest as an argument
//! fingerprint.

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
    write_canonical(&mut out, value);
    String::from_utf8(out).expect("JSON text is UTF-8")
}

/// True when every object in `value` has its keys in canonical order: then
/// its compact JSON (as serde_json writes it) is its canonical JSON.
pub(crate) fn in_canonical_order(value: &Value) -> bool {
    match value {
        Value::Object(map) => {
            map.keys().is_sorted_by(|a, b| a.as_bytes() <= b.as_bytes())
                && map.values().all(in_canonical_order)
        }
        Value::Array(items) => items.iter().all(in_canonical_order),
        _ => true,
    }
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
    write_canonical(&mut text, value);
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

/// Appends [`canonical_json`] of `value` to `out`, as the bytes of its
/// UTF-8 text (what is hashed: no check that they are UTF-8 is needed).
///
/// Written into a `Vec` directly: writing through `dyn Write` cost a call
/// per token.
pub(crate) fn write_canonical(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical(out, item);
            }
            out.push(b']');
        }
        Value::Object(map) => {
            // Keys already in order (the usual case) are written as they
            // are, without sorting a copy of the entries.
            if map.keys().is_sorted_by(|a, b| a.as_bytes() <= b.as_bytes()) {
                write_entries(out, map.iter());
            } else {
                let mut entries: Vec<(&String, &Value)> = map.iter().collect();
                entries.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
                write_entries(out, entries.into_iter());
            }
        }
        Value::String(text) => write_string(out, text),
        Value::Number(number) => write_json(out, number),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Null => out.extend_from_slice(b"null"),
    }
}

/// A JSON string: as it is, in quotes, when nothing in it needs escaping
/// (the usual key or value); otherwise as serde_json escapes it.
#[inline]
fn write_string(out: &mut Vec<u8>, text: &str) {
    let plain = text.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\');
    if plain {
        out.reserve(text.len() + 2);
        out.push(b'"');
        put(out, text.as_bytes());
        out.push(b'"');
    } else {
        write_json(out, text);
    }
}

/// Appends `bytes`: a short run byte by byte (cheaper than a call to
/// `memcpy` for the few bytes of a key or a number), a longer one at once.
#[inline]
fn put(out: &mut Vec<u8>, bytes: &[u8]) {
    if bytes.len() <= 16 {
        for &b in bytes {
            out.push(b);
        }
    } else {
        out.extend_from_slice(bytes);
    }
}

fn write_entries<'v>(out: &mut Vec<u8>, entries: impl Iterator<Item = (&'v String, &'v Value)>) {
    out.push(b'{');
    for (i, (key, item)) in entries.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_string(out, key);
        out.push(b':');
        write_canonical(out, item);
    }
    out.push(b'}');
}

/// Compact JSON of a float or a string that needs escaping: serde_json
/// writing into a `Vec` never fails (no map keys to refuse, no I/O).
fn write_json(out: &mut Vec<u8>, value: &(impl serde::Serialize + ?Sized)) {
    serde_json::to_writer(out, value).expect("writing JSON into a Vec never fails");
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scalars_are_written_as_serde_json_writes_them() {
        let scalars = [
            json!(0),
            json!(-1),
            json!(i64::MIN),
            json!(u64::MAX),
            json!(1.5),
            json!(-0.0),
            json!(1e300),
            json!(true),
            json!(false),
            json!(null),
            json!(""),
            json!("plain text, é and 😀"),
            json!("quote \" backslash \\ newline \n tab \t nul \u{0} unit \u{1f} del \u{7f}"),
        ];
        for scalar in scalars {
            let expected = serde_json::to_string(&scalar).unwrap();
            assert_eq!(canonical_json(&scalar), expected);
            // As a key too.
            let keyed = Value::Object([(scalar.to_string(), json!(1))].into_iter().collect());
            assert_eq!(
                canonical_json(&keyed),
                serde_json::to_string(&keyed).unwrap()
            );
        }
    }

    /// `value` with every object's entries inserted in canonical key order
    /// (the order a map keeps when serde_json preserves insertion order).
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(map) => {
                let mut entries: Vec<_> = map.iter().collect();
                entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
                Value::Object(
                    entries
                        .into_iter()
                        .map(|(k, v)| (k.clone(), sorted(v)))
                        .collect(),
                )
            }
            Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
            scalar => scalar.clone(),
        }
    }

    fn json_value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let scalar = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|i| json!(i)),
            any::<u64>().prop_map(|u| json!(u)),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(|f| json!(f)),
            "[a-z\"\\\\\\x00-\\x1f\\x7fé😀/]{0,8}".prop_map(Value::String),
        ];
        scalar.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                proptest::collection::vec(("[a-zé\"\\x01]{0,4}", inner), 0..6)
                    .prop_map(|entries| Value::Object(entries.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

        /// The canonical text is serde_json's compact text of the value
        /// with every object's keys sorted, byte for byte, and reads back
        /// as the value.
        #[test]
        fn the_canonical_text_is_serde_json_s_text_of_the_sorted_value(value in json_value()) {
            let canonical = canonical_json(&value);
            let sorted = sorted(&value);
            proptest::prop_assert!(in_canonical_order(&sorted));
            proptest::prop_assert_eq!(&canonical, &serde_json::to_string(&sorted).unwrap());
            let reparsed: Value = serde_json::from_str(&canonical).unwrap();
            proptest::prop_assert_eq!(&reparsed, &value);
            if in_canonical_order(&value) {
                proptest::prop_assert_eq!(&canonical, &serde_json::to_string(&value).unwrap());
            }
        }
    }

    #[test]
    fn compact_json_in_canonical_order_is_the_canonical_text() {
        let mut ordered = serde_json::Map::new();
        ordered.insert("a".into(), json!([1, {"b": "x\"", "c": 2.5}]));
        ordered.insert("b".into(), json!(null));
        let ordered = Value::Object(ordered);
        assert!(in_canonical_order(&ordered));
        assert_eq!(
            serde_json::to_string(&ordered).unwrap(),
            canonical_json(&ordered)
        );
        let mut nested_out_of_order = serde_json::Map::new();
        nested_out_of_order.insert("d".into(), json!(1));
        nested_out_of_order.insert("c".into(), json!(2));
        let outer = json!({"a": [Value::Object(nested_out_of_order.clone())]});
        // Whether a map keeps insertion order depends on serde_json's
        // features: the check must say so exactly when it does.
        let keeps_order = nested_out_of_order.keys().next().map(String::as_str) == Some("d");
        assert_eq!(in_canonical_order(&outer), !keeps_order);
        assert_eq!(
            serde_json::to_string(&outer).unwrap() == canonical_json(&outer),
            in_canonical_order(&outer)
        );
    }

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
