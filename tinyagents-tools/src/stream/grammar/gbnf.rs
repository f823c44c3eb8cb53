//! The GBNF grammar for llama.cpp, with its lazy-grammar triggers.
//!
//! GBNF has no lexer and no negation of strings, so free text that may not
//! hold a marker is written as the states of a matcher of the markers
//! (Aho-Corasick): one rule per state, each character moving to the next
//! state, no rule for a state that completes a marker.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write;

use serde_json::{Value, json};

use super::GrammarError;
use super::cfg::{Class, G, Rules, lower_all};
use super::shape::{Kind, Shape};

/// A llama.cpp grammar for tool calls: what a `/completion` request (or
/// `llama_sampler_init_grammar_lazy_patterns`) takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LazyGbnf {
    /// The grammar llama.cpp applies once a trigger fires: from the
    /// trigger's text on (for a [`TriggerKind::PatternFull`] trigger, from
    /// its first capture). When [`lazy`](Self::lazy) is false it is the
    /// grammar of the whole output.
    pub grammar: String,
    /// The grammar of a whole output, free text before the first call
    /// included: for engines without lazy grammars.
    pub whole_output: String,
    /// Whether the grammar is lazy (`grammar_lazy`): false for formats
    /// whose whole output is structured (harmony).
    pub lazy: bool,
    /// The triggers (`grammar_triggers`), in the order they are listed.
    pub triggers: Vec<Trigger>,
    /// The markers to keep as special tokens (`preserved_tokens`), for
    /// formats whose markers are special tokens.
    pub preserved_tokens: Vec<String>,
}

/// What starts a lazy grammar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trigger {
    /// How `value` is matched.
    pub kind: TriggerKind,
    /// The word or the pattern.
    pub value: String,
}

/// How a [`Trigger`] matches, as llama.cpp's `common_grammar_trigger_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TriggerKind {
    /// The word, anywhere in the output; the grammar starts at the word.
    Word,
    /// A regex the whole output so far must match; the grammar starts at
    /// its first capture group.
    PatternFull,
}

impl TriggerKind {
    /// The number llama.cpp's server takes as the trigger's `type`
    /// (`COMMON_GRAMMAR_TRIGGER_TYPE_WORD` is 1, `..._PATTERN_FULL` 3).
    pub fn code(self) -> u8 {
        match self {
            TriggerKind::Word => 1,
            TriggerKind::PatternFull => 3,
        }
    }

    /// A name for comments: `word` or `pattern_full`.
    pub fn as_str(self) -> &'static str {
        match self {
            TriggerKind::Word => "word",
            TriggerKind::PatternFull => "pattern_full",
        }
    }
}

impl LazyGbnf {
    /// The grammar as one text: its triggers and preserved tokens in `#`
    /// comments (which GBNF ignores), then the rules.
    pub fn text(&self) -> String {
        let mut out = String::new();
        if self.lazy {
            out.push_str("# llama.cpp lazy grammar (grammar_lazy: true): it applies from the first trigger on.\n");
            for t in &self.triggers {
                let _ = writeln!(
                    out,
                    "# grammar_triggers: {{\"type\": {}, \"value\": {}}} ({})",
                    t.kind.code(),
                    serde_json::to_string(&t.value).unwrap_or_default(),
                    t.kind.as_str()
                );
            }
        } else {
            out.push_str("# llama.cpp grammar of the whole output (grammar_lazy: false).\n");
        }
        if !self.preserved_tokens.is_empty() {
            let _ = writeln!(
                out,
                "# preserved_tokens: {}",
                serde_json::to_string(&self.preserved_tokens).unwrap_or_default()
            );
        }
        out.push_str(&self.grammar);
        out
    }

    /// The fields of a llama.cpp server `/completion` request that carry
    /// this grammar: `grammar`, `grammar_lazy`, `grammar_triggers` and
    /// `preserved_tokens`.
    pub fn request_fields(&self) -> Value {
        json!({
            "grammar": self.grammar,
            "grammar_lazy": self.lazy,
            "grammar_triggers": self
                .triggers
                .iter()
                .map(|t| json!({"type": t.kind.code(), "value": t.value}))
                .collect::<Vec<_>>(),
            "preserved_tokens": self.preserved_tokens,
        })
    }
}

