//! The Lark grammar for llguidance.
//!
//! llguidance lexes greedily, so free text and the marker after it are
//! one lexeme (`TEXT "<tool_call>"`, lazy), free text can never hold a
//! marker (`/(?s:.*)/ & ~/(?s:.*)(MARKERS)(?s:.*)/`), and raw values end
//! in the same lexeme as their end marker. Arguments are `%json {...}`;
//! converted value rules that are regular become terminals.

use std::collections::HashMap;
use std::fmt::Write;

use super::GrammarError;
use super::cfg::{G, Rules, lower, lower_all};
use super::shape::{Kind, Shape};

pub(crate) fn render(shape: &Shape) -> Result<String, GrammarError> {
    let mut w = Writer::default();
    let start = match &shape.kind {
        Kind::Whole(g) => {
            let (rules, g) = lower(&shape.rules, g, shape.grammar, false)?;
            w.rules = rules;
            w.expr(&g)
        }
        Kind::Runs(runs) => {
            let bodies: Vec<G> = runs
                .marked
                .iter()
                .map(|m| m.body.clone())
                .chain(runs.bare.iter().cloned())
                .collect();
            let (rules, lowered) = lower_all(&shape.rules, &bodies, shape.grammar, false)?;
            w.rules = rules;
            let text = |excl: &[String], not_first: &[String]| -> String {
                let mut t = String::from("/(?s:.*)/");
                if !excl.is_empty() {
                    let _ = write!(t, " & ~/(?s:.*)(?:{})(?s:.*)/", alternation(excl));
                }
                if !not_first.is_empty() {
                    let _ = write!(
                        t,
                        " & ~/[ \\t\\n\\r]*(?:{})(?s:.*)/",
                        alternation(not_first)
                    );
                }
                t
            };
            let mut after_not = runs.after_not.clone();
            after_not.dedup();
            w.terminal("TEXT_FIRST", &text(&runs.excludes, &runs.openers));
            w.terminal("TEXT", &text(&runs.excludes, &after_not));
            let mut segs = Vec::new();
            let mut starts = vec!["TEXT_FIRST?".to_owned()];
            let mut tails = vec!["TEXT?".to_owned()];
            let n_marked = runs.marked.len();
            for (k, m) in runs.marked.iter().enumerate() {
                let lit = lark_string(&m.marker);
                w.terminal(&format!("MARK_FIRST_{k}"), &format!("TEXT_FIRST {lit}"));
                w.terminal(&format!("MARK_{k}"), &format!("TEXT {lit}"));
                let _ = writeln!(w.out, "mark_first_{k}[lazy]: MARK_FIRST_{k}");
                let _ = writeln!(w.out, "mark_{k}[lazy]: MARK_{k}");
                let mut body = w.expr(&lowered[k]);
                if let Some(end) = &m.end {
                    body = format!("{body} {}", lark_string(end));
                }
                if let (true, G::Until { excludes, .. }) = (m.reasoning, &m.body) {
                    // Reasoning left open at the end of the output.
                    let open = w.new_terminal("REASONING_OPEN", &text(excludes, &[]));
                    starts.push(format!("mark_first_{k} {open}?"));
                    tails.push(format!("mark_{k} {open}?"));
                }
                starts.push(format!("mark_first_{k} {body} seg* tail"));
                segs.push(format!("mark_{k} {body}"));
            }
            for j in 0..runs.bare.len() {
                let body = w.expr(&lowered[n_marked + j]);
                if segs.is_empty() {
                    starts.push(format!("WS? {body} TEXT?"));
                } else {
                    starts.push(format!("WS? {body} seg* tail"));
                }
            }
            if !segs.is_empty() {
                let _ = writeln!(w.out, "seg: {}", segs.join("\n   | "));
                let _ = writeln!(w.out, "tail: {}", tails.join(" | "));
            }
            starts.join("\n     | ")
        }
    };
    let mut out = format!(
        "// Tool calls in the `{}` text format, for llguidance.\n%llguidance {{}}\n\nstart: {start}\n",
        shape.format
    );
    out.push_str(&w.out);
    out.push_str("WS: /[ \\t\\n\\r]+/\n");
    Ok(out)
}

#[derive(Default)]
struct Writer {
    rules: Rules,
    out: String,
    names: HashMap<usize, String>,
    regular: HashMap<usize, Option<String>>,
    count: usize,
}

impl Writer {
    fn terminal(&mut self, name: &str, body: &str) {
        let _ = writeln!(self.out, "{name}: {body}");
    }

    fn new_terminal(&mut self, hint: &str, body: &str) -> String {
        self.count += 1;
        let name = format!("{hint}_{}", self.count);
        self.terminal(&name, body);
        name
    }

