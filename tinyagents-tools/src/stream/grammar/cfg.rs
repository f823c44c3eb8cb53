//! The grammar every builder shares: expressions over text (literals,
//! character classes, sequences, choices, repetition), leaves for JSON and
//! Python values and for free text, and the conversion of a JSON schema
//! into rules for the grammars that take no JSON schema (GBNF, and the
//! Python literals of pythonic calls everywhere).
//!
//! The conversion is exact or refused: every value a converted rule
//! accepts is valid against the schema, and a keyword it cannot express is
//! a [`GrammarError::Unsupported`] naming the tool and the pointer.

use std::collections::{BTreeSet, HashMap};

use serde_json::{Map, Value};

use super::{Grammar, GrammarError};
use crate::spec::schema::escape_pointer;

/// A grammar expression.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum G {
    /// This exact text.
    Lit(String),
    /// Optional whitespace, as the reader skips it: `[ \t\n\r]*`.
    Ws,
    /// One character of a class.
    Class(Class),
    /// One after the other (empty: the empty text).
    Seq(Vec<G>),
    /// One of them.
    Alt(Vec<G>),
    /// Zero or one time.
    Opt(Box<G>),
    /// Zero or more times.
    Star(Box<G>),
    /// One or more times.
    Plus(Box<G>),
    /// Between `min` and `max` (unbounded when `None`) times.
    Repeat(Box<G>, u32, Option<u32>),
    /// A rule of the [`Rules`] table.
    Rule(usize),
    /// A JSON value valid against a schema.
    Json(Leaf),
    /// A Python literal whose JSON reading is valid against a schema.
    Python(Leaf),
    /// Text holding none of `excludes`, then the marker `end`.
    Until {
        /// What the text may not hold.
        excludes: Vec<String>,
        /// The marker after it.
        end: String,
    },
}

/// A schema leaf, with where it comes from (for errors).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Leaf {
    pub schema: Value,
    pub tool: String,
    pub pointer: String,
}

/// A character class: the characters in `ranges` (or, when `negated`,
/// every character outside them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Class {
    pub negated: bool,
    pub ranges: Vec<(char, char)>,
}

impl Class {
    pub fn of(ranges: &[(char, char)]) -> Class {
        Class {
            negated: false,
            ranges: ranges.to_vec(),
        }
    }

    pub fn not(ranges: &[(char, char)]) -> Class {
        Class {
            negated: true,
            ranges: ranges.to_vec(),
        }
    }
}

pub(crate) fn lit(s: &str) -> G {
    G::Lit(s.to_owned())
}

pub(crate) fn seq(items: impl IntoIterator<Item = G>) -> G {
    let mut out = Vec::new();
    for g in items {
        match g {
            G::Seq(inner) => out.extend(inner),
            other => out.push(other),
        }
    }
    if out.len() == 1 {
        out.pop().unwrap_or(G::Seq(Vec::new()))
    } else {
        G::Seq(out)
    }
}

pub(crate) fn alt(items: Vec<G>) -> G {
    if items.len() == 1 {
        items.into_iter().next().unwrap_or(G::Seq(Vec::new()))
    } else {
        G::Alt(items)
    }
}

pub(crate) fn opt(g: G) -> G {
    G::Opt(Box::new(g))
}

pub(crate) fn star(g: G) -> G {
    G::Star(Box::new(g))
}

pub(crate) fn plus(g: G) -> G {
    G::Plus(Box::new(g))
}

pub(crate) fn repeat(g: G, min: u32, max: Option<u32>) -> G {
    match (min, max) {
        (_, Some(0)) => G::Seq(Vec::new()),
        (0, None) => star(g),
        (1, None) => plus(g),
        (0, Some(1)) => opt(g),
        (1, Some(1)) => g,
        _ => G::Repeat(Box::new(g), min, max),
    }
}

/// Named rules that expressions refer to with [`G::Rule`]; a rule may
/// refer to itself (the any-value rules do).
#[derive(Debug, Default)]
pub(crate) struct Rules {
    pub rules: Vec<(String, G)>,
    shared: HashMap<String, usize>,
}