pub(crate) fn render(shape: &Shape) -> Result<LazyGbnf, GrammarError> {
    let preserved_tokens = if shape.special_tokens {
        shape.markers.clone()
    } else {
        Vec::new()
    };
    match &shape.kind {
        Kind::Whole(g) => {
            let (rules, g) = lower_all(&shape.rules, std::slice::from_ref(g), shape.grammar, true)?;
            let mut w = Writer::new(rules);
            let root = w.expr(&g[0]);
            let grammar = w.finish(&root);
            Ok(LazyGbnf {
                whole_output: grammar.clone(),
                grammar,
                lazy: false,
                triggers: Vec::new(),
                preserved_tokens,
            })
        }
        Kind::Runs(runs) => {
            let bodies: Vec<G> = runs
                .marked
                .iter()
                .map(|m| m.body.clone())
                .chain(runs.bare.iter().cloned())
                .collect();
            let (rules, lowered) = lower_all(&shape.rules, &bodies, shape.grammar, true)?;
            let mut w = Writer::new(rules);
            let firsts = |items: &[String]| -> Vec<char> {
                items.iter().filter_map(|s| s.chars().next()).collect()
            };
            let text_first = w.text(&runs.excludes, &firsts(&runs.openers));
            let text = w.text(&runs.excludes, &firsts(&runs.after_not));
            let mut marked = Vec::new();
            let mut open_tail = None;
            for (k, m) in runs.marked.iter().enumerate() {
                let mut body = format!("{} {}", gbnf_string(&m.marker), w.expr(&lowered[k]));
                if let Some(end) = &m.end {
                    body = format!("{body} {}", gbnf_string(end));
                }
                if let (true, G::Until { excludes, .. }) = (m.reasoning, &m.body) {
                    let open = w.text(excludes, &[]);
                    open_tail = Some(format!("{} {open}", gbnf_string(&m.marker)));
                }
                marked.push(w.named("region", &body));
            }
            let mut bare = Vec::new();
            for j in 0..runs.bare.len() {
                let body = w.expr(&lowered[runs.marked.len() + j]);
                bare.push(w.named("bare", &body));
            }
            let mut triggers: Vec<Trigger> = runs
                .marked
                .iter()
                .map(|m| Trigger {
                    kind: TriggerKind::Word,
                    value: m.marker.clone(),
                })
                .collect();
            for opener in &runs.openers {
                if runs.bare.is_empty() {
                    break;
                }
                triggers.push(Trigger {
                    kind: TriggerKind::PatternFull,
                    value: format!("[ \\t\\n\\r]*({})[\\s\\S]*", regex_escape(opener)),
                });
            }
            let mut tail = vec![text.clone()];
            if let Some(open) = &open_tail {
                tail.push(format!("{text} {open}"));
            }
            let tail = w.named("tail", &tail.join(" | "));
            let seg = if marked.is_empty() {
                None
            } else {
                let alts: Vec<String> = marked.iter().map(|m| format!("{text} {m}")).collect();
                Some(w.named("seg", &alts.join(" | ")))
            };
            let after = |first: &str| match &seg {
                Some(seg) => format!("{first} {seg}* {tail}"),
                None => format!("{first} {tail}"),
            };
            let mut lazy_alts: Vec<String> = marked.iter().map(|m| after(m)).collect();
            lazy_alts.extend(bare.iter().map(|b| after(b)));
            if let Some(open) = &open_tail {
                lazy_alts.push(open.clone());
            }
            let mut whole_alts = vec![text_first.clone()];
            whole_alts.extend(marked.iter().map(|m| after(&format!("{text_first} {m}"))));
            whole_alts.extend(bare.iter().map(|b| after(&format!("ws {b}"))));
            if let Some(open) = &open_tail {
                whole_alts.push(format!("{text_first} {open}"));
            }
            let lazy_root = if lazy_alts.is_empty() {
                // No tool and no reasoning: nothing triggers the grammar.
                text_first.clone()
            } else {
                lazy_alts.join("\n     | ")
            };
            let whole = whole_alts.join("\n     | ");
            let body = w.rules_text();
            Ok(LazyGbnf {
                grammar: format!("root ::= {lazy_root}\n{body}"),
                whole_output: format!("root ::= {whole}\n{body}"),
                lazy: true,
                triggers,
                preserved_tokens,
            })
        }
    }
}

