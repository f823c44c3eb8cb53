//! The other engines' grammars as llguidance Lark, for the check: a GBNF
//! grammar (llama.cpp's syntax, as its `grammars/README.md` describes it)
//! and an xgrammar structural tag (its format objects, as xgrammar's
//! structural tag documentation describes them) are translated node for
//! node, so that llguidance's matcher judges what those engines would.
//!
//! GBNF has no lexer: each character is its own lexeme here (string
//! literals are split into characters), so llguidance's greedy lexer never
//! has to take back a longer match. Structural tags keep their free text
//! and raw `any_text` regions as single lazy lexemes ending at the marker
//! that closes them, the way xgrammar stops `any_text` at a tag's end.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde_json::Value;

/// One GBNF expression.
#[derive(Debug, Clone)]
enum Expr {
    Str(String),
    Class {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
    Ref(String),
    Seq(Vec<Expr>),
    Alt(Vec<Expr>),
    Opt(Box<Expr>),
    Star(Box<Expr>),
    Plus(Box<Expr>),
    Repeat(Box<Expr>, u32, Option<u32>),
}

struct Parser<'a> {
    s: &'a [char],
    i: usize,
}

impl Parser<'_> {
    fn skip_space(&mut self) {
        while self.i < self.s.len() {
            let c = self.s[self.i];
            if c == '#' {
                while self.i < self.s.len() && self.s[self.i] != '\n' {
                    self.i += 1;
                }
            } else if c.is_whitespace() {
                self.i += 1;
            } else {
                break;
            }
        }
    }

    fn peek(&self) -> Option<char> {
        self.s.get(self.i).copied()
    }

    fn ident_at(&self, mut j: usize) -> Option<(String, usize)> {
        let start = j;
        while j < self.s.len()
            && (self.s[j].is_ascii_alphanumeric() || self.s[j] == '-' || self.s[j] == '_')
        {
            j += 1;
        }
        (j > start).then(|| (self.s[start..j].iter().collect(), j))
    }

    /// Whether a rule definition (`name ::=`) starts here.
    fn at_definition(&self) -> bool {
        let Some((_, mut j)) = self.ident_at(self.i) else {
            return false;
        };
        while j < self.s.len() && (self.s[j] == ' ' || self.s[j] == '\t') {
            j += 1;
        }
        self.s[j..].starts_with(&[':', ':', '='])
    }

    fn escape(&mut self) -> char {
        // After the backslash.
        let c = self.s[self.i];
        self.i += 1;
        let hex = |p: &mut Self, n: usize| {
            let h: String = p.s[p.i..p.i + n].iter().collect();
            p.i += n;
            char::from_u32(u32::from_str_radix(&h, 16).expect("hex escape"))
                .expect("a scalar value")
        };
        match c {
            'x' => hex(self, 2),
            'u' => hex(self, 4),
            'U' => hex(self, 8),
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            other => other,
        }
    }

    fn alt(&mut self) -> Expr {
        let mut alts = vec![self.seq()];
        loop {
            self.skip_space();
            if self.peek() == Some('|') {
                self.i += 1;
                alts.push(self.seq());
            } else {
                break;
            }
        }
        if alts.len() == 1 {
            alts.pop().unwrap()
        } else {
            Expr::Alt(alts)
        }
    }

    fn seq(&mut self) -> Expr {
        let mut items = Vec::new();
        loop {
            self.skip_space();
            match self.peek() {
                None | Some('|') | Some(')') => break,
                _ if self.at_definition() => break,
                _ => {}
            }
            let mut e = self.primary();
            loop {
                match self.peek() {
                    Some('?') => e = Expr::Opt(Box::new(e)),
                    Some('*') => e = Expr::Star(Box::new(e)),
                    Some('+') => e = Expr::Plus(Box::new(e)),
                    Some('{') => {
                        let close =
                            self.s[self.i..].iter().position(|c| *c == '}').unwrap() + self.i;
                        let inner: String = self.s[self.i + 1..close].iter().collect();
                        let (a, b) = match inner.split_once(',') {
                            Some((a, b)) => (
                                a.trim().parse().unwrap(),
                                (!b.trim().is_empty()).then(|| b.trim().parse().unwrap()),
                            ),
                            None => (
                                inner.trim().parse().unwrap(),
                                Some(inner.trim().parse().unwrap()),
                            ),
                        };
                        e = Expr::Repeat(Box::new(e), a, b);
                        self.i = close;
                    }
                    _ => break,
                }
                self.i += 1;
            }
            items.push(e);
        }
        Expr::Seq(items)
    }

    fn primary(&mut self) -> Expr {
        match self.peek().expect("an expression") {
            '"' => {
                self.i += 1;
                let mut out = String::new();
                loop {
                    let c = self.s[self.i];
                    self.i += 1;
                    match c {
                        '"' => break,
                        '\\' => out.push(self.escape()),
                        c => out.push(c),
                    }
                }
                Expr::Str(out)
            }
            '[' => {
                self.i += 1;
                let negated = self.peek() == Some('^');
                if negated {
                    self.i += 1;
                }
                let mut ranges = Vec::new();
                let one = |p: &mut Self| {
                    let c = p.s[p.i];
                    p.i += 1;
                    if c == '\\' { p.escape() } else { c }
                };
                while self.peek() != Some(']') {
                    let a = one(self);
                    let b = if self.peek() == Some('-') && self.s.get(self.i + 1) != Some(&']') {
                        self.i += 1;
                        one(self)
                    } else {
                        a
                    };
                    ranges.push((a, b));
                }
                self.i += 1;
                Expr::Class { negated, ranges }
            }
            '(' => {
                self.i += 1;
                let e = self.alt();
                self.skip_space();
                assert_eq!(self.peek(), Some(')'), "a closing parenthesis");
                self.i += 1;
                e
            }
            _ => {
                let (name, j) = self.ident_at(self.i).unwrap_or_else(|| {
                    panic!(
                        "GBNF: unexpected {:?}",
                        self.s[self.i..].iter().take(20).collect::<String>()
                    )
                });
                self.i = j;
                Expr::Ref(name)
            }
        }
    }
}

