//! Whether a JSON value written piece by piece is valid, checked byte by
//! byte as it arrives, so that a value read as it streams need not be
//! parsed again once it is complete.
//!
//! A [`JsonCheck`] follows the grammar serde_json reads a value with
//! (`serde::de::IgnoredAny`: any nesting, numbers and literals as RFC 8259
//! writes them, the four whitespace bytes, the escapes `\" \\ \/ \b \f \n
//! \r \t`): when it says a value is valid, serde_json reads it without an
//! error. The bytes it is fed come from a `str`, so their UTF-8 is not its
//! concern. It keeps a few bytes of state and never looks back.
//!
//! Two things it does not follow, and then says nothing (the value is
//! [unknown](JsonCheck::known), to be parsed as before): a `\u` escape
//! (four hex digits it does not count, so that a byte after the `u` is
//! never taken for plain text of the string), and arrays and objects
//! nested deeper than 32 (so that the check fits in 8 bytes, beside the
//! reader's other state).
//!
//! Inside a string, not after a backslash, a byte that neither ends the
//! string nor escapes the next and is not a control character changes
//! nothing: such bytes may be appended without [`step`](JsonCheck::step)
//! (see [`JsonCheck::in_plain_string`]). A reader that follows a string's
//! backslashes itself may also hand the check only the string's quotes,
//! and each other byte with [`string_byte`](JsonCheck::string_byte).

/// A JSON value's validity, followed byte by byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct JsonCheck {
    /// Bit `d` set: the container open at depth `d + 1` is an object.
    objects: u32,
    /// Arrays and objects open.
    depth: u8,
    at: At,
}

/// Where the check is in the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum At {
    /// Before the value: whitespace, then its first byte.
    Start,
    /// A value must come (after a colon, or a comma in an array).
    Value,
    /// Just after `[`: a value or the `]`.
    FirstItem,
    /// Just after `{`: a key or the `}`.
    FirstKey,
    /// After a comma in an object: a key.
    Key,
    /// After a key: its colon.
    Colon,
    /// After a value in an array or object: a comma or the close.
    After,
    /// In a string (a key when `key`); `escaped` just after a backslash.
    Str { key: bool, escaped: bool },
    /// In a number.
    Num(Num),
    /// In a literal: `word` of [`WORDS`], its byte `next` to come.
    Word { word: u8, next: u8 },
    /// The value is complete: only whitespace may follow.
    Done,
    /// A byte serde_json refuses came, or one the check does not follow:
    /// it knows nothing any more.
    Unknown,
}

/// Where a number is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Num {
    /// After its `-`.
    Minus,
    /// After a leading `0` (no digit may follow it).
    Zero,
    /// In its integer digits.
    Int,
    /// After its `.`: a digit must come.
    Dot,
    /// In its fraction's digits.
    Frac,
    /// After its `e` or `E`.
    Exp,
    /// After the exponent's sign: a digit must come.
    ExpSign,
    /// In the exponent's digits.
    ExpDigits,
}

/// The literals, after their first byte.
const WORDS: [&[u8]; 3] = [b"rue", b"alse", b"ull"];

impl Default for JsonCheck {
    fn default() -> Self {
        Self::new()
    }
}

impl JsonCheck {
    /// A check that knows nothing (see [`known`](Self::known)).
    pub(crate) const UNKNOWN: JsonCheck = JsonCheck {
        objects: 0,
        depth: 0,
        at: At::Unknown,
    };

    /// A check before the value's first byte.
    pub(crate) const fn new() -> Self {
        JsonCheck {
            objects: 0,
            depth: 0,
            at: At::Start,
        }
    }

    /// A check of the value whose first byte is `first`, just after it.
    #[cfg(test)]
    fn opened(first: u8) -> Self {
        let mut check = Self::new();
        check.step(first);
        check
    }

    /// Whether the check still follows the value (nothing it refuses or
    /// does not follow came).
    pub(crate) fn known(&self) -> bool {
        self.at != At::Unknown
    }

