//! Masking secret values and configured patterns in anything model-facing.
//!
//! A secret is masked in the forms it usually leaks in (see
//! [`secret_forms`]): verbatim; JSON-escaped (quotes, backslashes, control
//! characters, non-ASCII characters as `\uXXXX` in lower or upper case,
//! and escaped twice, as in JSON inside a JSON string); base64, standard and
//! URL-safe, with and without padding, alone or inside a longer base64 text
//! (such as an HTTP Basic credential); and hex, lower and upper case.
//! Not covered: other encodings (percent-encoding, base32, gzip, ...),
//! a secret cut into pieces or partly escaped, hashes of it, and a secret
//! shorter than [`MIN_EMBEDDED_BASE64`] bytes inside a longer base64 text.

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::Value;

use crate::output::{ContentBlock, ToolOutput};
use crate::safety::RedactionPolicy;

/// The text that replaces a masked value.
pub const MASK: &str = "[redacted]";

/// Masks secret values, literal patterns and named JSON fields.
///
/// Build one per run and tool from the run's [`crate::Secrets`] and the tool's
/// [`RedactionPolicy`]; it is cheap when there is nothing to mask.
///
/// ```
/// use tinyagents_tools::policy::Redactor;
/// let r = Redactor::new(["sk-live-123"], ["internal.corp"], ["password"]);
/// assert_eq!(r.text("key sk-live-123 at internal.corp"), "key [redacted] at [redacted]");
/// let mut v = serde_json::json!({"user": "ada", "password": "hunter2"});
/// r.json(&mut v);
/// assert_eq!(v["password"], "[redacted]");
/// ```
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    needles: Vec<Arc<str>>,
    fields: Vec<String>,
}

impl Redactor {
    /// A redactor for the given secret values, literal patterns and field
    /// names. Empty strings are ignored.
    pub fn new<V, P, F>(secrets: V, patterns: P, fields: F) -> Self
    where
        V: IntoIterator,
        V::Item: AsRef<str>,
        P: IntoIterator,
        P::Item: AsRef<str>,
        F: IntoIterator,
        F::Item: AsRef<str>,
    {
        let mut needles: Vec<Arc<str>> = secrets
            .into_iter()
            .map(|s| Arc::from(s.as_ref()))
            .chain(patterns.into_iter().map(|s| Arc::from(s.as_ref())))
            .filter(|s: &Arc<str>| !s.is_empty())
            .collect();
        // Longest first, so a secret that contains another is masked whole.
        needles.sort_by_key(|s| std::cmp::Reverse(s.len()));
        needles.dedup();
        Redactor {
            needles,
            fields: fields
                .into_iter()
                .map(|f| f.as_ref().to_ascii_lowercase())
                .collect(),
        }
    }

    /// The redactor for a tool's `policy` in a run whose secret texts are
    /// `secrets`; each secret is masked in every form [`secret_forms`]
    /// lists.
    pub fn for_policy(policy: &RedactionPolicy, secrets: &[Arc<str>]) -> Self {
        let secrets: &[Arc<str>] = if policy.secrets { secrets } else { &[] };
        Redactor::new(
            secrets.iter().flat_map(|s| secret_forms(s)),
            &policy.patterns,
            &policy.fields,
        )
    }

    /// Masks every model-facing part of an output: text, JSON blocks, links
    /// and the structured value.
    pub fn output(&self, output: &mut ToolOutput) {
        if self.is_noop() {
            return;
        }
        for block in &mut output.content {
            match block {
                ContentBlock::Text { text } => {
                    if let Cow::Owned(masked) = self.text(text) {
                        *text = masked;
                    }
                }
                ContentBlock::Json { value } => self.json(value),
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
                        if let Cow::Owned(masked) = self.text(field) {
                            *field = masked;
                        }
                    }
                }
                ContentBlock::Image { .. } => {}
            }
        }
        if let Some(value) = &mut output.structured {
            self.json(value);
        }
    }

    /// True when nothing would ever be masked.
    pub fn is_noop(&self) -> bool {
        self.needles.is_empty() && self.fields.is_empty()
    }

    /// `text` with every secret and pattern masked.
    pub fn text<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out: Cow<'a, str> = Cow::Borrowed(text);
        for needle in &self.needles {
            if out.contains(&**needle) {
                out = Cow::Owned(out.replace(&**needle, MASK));
            }
        }
        out
    }

    /// Masks `value` in place: string leaves through [`Redactor::text`], and
    /// the whole value of any field whose name is listed. Object keys that
    /// contain a secret are masked too.
    pub fn json(&self, value: &mut Value) {
        if self.is_noop() {
            return;
        }
        match value {
            Value::String(s) => {
                if let Cow::Owned(masked) = self.text(s) {
                    *s = masked;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.json(v)),
            Value::Object(map) => {
                let keys_to_fix: Vec<String> = map
                    .keys()
                    .filter(|k| matches!(self.text(k), Cow::Owned(_)))
                    .cloned()
                    .collect();
                for key in keys_to_fix {
                    if let Some(v) = map.remove(&key) {
                        map.insert(self.text(&key).into_owned(), v);
                    }
                }
                for (key, v) in map.iter_mut() {
                    if self.fields.iter().any(|f| f.eq_ignore_ascii_case(key)) {
                        *v = Value::String(MASK.to_owned());
                    } else {
                        self.json(v);
                    }
                }
            }
            _ => {}
        }
    }
}

/// The shortest secret (in bytes) whose base64 form is also looked for
/// inside a longer base64 text; the core of a shorter one would be too short
/// to mask without masking unrelated text.
pub const MIN_EMBEDDED_BASE64: usize = 8;