impl Rules {
    /// Adds a rule named after `hint` (the renderers make the name unique).
    pub fn add(&mut self, hint: &str, g: G) -> G {
        self.rules.push((hint.to_owned(), g));
        G::Rule(self.rules.len() - 1)
    }

    /// The rule named `key`, made once by `make`.
    fn shared(&mut self, key: &str, make: impl FnOnce(&mut Rules, usize)) -> G {
        if let Some(&i) = self.shared.get(key) {
            return G::Rule(i);
        }
        let i = self.rules.len();
        self.rules.push((key.to_owned(), G::Seq(Vec::new())));
        self.shared.insert(key.to_owned(), i);
        make(self, i);
        G::Rule(i)
    }

    fn set(&mut self, i: usize, g: G) {
        self.rules[i].1 = g;
    }
}

/// How values are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flavor {
    /// JSON.
    Json,
    /// Python literals, as the pythonic reader reads them: `True`,
    /// `False`, `None`, double-quoted strings, lists, dicts.
    Python,
}

/// The biggest integer magnitude the grammars write: 16 digits.
const MAX_INT: u64 = 9_999_999_999_999_999;

/// Keywords that say nothing about which values are valid.
const ANNOTATIONS: &[&str] = &[
    "description",
    "title",
    "default",
    "examples",
    "$comment",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$schema",
    "$id",
    "$defs",
    "definitions",
];

/// Keywords the conversion reads.
const KNOWN: &[&str] = &[
    "type",
    "enum",
    "const",
    "anyOf",
    "oneOf",
    "allOf",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "format",
];

/// Numeric formats schemars writes: the type and bounds already say them.
const NUMERIC_FORMATS: &[&str] = &[
    "int", "uint", "float", "double", "int8", "int16", "int32", "int64", "int128", "uint8",
    "uint16", "uint32", "uint64", "uint128",
];

/// Converts schemas into rules, for one grammar kind and flavor.
pub(crate) struct Converter<'r> {
    pub rules: &'r mut Rules,
    pub grammar: Grammar,
    pub flavor: Flavor,
}

type R<T> = Result<T, GrammarError>;

