//! The xgrammar structural tag.
//!
//! Free text is `triggered_tags` whose triggers are the markers that start
//! reasoning or a run of calls, each a `tag` from its marker to its end
//! marker; a call's markup is `sequence`/`or`/`const_string`, its JSON
//! arguments `json_schema`, raw values `any_text` inside a `tag` that ends
//! at their end marker, and Python values a `grammar`.

use serde_json::{Value, json};

use super::cfg::{Converter, Flavor, G, Rules};
use super::shape::{Kind, Shape};
use super::{Grammar, GrammarError};

const WS: &str = "[ \\t\\n\\r]*";

pub(crate) fn render(shape: &Shape) -> Result<Value, GrammarError> {
    let format = match &shape.kind {
        Kind::Whole(g) => Writer {
            rules: &shape.rules,
            grammar: shape.grammar,
        }
        .format(g)?,
        Kind::Runs(runs) => {
            let w = Writer {
                rules: &shape.rules,
                grammar: shape.grammar,
            };
            let mut tags = Vec::new();
            for m in &runs.marked {
                let (content, end) = if m.reasoning {
                    (
                        json!({"type": "any_text"}),
                        match &m.body {
                            G::Until { end, .. } => end.clone(),
                            _ => String::new(),
                        },
                    )
                } else {
                    match m.end.as_deref().filter(|end| !end.is_empty()) {
                        Some(end) => (w.format(&m.body)?, end.to_owned()),
                        None if unlimited(&shape.rules, &m.body) => {
                            let Some((body, end)) = with_end(&shape.rules, &m.body) else {
                                return Err(GrammarError::Unbounded {
                                    grammar: shape.grammar,
                                    marker: m.marker.clone(),
                                });
                            };
                            (w.format(&body)?, end)
                        }
                        None => (w.format(&m.body)?, String::new()),
                    }
                };
                tags.push(
                    json!({"type": "tag", "begin": m.marker, "content": content, "end": end}),
                );
            }
            let mut excludes: Vec<String> = runs.after_not.clone();
            excludes.dedup();
            let triggered = |at_least_one: bool| {
                let mut t = json!({
                    "type": "triggered_tags",
                    "triggers": runs.marked.iter().map(|m| m.marker.clone()).collect::<Vec<_>>(),
                    "tags": tags,
                });
                if at_least_one {
                    t["at_least_one"] = json!(true);
                }
                if !excludes.is_empty() {
                    t["excludes"] = json!(excludes);
                }
                t
            };
            let free = if tags.is_empty() {
                let mut t = json!({"type": "any_text"});
                if !runs.excludes.is_empty() {
                    t["excludes"] = json!(runs.excludes);
                }
                t
            } else {
                triggered(false)
            };
            if runs.bare.is_empty() {
                free
            } else {
                // Output that begins like a bare run must be one: free text
                // at the start begins with a marker, or with a character
                // that begins no marker and no run.
                let mut firsts: Vec<char> = runs
                    .openers
                    .iter()
                    .chain(runs.marked.iter().map(|m| &m.marker))
                    .filter_map(|s| s.chars().next())
                    .collect();
                firsts.sort_unstable();
                firsts.dedup();
                let banned: String = firsts.iter().map(|c| regex_char(*c)).collect();
                let ws = json!({"type": "regex", "pattern": WS});
                let mut branches = Vec::new();
                for j in 0..runs.bare.len() {
                    branches.push(json!({"type": "sequence", "elements": [
                        ws, w.format(&runs.bare[j])?, free
                    ]}));
                }
                if !tags.is_empty() {
                    branches.push(json!({"type": "sequence", "elements": [ws, triggered(true)]}));
                }
                branches.push(json!({"type": "sequence", "elements": [
                    {"type": "regex", "pattern": format!("{WS}[^ \\t\\n\\r{banned}]")},
                    free
                ]}));
                branches.push(ws);
                json!({"type": "or", "elements": branches})
            }
        }
    };
    Ok(json!({"type": "structural_tag", "format": format}))
}

/// Whether xgrammar counts `g` as unlimited text (its
/// `StructuralTagAnalyzer::IsUnlimited`): a repetition without a bound,
/// free text; a `tag` whose content is unlimited must have an end.
fn unlimited(rules: &Rules, g: &G) -> bool {
    match g {
        G::Star(_) | G::Plus(_) | G::Repeat(_, _, None) => true,
        G::Repeat(x, _, Some(max)) => *max > 0 && unlimited(rules, x),
        G::Seq(items) | G::Alt(items) => items.iter().any(|x| unlimited(rules, x)),
        G::Opt(x) => unlimited(rules, x),
        G::Rule(i) => unlimited(rules, &rules.rules[*i].1),
        // Written as a tag with its own end.
        G::Until { .. } => false,
        G::Lit(_) | G::Ws | G::Class(_) | G::Json(_) | G::Python(_) => false,
    }
}

/// The body of a region without an end marker written with an end that
/// xgrammar takes: the character every text of the body ends with, moved
/// out of it (`P c (B c)*` is `P (c B)* c`), once whitespace at the body's
/// very end is left to the free text that follows the region. `None` when
/// the body's texts do not all end with one character.
fn with_end(rules: &Rules, body: &G) -> Option<(G, String)> {
    let mut body = match body {
        G::Rule(i) => rules.rules[*i].1.clone(),
        other => other.clone(),
    };
    while let G::Seq(items) = &mut body
        && items.last() == Some(&G::Ws)
    {
        items.pop();
    }
    let (body, last) = split_last(rules, &body)?;
    Some((body, last.to_string()))
}

