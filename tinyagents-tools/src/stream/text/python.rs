//! Python call syntax: where a call `f(a=1, b="x")` ends, read byte by
//! byte, and its keyword arguments read as JSON.
//!
//! Values are Python literals: strings (single, double or triple quoted,
//! with Python's escapes), integers and floats, `True`/`False`/`None`
//! (and JSON's `true`/`false`/`null`), lists and tuples (JSON arrays), and
//! dicts with string keys (JSON objects). Anything else (a name, an
//! expression, a positional argument) is malformed.

use serde_json::{Map, Number, Value};

/// Where the scan of one call is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Reading the name, before `(`.
    Name { started: bool, ended: bool },
    /// Inside the parentheses.
    Args,
    /// The call closed.
    Done,
}

/// A Python string being scanned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Str {
    quote: u8,
    triple: bool,
    escaped: bool,
    /// Closing quotes seen in a row (for triple-quoted strings).
    closing: u8,
    /// Bytes of content so far.
    len: usize,
}

/// What a byte told the scanner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PyStep {
    /// Nothing decided yet.
    Going,
    /// The `(` after the name: the text is a call.
    Opened,
    /// The call's `)`: it ends after this byte.
    Closed,
    /// The text before `(` is not a call name.
    NotACall,
    /// Brackets nest deeper than the bound.
    TooDeep,
}

/// Finds the end of one Python call, string- and bracket-aware.
#[derive(Debug, Clone)]
pub(crate) struct PyCallScan {
    phase: Phase,
    depth: usize,
    max_depth: usize,
    string: Option<Str>,
    /// The quote of an empty string that just closed: a third quote makes
    /// it the start of a triple-quoted string.
    empty_closed: Option<u8>,
}

impl PyCallScan {
    pub(crate) fn new(max_depth: usize) -> Self {
        PyCallScan {
            phase: Phase::Name {
                started: false,
                ended: false,
            },
            depth: 0,
            max_depth,
            string: None,
            empty_closed: None,
        }
    }

    /// Whether the scanner is inside a string literal.
    pub(crate) fn in_string(&self) -> bool {
        self.string.is_some()
    }

    /// Whether the `(` came.
    pub(crate) fn opened(&self) -> bool {
        !matches!(self.phase, Phase::Name { .. })
    }

    pub(crate) fn step(&mut self, b: u8) -> PyStep {
        match self.phase {
            Phase::Done => PyStep::Closed,
            Phase::Name { started, ended } => {
                if b == b'(' && started {
                    self.phase = Phase::Args;
                    self.depth = 1;
                    return PyStep::Opened;
                }
                if b.is_ascii_whitespace() {
                    if started {
                        self.phase = Phase::Name {
                            started,
                            ended: true,
                        };
                    }
                    return PyStep::Going;
                }
                let name_byte = b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-');
                if ended || !name_byte || !(started || b.is_ascii_alphabetic() || b == b'_') {
                    return PyStep::NotACall;
                }
                self.phase = Phase::Name {
                    started: true,
                    ended: false,
                };
                PyStep::Going
            }
            Phase::Args => self.step_args(b),
        }
    }

    fn step_args(&mut self, b: u8) -> PyStep {
        if let Some(s) = &mut self.string {
            if s.escaped {
                s.escaped = false;
                s.closing = 0;
                s.len += 1;
            } else if b == b'\\' {
                s.escaped = true;
                s.closing = 0;
                s.len += 1;
            } else if b == s.quote {
                if !s.triple {
                    if s.len == 0 {
                        self.empty_closed = Some(b);
                    }
                    self.string = None;
                } else {
                    s.closing += 1;
                    if s.closing == 3 {
                        self.string = None;
                    }
                }
            } else {
                s.closing = 0;
                s.len += 1;
            }
            return PyStep::Going;
        }
        let empty_closed = self.empty_closed.take();
        match b {
            b'"' | b'\'' => {
                self.string = Some(Str {
                    quote: b,
                    triple: empty_closed == Some(b),
                    escaped: false,
                    closing: 0,
                    len: 0,
                })
            }
            b'(' | b'[' | b'{' => {
                self.depth += 1;
                if self.depth > self.max_depth {
                    return PyStep::TooDeep;
                }
            }
            b')' | b']' | b'}' => {
                self.depth -= 1;
                if self.depth == 0 {
                    self.phase = Phase::Done;
                    return PyStep::Closed;
                }
            }
            _ => {}
        }
        PyStep::Going
    }
}

/// Why a call's text did not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NotPython;