/// Every form of `secret` a [`Redactor`] built by
/// [`for_policy`](Redactor::for_policy) masks: the text itself, its JSON
/// escapes, its base64 and hex encodings (see the module documentation).
pub fn secret_forms(secret: &str) -> Vec<String> {
    let mut forms = vec![secret.to_owned()];
    if secret.is_empty() {
        return Vec::new();
    }
    let escaped = json_escape(secret, false, false);
    forms.push(json_escape(secret, true, false));
    forms.push(json_escape(secret, true, true));
    forms.push(json_escape(&escaped, false, false));
    forms.push(escaped);
    let bytes = secret.as_bytes();
    for alphabet in [STANDARD, URL_SAFE] {
        let full = base64(bytes, alphabet);
        forms.push(full.trim_end_matches('=').to_owned());
        forms.push(full);
        if bytes.len() >= MIN_EMBEDDED_BASE64 {
            // Inside a longer text the secret starts at byte offset 0, 1 or
            // 2 of a three-byte group: keep the characters that depend on
            // the secret's bytes alone.
            for offset in 1..3 {
                let mut shifted = vec![0u8; offset];
                shifted.extend_from_slice(bytes);
                let encoded = base64(&shifted, alphabet);
                let start = (offset * 8).div_ceil(6);
                let end = ((offset + bytes.len()) * 8) / 6;
                forms.push(encoded[start..end].to_owned());
            }
            let end = (bytes.len() * 8) / 6;
            forms.push(full_prefix(&base64(bytes, alphabet), end));
        }
    }
    forms.push(hex(bytes, b"0123456789abcdef"));
    forms.push(hex(bytes, b"0123456789ABCDEF"));
    forms.sort();
    forms.dedup();
    forms
}

/// The first `n` characters of an ASCII string.
fn full_prefix(text: &str, n: usize) -> String {
    text[..n.min(text.len())].to_owned()
}

/// `text` as it appears inside a JSON string: quotes, backslashes and
/// control characters escaped, and, when `ascii`, every non-ASCII character
/// as `\uXXXX` (UTF-16, `upper` hex or lower).
fn json_escape(text: &str, ascii: bool, upper: bool) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    for ch in text.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || (ascii && !c.is_ascii()) => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    if upper {
                        out.push_str(&format!("\\u{unit:04X}"));
                    } else {
                        out.push_str(&format!("\\u{unit:04x}"));
                    }
                }
            }
            c => out.push(c),
        }
    }
    out
}

const STANDARD: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL_SAFE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Padded base64 of `bytes` in `alphabet`.
fn base64(bytes: &[u8], alphabet: &[u8; 64]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(alphabet[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// `bytes` in hex with the given digits.
fn hex(bytes: &[u8], digits: &[u8; 16]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(digits[usize::from(b >> 4)] as char);
        out.push(digits[usize::from(b & 15)] as char);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nested_values_keys_and_fields_are_masked() {
        let r = Redactor::new(["tok-1", "tok-12"], Vec::<&str>::new(), ["Token"]);
        let mut v = json!({"a": ["x tok-12 y", {"token": "plain"}], "tok-1": 1});
        r.json(&mut v);
        assert_eq!(
            v,
            json!({"a": ["x [redacted] y", {"token": "[redacted]"}], "[redacted]": 1})
        );
    }

    #[test]
    fn a_policy_that_turns_secret_masking_off_keeps_patterns() {
        let policy = RedactionPolicy {
            secrets: false,
            fields: vec![],
            patterns: vec!["corp".into()],
        };
        let r = Redactor::for_policy(&policy, &[Arc::from("s3cret")]);
        assert_eq!(r.text("s3cret corp"), "s3cret [redacted]");
    }

    #[test]
    fn base64_and_hex_match_the_reference_encodings() {
        assert_eq!(base64(b"", STANDARD), "");
        assert_eq!(base64(b"f", STANDARD), "Zg==");
        assert_eq!(base64(b"fo", STANDARD), "Zm8=");
        assert_eq!(base64(b"foobar", STANDARD), "Zm9vYmFy");
        assert_eq!(base64(&[0xfb, 0xff], STANDARD), "+/8=");
        assert_eq!(base64(&[0xfb, 0xff], URL_SAFE), "-_8=");
        assert_eq!(hex(&[0x0a, 0xff], b"0123456789abcdef"), "0aff");
    }

    #[test]
    fn every_listed_form_of_a_secret_is_masked() {
        let secret = "tök\"en\\42-abcdef";
        let r = Redactor::for_policy(&RedactionPolicy::default(), &[Arc::from(secret)]);
        let json_text = serde_json::to_string(&json!({"k": secret})).unwrap();
        let ascii = "t\\u00f6k\\\"en\\\\42-abcdef";
        let twice = serde_json::to_string(&json_text).unwrap();
        let basic = base64(format!("user:{secret}").as_bytes(), STANDARD);
        for leaked in [
            json_text.clone(),
            ascii.to_owned(),
            ascii.replace("00f6", "00F6"),
            twice,
            base64(secret.as_bytes(), STANDARD),
            base64(secret.as_bytes(), URL_SAFE)
                .trim_end_matches('=')
                .to_owned(),
            basic,
            hex(secret.as_bytes(), b"0123456789abcdef"),
            hex(secret.as_bytes(), b"0123456789ABCDEF"),
        ] {
            let masked = r.text(&leaked);
            assert!(masked.contains(MASK), "{leaked} -> {masked}");
            assert!(!masked.contains("42-abcdef"), "{leaked} -> {masked}");
        }
    }
}