/// Parses a GBNF grammar into its rules, in order.
fn parse_gbnf(text: &str) -> Vec<(String, Expr)> {
    let chars: Vec<char> = text.chars().collect();
    let mut p = Parser { s: &chars, i: 0 };
    let mut rules = Vec::new();
    loop {
        p.skip_space();
        if p.peek().is_none() {
            break;
        }
        let (name, j) = p.ident_at(p.i).expect("a rule name");
        p.i = j;
        p.skip_space();
        assert!(
            chars[p.i..].starts_with(&[':', ':', '=']),
            "`::=` after {name}"
        );
        p.i += 3;
        rules.push((name, p.alt()));
    }
    rules
}

/// A Lark rule name for a GBNF one, under `prefix`.
fn rule_name(prefix: &str, name: &str) -> String {
    format!("{prefix}{}", name.replace('-', "_").to_ascii_lowercase())
}

/// A character as a regex (inside `/.../` and character classes).
fn rx_char(c: char) -> String {
    if c.is_ascii_alphanumeric() {
        c.to_string()
    } else {
        format!("\\x{{{:X}}}", c as u32)
    }
}

/// A literal as a regex.
fn rx_escape(s: &str) -> String {
    s.chars().map(rx_char).collect()
}

/// A Lark string literal.
fn lark_str(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

/// Collects the Lark rules and terminals of a translation.
#[derive(Default)]
pub struct Lark {
    out: String,
    count: usize,
    nothing: bool,
}

impl Lark {
    fn fresh(&mut self, hint: &str) -> String {
        self.count += 1;
        format!("{hint}_{}", self.count)
    }

    fn line(&mut self, name: &str, body: &str) {
        let _ = writeln!(self.out, "{name}: {body}");
    }

    /// A terminal nothing matches.
    fn nothing(&mut self) -> String {
        if !self.nothing {
            self.nothing = true;
            self.line("NOTHING", "/a/ & ~/a/");
        }
        "NOTHING".into()
    }

    /// The whole grammar, `start` its start rule's body.
    fn finish(self, start: &str) -> String {
        format!(
            "%llguidance {{}}\n\nstart: {start}\n{}WS: /[ \\t\\n\\r]+/\n",
            self.out
        )
    }

    /// A GBNF expression, as a Lark expression; `None` for the empty text.
    fn gbnf_expr(&mut self, prefix: &str, e: &Expr) -> Option<String> {
        match e {
            Expr::Str(s) if s.is_empty() => None,
            Expr::Str(s) => Some(
                s.chars()
                    .map(|c| lark_str(&c.to_string()))
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
            Expr::Class { negated, ranges } => {
                if *negated && ranges.iter().any(|(a, b)| *a == '\0' && *b == char::MAX) {
                    return Some(self.nothing());
                }
                let mut rx = String::from("[");
                if *negated {
                    rx.push('^');
                }
                for (a, b) in ranges {
                    rx.push_str(&rx_char(*a));
                    if a != b {
                        rx.push('-');
                        rx.push_str(&rx_char(*b));
                    }
                }
                rx.push(']');
                Some(format!("/{rx}/"))
            }
            Expr::Ref(name) => Some(rule_name(prefix, name)),
            Expr::Seq(items) => {
                let parts: Vec<String> = items
                    .iter()
                    .filter_map(|x| self.gbnf_expr(prefix, x))
                    .collect();
                (!parts.is_empty()).then(|| format!("({})", parts.join(" ")))
            }
            Expr::Alt(items) => {
                let parts: Vec<Option<String>> =
                    items.iter().map(|x| self.gbnf_expr(prefix, x)).collect();
                let empty = parts.iter().any(Option::is_none);
                let parts: Vec<String> = parts.into_iter().flatten().collect();
                if parts.is_empty() {
                    return None;
                }
                let body = format!("({})", parts.join(" | "));
                Some(if empty { format!("{body}?") } else { body })
            }
            Expr::Opt(x) => self.gbnf_expr(prefix, x).map(|x| format!("{x}?")),
            Expr::Star(x) => self.gbnf_expr(prefix, x).map(|x| format!("{x}*")),
            Expr::Plus(x) => self.gbnf_expr(prefix, x).map(|x| format!("{x}+")),
            Expr::Repeat(x, a, b) => {
                let x = self.gbnf_expr(prefix, x)?;
                Some(match b {
                    Some(b) => format!("({x}){{{a},{b}}}"),
                    None => format!("({x}){{{a},}}"),
                })
            }
        }
    }

    /// The rules of a GBNF grammar under `prefix`; returns its root rule.
    fn gbnf(&mut self, prefix: &str, text: &str) -> String {
        let rules = parse_gbnf(text);
        let mut seen = BTreeMap::new();
        for (name, e) in &rules {
            assert!(
                seen.insert(name.clone(), ()).is_none(),
                "GBNF: `{name}` defined twice"
            );
            let body = self.gbnf_expr(prefix, e).unwrap_or_else(|| "\"\"".into());
            self.line(&rule_name(prefix, name), &body);
        }
        assert!(seen.contains_key("root"), "GBNF: no root rule");
        rule_name(prefix, "root")
    }

    /// Text holding none of `excludes` (any text when empty), as a regex.
    fn text_rx(excludes: &[String]) -> String {
        let excludes: Vec<&String> = excludes.iter().filter(|e| !e.is_empty()).collect();
        if excludes.is_empty() {
            return "/(?s:.*)/".into();
        }
        let alts: Vec<String> = excludes.iter().map(|e| rx_escape(e)).collect();
        format!("/(?s:.*)/ & ~/(?s:.*)(?:{})(?s:.*)/", alts.join("|"))
    }

    /// A structural-tag format object, as a Lark expression. `end` is the
    /// end string of the innermost enclosing tag, where this object is
    /// the last of that tag's content (xgrammar stops unlimited formats
    /// there).
    fn format(&mut self, f: &Value, end: Option<&str>) -> String {
        let ty = f["type"]
            .as_str()
            .unwrap_or_else(|| panic!("a format object without a type: {f}"));
        match ty {
            "const_string" => {
                let v = f["value"].as_str().expect("const_string.value");
                if v.is_empty() {
                    "\"\"".into()
                } else {
                    lark_str(v)
                }
            }
            "regex" => {
                let p = f["pattern"].as_str().expect("regex.pattern");
                if p == "[ \\t\\n\\r]*" {
                    return "WS?".into();
                }
                let name = self.fresh("RX").to_ascii_uppercase();
                let body = format!("/{}/", p.replace('/', "\\/"));
                self.line(&name, &body);
                name
            }
            "json_schema" => {
                assert!(
                    f.get("style").is_none_or(|s| s == "json"),
                    "json_schema.style: {f}"
                );
                let name = self.fresh("json");
                let body = format!("%json {}", f["json_schema"]);
                self.line(&name, &body);
                name
            }
            "grammar" => {
                let prefix = format!("{}_", self.fresh("g"));
                self.gbnf(&prefix, f["grammar"].as_str().expect("grammar.grammar"))
            }
            "any_text" => {
                let excludes = strings(&f["excludes"]);
                let raw = self.fresh("RAW").to_ascii_uppercase();
                let mut all = excludes.clone();
                all.extend(end.map(str::to_owned));
                let rx = Self::text_rx(&all);
                self.line(&raw, &rx);
                match end {
                    // The text and the end marker that stops it, as one lexeme.
                    Some(e) => {
                        let name = self.fresh("UNTIL").to_ascii_uppercase();
                        self.line(&name, &format!("{raw} {}", lark_str(e)));
                        format!("@END@{name}")
                    }
                    None => format!("{raw}?"),
                }
            }
            "sequence" | "or" => {
                let elements = f["elements"].as_array().expect("elements");
                assert!(!elements.is_empty(), "{ty} without elements");
                if ty == "or" {
                    let parts: Vec<String> = elements.iter().map(|e| self.format(e, end)).collect();
                    format!("({})", parts.join(" | "))
                } else {
                    let n = elements.len();
                    let parts: Vec<String> = elements
                        .iter()
                        .enumerate()
                        .map(|(i, e)| self.format(e, if i + 1 == n { end } else { None }))
                        .collect();
                    format!("({})", parts.join(" "))
                }
            }
            "optional" | "star" | "plus" => {
                let inner = self.format(&f["content"], None);
                let op = match ty {
                    "optional" => "?",
                    "star" => "*",
                    _ => "+",
                };
                format!("({inner}){op}")
            }
            "repeat" => {
                let inner = self.format(&f["content"], None);
                let min = f["min"].as_u64().expect("repeat.min");
                match f["max"].as_i64().expect("repeat.max") {
                    -1 => format!("({inner}){{{min},}}"),
                    max => format!("({inner}){{{min},{max}}}"),
                }
            }
            "tag" => self.tag(f),
            "triggered_tags" => self.triggered(f, end),
            other => panic!("format type `{other}` is not one the check knows: {f}"),
        }
    }

    /// `begin content end`; content that stops at `end` takes it.
    fn tag(&mut self, f: &Value) -> String {
        let begin = f["begin"].as_str().expect("tag.begin (a string)");
        let end = f["end"].as_str().expect("tag.end (a string)");
        let content = self.format(&f["content"], (!end.is_empty()).then_some(end));
        let begin = if begin.is_empty() {
            String::new()
        } else {
            format!("{} ", lark_str(begin))
        };
        match content.strip_prefix("@END@") {
            Some(until) => format!("({begin}{until})"),
            None if content.contains("@END@") => {
                panic!("an unlimited format in the middle of a tag: {f}")
            }
            None if end.is_empty() => format!("({begin}{content})"),
            None => format!("({begin}{content} {})", lark_str(end)),
        }
    }

    /// Free text up to a trigger, the tag it starts, and again.
    fn triggered(&mut self, f: &Value, end: Option<&str>) -> String {
        let triggers = strings(&f["triggers"]);
        let tags = f["tags"].as_array().expect("triggered_tags.tags");
        let at_least_one = f["at_least_one"].as_bool().unwrap_or(false);
        let stop_after_first = f["stop_after_first"].as_bool().unwrap_or(false);
        let mut excludes = triggers.clone();
        excludes.extend(strings(&f["excludes"]));
        excludes.extend(end.map(str::to_owned));
        let text = self.fresh("TEXT").to_ascii_uppercase();
        let rx = Self::text_rx(&excludes);
        self.line(&text, &rx);
        let mut firsts = Vec::new();
        let mut segs = Vec::new();
        for t in tags {
            let begin = t["begin"].as_str().expect("a string begin");
            assert!(
                triggers
                    .iter()
                    .filter(|tr| begin.starts_with(tr.as_str()))
                    .count()
                    == 1,
                "tag begin {begin:?} matches not exactly one trigger of {triggers:?}"
            );
            let mut rest = t.clone();
            rest["begin"] = Value::String(String::new());
            let body = self.tag(&rest);
            // Free text and the tag's begin, as one lazy lexeme.
            let mark = self.fresh("MARK").to_ascii_uppercase();
            self.line(&mark, &format!("{text} {}", lark_str(begin)));
            let mark_rule = self.fresh("mark");
            let _ = writeln!(self.out, "{mark_rule}[lazy]: {mark}");
            segs.push(format!("{mark_rule} {body}"));
            firsts.push(format!("{} {body}", lark_str(begin)));
        }
        let seg = self.fresh("seg");
        self.line(&seg, &segs.join(" | "));
        let first = self.fresh("first");
        self.line(&first, &firsts.join(" | "));
        let tail = format!("{text}?");
        match (at_least_one, stop_after_first) {
            (false, false) => format!("({seg}* {tail})"),
            (true, false) => format!("({first} {seg}* {tail})"),
            (false, true) => format!("({seg} | {tail})"),
            (true, true) => first,
        }
    }
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .map(|s| s.as_str().expect("a string").to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// A GBNF grammar (its `root` rule the whole text) as llguidance Lark.
pub fn gbnf_to_lark(gbnf: &str) -> String {
    let mut l = Lark::default();
    let root = l.gbnf("", gbnf);
    l.finish(&root)
}

/// A structural tag (`{"type": "structural_tag", "format": ...}`) as
/// llguidance Lark.
pub fn structural_tag_to_lark(tag: &Value) -> String {
    assert_eq!(tag["type"], "structural_tag", "{tag}");
    let mut l = Lark::default();
    let start = l.format(&tag["format"], None);
    assert!(
        !start.contains("@END@"),
        "an unlimited format outside a tag"
    );
    l.finish(&start)
}

/// A random sentence of a GBNF grammar, expanded from `root` (choices,
/// repetitions and characters picked by `seed`); `None` when it grows
/// past `max` characters or nests deeper than 60 rules.
pub fn gbnf_sample(gbnf: &str, seed: u64, max: usize) -> Option<String> {
    let rules: BTreeMap<String, Expr> = parse_gbnf(gbnf).into_iter().collect();
    let mut s = Sampler {
        rules: &rules,
        rng: seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407)
            | 1,
        out: String::new(),
        max,
    };
    s.expand(&rules["root"], 0).then_some(s.out)
}

struct Sampler<'a> {
    rules: &'a BTreeMap<String, Expr>,
    rng: u64,
    out: String,
    max: usize,
}

/// Characters a negated class picks from: markup, letters, quotes,
/// escapes, whitespace and non-ASCII.
const POOL: &str = "ab xyzQ09_-.,:;=()[]{}<>|/\\\"'!?\n\té｜▁😀";

impl Sampler<'_> {
    fn next(&mut self, n: u64) -> u64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng % n.max(1)
    }

    /// How many times a repetition runs: mostly few.
    fn count(&mut self, min: u32, max: Option<u32>) -> u32 {
        let mut n = min;
        while max.is_none_or(|m| n < m) && self.next(5) < 3 {
            n += 1;
        }
        n
    }

    fn expand(&mut self, e: &Expr, depth: usize) -> bool {
        if depth > 60 || self.out.chars().count() > self.max {
            return false;
        }
        match e {
            Expr::Str(s) => {
                self.out.push_str(s);
                true
            }
            Expr::Class { negated, ranges } => {
                let inside = |c: char| ranges.iter().any(|(a, b)| *a <= c && c <= *b);
                let picks: Vec<char> = if *negated {
                    POOL.chars().filter(|c| !inside(*c)).collect()
                } else {
                    let mut v: Vec<char> = POOL.chars().filter(|c| inside(*c)).collect();
                    for (a, b) in ranges {
                        v.push(*a);
                        v.push(*b);
                    }
                    v
                };
                if picks.is_empty() {
                    return false;
                }
                let c = picks[self.next(picks.len() as u64) as usize];
                self.out.push(c);
                true
            }
            Expr::Ref(name) => {
                let body = &self.rules[name];
                self.expand(body, depth + 1)
            }
            Expr::Seq(items) => items.iter().all(|x| self.expand(x, depth)),
            Expr::Alt(items) => {
                // Deep down, take the first choice (the empty text or the
                // shortest, as the converters write them) more often.
                let i = if depth > 30 && self.next(2) == 0 {
                    0
                } else {
                    self.next(items.len() as u64) as usize
                };
                self.expand(&items[i], depth)
            }
            Expr::Opt(x) => self.next(2) == 0 || self.expand(x, depth),
            Expr::Star(x) => {
                let n = self.count(0, None);
                (0..n).all(|_| self.expand(x, depth))
            }
            Expr::Plus(x) => {
                let n = self.count(1, None);
                (0..n).all(|_| self.expand(x, depth))
            }
            Expr::Repeat(x, a, b) => {
                let n = self.count(*a, *b);
                (0..n).all(|_| self.expand(x, depth))
            }
        }
    }
}