/// Reads `name(k=v, ...)`: the name and the arguments as a JSON object.
pub(crate) fn parse_call(text: &str) -> Result<(String, Map<String, Value>), NotPython> {
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
        depth: 0,
    };
    p.ws();
    let name = p.ident().ok_or(NotPython)?;
    p.ws();
    p.eat(b'(')?;
    let mut args = Map::new();
    loop {
        p.ws();
        if p.peek() == Some(b')') {
            p.i += 1;
            break;
        }
        let key = p.ident().ok_or(NotPython)?;
        p.ws();
        p.eat(b'=')?;
        p.ws();
        let value = p.value()?;
        if args.insert(key, value).is_some() {
            return Err(NotPython);
        }
        p.ws();
        match p.peek() {
            Some(b',') => p.i += 1,
            Some(b')') => {
                p.i += 1;
                break;
            }
            _ => return Err(NotPython),
        }
    }
    p.ws();
    if p.i != p.s.len() {
        return Err(NotPython);
    }
    Ok((name, args))
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    depth: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn ws(&mut self) {
        while self.peek().is_some_and(|b| b.is_ascii_whitespace()) {
            self.i += 1;
        }
    }

    fn eat(&mut self, b: u8) -> Result<(), NotPython> {
        if self.peek() == Some(b) {
            self.i += 1;
            Ok(())
        } else {
            Err(NotPython)
        }
    }

    fn ident(&mut self) -> Option<String> {
        let start = self.i;
        while self
            .peek()
            .is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
        {
            self.i += 1;
        }
        let word = std::str::from_utf8(&self.s[start..self.i]).ok()?;
        let first = word.bytes().next()?;
        (first.is_ascii_alphabetic() || first == b'_').then(|| word.to_owned())
    }

    fn value(&mut self) -> Result<Value, NotPython> {
        self.depth += 1;
        if self.depth > 512 {
            return Err(NotPython);
        }
        let value = match self.peek().ok_or(NotPython)? {
            b'"' | b'\'' => Value::String(self.string()?),
            b'[' => Value::Array(self.items(b'[', b']')?),
            b'(' => Value::Array(self.items(b'(', b')')?),
            b'{' => self.dict()?,
            b'-' | b'+' | b'0'..=b'9' | b'.' => self.number()?,
            b'r' | b'R' | b'u' | b'U' if matches!(self.s.get(self.i + 1), Some(b'"' | b'\'')) => {
                let raw = matches!(self.peek(), Some(b'r' | b'R'));
                self.i += 1;
                if raw {
                    Value::String(self.raw_string()?)
                } else {
                    Value::String(self.string()?)
                }
            }
            _ => {
                let word = self.ident().ok_or(NotPython)?;
                match word.as_str() {
                    "True" | "true" => Value::Bool(true),
                    "False" | "false" => Value::Bool(false),
                    "None" | "null" => Value::Null,
                    _ => return Err(NotPython),
                }
            }
        };
        self.depth -= 1;
        Ok(value)
    }

    fn items(&mut self, open: u8, close: u8) -> Result<Vec<Value>, NotPython> {
        self.eat(open)?;
        let mut items = Vec::new();
        loop {
            self.ws();
            if self.peek() == Some(close) {
                self.i += 1;
                return Ok(items);
            }
            items.push(self.value()?);
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b) if b == close => {
                    self.i += 1;
                    return Ok(items);
                }
                _ => return Err(NotPython),
            }
        }
    }

    fn dict(&mut self) -> Result<Value, NotPython> {
        self.eat(b'{')?;
        let mut map = Map::new();
        loop {
            self.ws();
            if self.peek() == Some(b'}') {
                self.i += 1;
                return Ok(Value::Object(map));
            }
            let Value::String(key) = self.value()? else {
                return Err(NotPython);
            };
            self.ws();
            self.eat(b':')?;
            self.ws();
            let value = self.value()?;
            map.insert(key, value);
            self.ws();
            match self.peek() {
                Some(b',') => self.i += 1,
                Some(b'}') => {
                    self.i += 1;
                    return Ok(Value::Object(map));
                }
                _ => return Err(NotPython),
            }
        }
    }

    fn number(&mut self) -> Result<Value, NotPython> {
        let start = self.i;
        while self
            .peek()
            .is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'+' | b'.' | b'_'))
        {
            self.i += 1;
        }
        let text: String = std::str::from_utf8(&self.s[start..self.i])
            .map_err(|_| NotPython)?
            .replace('_', "");
        let text = text.strip_prefix('+').unwrap_or(&text);
        if let Ok(n) = text.parse::<i64>() {
            return Ok(Value::Number(n.into()));
        }
        if let Ok(n) = text.parse::<u64>() {
            return Ok(Value::Number(n.into()));
        }
        let f: f64 = text.parse().map_err(|_| NotPython)?;
        Number::from_f64(f).map(Value::Number).ok_or(NotPython)
    }

    /// The quote the string opens with, and whether it is triple.
    fn open_quote(&mut self) -> Result<(u8, bool), NotPython> {
        let quote = self.peek().ok_or(NotPython)?;
        if quote != b'"' && quote != b'\'' {
            return Err(NotPython);
        }
        let triple = self.s.get(self.i..self.i + 3) == Some(&[quote; 3][..]);
        self.i += if triple { 3 } else { 1 };
        Ok((quote, triple))
    }

    fn at_close(&self, quote: u8, triple: bool) -> bool {
        if triple {
            self.s.get(self.i..self.i + 3) == Some(&[quote; 3][..])
        } else {
            self.peek() == Some(quote)
        }
    }

    fn raw_string(&mut self) -> Result<String, NotPython> {
        let (quote, triple) = self.open_quote()?;
        let start = self.i;
        while !self.at_close(quote, triple) {
            match self.peek().ok_or(NotPython)? {
                b'\\' => self.i += 2,
                _ => self.i += 1,
            }
        }
        let text = std::str::from_utf8(self.s.get(start..self.i).ok_or(NotPython)?)
            .map_err(|_| NotPython)?
            .to_owned();
        self.i += if triple { 3 } else { 1 };
        Ok(text)
    }

    fn string(&mut self) -> Result<String, NotPython> {
        let (quote, triple) = self.open_quote()?;
        let mut out: Vec<u8> = Vec::new();
        loop {
            if self.at_close(quote, triple) {
                self.i += if triple { 3 } else { 1 };
                break;
            }
            let b = self.peek().ok_or(NotPython)?;
            self.i += 1;
            if b != b'\\' {
                if b == b'\n' && !triple {
                    return Err(NotPython);
                }
                out.push(b);
                continue;
            }
            let e = self.peek().ok_or(NotPython)?;
            self.i += 1;
            let simple = match e {
                b'n' => Some(b'\n'),
                b't' => Some(b'\t'),
                b'r' => Some(b'\r'),
                b'0' => Some(0),
                b'a' => Some(7),
                b'b' => Some(8),
                b'f' => Some(12),
                b'v' => Some(11),
                b'\\' | b'\'' | b'"' => Some(e),
                b'\n' => None,
                _ => {
                    let digits = match e {
                        b'x' => 2,
                        b'u' => 4,
                        b'U' => 8,
                        _ => {
                            // An unknown escape keeps its backslash, as Python does.
                            out.extend([b'\\', e]);
                            continue;
                        }
                    };
                    let hex = self.s.get(self.i..self.i + digits).ok_or(NotPython)?;
                    let hex = std::str::from_utf8(hex).map_err(|_| NotPython)?;
                    let code = u32::from_str_radix(hex, 16).map_err(|_| NotPython)?;
                    self.i += digits;
                    let c = char::from_u32(code).ok_or(NotPython)?;
                    let mut tmp = [0; 4];
                    out.extend(c.encode_utf8(&mut tmp).as_bytes());
                    continue;
                }
            };
            out.extend(simple);
        }
        String::from_utf8(out).map_err(|_| NotPython)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parsed(text: &str) -> Option<(String, Value)> {
        parse_call(text).ok().map(|(n, a)| (n, Value::Object(a)))
    }

    #[test]
    fn keyword_arguments_read_as_json() {
        assert_eq!(
            parsed(r#"get_weather(city="Paris", days=3, metric=True, extra=None)"#),
            Some((
                "get_weather".into(),
                json!({"city": "Paris", "days": 3, "metric": true, "extra": null})
            ))
        );
        assert_eq!(
            parsed(
                r#"f(a=[1, 2.5, -3], b={'k': ('x', "y")}, c='it\'s', d="""two
lines""", e='\u00e9\n')"#
            ),
            Some((
                "f".into(),
                json!({"a": [1, 2.5, -3], "b": {"k": ["x", "y"]}, "c": "it's", "d": "two\nlines", "e": "é\n"})
            ))
        );
        assert_eq!(parsed("g()"), Some(("g".into(), json!({}))));
        assert_eq!(
            parsed("ns.tool(x=1,)"),
            Some(("ns.tool".into(), json!({"x": 1})))
        );
    }

    #[test]
    fn positional_arguments_names_and_expressions_do_not_read() {
        for text in [
            "f(1)",
            "f(a=b)",
            "f(a=1+2)",
            "f(a=1, a=2)",
            "f(a='x) ",
            "(a=1)",
            "f(a={1: 2})",
        ] {
            assert_eq!(parse_call(text), Err(NotPython), "{text}");
        }
    }

    #[test]
    fn a_call_ends_at_its_closing_parenthesis_whatever_its_strings_hold() {
        let text = r#"f(a=")]}", b=[1, (2)], c='\'', d="""x")""")tail"#;
        let mut scan = PyCallScan::new(64);
        let mut end = None;
        let bytes = text.as_bytes();
        for (i, &b) in bytes.iter().enumerate() {
            if scan.step(b) == PyStep::Closed {
                end = Some(i + 1);
                break;
            }
        }
        assert_eq!(end, Some(text.len() - 4));
    }
}