    /// `g` as a regex, when it is regular.
    fn regex(&mut self, g: &G, depth: usize) -> Option<String> {
        if depth > 64 {
            return None;
        }
        Some(match g {
            G::Lit(s) => regex_escape(s),
            G::Ws => "[ \\t\\n\\r]*".to_owned(),
            G::Class(c) => class(c),
            G::Seq(items) => {
                let parts: Option<Vec<String>> =
                    items.iter().map(|x| self.regex(x, depth + 1)).collect();
                parts?.iter().map(|p| format!("(?:{p})")).collect()
            }
            G::Alt(items) => {
                let parts: Option<Vec<String>> =
                    items.iter().map(|x| self.regex(x, depth + 1)).collect();
                format!("(?:{})", parts?.join("|"))
            }
            G::Opt(x) => format!("(?:{})?", self.regex(x, depth + 1)?),
            G::Star(x) => format!("(?:{})*", self.regex(x, depth + 1)?),
            G::Plus(x) => format!("(?:{})+", self.regex(x, depth + 1)?),
            G::Repeat(x, a, b) => match b {
                Some(b) => format!("(?:{}){{{a},{b}}}", self.regex(x, depth + 1)?),
                None => format!("(?:{}){{{a},}}", self.regex(x, depth + 1)?),
            },
            G::Rule(i) => {
                if let Some(r) = self.regular.get(i) {
                    return r.clone();
                }
                // Recursion is not regular.
                self.regular.insert(*i, None);
                let body = self.rules.rules[*i].1.clone();
                let r = self.regex(&body, depth + 1);
                self.regular.insert(*i, r.clone());
                r?
            }
            G::Json(_) | G::Python(_) | G::Until { .. } => return None,
        })
    }

    /// `g` as a rule expression.
    fn expr(&mut self, g: &G) -> String {
        match g {
            G::Lit(s) => lark_string(s),
            G::Ws => "WS?".to_owned(),
            G::Class(c) => format!("/{}/", class(c)),
            G::Seq(items) if items.is_empty() => "\"\"".to_owned(),
            G::Seq(items) => items
                .iter()
                .map(|x| self.expr(x))
                .collect::<Vec<_>>()
                .join(" "),
            G::Alt(items) if items.is_empty() => self.nothing(),
            G::Alt(items) => format!(
                "({})",
                items
                    .iter()
                    .map(|x| self.expr(x))
                    .collect::<Vec<_>>()
                    .join(" | ")
            ),
            G::Opt(x) => format!("({})?", self.expr(x)),
            G::Star(x) => format!("({})*", self.expr(x)),
            G::Plus(x) => format!("({})+", self.expr(x)),
            G::Repeat(x, a, b) => match b {
                Some(b) => format!("({}){{{a},{b}}}", self.expr(x)),
                None => format!("({}){{{a},}}", self.expr(x)),
            },
            G::Rule(i) => self.rule(*i),
            G::Json(leaf) => {
                self.count += 1;
                let name = format!("json_{}", self.count);
                let _ = writeln!(self.out, "{name}: %json {}", leaf.schema);
                name
            }
            G::Python(_) => self.nothing(),
            G::Until { excludes, end } => {
                let body = format!("/(?s:.*)/ & ~/(?s:.*)(?:{})(?s:.*)/", alternation(excludes));
                let text = self.new_terminal("RAW", &body);
                self.new_terminal("UNTIL", &format!("{text} {}", lark_string(end)))
            }
        }
    }

    /// A terminal no text matches.
    fn nothing(&mut self) -> String {
        if !self.out.contains("\nNOTHING: ") && !self.out.starts_with("NOTHING: ") {
            self.terminal("NOTHING", "/a/ & ~/a/");
        }
        "NOTHING".to_owned()
    }

    fn rule(&mut self, i: usize) -> String {
        if let Some(n) = self.names.get(&i) {
            return n.clone();
        }
        let hint: String = self.rules.rules[i]
            .0
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '_'
                }
            })
            .collect();
        let body = self.rules.rules[i].1.clone();
        // Value rules (strings, numbers) as terminals; markup stays lexemes,
        // so that whitespace between them is always one `WS` lexeme.
        let value_rule = hint.starts_with("py_") || hint.starts_with("json_");
        if let Some(rx) = value_rule.then(|| self.regex(&G::Rule(i), 0)).flatten() {
            let name = format!("{}_{i}", hint.to_ascii_uppercase());
            self.names.insert(i, name.clone());
            let _ = writeln!(self.out, "{name}: /{}/", rx.replace('/', "\\/"));
            return name;
        }
        let name = format!("{hint}_{i}");
        self.names.insert(i, name.clone());
        let e = self.expr(&body);
        let _ = writeln!(self.out, "{name}: {e}");
        name
    }
}

/// A Lark string literal (JSON string syntax).
fn lark_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// A regex alternation of the literal strings.
fn alternation(items: &[String]) -> String {
    items
        .iter()
        .map(|s| regex_escape(s))
        .collect::<Vec<_>>()
        .join("|")
        .replace('/', "\\/")
}

/// Escapes a literal for a Rust regex (inside Lark's `/.../`).
pub(crate) fn regex_escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == ' ' || !c.is_ascii() {
            out.push(c);
        } else {
            let _ = write!(out, "\\x{{{:X}}}", c as u32);
        }
    }
    out
}

fn class_char(c: char) -> String {
    if c.is_ascii_alphanumeric() {
        c.to_string()
    } else {
        format!("\\x{{{:X}}}", c as u32)
    }
}

fn class(c: &super::cfg::Class) -> String {
    let mut out = String::from("[");
    if c.negated {
        out.push('^');
    }
    for (a, b) in &c.ranges {
        out.push_str(&class_char(*a));
        if a != b {
            out.push('-');
            out.push_str(&class_char(*b));
        }
    }
    out.push(']');
    out
}