/// The GBNF text of `g` as its own grammar (`root ::= ...` and the rules it
/// refers to): what xgrammar's `grammar` format takes.
pub(crate) fn standalone(rules: Rules, g: &G) -> String {
    let mut w = Writer::new(rules);
    let root = w.expr(g);
    w.finish(&root)
}

struct Writer {
    rules: Rules,
    names: HashMap<usize, String>,
    defs: Vec<String>,
    texts: HashMap<String, String>,
    count: usize,
    ws: bool,
}

impl Writer {
    fn new(rules: Rules) -> Writer {
        Writer {
            rules,
            names: HashMap::new(),
            defs: Vec::new(),
            texts: HashMap::new(),
            count: 0,
            ws: false,
        }
    }

    fn finish(&mut self, root: &str) -> String {
        format!("root ::= {root}\n{}", self.rules_text())
    }

    fn rules_text(&mut self) -> String {
        let mut out = String::new();
        for d in &self.defs {
            out.push_str(d);
            out.push('\n');
        }
        if self.ws || out.contains(" ws") {
            out.push_str("ws ::= [ \\t\\n\\r]*\n");
        }
        out
    }

    fn named(&mut self, hint: &str, body: &str) -> String {
        self.count += 1;
        let name = format!("{hint}-{}", self.count);
        self.defs.push(format!("{name} ::= {body}"));
        name
    }

    fn expr(&mut self, g: &G) -> String {
        match g {
            G::Lit(s) => gbnf_string(s),
            G::Ws => {
                self.ws = true;
                "ws".to_owned()
            }
            G::Class(c) => class(c),
            G::Seq(items) if items.is_empty() => "\"\"".to_owned(),
            G::Seq(items) => items
                .iter()
                .map(|x| self.expr(x))
                .collect::<Vec<_>>()
                .join(" "),
            // No alternative: a class no character is in.
            G::Alt(items) if items.is_empty() => "[^\\x00-\\U0010FFFF]".to_owned(),
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
            // Lowered before rendering; nothing is left of them here.
            G::Json(_) | G::Python(_) => "[^\\x00-\\U0010FFFF]".to_owned(),
            G::Until { excludes, end } => {
                let t = self.text(excludes, &[]);
                format!("{t} {}", gbnf_string(end))
            }
        }
    }

    fn rule(&mut self, i: usize) -> String {
        if let Some(n) = self.names.get(&i) {
            return n.clone();
        }
        let hint: String = self.rules.rules[i]
            .0
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let name = format!("{hint}-r{i}");
        self.names.insert(i, name.clone());
        let body = self.rules.rules[i].1.clone();
        let e = self.expr(&body);
        self.defs.push(format!("{name} ::= {e}"));
        name
    }

