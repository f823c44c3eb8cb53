//! The forms a secret is masked in.
//!
//! A secret is masked verbatim; JSON-escaped (quotes, backslashes, control
//! characters, non-ASCII characters as `\uXXXX` in lower or upper case,
//! and escaped twice, as in JSON inside a JSON string); in base64, standard
//! and URL-safe, with and without padding, alone or inside a longer base64
//! text (such as an HTTP Basic credential); and in hex, lower and upper
//! case. Not covered: other encodings (percent-encoding, base32, gzip, ...),
//! a secret cut into pieces or partly escaped, hashes of it, and a secret
//! shorter than [`MIN_EMBEDDED_BASE64`] bytes inside a longer base64 text.

/// The shortest secret (in bytes) whose base64 form is also looked for
/// inside a longer base64 text; the core of a shorter one would be too short
/// to mask without masking unrelated text.
pub const MIN_EMBEDDED_BASE64: usize = 8;

/// Every form of `secret` a [`Redactor`](crate::redact::Redactor) masks: the
/// text itself, its JSON escapes, its base64 and hex encodings (see the
/// module documentation).
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

pub(crate) const STANDARD: &[u8; 64] =
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
pub(crate) const URL_SAFE: &[u8; 64] =
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Padded base64 of `bytes` in `alphabet`.
pub(crate) fn base64(bytes: &[u8], alphabet: &[u8; 64]) -> String {
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
pub(crate) fn hex(bytes: &[u8], digits: &[u8; 16]) -> String {
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
}
