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
                    (w.format(&m.body)?, m.end.clone().unwrap_or_default())
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