    /// Whether the value is complete and valid (a top-level number, which
    /// only the end of the text ends, counts as complete).
    pub(crate) fn complete(&self) -> bool {
        match self.at {
            At::Done => true,
            At::Num(Num::Zero | Num::Int | Num::Frac | Num::ExpDigits) => self.depth == 0,
            _ => false,
        }
    }

    /// Whether the last byte checked is inside a string and not a
    /// backslash that escapes the next: a plain byte (ASCII but `"`, `\`
    /// and the control characters, or any byte of a longer character)
    /// then leaves the check as it is.
    pub(crate) fn in_plain_string(&self) -> bool {
        matches!(self.at, At::Str { escaped: false, .. })
    }

    /// Inside a string: says whether the last byte is a backslash that
    /// escapes the next, for a caller that followed the string's
    /// backslashes itself (see [`string_byte`](Self::string_byte)) and
    /// now hands the check every byte again, or the other way round.
    /// Outside a string it changes nothing.
    pub(crate) fn set_escaped(&mut self, escaped: bool) {
        if let At::Str { key, .. } = self.at {
            self.at = At::Str { key, escaped };
        }
    }

    /// A byte inside a string that does not end it, read by a caller that
    /// follows the string's backslashes itself (`escaped`: the byte
    /// before is a backslash that escapes this one; a backslash that
    /// escapes the next is not handed over): the check is left inside the
    /// string, or knows nothing when JSON refuses the byte there (a
    /// control character, an escape but `\" \\ \/ \b \f \n \r \t`;
    /// `\u` is not followed). The string's closing quote is then read
    /// with [`step`](Self::step) as the check was before the string's
    /// first byte.
    #[inline(always)]
    pub(crate) fn string_byte(&mut self, b: u8, escaped: bool) {
        let allowed = if escaped {
            matches!(b, b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't')
        } else {
            b >= 0x20
        };
        if !allowed {
            self.at = At::Unknown;
        }
    }

    /// Checks the next byte. Inside a string it is read inline (the
    /// bytes read in place that are not plain are mostly a string's
    /// escapes and quotes); elsewhere by [`step_token`](Self::step_token).
    #[inline]
    pub(crate) fn step(&mut self, b: u8) {
        self.at = match self.at {
            At::Str {
                key,
                escaped: false,
            } => match b {
                b'"' if key => At::Colon,
                b'"' => self.ended(),
                b'\\' => At::Str { key, escaped: true },
                0..=0x1f => At::Unknown,
                _ => return,
            },
            At::Str { key, escaped: true } => match b {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => At::Str {
                    key,
                    escaped: false,
                },
                // `\u` and its four digits are not followed (see the module
                // docs); anything else is refused.
                _ => At::Unknown,
            },
            _ => return self.step_token(b),
        };
    }

    /// [`step`](Self::step) outside a string.
    #[inline(never)]
    fn step_token(&mut self, b: u8) {
        self.at = match self.at {
            At::Str { .. } => return self.step(b),
            At::Num(num) => match (num, b) {
                (Num::Minus, b'0') => At::Num(Num::Zero),
                (Num::Minus, b'1'..=b'9') => At::Num(Num::Int),
                (Num::Int, b'0'..=b'9') => At::Num(Num::Int),
                (Num::Zero | Num::Int, b'.') => At::Num(Num::Dot),
                (Num::Dot | Num::Frac, b'0'..=b'9') => At::Num(Num::Frac),
                (Num::Zero | Num::Int | Num::Frac, b'e' | b'E') => At::Num(Num::Exp),
                (Num::Exp, b'+' | b'-') => At::Num(Num::ExpSign),
                (Num::Exp | Num::ExpSign | Num::ExpDigits, b'0'..=b'9') => At::Num(Num::ExpDigits),
                // A complete number ends at the first byte that cannot
                // continue it, which is then read after it.
                (Num::Zero | Num::Int | Num::Frac | Num::ExpDigits, _) => {
                    self.at = self.ended();
                    return self.step(b);
                }
                _ => At::Unknown,
            },
            At::Word { word, next } => {
                let rest = WORDS[usize::from(word)];
                if rest[usize::from(next)] != b {
                    At::Unknown
                } else if usize::from(next) + 1 == rest.len() {
                    self.ended()
                } else {
                    At::Word {
                        word,
                        next: next + 1,
                    }
                }
            }
            _ if matches!(b, b' ' | b'\t' | b'\n' | b'\r') => return,
            At::Start | At::Value | At::FirstItem => match b {
                b']' if self.at == At::FirstItem => self.close(false),
                _ => self.value(b),
            },
            At::FirstKey | At::Key => match b {
                b'"' => At::Str {
                    key: true,
                    escaped: false,
                },
                b'}' if self.at == At::FirstKey => self.close(true),
                _ => At::Unknown,
            },
            At::Colon => match b {
                b':' => At::Value,
                _ => At::Unknown,
            },
            At::After => match b {
                b',' if self.in_object() => At::Key,
                b',' => At::Value,
                b'}' => self.close(true),
                b']' => self.close(false),
                _ => At::Unknown,
            },
            At::Done | At::Unknown => At::Unknown,
        };
    }

