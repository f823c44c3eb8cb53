//! `#[tool(example = "...")]`: each literal must be one JSON object (the
//! arguments a model would send), checked here for syntax with a small JSON
//! reader of its own. Whether it fits the input schema is checked when the
//! tool is registered.

use crate::attr::EXAMPLE_FORM;
use crate::util::Errors;

/// Checks that every example is one JSON object.
pub(super) fn check(examples: &[syn::LitStr], errors: &mut Errors) {
    for example in examples {
        if let Err((problem, at)) = check_object(&example.value()) {
            errors.push(
                example.span(),
                format_args!("invalid example: {problem} (at byte {at}); {EXAMPLE_FORM}"),
            );
        }
    }
}

/// `Ok` when `text` is one JSON object; otherwise what is wrong and the
/// byte offset where.
fn check_object(text: &str) -> Result<(), (String, usize)> {
    let mut p = Parser {
        bytes: text.as_bytes(),
        at: 0,
    };
    p.space();
    if p.peek() != Some(b'{') {
        return Err((
            "the root must be an object, `{\"name\": value, ...}`".into(),
            p.at,
        ));
    }
    p.value(0)?;
    p.space();
    if p.at != p.bytes.len() {
        return Err(("unexpected text after the JSON object".into(), p.at));
    }
    Ok(())
}

struct Parser<'a> {
    bytes: &'a [u8],
    at: usize,
}

type Step = Result<(), (String, usize)>;

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn fail<T>(&self, what: &str) -> Result<T, (String, usize)> {
        let found = match self.peek() {
            None => "the end of the text".to_owned(),
            Some(b) => format!("`{}`", b as char),
        };
        Err((format!("expected {what}, found {found}"), self.at))
    }

    fn space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn eat(&mut self, b: u8) -> bool {
        if self.peek() == Some(b) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn value(&mut self, depth: usize) -> Step {
        if depth > 128 {
            return self.fail("less nesting");
        }
        self.space();
        match self.peek() {
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => self.string(),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b't') => self.word("true"),
            Some(b'f') => self.word("false"),
            Some(b'n') => self.word("null"),
            _ => self.fail("a JSON value"),
        }
    }

    fn object(&mut self, depth: usize) -> Step {
        if self.opens_empty(b'}') {
            return Ok(());
        }
        loop {
            self.space();
            if self.peek() != Some(b'"') {
                return self.fail("a key in double quotes");
            }
            self.string()?;
            self.space();
            if !self.eat(b':') {
                return self.fail("`:`");
            }
            self.value(depth + 1)?;
            if !self.more(b'}', "`,` or `}`")? {
                return Ok(());
            }
        }
    }

    fn array(&mut self, depth: usize) -> Step {
        if self.opens_empty(b']') {
            return Ok(());
        }
        loop {
            self.value(depth + 1)?;
            if !self.more(b']', "`,` or `]`")? {
                return Ok(());
            }
        }
    }

    /// Steps over the `{` or `[` at the cursor: `true` when `close` follows
    /// at once (the container is empty).
    fn opens_empty(&mut self, close: u8) -> bool {
        self.at += 1;
        self.space();
        self.eat(close)
    }

    /// After an item of an object or array: `true` at a `,` (another item
    /// follows), `false` at `close` (the container ends), an error naming
    /// `expected` at anything else.
    fn more(&mut self, close: u8, expected: &str) -> Result<bool, (String, usize)> {
        self.space();
        if self.eat(b',') {
            Ok(true)
        } else if self.eat(close) {
            Ok(false)
        } else {
            self.fail(expected)
        }
    }

    fn string(&mut self) -> Step {
        self.at += 1;
        loop {
            match self.peek() {
                None => return self.fail("the closing `\"`"),
                Some(b'"') => {
                    self.at += 1;
                    return Ok(());
                }
                Some(b'\\') => {
                    self.at += 1;
                    match self.peek() {
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {
                            self.at += 1
                        }
                        Some(b'u') => {
                            self.at += 1;
                            for _ in 0..4 {
                                if !self.peek().is_some_and(|b| b.is_ascii_hexdigit()) {
                                    return self.fail("four hex digits after `\\u`");
                                }
                                self.at += 1;
                            }
                        }
                        _ => return self.fail("an escape (`\\\"`, `\\\\`, `\\n`, `\\u00e9`, ...)"),
                    }
                }
                Some(b) if b < 0x20 => {
                    return self.fail("`\\n` or another escape, not a raw control character");
                }
                Some(_) => self.at += 1,
            }
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.at;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.at += 1;
        }
        self.at - start
    }

    fn number(&mut self) -> Step {
        self.eat(b'-');
        if self.eat(b'0') {
            if self.peek().is_some_and(|b| b.is_ascii_digit()) {
                return self.fail("no leading zero");
            }
        } else if self.digits() == 0 {
            return self.fail("a digit");
        }
        if self.eat(b'.') && self.digits() == 0 {
            return self.fail("a digit after `.`");
        }
        if self.eat(b'e') || self.eat(b'E') {
            let _ = self.eat(b'+') || self.eat(b'-');
            if self.digits() == 0 {
                return self.fail("a digit in the exponent");
            }
        }
        Ok(())
    }

    fn word(&mut self, word: &str) -> Step {
        if self.bytes[self.at..].starts_with(word.as_bytes()) {
            self.at += word.len();
            Ok(())
        } else {
            self.fail("`true`, `false` or `null`")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::check_object;

    #[test]
    fn well_formed_objects_pass() {
        for text in [
            r#"{}"#,
            r#" {"city": "Paris", "days": 3, "hot": true, "note": null} "#,
            r#"{"a": [1, -2.5e3, {"b": "\u00e9\n"}], "c": []}"#,
        ] {
            assert_eq!(check_object(text), Ok(()), "{text}");
        }
    }

    #[test]
    fn malformed_text_names_the_problem_and_where() {
        let cases = [
            (
                r#"{"city": 'Paris'}"#,
                "expected a JSON value, found `'`",
                9,
            ),
            (
                r#"{city: "Paris"}"#,
                "expected a key in double quotes, found `c`",
                1,
            ),
            (
                r#"{"a": 1,}"#,
                "expected a key in double quotes, found `}`",
                8,
            ),
            (
                r#"{"a": 1"#,
                "expected `,` or `}`, found the end of the text",
                7,
            ),
            (r#"{"a": [1 2]}"#, "expected `,` or `]`, found `2`", 9),
            (r#"{"a": 01}"#, "expected no leading zero, found `1`", 7),
            (r#"{} {}"#, "unexpected text after the JSON object", 3),
        ];
        for (text, message, at) in cases {
            assert_eq!(check_object(text), Err((message.to_owned(), at)), "{text}");
        }
        let (message, at) = check_object(r#"["Paris"]"#).unwrap_err();
        assert!(
            message.starts_with("the root must be an object"),
            "{message}"
        );
        assert_eq!(at, 0);
    }
}