/// `(g', c)` such that the texts of `g` are exactly those of `g'` followed
/// by `c`.
fn split_last(rules: &Rules, g: &G) -> Option<(G, char)> {
    match g {
        G::Lit(s) => {
            let c = s.chars().next_back()?;
            Some((G::Lit(s[..s.len() - c.len_utf8()].to_owned()), c))
        }
        G::Alt(items) => {
            let mut split = Vec::with_capacity(items.len());
            let mut last = None;
            for x in items {
                let (x, c) = split_last(rules, x)?;
                if last.is_some_and(|l| l != c) {
                    return None;
                }
                last = Some(c);
                split.push(x);
            }
            Some((G::Alt(split), last?))
        }
        G::Seq(items) => {
            let (tail, head) = items.split_last()?;
            if let Some((tail, c)) = split_last(rules, tail) {
                let mut items = head.to_vec();
                items.push(tail);
                return Some((G::Seq(items), c));
            }
            // `P (B)*` and `P (B)?` where `P` and `B` both end with `c`:
            // `P' (c B')*` or `P' (c B')?`, then `c`.
            let (repeated, wrap): (&G, fn(G) -> G) = match tail {
                G::Star(b) => (b, |x| G::Star(Box::new(x))),
                G::Opt(b) => (b, |x| G::Opt(Box::new(x))),
                _ => return None,
            };
            let (prefix, c) = split_last(rules, &G::Seq(head.to_vec()))?;
            let (repeated, c2) = split_last(rules, repeated)?;
            (c == c2).then(|| {
                let again = G::Seq(vec![G::Lit(c.to_string()), repeated]);
                (G::Seq(vec![prefix, wrap(again)]), c)
            })
        }
        G::Rule(i) => split_last(rules, &rules.rules[*i].1),
        _ => None,
    }
}

struct Writer<'a> {
    rules: &'a Rules,
    grammar: Grammar,
}

impl Writer<'_> {
    fn format(&self, g: &G) -> Result<Value, GrammarError> {
        Ok(match g {
            G::Lit(s) => json!({"type": "const_string", "value": s}),
            G::Ws => json!({"type": "regex", "pattern": WS}),
            G::Class(_) => json!({"type": "regex", "pattern": regex(g)}),
            G::Seq(items) => {
                let mut elements: Vec<Value> = Vec::new();
                for x in items {
                    let f = self.format(x)?;
                    if f["type"] == "const_string" && f["value"] == "" {
                        continue;
                    }
                    // Adjacent strings as one.
                    if let (Some(last), Some(s)) =
                        (elements.last_mut(), f.get("value").and_then(Value::as_str))
                        && f["type"] == "const_string"
                        && last["type"] == "const_string"
                    {
                        let joined = format!("{}{s}", last["value"].as_str().unwrap_or_default());
                        last["value"] = json!(joined);
                        continue;
                    }
                    if f["type"] == "sequence" {
                        elements.extend(f["elements"].as_array().cloned().unwrap_or_default());
                    } else {
                        elements.push(f);
                    }
                }
                match elements.len() {
                    0 => json!({"type": "const_string", "value": ""}),
                    1 => elements.pop().unwrap_or_default(),
                    _ => json!({"type": "sequence", "elements": elements}),
                }
            }
            G::Alt(items) => {
                let mut elements = Vec::new();
                for x in items {
                    elements.push(self.format(x)?);
                }
                if elements.len() == 1 {
                    return Ok(elements.into_iter().next().unwrap_or_default());
                }
                json!({"type": "or", "elements": elements})
            }
            G::Opt(x) => json!({"type": "optional", "content": self.format(x)?}),
            G::Star(x) => json!({"type": "star", "content": self.format(x)?}),
            G::Plus(x) => json!({"type": "plus", "content": self.format(x)?}),
            G::Repeat(x, a, b) => json!({
                "type": "repeat",
                "min": a,
                "max": b.map_or(-1, i64::from),
                "content": self.format(x)?,
            }),
            // A shape's rules do not recur: they are written in place.
            G::Rule(i) => self.format(&self.rules.rules[*i].1)?,
            G::Json(leaf) => json!({"type": "json_schema", "json_schema": leaf.schema}),
            G::Python(leaf) => {
                let mut rules = Rules::default();
                let value = Converter {
                    rules: &mut rules,
                    grammar: self.grammar,
                    flavor: Flavor::Python,
                }
                .value(leaf)?;
                json!({"type": "grammar", "grammar": super::gbnf::standalone(rules, &value)})
            }
            G::Until { excludes, end } => {
                let others: Vec<&String> = excludes.iter().filter(|e| *e != end).collect();
                let mut text = json!({"type": "any_text"});
                if !others.is_empty() {
                    text["excludes"] = json!(others);
                }
                json!({"type": "tag", "begin": "", "content": text, "end": end})
            }
        })
    }
}

fn regex_char(c: char) -> String {
    if c.is_ascii_alphanumeric() {
        c.to_string()
    } else if (c as u32) < 0x80 {
        format!("\\x{:02X}", c as u32)
    } else {
        format!("\\u{:04X}", c as u32)
    }
}

fn regex(g: &G) -> String {
    match g {
        G::Class(c) => {
            let mut out = String::from("[");
            if c.negated {
                out.push('^');
            }
            for (a, b) in &c.ranges {
                out.push_str(&regex_char(*a));
                if a != b {
                    out.push('-');
                    out.push_str(&regex_char(*b));
                }
            }
            out.push(']');
            out
        }
        _ => String::new(),
    }
}