    /// A value's first byte.
    fn value(&mut self, b: u8) -> At {
        match b {
            b'"' => At::Str {
                key: false,
                escaped: false,
            },
            b'{' | b'[' => self.open(b == b'{'),
            b'-' => At::Num(Num::Minus),
            b'0' => At::Num(Num::Zero),
            b'1'..=b'9' => At::Num(Num::Int),
            b't' => At::Word { word: 0, next: 0 },
            b'f' => At::Word { word: 1, next: 0 },
            b'n' => At::Word { word: 2, next: 0 },
            _ => At::Unknown,
        }
    }

    fn in_object(&self) -> bool {
        self.depth > 0 && self.objects >> (self.depth - 1) & 1 == 1
    }

    fn open(&mut self, object: bool) -> At {
        if u32::from(self.depth) == u32::BITS {
            return At::Unknown;
        }
        let bit = 1u32 << self.depth;
        if object {
            self.objects |= bit;
        } else {
            self.objects &= !bit;
        }
        self.depth += 1;
        if object { At::FirstKey } else { At::FirstItem }
    }

    fn close(&mut self, object: bool) -> At {
        if self.depth == 0 || self.in_object() != object {
            return At::Unknown;
        }
        self.depth -= 1;
        self.ended()
    }

    /// Where a value that just ended leaves the check.
    fn ended(&self) -> At {
        if self.depth == 0 { At::Done } else { At::After }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn check(text: &str) -> JsonCheck {
        let mut c = JsonCheck::new();
        for &b in text.as_bytes() {
            c.step(b);
        }
        c
    }

    fn serde_reads(text: &str) -> bool {
        serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
    }

    /// What the check promises against serde_json: a value it calls valid
    /// is one serde_json reads; one serde_json reads is valid for it
    /// unless it holds a `\u` escape or nests deeper than 32.
    fn agrees(text: &str) {
        let c = check(text);
        let serde = serde_reads(text);
        if c.complete() {
            assert!(serde, "the check took {text:?}, serde_json refuses it");
        }
        let followed = !text.contains("\\u") && !text.contains(&"[".repeat(33));
        if serde && followed {
            assert!(
                c.complete(),
                "serde_json reads {text:?}, the check refused it"
            );
        }
    }

    #[test]
    fn it_reads_what_serde_json_reads_and_refuses_what_it_refuses() {
        for text in [
            "{}",
            "[]",
            " { \"a\" : [1, -0.5e+3, true, false, null, \"x\\\"\\n\\/\"] } ",
            "{\"a\":{\"b\":{}}}",
            "[[], [[]], {}]",
            "0",
            "-0",
            "1E9",
            "\"\"",
            "\"é \\\\ ok\"",
            "[1,]",
            "[,1]",
            "{\"a\":1,}",
            "{,}",
            "{\"a\" 1}",
            "{1:2}",
            "[01]",
            "[1.]",
            "[.5]",
            "[1e]",
            "[1e+]",
            "[-]",
            "[+1]",
            "[tru]",
            "[truex]",
            "[nul]",
            "[1 2]",
            "[1true]",
            "{\"a\":1}}",
            "[1]]",
            "[}",
            "{]",
            "\"a\u{1}b\"",
            "\"\\x\"",
            "\"\\u00e9\"",
            "[1]x",
            "[\"a\" \"b\"]",
            "{\"a\":}",
            "",
            "   ",
        ] {
            agrees(text);
        }
    }

    #[test]
    fn a_u_escape_and_deep_nesting_are_not_followed() {
        assert!(!check("\"\\u00e9\"").known());
        let deep = format!("{}{}", "[".repeat(33), "]".repeat(33));
        assert!(serde_reads(&deep));
        assert!(!check(&deep).known());
        let just = format!("{}{}", "[".repeat(32), "]".repeat(32));
        assert!(check(&just).complete());
    }

    #[test]
    fn plain_string_bytes_change_nothing() {
        let mut c = JsonCheck::opened(b'[');
        c.step(b'"');
        assert!(c.in_plain_string());
        let before = c;
        for b in (0x20..=0xffu8).filter(|&b| b != b'"' && b != b'\\') {
            c.step(b);
            assert_eq!(c, before, "{b:#x}");
        }
        c.step(b'\\');
        assert!(!c.in_plain_string());
    }

    #[test]
    fn a_string_s_bytes_handed_over_with_their_escapes_are_checked_as_stepped() {
        // The caller follows backslashes; the check sees the quotes and
        // the other bytes with whether they are escaped.
        for (inner, valid) in [
            ("plain é", true),
            ("a\\\"b\\/\\b\\f\\n\\r\\t\\\\", true),
            ("\\x", false),
            ("\\u0041", false),
            ("tab\there", false),
        ] {
            let mut c = JsonCheck::opened(b'[');
            c.step(b'"');
            let mut escaped = false;
            for &b in inner.as_bytes() {
                if !escaped && b == b'\\' {
                    escaped = true;
                    continue;
                }
                c.string_byte(b, escaped);
                escaped = false;
            }
            c.step(b'"');
            c.step(b']');
            assert_eq!(c.complete(), valid, "{inner:?}");
            let text = format!("[\"{inner}\"]");
            assert_eq!(check(&text).complete(), valid, "{text:?}");
        }
    }

    /// Text made of JSON's tokens and a few bytes that break it, so that
    /// most cases are near-valid.
    fn jsonish() -> impl Strategy<Value = String> {
        let piece = prop::sample::select(vec![
            "{", "}", "[", "]", ",", ":", " ", "\n", "\"", "\\", "\\n", "\\u0041", "a", "é",
            "\"k\"", "\"v\"", "0", "1", "-", ".", "e", "+", "12", "true", "false", "null", "nul",
            "\u{1}", "x", "\t",
        ]);
        prop::collection::vec(piece, 0..24).prop_map(|parts| parts.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]
        #[test]
        fn it_agrees_with_serde_json_on_any_text(text in jsonish()) {
            agrees(&text);
        }

        #[test]
        fn it_agrees_on_valid_values_broken_at_one_byte(
            value in prop::collection::vec(prop::sample::select(vec![
                "{\"a\": [1, 2.5e-3, \"s\\\"t\"]}", "[true, null, {}]", "{\"k\": {\"n\": -0}}",
                "[\"é\", [], [[0]]]",
            ]), 1..4),
            at in 0usize..200,
            byte in prop::sample::select(b" ,:[]{}\"\\0-.eatx".to_vec()),
        ) {
            let mut text = format!("[{}]", value.join(",")).into_bytes();
            agrees(std::str::from_utf8(&text).unwrap_or_default());
            if at < text.len() && text[at].is_ascii() {
                text[at] = byte;
                if let Ok(text) = std::str::from_utf8(&text) {
                    agrees(text);
                }
            }
        }
    }
}