impl Converter<'_> {
    fn unsupported(&self, leaf: &Leaf, pointer: &str, keyword: &str, detail: &str) -> GrammarError {
        GrammarError::Unsupported {
            grammar: self.grammar,
            tool: leaf.tool.clone(),
            pointer: pointer.to_owned(),
            keyword: keyword.to_owned(),
            detail: detail.to_owned(),
        }
    }

    /// The grammar of a value valid against `leaf.schema`.
    pub fn value(&mut self, leaf: &Leaf) -> R<G> {
        let schema = leaf.schema.clone();
        self.schema(leaf, &schema, &leaf.pointer.clone())
    }

    fn schema(&mut self, leaf: &Leaf, schema: &Value, ptr: &str) -> R<G> {
        let obj = match schema {
            Value::Bool(true) => return Ok(self.any()),
            Value::Bool(false) => {
                return Err(self.unsupported(leaf, ptr, "false", "a schema no value satisfies"));
            }
            Value::Object(obj) => obj,
            _ => return Err(self.unsupported(leaf, ptr, "schema", "not an object or boolean")),
        };
        for key in obj.keys() {
            let k = key.as_str();
            if !KNOWN.contains(&k) && !ANNOTATIONS.contains(&k) && !k.starts_with("x-") {
                return Err(self.unsupported(leaf, ptr, k, ""));
            }
        }
        if let Some(Value::String(f)) = obj.get("format")
            && !NUMERIC_FORMATS.contains(&f.as_str())
        {
            return Err(self.unsupported(leaf, &format!("{ptr}/format"), "format", f));
        }
        if let Some(Value::Array(all)) = obj.get("allOf") {
            let [Value::Object(inner)] = all.as_slice() else {
                return Err(self.unsupported(
                    leaf,
                    &format!("{ptr}/allOf"),
                    "allOf",
                    "more than one schema",
                ));
            };
            let mut merged = obj.clone();
            merged.remove("allOf");
            for (k, v) in inner {
                if ANNOTATIONS.contains(&k.as_str()) {
                    continue;
                }
                if merged.contains_key(k) {
                    return Err(self.unsupported(
                        leaf,
                        &format!("{ptr}/allOf/0/{}", escape_pointer(k)),
                        "allOf",
                        "a keyword on both sides",
                    ));
                }
                merged.insert(k.clone(), v.clone());
            }
            return self.schema(leaf, &Value::Object(merged), ptr);
        }
        let constraining: Vec<&str> = obj
            .keys()
            .map(String::as_str)
            .filter(|k| KNOWN.contains(k) && *k != "format")
            .collect();
        for combinator in ["anyOf", "oneOf"] {
            let Some(branches) = obj.get(combinator) else {
                continue;
            };
            let Value::Array(branches) = branches else {
                return Err(self.unsupported(leaf, ptr, combinator, "not an array"));
            };
            if let Some(other) = constraining.iter().find(|k| **k != combinator) {
                return Err(self.unsupported(leaf, ptr, other, &format!("beside {combinator}")));
            }
            if combinator == "oneOf" && !pairwise_disjoint(branches) {
                return Err(self.unsupported(
                    leaf,
                    &format!("{ptr}/oneOf"),
                    "oneOf",
                    "branches that may overlap",
                ));
            }
            let mut alts = Vec::new();
            for (i, b) in branches.iter().enumerate() {
                alts.push(self.schema(leaf, b, &format!("{ptr}/{combinator}/{i}"))?);
            }
            if alts.is_empty() {
                return Err(self.unsupported(leaf, ptr, combinator, "no branches"));
            }
            return Ok(alt(alts));
        }
        let types = types_of(obj);
        let literals = match (obj.get("enum"), obj.get("const")) {
            (Some(Value::Array(values)), None) => Some(values.clone()),
            (None, Some(value)) => Some(vec![value.clone()]),
            (None, None) => None,
            _ => return Err(self.unsupported(leaf, ptr, "enum", "beside const")),
        };
        if let Some(values) = literals {
            if let Some(other) = constraining
                .iter()
                .find(|k| !matches!(**k, "enum" | "const" | "type"))
            {
                return Err(self.unsupported(leaf, ptr, other, "beside enum or const"));
            }
            let mut alts = Vec::new();
            for v in values {
                if types
                    .as_ref()
                    .is_none_or(|ts| ts.iter().any(|t| type_admits(t, &v)))
                {
                    alts.push(lit(&self.literal(&v)));
                }
            }
            if alts.is_empty() {
                return Err(self.unsupported(leaf, ptr, "enum", "no value of the allowed types"));
            }
            return Ok(alt(alts));
        }
        let types = match types {
            Some(ts) => ts,
            None => {
                let implied: Vec<String> = [
                    (
                        "object",
                        &["properties", "required", "additionalProperties"][..],
                    ),
                    ("array", &["items", "minItems", "maxItems"][..]),
                    ("string", &["minLength", "maxLength"][..]),
                    (
                        "number",
                        &["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"][..],
                    ),
                ]
                .iter()
                .filter(|(_, keys)| keys.iter().any(|k| obj.contains_key(*k)))
                .map(|(t, _)| (*t).to_owned())
                .collect();
                if implied.is_empty() {
                    return Ok(self.any());
                }
                if implied.len() > 1 {
                    return Err(self.unsupported(
                        leaf,
                        ptr,
                        "type",
                        "keywords of several types without a type",
                    ));
                }
                implied
            }
        };
        let mut alts = Vec::new();
        for t in &types {
            alts.push(self.typed(leaf, obj, t, ptr)?);
        }
        Ok(alt(alts))
    }

    fn typed(&mut self, leaf: &Leaf, obj: &Map<String, Value>, ty: &str, ptr: &str) -> R<G> {
        let python = self.flavor == Flavor::Python;
        Ok(match ty {
            "null" => lit(if python { "None" } else { "null" }),
            "boolean" => {
                if python {
                    alt(vec![lit("True"), lit("False")])
                } else {
                    alt(vec![lit("true"), lit("false")])
                }
            }
            "integer" => self.integer(leaf, obj, ptr)?,
            "number" => {
                if let Some(k) = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]
                    .into_iter()
                    .find(|k| obj.contains_key(*k))
                {
                    return Err(self.unsupported(
                        leaf,
                        ptr,
                        k,
                        "a bound on a number that is not an integer",
                    ));
                }
                self.number()
            }
            "string" => {
                let min = self.count(leaf, obj, "minLength", ptr)?.unwrap_or(0);
                let max = self.count(leaf, obj, "maxLength", ptr)?;
                let ch = self.string_char();
                seq([lit("\""), repeat(ch, min, max), lit("\"")])
            }
            "array" => self.array(leaf, obj, ptr)?,
            "object" => self.object(leaf, obj, ptr)?,
            other => return Err(self.unsupported(leaf, &format!("{ptr}/type"), "type", other)),
        })
    }

    fn count(&self, leaf: &Leaf, obj: &Map<String, Value>, key: &str, ptr: &str) -> R<Option<u32>> {
        match obj.get(key) {
            None => Ok(None),
            Some(v) => v
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .filter(|n| *n <= 10_000)
                .map(Some)
                .ok_or_else(|| {
                    self.unsupported(
                        leaf,
                        &format!("{ptr}/{key}"),
                        key,
                        "not a count up to 10000",
                    )
                }),
        }
    }

    fn integer(&mut self, leaf: &Leaf, obj: &Map<String, Value>, ptr: &str) -> R<G> {
        let bound = |key: &str, up: bool| -> R<Option<i128>> {
            let Some(v) = obj.get(key) else {
                return Ok(None);
            };
            let f = v.as_f64().ok_or_else(|| {
                self.unsupported(leaf, &format!("{ptr}/{key}"), key, "not a number")
            })?;
            let exclusive = key.starts_with("exclusive");
            let n = if up { f.floor() } else { f.ceil() } as i128;
            let n = match (exclusive, up, n as f64 == f) {
                (true, true, true) => n - 1,
                (true, false, true) => n + 1,
                _ => n,
            };
            Ok(Some(n))
        };
        let lo = [bound("minimum", false)?, bound("exclusiveMinimum", false)?]
            .into_iter()
            .flatten()
            .max();
        let hi = [bound("maximum", true)?, bound("exclusiveMaximum", true)?]
            .into_iter()
            .flatten()
            .min();
        let max = MAX_INT as i128;
        let lo = lo.unwrap_or(-max).max(-max);
        let hi = hi.unwrap_or(max).min(max);
        if lo > hi {
            return Err(self.unsupported(leaf, ptr, "minimum", "bounds no integer satisfies"));
        }
        let mut alts = Vec::new();
        if lo < 0 {
            let neg_hi = hi.min(-1);
            // -a ..= -b for magnitudes b..=a
            alts.push(seq([
                lit("-"),
                digits_range((-neg_hi) as u64, (-lo) as u64),
            ]));
        }
        if hi >= 0 {
            alts.push(digits_range(lo.max(0) as u64, hi as u64));
        }
        Ok(alt(alts))
    }

    fn number(&mut self) -> G {
        self.rules
            .shared(&format!("{}-number", self.prefix()), |rules, i| {
                let digit = G::Class(Class::of(&[('0', '9')]));
                let int = alt(vec![
                    lit("0"),
                    seq([
                        G::Class(Class::of(&[('1', '9')])),
                        repeat(digit.clone(), 0, Some(15)),
                    ]),
                ]);
                let frac = seq([lit("."), repeat(digit.clone(), 1, Some(16))]);
                let exp = seq([
                    G::Class(Class::of(&[('e', 'e'), ('E', 'E')])),
                    opt(G::Class(Class::of(&[('+', '+'), ('-', '-')]))),
                    repeat(digit, 1, Some(2)),
                ]);
                rules.set(i, seq([opt(lit("-")), int, opt(frac), opt(exp)]));
            })
    }

    fn prefix(&self) -> &'static str {
        match self.flavor {
            Flavor::Json => "json",
            Flavor::Python => "py",
        }
    }

    fn string_char(&mut self) -> G {
        let python = self.flavor == Flavor::Python;
        self.rules
            .shared(&format!("{}-char", self.prefix()), |rules, i| {
                let plain = G::Class(Class::not(&[
                    ('"', '"'),
                    ('\\', '\\'),
                    ('\u{0}', '\u{1f}'),
                    ('\u{7f}', '\u{7f}'),
                ]));
                // JSON's `\/` is `/`; Python keeps its backslash, so it is left out there.
                let simple: &[(char, char)] = if python {
                    &[
                        ('"', '"'),
                        ('\\', '\\'),
                        ('b', 'b'),
                        ('f', 'f'),
                        ('n', 'n'),
                        ('r', 'r'),
                        ('t', 't'),
                    ]
                } else {
                    &[
                        ('"', '"'),
                        ('\\', '\\'),
                        ('/', '/'),
                        ('b', 'b'),
                        ('f', 'f'),
                        ('n', 'n'),
                        ('r', 'r'),
                        ('t', 't'),
                    ]
                };
                let control = seq([
                    lit("u00"),
                    G::Class(Class::of(&[('0', '1')])),
                    G::Class(Class::of(&[('0', '9'), ('a', 'f'), ('A', 'F')])),
                ]);
                let escape = seq([lit("\\"), alt(vec![G::Class(Class::of(simple)), control])]);
                rules.set(i, alt(vec![plain, escape]));
            })
    }

    /// A value of any type.
    fn any(&mut self) -> G {
        let p = self.prefix();
        let python = self.flavor == Flavor::Python;
        let ch = self.string_char();
        let number = self.number();
        let string = self.rules.shared(&format!("{p}-string"), |rules, i| {
            rules.set(i, seq([lit("\""), star(ch), lit("\"")]));
        });
        let key = string.clone();
        self.rules.shared(&format!("{p}-value"), |rules, value| {
            let sep = seq([G::Ws, lit(","), G::Ws]);
            let member = seq([key, G::Ws, lit(":"), G::Ws, G::Rule(value)]);
            let object = seq([
                lit("{"),
                G::Ws,
                opt(seq([
                    member.clone(),
                    star(seq([sep.clone(), member])),
                    G::Ws,
                ])),
                lit("}"),
            ]);
            let array = seq([
                lit("["),
                G::Ws,
                opt(seq([
                    G::Rule(value),
                    star(seq([sep, G::Rule(value)])),
                    G::Ws,
                ])),
                lit("]"),
            ]);
            let words = if python {
                vec![lit("True"), lit("False"), lit("None")]
            } else {
                vec![lit("true"), lit("false"), lit("null")]
            };
            let mut alts = vec![object, array, string, number];
            alts.extend(words);
            rules.set(value, G::Alt(alts));
        })
    }

    fn array(&mut self, leaf: &Leaf, obj: &Map<String, Value>, ptr: &str) -> R<G> {
        let min = self.count(leaf, obj, "minItems", ptr)?.unwrap_or(0);
        let mut max = self.count(leaf, obj, "maxItems", ptr)?;
        let item = match obj.get("items") {
            None => self.any(),
            Some(Value::Bool(false)) => {
                max = Some(0);
                G::Seq(Vec::new())
            }
            Some(items @ (Value::Object(_) | Value::Bool(true))) => {
                self.schema(leaf, items, &format!("{ptr}/items"))?
            }
            Some(_) => {
                return Err(self.unsupported(
                    leaf,
                    &format!("{ptr}/items"),
                    "items",
                    "an array of schemas",
                ));
            }
        };
        if max == Some(0) {
            if min > 0 {
                return Err(self.unsupported(leaf, ptr, "minItems", "more items than allowed"));
            }
            return Ok(seq([lit("["), G::Ws, lit("]")]));
        }
        let item = self.rules.add("item", item);
        let sep = seq([G::Ws, lit(","), G::Ws]);
        let rest = repeat(
            seq([sep, item.clone()]),
            min.saturating_sub(1),
            max.map(|m| m - 1),
        );
        let items = seq([item, rest, G::Ws]);
        let items = if min == 0 { opt(items) } else { items };
        Ok(seq([lit("["), G::Ws, items, lit("]")]))
    }

    fn object(&mut self, leaf: &Leaf, obj: &Map<String, Value>, ptr: &str) -> R<G> {
        let props = match obj.get("properties") {
            None => Map::new(),
            Some(Value::Object(p)) => p.clone(),
            Some(_) => return Err(self.unsupported(leaf, ptr, "properties", "not an object")),
        };
        let required = required_of(obj);
        if let Some(missing) = required.iter().find(|r| !props.contains_key(*r)) {
            return Err(self.unsupported(
                leaf,
                &format!("{ptr}/required"),
                "required",
                &format!("`{missing}` is not in properties"),
            ));
        }
        // An object with properties accepts only them; a map without
        // properties accepts keys by `additionalProperties`.
        let extra = if props.is_empty() {
            match obj.get("additionalProperties") {
                Some(Value::Bool(false)) => None,
                None | Some(Value::Bool(true)) => Some(self.any()),
                Some(s @ Value::Object(_)) => {
                    Some(self.schema(leaf, s, &format!("{ptr}/additionalProperties"))?)
                }
                Some(_) => {
                    return Err(self.unsupported(
                        leaf,
                        ptr,
                        "additionalProperties",
                        "not a schema",
                    ));
                }
            }
        } else {
            None
        };
        let mut members = Vec::new();
        for (name, schema) in &props {
            let value = self.schema(
                leaf,
                schema,
                &format!("{ptr}/properties/{}", escape_pointer(name)),
            )?;
            members.push(Member {
                key: lit(&self.literal(&Value::String(name.clone()))),
                value,
                required: required.contains(name),
            });
        }
        let extra = match extra {
            Some(value) => {
                self.string_char();
                let key = self.any_string();
                Some(
                    self.rules
                        .add("member", seq([key, G::Ws, lit(":"), G::Ws, value])),
                )
            }
            None => None,
        };
        let sep = seq([G::Ws, lit(","), G::Ws]);
        let pairs = members
            .into_iter()
            .map(|m| (seq([m.key, G::Ws, lit(":"), G::Ws, m.value]), m.required))
            .collect();
        let inner = members_of(self.rules, pairs, sep, extra);
        Ok(match inner {
            Some(inner) => seq([lit("{"), G::Ws, inner, G::Ws, lit("}")]),
            None => seq([lit("{"), G::Ws, lit("}")]),
        })
    }

    fn any_string(&mut self) -> G {
        let ch = self.string_char();
        self.rules
            .shared(&format!("{}-string", self.prefix()), |rules, i| {
                rules.set(i, seq([lit("\""), star(ch), lit("\"")]));
            })
    }

    /// A value's literal text in this flavor.
    pub fn literal(&self, v: &Value) -> String {
        match self.flavor {
            Flavor::Json => serde_json::to_string(v).unwrap_or_default(),
            Flavor::Python => python_literal(v),
        }
    }
}