    /// A rule for text holding none of `excludes`, whose first character
    /// after leading whitespace is none of `not_first`.
    fn text(&mut self, excludes: &[String], not_first: &[char]) -> String {
        let key = format!("{excludes:?}/{not_first:?}");
        if let Some(n) = self.texts.get(&key) {
            return n.clone();
        }
        self.count += 1;
        let base = format!("text-{}", self.count);
        let ac = Matcher::new(excludes);
        let state = |s: usize| format!("{base}-s{s}");
        let alphabet: Vec<char> = ac.alphabet.iter().copied().collect();
        for s in 0..ac.states.len() {
            if ac.states[s].dead {
                continue;
            }
            let mut alts = vec!["\"\"".to_owned()];
            for &c in &alphabet {
                let t = ac.next(s, c);
                if !ac.states[t].dead {
                    alts.push(format!("{} {}", class(&Class::of(&[(c, c)])), state(t)));
                }
            }
            let mut others: Vec<(char, char)> = alphabet.iter().map(|c| (*c, *c)).collect();
            if others.is_empty() {
                others.push(('\u{0}', '\u{0}'));
                alts.push(format!("[\\x00] {}", state(0)));
            }
            alts.push(format!("{} {}", class(&Class::not(&others)), state(0)));
            self.defs
                .push(format!("{} ::= {}", state(s), alts.join(" | ")));
        }
        let name = if not_first.is_empty() {
            state(0)
        } else {
            // Leading whitespace, then a first character that is none of
            // `not_first` (nor whitespace).
            let lead = format!("{base}-lead");
            let mut alts = vec!["\"\"".to_owned(), format!("[ \\t\\n\\r] {lead}")];
            let mut banned: BTreeSet<char> = not_first.iter().copied().collect();
            banned.extend([' ', '\t', '\n', '\r']);
            for &c in &alphabet {
                if banned.contains(&c) {
                    continue;
                }
                let t = ac.next(0, c);
                if !ac.states[t].dead {
                    alts.push(format!("{} {}", class(&Class::of(&[(c, c)])), state(t)));
                }
            }
            banned.extend(alphabet.iter().copied());
            let others: Vec<(char, char)> = banned.iter().map(|c| (*c, *c)).collect();
            alts.push(format!("{} {}", class(&Class::not(&others)), state(0)));
            self.defs.push(format!("{lead} ::= {}", alts.join(" | ")));
            lead
        };
        self.texts.insert(key, name.clone());
        name
    }
}

/// An Aho-Corasick matcher of the markers, over characters.
struct Matcher {
    states: Vec<State>,
    alphabet: BTreeSet<char>,
}

struct State {
    next: HashMap<char, usize>,
    fail: usize,
    dead: bool,
}

impl Matcher {
    fn new(patterns: &[String]) -> Matcher {
        let mut states = vec![State {
            next: HashMap::new(),
            fail: 0,
            dead: false,
        }];
        let mut alphabet = BTreeSet::new();
        for p in patterns.iter().filter(|p| !p.is_empty()) {
            let mut s = 0;
            for c in p.chars() {
                alphabet.insert(c);
                s = match states[s].next.get(&c) {
                    Some(&t) => t,
                    None => {
                        states.push(State {
                            next: HashMap::new(),
                            fail: 0,
                            dead: false,
                        });
                        let t = states.len() - 1;
                        states[s].next.insert(c, t);
                        t
                    }
                };
            }
            states[s].dead = true;
        }
        // Failure links, breadth first.
        let mut queue: std::collections::VecDeque<usize> =
            states[0].next.values().copied().collect();
        while let Some(s) = queue.pop_front() {
            let edges: Vec<(char, usize)> = states[s].next.iter().map(|(c, t)| (*c, *t)).collect();
            for (c, t) in edges {
                let mut f = states[s].fail;
                let fail = loop {
                    if let Some(&n) = states[f].next.get(&c)
                        && n != t
                    {
                        break n;
                    }
                    if f == 0 {
                        break 0;
                    }
                    f = states[f].fail;
                };
                states[t].fail = fail;
                if states[fail].dead {
                    states[t].dead = true;
                }
                queue.push_back(t);
            }
        }
        Matcher { states, alphabet }
    }

    fn next(&self, mut s: usize, c: char) -> usize {
        loop {
            if let Some(&t) = self.states[s].next.get(&c) {
                return t;
            }
            if s == 0 {
                return 0;
            }
            s = self.states[s].fail;
        }
    }
}

/// A GBNF string literal.
pub(crate) fn gbnf_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                let _ = write!(out, "\\x{:02X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn class_char(c: char) -> String {
    let n = c as u32;
    if c.is_ascii_alphanumeric() {
        c.to_string()
    } else if n < 0x80 {
        format!("\\x{n:02X}")
    } else if n <= 0xFFFF {
        format!("\\u{n:04X}")
    } else {
        format!("\\U{n:08X}")
    }
}

fn class(c: &Class) -> String {
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

/// Escapes a literal for a llama.cpp trigger pattern (ECMAScript regex).
fn regex_escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if "\\^$.|?*+()[]{}/-".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}