/// The members of an object (or the keyword arguments of a call, or the
/// parameters of an XML call) in order, required ones present, optional
/// ones optional, `sep` between two; `extra` members (any number) after
/// them. `None` when no member may be written.
pub(crate) fn members_of(
    rules: &mut Rules,
    pairs: Vec<(G, bool)>,
    sep: G,
    extra: Option<G>,
) -> Option<G> {
    let n = pairs.len();
    // rest[i]: the members from i on, after one was written.
    let mut rest: Vec<Option<G>> = vec![None; n + 1];
    rest[n] = extra.clone().map(|e| star(seq([sep.clone(), e])));
    for i in (0..n).rev() {
        let (pair, required) = &pairs[i];
        let this = seq([sep.clone(), pair.clone()]
            .into_iter()
            .chain(rest[i + 1].clone()));
        let g = if *required {
            this
        } else {
            match &rest[i + 1] {
                None => opt(this),
                Some(r) => alt(vec![this, r.clone()]),
            }
        };
        rest[i] = Some(rules.add("rest", g));
    }
    // first: the members from i on, none written yet.
    let mut first: Option<G> = extra.map(|e| opt(seq([e.clone(), star(seq([sep.clone(), e]))])));
    for i in (0..n).rev() {
        let (pair, required) = &pairs[i];
        let this = seq([pair.clone()].into_iter().chain(rest[i + 1].clone()));
        let g = if *required {
            this
        } else {
            match &first {
                None => opt(this),
                Some(f) => alt(vec![this, f.clone()]),
            }
        };
        first = Some(rules.add("members", g));
    }
    first
}

/// One member of an object or call.
pub(crate) struct Member {
    pub key: G,
    pub value: G,
    pub required: bool,
}

/// A value as a Python literal the pythonic reader reads back to it.
fn python_literal(v: &Value) -> String {
    match v {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) => n.to_string(),
        Value::String(_) => serde_json::to_string(v)
            .unwrap_or_default()
            .replace("\\/", "/"),
        Value::Array(items) => format!(
            "[{}]",
            items
                .iter()
                .map(python_literal)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Value::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(k, v)| format!(
                    "{}: {}",
                    python_literal(&Value::String(k.clone())),
                    python_literal(v)
                ))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The names in a schema's `required`.
pub(crate) fn required_of(obj: &Map<String, Value>) -> Vec<String> {
    obj.get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The types a schema's `type` names, when it names any.
fn types_of(obj: &Map<String, Value>) -> Option<Vec<String>> {
    match obj.get("type")? {
        Value::String(t) => Some(vec![t.clone()]),
        Value::Array(ts) => Some(
            ts.iter()
                .filter_map(|t| t.as_str().map(str::to_owned))
                .collect(),
        ),
        _ => None,
    }
}

/// Whether a value is of a JSON-schema type.
fn type_admits(ty: &str, v: &Value) -> bool {
    match ty {
        "null" => v.is_null(),
        "boolean" => v.is_boolean(),
        "integer" => v.as_f64().is_some_and(|f| f.fract() == 0.0),
        "number" => v.is_number(),
        "string" => v.is_string(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        _ => false,
    }
}

/// Decimal integers from `a` to `b` (`0 <= a <= b`), without leading zeros.
fn digits_range(a: u64, b: u64) -> G {
    let len = |n: u64| n.to_string().len();
    let mut alts = Vec::new();
    for l in len(a)..=len(b) {
        let lo = if l == len(a) {
            a
        } else {
            10u64.pow(l as u32 - 1)
        };
        let hi = if l == len(b) {
            b
        } else {
            10u64.pow(l as u32) - 1
        };
        alts.push(same_length(
            lo.to_string().as_bytes(),
            hi.to_string().as_bytes(),
        ));
    }
    alt(alts)
}

/// Digit strings of one length from `lo` to `hi`.
fn same_length(lo: &[u8], hi: &[u8]) -> G {
    let digit = |from: u8, to: u8| G::Class(Class::of(&[(from as char, to as char)]));
    if lo.is_empty() {
        return G::Seq(Vec::new());
    }
    if lo == hi {
        return lit(std::str::from_utf8(lo).unwrap_or_default());
    }
    let n = lo.len() - 1;
    let (x, y) = (lo[0], hi[0]);
    if x == y {
        return seq([digit(x, x), same_length(&lo[1..], &hi[1..])]);
    }
    let any_rest = |g: G| {
        if n == 0 {
            g
        } else {
            seq([g, repeat(digit(b'0', b'9'), n as u32, Some(n as u32))])
        }
    };
    if lo[1..].iter().all(|d| *d == b'0') && hi[1..].iter().all(|d| *d == b'9') {
        return any_rest(digit(x, y));
    }
    let nines = vec![b'9'; n];
    let zeros = vec![b'0'; n];
    let mut alts = vec![seq([digit(x, x), same_length(&lo[1..], &nines)])];
    if y > x + 1 {
        alts.push(any_rest(digit(x + 1, y - 1)));
    }
    alts.push(seq([digit(y, y), same_length(&zeros, &hi[1..])]));
    alt(alts)
}

/// What a schema constrains a value to, for telling `oneOf` branches
/// apart: its types (integers counted as numbers) and its literal values.
fn kinds(schema: &Value) -> (Option<BTreeSet<String>>, Option<BTreeSet<String>>) {
    let Value::Object(obj) = schema else {
        return (None, None);
    };
    let types = types_of(obj).map(|ts| {
        ts.into_iter()
            .map(|t| {
                if t == "integer" {
                    "number".to_owned()
                } else {
                    t
                }
            })
            .collect()
    });
    let literals = match (obj.get("enum"), obj.get("const")) {
        (Some(Value::Array(vs)), None) => Some(vs.iter().map(|v| v.to_string()).collect()),
        (None, Some(v)) => Some(std::iter::once(v.to_string()).collect()),
        _ => None,
    };
    (types, literals)
}

/// Whether no value can satisfy two of `branches` at once (which makes
/// `oneOf` the same as `anyOf`): they differ in type, in literal values,
/// or in the literal value of a property both require.
fn pairwise_disjoint(branches: &[Value]) -> bool {
    let disjoint = |a: &Value, b: &Value| -> bool {
        let ((ta, la), (tb, lb)) = (kinds(a), kinds(b));
        if let (Some(ta), Some(tb)) = (&ta, &tb)
            && ta.is_disjoint(tb)
        {
            return true;
        }
        if let (Some(la), Some(lb)) = (&la, &lb)
            && la.is_disjoint(lb)
        {
            return true;
        }
        let (Some(oa), Some(ob)) = (a.as_object(), b.as_object()) else {
            return false;
        };
        let (ra, rb) = (required_of(oa), required_of(ob));
        ra.iter().filter(|k| rb.contains(k)).any(|k| {
            let pa = oa.get("properties").and_then(|p| p.get(k));
            let pb = ob.get("properties").and_then(|p| p.get(k));
            match (pa.map(kinds), pb.map(kinds)) {
                (Some((_, Some(la))), Some((_, Some(lb)))) => la.is_disjoint(&lb),
                _ => false,
            }
        })
    };
    branches
        .iter()
        .enumerate()
        .all(|(i, a)| branches[i + 1..].iter().all(|b| disjoint(a, b)))
}

/// A shape's rules and calls with their schema leaves converted: Python
/// leaves always, JSON leaves too when `json` (for grammars that take no
/// JSON schema).
pub(crate) fn lower(rules: &Rules, g: &G, grammar: Grammar, json: bool) -> R<(Rules, G)> {
    let mut out = Rules {
        rules: rules.rules.clone(),
        shared: rules.shared.clone(),
    };
    for i in 0..out.rules.len() {
        let body = out.rules[i].1.clone();
        let lowered = lower_g(&mut out, &body, grammar, json)?;
        out.rules[i].1 = lowered;
    }
    let g = lower_g(&mut out, g, grammar, json)?;
    Ok((out, g))
}

/// [`lower`] for several expressions sharing one rule table.
pub(crate) fn lower_all(
    rules: &Rules,
    gs: &[G],
    grammar: Grammar,
    json: bool,
) -> R<(Rules, Vec<G>)> {
    let (mut out, _) = lower(rules, &G::Seq(Vec::new()), grammar, json)?;
    let mut lowered = Vec::new();
    for g in gs {
        lowered.push(lower_g(&mut out, g, grammar, json)?);
    }
    Ok((out, lowered))
}

fn lower_g(rules: &mut Rules, g: &G, grammar: Grammar, json: bool) -> R<G> {
    let each = |rules: &mut Rules, items: &[G]| -> R<Vec<G>> {
        items
            .iter()
            .map(|x| lower_g(rules, x, grammar, json))
            .collect()
    };
    Ok(match g {
        G::Seq(items) => G::Seq(each(rules, items)?),
        G::Alt(items) => G::Alt(each(rules, items)?),
        G::Opt(x) => G::Opt(Box::new(lower_g(rules, x, grammar, json)?)),
        G::Star(x) => G::Star(Box::new(lower_g(rules, x, grammar, json)?)),
        G::Plus(x) => G::Plus(Box::new(lower_g(rules, x, grammar, json)?)),
        G::Repeat(x, a, b) => G::Repeat(Box::new(lower_g(rules, x, grammar, json)?), *a, *b),
        G::Python(leaf) => Converter {
            rules,
            grammar,
            flavor: Flavor::Python,
        }
        .value(leaf)?,
        G::Json(leaf) if json => Converter {
            rules,
            grammar,
            flavor: Flavor::Json,
        }
        .value(leaf)?,
        other => other.clone(),
    })
}
