//! The crate's own validator of the JSON Schema subset that `schemars`
//! derives for tool arguments, so that argument checks need no general
//! JSON Schema engine.
//!
//! The subset: `type` (one name or a list, `null` included), `properties`,
//! `required`, `additionalProperties` (a boolean or a schema), `items`,
//! `prefixItems`, `enum`, `const`, `anyOf`, `oneOf`, `allOf`, `$ref` to `#`,
//! `#/$defs/<name>` or `#/definitions/<name>`, `minimum`, `maximum`,
//! `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`, `minLength` and
//! `maxLength` (in Unicode scalar values), `minItems`, `maxItems`,
//! `uniqueItems`, `minProperties`, `maxProperties`, and `format` for the
//! formats `schemars` writes for dates, times, UUIDs and IP addresses
//! (`date`, `date-time`, `time`, `uuid`, `ipv4`, `ipv6`), checked as
//! `jsonschema` checks them.
//! Annotations (`title`, `description`, `default`, `examples`,
//! `deprecated`, ...), formats JSON Schema does not define (`int32`,
//! `double`, ...: `jsonschema` ignores them too) and keywords JSON Schema
//! does not define never change an answer. A schema that uses any other JSON
//! Schema keyword ([`UNSUPPORTED`]) or a format that `jsonschema` would check
//! and this validator does not ([`UNCHECKED_FORMATS`]: `email`, `uri`, ...)
//! is refused when it is compiled, naming the keyword: it is never accepted
//! unchecked.
//!
//! Numbers are compared exactly against integer bounds; a fractional bound
//! is compared in `f64`; `multipleOf` is answered as `jsonschema` answers it
//! (a fractional divisor divides the decimals the numbers are written
//! with). A `$ref` may recurse; evaluation deeper than
//! [`MAX_DEPTH`] nested subschemas refuses the value.

use std::borrow::Cow;
use std::cmp::Ordering;

use serde_json::{Map, Number, Value};

use super::{DRAFT_2020_12, Kinds, SchemaError, compare, is_integer};
use crate::util::fasthash::NameMap;

/// JSON Schema keywords outside the subset: a schema using one is refused.
pub(super) const UNSUPPORTED: &[&str] = &[
    "pattern",
    "patternProperties",
    "propertyNames",
    "if",
    "then",
    "else",
    "not",
    "dependentSchemas",
    "dependentRequired",
    "dependencies",
    "contains",
    "minContains",
    "maxContains",
    "unevaluatedItems",
    "unevaluatedProperties",
    "additionalItems",
    "$id",
    "$anchor",
    "$dynamicRef",
    "$dynamicAnchor",
    "$recursiveRef",
    "$recursiveAnchor",
    "$vocabulary",
];

/// Formats of JSON Schema 2020-12 that `jsonschema` checks and this
/// validator does not: a schema using one is refused, as an unsupported
/// keyword is, rather than have the two builds give different answers.
pub(super) const UNCHECKED_FORMATS: &[&str] = &[
    "duration",
    "email",
    "hostname",
    "iri",
    "iri-reference",
    "json-pointer",
    "relative-json-pointer",
    "regex",
    "uri",
    "uri-reference",
    "uri-template",
];

/// The most nested subschemas one value is evaluated through.
const MAX_DEPTH: usize = 256;

/// Index of a compiled subschema.
type NodeId = usize;

/// A compiled schema of the subset.
#[derive(Debug)]
pub(crate) struct Subset {
    nodes: Vec<Node>,
}

/// One compiled subschema.
#[derive(Debug)]
enum Node {
    /// `true` or `{}` with no assertion.
    Any,
    /// `false`.
    Never,
    Rules(Box<Rules>),
}

/// The assertions of one schema object.
#[derive(Debug, Default)]
struct Rules {
    kinds: Option<u8>,
    properties: Vec<(Box<str>, NodeId)>,
    required: Vec<Box<str>>,
    additional: Option<NodeId>,
    prefix_items: Vec<NodeId>,
    items: Option<NodeId>,
    allowed: Option<Value>,
    constant: Option<Value>,
    any_of: Vec<NodeId>,
    one_of: Vec<NodeId>,
    all_of: Vec<NodeId>,
    reference: Option<NodeId>,
    minimum: Option<Value>,
    maximum: Option<Value>,
    exclusive_minimum: Option<Value>,
    exclusive_maximum: Option<Value>,
    multiple_of: Option<Number>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    min_items: Option<u64>,
    max_items: Option<u64>,
    unique_items: bool,
    min_properties: Option<u64>,
    max_properties: Option<u64>,
    format: Option<Format>,
}

/// A `format` the validator checks, exactly as `jsonschema` does: RFC
/// 3339's `full-date`, `date-time` and `full-time` (with its leap-second
/// rule), hyphenated UUIDs, and IP addresses as the standard library reads
/// them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Date,
    DateTime,
    Time,
    Uuid,
    Ipv4,
    Ipv6,
}

impl Format {
    /// Every format checked.
    const ALL: [Format; 6] = [
        Format::Date,
        Format::DateTime,
        Format::Time,
        Format::Uuid,
        Format::Ipv4,
        Format::Ipv6,
    ];

    fn parse(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.name() == name)
    }

    fn name(self) -> &'static str {
        match self {
            Format::Date => "date",
            Format::DateTime => "date-time",
            Format::Time => "time",
            Format::Uuid => "uuid",
            Format::Ipv4 => "ipv4",
            Format::Ipv6 => "ipv6",
        }
    }

    /// Whether `text` is of this format.
    fn holds(self, text: &str) -> bool {
        let bytes = text.as_bytes();
        match self {
            Format::Date => is_date(bytes),
            Format::DateTime => {
                bytes.len() > 11
                    && matches!(bytes[10], b'T' | b't')
                    && is_date(&bytes[..10])
                    && is_time(&bytes[11..])
            }
            Format::Time => is_time(bytes),
            Format::Uuid => is_uuid(bytes),
            Format::Ipv4 => text.parse::<std::net::Ipv4Addr>().is_ok(),
            Format::Ipv6 => text.parse::<std::net::Ipv6Addr>().is_ok(),
        }
    }
}

/// The number written by `digits` (ASCII digits only).
fn decimal(digits: &[u8]) -> Option<u32> {
    digits.iter().try_fold(0u32, |n, &b| {
        b.is_ascii_digit().then(|| n * 10 + u32::from(b - b'0'))
    })
}

/// RFC 3339 `full-date`: `YYYY-MM-DD`, a day that the month has.
fn is_date(s: &[u8]) -> bool {
    if s.len() != 10 || s[4] != b'-' || s[7] != b'-' {
        return false;
    }
    let (Some(year), Some(month), Some(day)) =
        (decimal(&s[..4]), decimal(&s[5..7]), decimal(&s[8..]))
    else {
        return false;
    };
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// RFC 3339 `full-time`: `HH:MM:SS`, optional fraction, then `Z` or
/// `±HH:MM`; a leap second (`:60`) only at 23:59 UTC.
fn is_time(s: &[u8]) -> bool {
    if s.len() < 9 || s[2] != b':' || s[5] != b':' {
        return false;
    }
    let (Some(hour), Some(minute), Some(second)) =
        (decimal(&s[..2]), decimal(&s[3..5]), decimal(&s[6..8]))
    else {
        return false;
    };
    if hour > 23 || minute > 59 || second > 60 {
        return false;
    }
    let mut rest = &s[8..];
    if let Some(fraction) = rest.strip_prefix(b".") {
        let digits = fraction.iter().take_while(|b| b.is_ascii_digit()).count();
        if digits == 0 {
            return false;
        }
        rest = &fraction[digits..];
    }
    // Minutes east of UTC.
    let offset = match rest {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let (Some(h), Some(m)) = (decimal(&[*h1, *h2]), decimal(&[*m1, *m2])) else {
                return false;
            };
            if h > 23 || m > 59 {
                return false;
            }
            let minutes = i64::from(h * 60 + m);
            if *sign == b'+' { minutes } else { -minutes }
        }
        _ => return false,
    };
    second != 60 || (i64::from(hour * 60 + minute) - offset).rem_euclid(24 * 60) == 23 * 60 + 59
}

/// A hyphenated UUID: 8-4-4-4-12 hexadecimal digits, either case.
fn is_uuid(s: &[u8]) -> bool {
    s.len() == 36
        && s.iter().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => *b == b'-',
            _ => b.is_ascii_hexdigit(),
        })
}

/// Why a value is refused at one place.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ProblemKind {
    /// The value's JSON type is not one of `expected` (bits of [`Kinds`]).
    Type {
        expected: u8,
    },
    /// A required property is missing.
    Required {
        property: String,
    },
    /// Properties the schema does not accept.
    AdditionalProperties {
        unexpected: Vec<String>,
    },
    /// Not one of the listed values (an array).
    Enum {
        options: Value,
    },
    /// Not the one allowed value.
    Constant {
        expected: Value,
    },
    Minimum {
        limit: Value,
    },
    Maximum {
        limit: Value,
    },
    ExclusiveMinimum {
        limit: Value,
    },
    ExclusiveMaximum {
        limit: Value,
    },
    MultipleOf {
        multiple_of: f64,
    },
    MinLength {
        limit: u64,
    },
    MaxLength {
        limit: u64,
    },
    MinItems {
        limit: u64,
    },
    MaxItems {
        limit: u64,
    },
    UniqueItems,
    MinProperties {
        limit: u64,
    },
    MaxProperties {
        limit: u64,
    },
    /// No branch of an `anyOf`/`oneOf` holds; `values` lists the allowed
    /// values when every branch is a `const` or an `enum`.
    NoShape {
        values: Option<Vec<Value>>,
    },
    /// More than one branch of a `oneOf` holds.
    ManyShapes,
    /// The schema is `false`.
    FalseSchema,
    /// The value nests through more subschemas than [`MAX_DEPTH`].
    TooDeep,
    /// A string does not match `pattern` (only `jsonschema` checks it).
    #[cfg(feature = "json-schema-full")]
    Pattern {
        pattern: String,
    },
    /// A string is not of `format`.
    Format {
        format: String,
    },
    /// A `not` schema holds.
    #[cfg(feature = "json-schema-full")]
    Not,
    /// No item matches `contains`.
    #[cfg(feature = "json-schema-full")]
    Contains,
    /// Any other keyword of JSON Schema.
    #[cfg(feature = "json-schema-full")]
    Other {
        keyword: String,
    },
}

/// One refusal: where in the value (a JSON pointer), the value there, and
/// why.
#[derive(Debug, Clone)]
pub(crate) struct Problem<'v> {
    pub(crate) at: String,
    pub(crate) instance: Cow<'v, Value>,
    pub(crate) kind: ProblemKind,
    /// The validator's own wording, for the application (`jsonschema`'s).
    pub(crate) text: Option<String>,
}

impl std::fmt::Display for Problem<'_> {
    /// The wording for the application (never shown to a model: it may
    /// quote the value).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(text) = &self.text {
            return f.write_str(text);
        }
        let value = &self.instance;
        match &self.kind {
            ProblemKind::Type { expected } => {
                write!(f, "{value} is not of type {}", Kinds::names(*expected))
            }
            ProblemKind::Required { property } => {
                write!(f, "\"{property}\" is a required property")
            }
            ProblemKind::AdditionalProperties { unexpected } => write!(
                f,
                "additional properties are not allowed ({} unexpected)",
                unexpected.join(", ")
            ),
            ProblemKind::Enum { options } => write!(f, "{value} is not one of {options}"),
            ProblemKind::Constant { expected } => write!(f, "{expected} was expected"),
            other => write!(f, "{value} is refused ({other:?})"),
        }
    }
}

impl Subset {
    /// Compiles `schema`; refuses a malformed keyword with
    /// [`SchemaError::Invalid`], a keyword outside the subset with
    /// [`SchemaError::Unsupported`] and a reference it cannot resolve
    /// within the schema with [`SchemaError::Reference`].
    pub(crate) fn compile(schema: &Value) -> Result<Subset, SchemaError> {
        let mut compiler = Compiler {
            root: schema,
            nodes: Vec::new(),
            refs: NameMap::default(),
        };
        compiler.node(schema, "")?;
        if let Some(value) = schema.get("$schema")
            && value.as_str() != Some(DRAFT_2020_12)
        {
            return Err(unsupported("$schema", "/$schema"));
        }
        Ok(Subset {
            nodes: compiler.nodes,
        })
    }

    /// Whether `value` satisfies the schema.
    pub(crate) fn is_valid(&self, value: &Value) -> bool {
        self.eval(0, value, &mut String::new(), None, 0)
    }

    /// Every problem of `value`, outermost first (empty when it is valid).
    pub(crate) fn problems<'v>(&self, value: &'v Value) -> Vec<Problem<'v>> {
        let mut out = Vec::new();
        self.eval(0, value, &mut String::new(), Some(&mut out), 0);
        out
    }

    /// Evaluates node `id` on `value` at pointer `at`; with `out`, records
    /// every problem, without it stops at the first.
    fn eval<'v>(
        &self,
        id: NodeId,
        value: &'v Value,
        at: &mut String,
        mut out: Option<&mut Vec<Problem<'v>>>,
        depth: usize,
    ) -> bool {
        let rules = match &self.nodes[id] {
            Node::Any => return true,
            Node::Never => return report(&mut out, at, value, ProblemKind::FalseSchema),
            Node::Rules(rules) => rules,
        };
        if depth > MAX_DEPTH {
            return report(&mut out, at, value, ProblemKind::TooDeep);
        }
        let depth = depth + 1;
        let mut ok = true;
        macro_rules! fail {
            ($kind:expr) => {{
                ok = false;
                if out.is_none() {
                    return false;
                }
                report(&mut out, at, value, $kind);
            }};
        }
        if let Some(expected) = rules.kinds
            && !has_kind(value, expected)
        {
            fail!(ProblemKind::Type { expected });
        }
        if let Some(options) = &rules.allowed
            && !options
                .as_array()
                .into_iter()
                .flatten()
                .any(|o| equal(o, value))
        {
            fail!(ProblemKind::Enum {
                options: options.clone()
            });
        }
        if let Some(expected) = &rules.constant
            && !equal(expected, value)
        {
            fail!(ProblemKind::Constant {
                expected: expected.clone()
            });
        }
        if let Some(target) = rules.reference {
            ok &= self.eval(target, value, at, out.as_deref_mut(), depth);
            if !ok && out.is_none() {
                return false;
            }
        }
        for &branch in &rules.all_of {
            ok &= self.eval(branch, value, at, out.as_deref_mut(), depth);
            if !ok && out.is_none() {
                return false;
            }
        }
        if !rules.any_of.is_empty()
            && !rules
                .any_of
                .iter()
                .any(|&b| self.eval(b, value, at, None, depth))
        {
            fail!(ProblemKind::NoShape {
                values: self.named_values(&rules.any_of)
            });
        }
        if !rules.one_of.is_empty() {
            let holding = rules
                .one_of
                .iter()
                .filter(|&&b| self.eval(b, value, at, None, depth))
                .take(2)
                .count();
            match holding {
                1 => {}
                0 => fail!(ProblemKind::NoShape {
                    values: self.named_values(&rules.one_of)
                }),
                _ => fail!(ProblemKind::ManyShapes),
            }
        }
        match value {
            Value::Number(n) => {
                let below = |limit: &Option<Value>, holds: fn(Ordering) -> bool| {
                    limit
                        .as_ref()
                        .and_then(Value::as_number)
                        .is_some_and(|l| !holds(cmp_numbers(n, l)))
                };
                if below(&rules.minimum, Ordering::is_ge) {
                    fail!(ProblemKind::Minimum {
                        limit: rules.minimum.clone().unwrap_or_default()
                    });
                }
                if below(&rules.maximum, Ordering::is_le) {
                    fail!(ProblemKind::Maximum {
                        limit: rules.maximum.clone().unwrap_or_default()
                    });
                }
                if below(&rules.exclusive_minimum, Ordering::is_gt) {
                    fail!(ProblemKind::ExclusiveMinimum {
                        limit: rules.exclusive_minimum.clone().unwrap_or_default()
                    });
                }
                if below(&rules.exclusive_maximum, Ordering::is_lt) {
                    fail!(ProblemKind::ExclusiveMaximum {
                        limit: rules.exclusive_maximum.clone().unwrap_or_default()
                    });
                }
                if let Some(m) = &rules.multiple_of
                    && !is_multiple(n, m)
                {
                    fail!(ProblemKind::MultipleOf {
                        multiple_of: m.as_f64().unwrap_or_default()
                    });
                }
            }
            Value::String(s) => {
                if let Some(format) = rules.format
                    && !format.holds(s)
                {
                    fail!(ProblemKind::Format {
                        format: format.name().to_owned()
                    });
                }
                if rules.min_length.is_some() || rules.max_length.is_some() {
                    let len = s.chars().count() as u64;
                    if let Some(limit) = rules.min_length
                        && len < limit
                    {
                        fail!(ProblemKind::MinLength { limit });
                    }
                    if let Some(limit) = rules.max_length
                        && len > limit
                    {
                        fail!(ProblemKind::MaxLength { limit });
                    }
                }
            }
            Value::Array(list) => {
                let len = list.len() as u64;
                if let Some(limit) = rules.min_items
                    && len < limit
                {
                    fail!(ProblemKind::MinItems { limit });
                }
                if let Some(limit) = rules.max_items
                    && len > limit
                {
                    fail!(ProblemKind::MaxItems { limit });
                }
                if rules.unique_items && has_duplicates(list) {
                    fail!(ProblemKind::UniqueItems);
                }
                for (i, item) in list.iter().enumerate() {
                    let node = match rules.prefix_items.get(i) {
                        Some(&node) => node,
                        None => match rules.items {
                            Some(node) => node,
                            None => break,
                        },
                    };
                    let len = at.len();
                    if out.is_some() {
                        at.push('/');
                        at.push_str(&i.to_string());
                    }
                    ok &= self.eval(node, item, at, out.as_deref_mut(), depth);
                    at.truncate(len);
                    if !ok && out.is_none() {
                        return false;
                    }
                }
            }
            Value::Object(map) => {
                let len = map.len() as u64;
                if let Some(limit) = rules.min_properties
                    && len < limit
                {
                    fail!(ProblemKind::MinProperties { limit });
                }
                if let Some(limit) = rules.max_properties
                    && len > limit
                {
                    fail!(ProblemKind::MaxProperties { limit });
                }
                for name in &rules.required {
                    if !map.contains_key(&**name) {
                        fail!(ProblemKind::Required {
                            property: name.to_string()
                        });
                    }
                }
                let mut unexpected = Vec::new();
                for (key, item) in map {
                    let node = match rules.properties.iter().find(|(p, _)| **p == **key) {
                        Some(&(_, node)) => node,
                        None => match rules.additional {
                            Some(node) if matches!(self.nodes[node], Node::Never) => {
                                ok = false;
                                if out.is_none() {
                                    return false;
                                }
                                unexpected.push(key.clone());
                                continue;
                            }
                            Some(node) => node,
                            None => continue,
                        },
                    };
                    let len = at.len();
                    if out.is_some() {
                        at.push('/');
                        at.push_str(&key.replace('~', "~0").replace('/', "~1"));
                    }
                    ok &= self.eval(node, item, at, out.as_deref_mut(), depth);
                    at.truncate(len);
                    if !ok && out.is_none() {
                        return false;
                    }
                }
                if !unexpected.is_empty() {
                    report(
                        &mut out,
                        at,
                        value,
                        ProblemKind::AdditionalProperties { unexpected },
                    );
                }
            }
            Value::Null | Value::Bool(_) => {}
        }
        ok
    }

    /// The values allowed by `branches` when each is a single `const` or an
    /// `enum` (as schemars writes a documented Rust enum).
    fn named_values(&self, branches: &[NodeId]) -> Option<Vec<Value>> {
        let mut values = Vec::new();
        for &branch in branches {
            let Node::Rules(rules) = &self.nodes[branch] else {
                return None;
            };
            match (&rules.constant, &rules.allowed) {
                (Some(value), _) => values.push(value.clone()),
                (None, Some(Value::Array(options))) => values.extend(options.iter().cloned()),
                _ => return None,
            }
        }
        (!values.is_empty()).then_some(values)
    }
}

/// Records a problem (when problems are collected); always `false`.
fn report<'v>(
    out: &mut Option<&mut Vec<Problem<'v>>>,
    at: &str,
    value: &'v Value,
    kind: ProblemKind,
) -> bool {
    if let Some(out) = out {
        out.push(Problem {
            at: at.to_owned(),
            instance: Cow::Borrowed(value),
            kind,
            text: None,
        });
    }
    false
}

fn has_kind(value: &Value, kinds: u8) -> bool {
    let kind = match value {
        Value::Null => Kinds::NULL,
        Value::Bool(_) => Kinds::BOOLEAN,
        Value::Number(n) if is_integer(n) => Kinds::INTEGER | Kinds::NUMBER,
        Value::Number(_) => Kinds::NUMBER,
        Value::String(_) => Kinds::STRING,
        Value::Array(_) => Kinds::ARRAY,
        Value::Object(_) => Kinds::OBJECT,
    };
    kinds & kind != 0
}

/// JSON Schema's equality: numbers by value (`1` equals `1.0`), objects
/// whatever their key order.
fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(a), Value::Number(b)) => cmp_numbers(a, b) == Ordering::Equal,
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| equal(a, b))
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len() && a.iter().all(|(k, v)| b.get(k).is_some_and(|w| equal(v, w)))
        }
        (a, b) => a == b,
    }
}

/// Whether two items of `list` are [`equal`]: pairwise for a short list,
/// by sorted canonical text for a long one.
fn has_duplicates(list: &[Value]) -> bool {
    if list.len() <= 32 {
        return list
            .iter()
            .enumerate()
            .any(|(i, a)| list[i + 1..].iter().any(|b| equal(a, b)));
    }
    let mut keys: Vec<String> = list
        .iter()
        .map(|item| {
            let mut key = String::new();
            write_key(&mut key, item);
            key
        })
        .collect();
    keys.sort_unstable();
    keys.windows(2).any(|pair| pair[0] == pair[1])
}

/// A text equal for exactly the values [`equal`] finds equal: keys sorted,
/// integral numbers written as integers.
fn write_key(out: &mut String, value: &Value) {
    match value {
        Value::Number(n) => match n.as_f64() {
            Some(f) if !n.is_i64() && !n.is_u64() && f.fract() == 0.0 && f.abs() < 1e19 => {
                out.push_str(&format!("{}", f as i128));
            }
            _ => out.push_str(&n.to_string()),
        },
        Value::Array(items) => {
            out.push('[');
            for item in items {
                write_key(out, item);
                out.push(',');
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (key, item) in entries {
                out.push_str(&Value::from(key.as_str()).to_string());
                out.push(':');
                write_key(out, item);
                out.push(',');
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// The integer value of `n`, when it is an `i64` or a `u64`.
fn as_i128(n: &Number) -> Option<i128> {
    n.as_i64()
        .map(i128::from)
        .or_else(|| n.as_u64().map(i128::from))
}

/// Compares two JSON numbers; exactly when either is an integer.
fn cmp_numbers(a: &Number, b: &Number) -> Ordering {
    if let Some(b) = as_i128(b) {
        return compare(a, b);
    }
    if let Some(a) = as_i128(a) {
        return compare(b, a).reverse();
    }
    let (a, b) = (a.as_f64().unwrap_or(0.0), b.as_f64().unwrap_or(0.0));
    a.partial_cmp(&b).unwrap_or(Ordering::Equal)
}

/// `multipleOf`, answered as `jsonschema` answers it. A whole divisor up to
/// 2^53 divides an integer exactly; otherwise a whole divisor is compared
/// by `f64` remainder (exact for the binary values). A fractional divisor
/// divides the shortest decimals the two `f64`s read back from (`0.3` is a
/// multiple of `0.1`, though not in binary).
fn is_multiple(n: &Number, m: &Number) -> bool {
    let (Some(value), Some(multiple)) = (n.as_f64(), m.as_f64()) else {
        return true;
    };
    if multiple.fract() == 0.0 {
        if multiple <= MAX_SAFE_INTEGER {
            if let Some(v) = n.as_u64() {
                return v % (multiple as u64) == 0;
            }
            if let Some(v) = n.as_i64() {
                return v % (multiple as i64) == 0;
            }
        }
        return value.fract() == 0.0 && value % multiple == 0.0;
    }
    if value == 0.0 {
        return true;
    }
    if value.abs() < multiple {
        return false;
    }
    match (decimal_parts(value), decimal_parts(multiple)) {
        (Some(value), Some(multiple)) => divides(value, multiple),
        _ => false,
    }
}

/// 2^53: above it, not every whole number is an `f64`.
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_992.0;

/// A finite `f64` as the shortest decimal that reads back as it:
/// `(mantissa, d)` with the value `mantissa * 10^-d`.
fn decimal_parts(value: f64) -> Option<(i128, i32)> {
    if !value.is_finite() {
        return None;
    }
    // `{:e}` writes the shortest round-trip digits: `1.07046814e6`.
    let text = format!("{value:e}");
    let (digits, exponent) = text.split_once('e')?;
    let exponent: i32 = exponent.parse().ok()?;
    let (negative, digits) = match digits.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, digits),
    };
    let fraction = digits.split_once('.').map_or(0, |(_, f)| f.len());
    let mut mantissa: i128 = 0;
    for b in digits.bytes().filter(u8::is_ascii_digit) {
        mantissa = mantissa
            .checked_mul(10)?
            .checked_add(i128::from(b - b'0'))?;
    }
    let decimals = i32::try_from(fraction).ok()? - exponent;
    Some((if negative { -mantissa } else { mantissa }, decimals))
}

/// Whether `multiple` divides `value` to a whole number, each given as
/// `(mantissa, d)` for `mantissa * 10^-d`: exact at any exponent.
fn divides((vm, vd): (i128, i32), (mm, md): (i128, i32)) -> bool {
    let (vm, mm) = (vm.unsigned_abs(), mm.unsigned_abs());
    if mm == 0 {
        return false;
    }
    // value / multiple = vm * 10^(md - vd) / mm.
    match u32::try_from(i64::from(md) - i64::from(vd)) {
        // mm < 10^18, so every product below stays within u128.
        Ok(k) => {
            let mut power = 1 % mm;
            let mut base = 10 % mm;
            let mut k = k;
            while k > 0 {
                if k & 1 == 1 {
                    power = power * base % mm;
                }
                base = base * base % mm;
                k >>= 1;
            }
            (vm % mm) * power % mm == 0
        }
        Err(_) => {
            let k = u32::try_from(i64::from(vd) - i64::from(md)).unwrap_or(u32::MAX);
            10u128
                .checked_pow(k)
                .and_then(|p| p.checked_mul(mm))
                .is_some_and(|divisor| vm % divisor == 0)
        }
    }
}

fn unsupported(keyword: &str, pointer: &str) -> SchemaError {
    SchemaError::Unsupported {
        keyword: keyword.to_owned(),
        pointer: pointer.to_owned(),
    }
}

fn invalid(pointer: &str, message: &str) -> SchemaError {
    SchemaError::Invalid {
        pointer: pointer.to_owned(),
        message: message.to_owned(),
    }
}

/// Compiles a schema's subschemas into nodes.
struct Compiler<'s> {
    root: &'s Value,
    nodes: Vec<Node>,
    /// Compiled reference targets, by reference text.
    refs: NameMap<String, NodeId>,
}

impl<'s> Compiler<'s> {
    /// Compiles the subschema at `pointer` into a new node.
    fn node(&mut self, schema: &'s Value, pointer: &str) -> Result<NodeId, SchemaError> {
        let id = self.nodes.len();
        self.nodes.push(Node::Any);
        self.nodes[id] = self.build(schema, pointer)?;
        Ok(id)
    }

    fn build(&mut self, schema: &'s Value, pointer: &str) -> Result<Node, SchemaError> {
        let schema = match schema {
            Value::Bool(true) => return Ok(Node::Any),
            Value::Bool(false) => return Ok(Node::Never),
            Value::Object(schema) => schema,
            _ => return Err(invalid(pointer, "a schema must be an object or a boolean")),
        };
        let mut rules = Rules::default();
        let mut asserts = false;
        for (keyword, value) in schema {
            let at = format!(
                "{pointer}/{}",
                keyword.replace('~', "~0").replace('/', "~1")
            );
            asserts |= self.keyword(&mut rules, keyword, value, &at)?;
        }
        Ok(if asserts {
            Node::Rules(Box::new(rules))
        } else {
            Node::Any
        })
    }

    /// Compiles one keyword into `rules`; `true` when it asserts anything.
    fn keyword(
        &mut self,
        rules: &mut Rules,
        keyword: &str,
        value: &'s Value,
        at: &str,
    ) -> Result<bool, SchemaError> {
        match keyword {
            "type" => {
                let mut kinds = 0;
                let names: Vec<&Value> = match value {
                    Value::String(_) => vec![value],
                    Value::Array(names) if !names.is_empty() => names.iter().collect(),
                    _ => return Err(invalid(at, "`type` must be a type name or a list of them")),
                };
                for name in names {
                    let kind = name
                        .as_str()
                        .and_then(Kinds::parse)
                        .ok_or_else(|| invalid(at, "`type` names an unknown type"))?;
                    if kinds & kind != 0 {
                        return Err(invalid(at, "`type` lists a type twice"));
                    }
                    kinds |= kind;
                }
                rules.kinds = Some(kinds);
            }
            "properties" => {
                for (name, schema) in object(value, at)? {
                    let node = self.node(schema, &child(at, name))?;
                    rules.properties.push((name.as_str().into(), node));
                }
            }
            "required" => {
                let names = value
                    .as_array()
                    .ok_or_else(|| invalid(at, "`required` must be a list of names"))?;
                for name in names {
                    let name = name
                        .as_str()
                        .ok_or_else(|| invalid(at, "`required` must be a list of names"))?;
                    if rules.required.iter().any(|n| **n == *name) {
                        return Err(invalid(at, "`required` lists a name twice"));
                    }
                    rules.required.push(name.into());
                }
            }
            "additionalProperties" => rules.additional = Some(self.node(value, at)?),
            "items" => rules.items = Some(self.node(value, at)?),
            "prefixItems" => rules.prefix_items = self.list(value, at)?,
            "allOf" => rules.all_of = self.list(value, at)?,
            "anyOf" => rules.any_of = self.list(value, at)?,
            "oneOf" => rules.one_of = self.list(value, at)?,
            "enum" => {
                if !value.is_array() {
                    return Err(invalid(at, "`enum` must be a list of values"));
                }
                rules.allowed = Some(value.clone());
            }
            "const" => rules.constant = Some(value.clone()),
            "$ref" => {
                let reference = value
                    .as_str()
                    .ok_or_else(|| invalid(at, "`$ref` must be a string"))?;
                rules.reference = Some(self.reference(reference, at)?);
            }
            "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" => {
                if !value.is_number() {
                    return Err(invalid(at, "a numeric bound must be a number"));
                }
                let slot = match keyword {
                    "minimum" => &mut rules.minimum,
                    "maximum" => &mut rules.maximum,
                    "exclusiveMinimum" => &mut rules.exclusive_minimum,
                    _ => &mut rules.exclusive_maximum,
                };
                *slot = Some(value.clone());
            }
            "multipleOf" => match value.as_number() {
                Some(n) if n.as_f64().is_some_and(|f| f > 0.0) => {
                    rules.multiple_of = Some(n.clone());
                }
                _ => return Err(invalid(at, "`multipleOf` must be a number above zero")),
            },
            "minLength" | "maxLength" | "minItems" | "maxItems" | "minProperties"
            | "maxProperties" => {
                let count = count(value)
                    .ok_or_else(|| invalid(at, "a count must be a non-negative integer"))?;
                let slot = match keyword {
                    "minLength" => &mut rules.min_length,
                    "maxLength" => &mut rules.max_length,
                    "minItems" => &mut rules.min_items,
                    "maxItems" => &mut rules.max_items,
                    "minProperties" => &mut rules.min_properties,
                    _ => &mut rules.max_properties,
                };
                *slot = Some(count);
            }
            "uniqueItems" => {
                rules.unique_items = value
                    .as_bool()
                    .ok_or_else(|| invalid(at, "`uniqueItems` must be a boolean"))?;
            }
            "$defs" | "definitions" => {
                for (name, schema) in object(value, at)? {
                    self.node(schema, &child(at, name))?;
                }
                return Ok(false);
            }
            "format" => {
                let name = value
                    .as_str()
                    .ok_or_else(|| invalid(at, "`format` must be a string"))?;
                if UNCHECKED_FORMATS.contains(&name) {
                    return Err(unsupported(&format!("format: {name}"), at));
                }
                match Format::parse(name) {
                    Some(format) => rules.format = Some(format),
                    // A format JSON Schema does not define is an annotation.
                    None => return Ok(false),
                }
            }
            "title" | "description" | "$comment" | "contentEncoding" | "contentMediaType"
            | "$schema" => {
                if !value.is_string() {
                    return Err(invalid(at, "this keyword's value must be a string"));
                }
                return Ok(false);
            }
            "deprecated" | "readOnly" | "writeOnly" => {
                if !value.is_boolean() {
                    return Err(invalid(at, "this keyword's value must be a boolean"));
                }
                return Ok(false);
            }
            "examples" => {
                if !value.is_array() {
                    return Err(invalid(at, "`examples` must be a list"));
                }
                return Ok(false);
            }
            other if UNSUPPORTED.contains(&other) => return Err(unsupported(other, at)),
            // `default`, `contentSchema` and keywords JSON Schema does not
            // define are annotations.
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// A non-empty array of subschemas.
    fn list(&mut self, value: &'s Value, at: &str) -> Result<Vec<NodeId>, SchemaError> {
        match value {
            Value::Array(items) if !items.is_empty() => items
                .iter()
                .enumerate()
                .map(|(i, item)| self.node(item, &format!("{at}/{i}")))
                .collect(),
            _ => Err(invalid(
                at,
                "this keyword takes a non-empty list of schemas",
            )),
        }
    }

    /// The node `reference` points to, compiled once (so a recursive
    /// reference points back to a node under construction).
    fn reference(&mut self, reference: &str, at: &str) -> Result<NodeId, SchemaError> {
        if let Some(&id) = self.refs.get(reference) {
            return Ok(id);
        }
        let Some(fragment) = reference.strip_prefix('#') else {
            return Err(SchemaError::Reference {
                message: format!("`{reference}` is not within the schema (never fetched)"),
            });
        };
        let target = if fragment.is_empty() {
            Some(self.root)
        } else {
            let (section, name) = fragment
                .strip_prefix("/$defs/")
                .map(|name| ("$defs", name))
                .or_else(|| {
                    fragment
                        .strip_prefix("/definitions/")
                        .map(|name| ("definitions", name))
                })
                .filter(|(_, name)| !name.is_empty() && !name.contains(['/', '~', '%']))
                .ok_or_else(|| unsupported("$ref", at))?;
            self.root.get(section).and_then(|defs| defs.get(name))
        };
        let target = target.ok_or_else(|| SchemaError::Reference {
            message: format!("`{reference}` names no definition of the schema"),
        })?;
        let id = self.nodes.len();
        self.nodes.push(Node::Any);
        self.refs.insert(reference.to_owned(), id);
        self.nodes[id] = self.build(target, fragment)?;
        Ok(id)
    }
}

/// The object value of a keyword that maps names to schemas.
fn object<'s>(value: &'s Value, at: &str) -> Result<&'s Map<String, Value>, SchemaError> {
    value
        .as_object()
        .ok_or_else(|| invalid(at, "this keyword takes an object of schemas"))
}

fn child(at: &str, name: &str) -> String {
    format!("{at}/{}", name.replace('~', "~0").replace('/', "~1"))
}

/// A non-negative integer (`5.0` counts, as JSON Schema reads it).
fn count(value: &Value) -> Option<u64> {
    let n = value.as_number()?;
    n.as_u64().or_else(|| {
        n.as_f64()
            .filter(|f| *f >= 0.0 && f.fract() == 0.0 && *f < 1.8e19)
            .map(|f| f as u64)
    })
}

#[cfg(test)]
mod tests {
    #[cfg(feature = "json-schema-full")]
    use proptest::prelude::*;
    use serde_json::{Value, json};

    use super::{ProblemKind, Subset};
    use crate::registry::validation::SchemaError;
    #[cfg(feature = "json-schema-full")]
    use crate::registry::validation::compile_bounded;

    fn subset(schema: &Value) -> Subset {
        Subset::compile(schema).unwrap_or_else(|e| panic!("{schema} compiles: {e}"))
    }

    #[cfg(feature = "json-schema-full")]
    /// Leaf schemas: each keyword of the subset that judges one value.
    fn leaf(with_ref: bool) -> impl Strategy<Value = Value> {
        let reference = if with_ref {
            json!({"$ref": "#/$defs/D", "description": "d"})
        } else {
            json!(true)
        };
        prop_oneof![
            Just(reference),
            Just(json!(true)),
            Just(json!(false)),
            Just(json!({})),
            Just(json!({"type": "integer"})),
            Just(json!({"type": "number", "minimum": -1, "exclusiveMaximum": 2.5})),
            Just(json!({"type": ["string", "null"], "minLength": 1, "maxLength": 2})),
            Just(json!({"type": "boolean", "description": "d", "format": "flag"})),
            Just(json!({"enum": ["a", 1, null, [1]]})),
            Just(json!({"const": 1.0})),
            Just(json!({"exclusiveMinimum": 0, "maximum": 3})),
            Just(json!({"multipleOf": 2})),
            Just(json!({"multipleOf": 0.5})),
            Just(json!({"multipleOf": 0.1})),
            Just(json!({"multipleOf": 0.01})),
            Just(json!({"multipleOf": 2.675})),
            Just(json!({"multipleOf": 3})),
            Just(json!({"multipleOf": 1e20})),
            Just(json!({"type": "array", "minItems": 1, "maxItems": 2, "uniqueItems": true})),
            Just(json!({"type": "object", "minProperties": 1, "maxProperties": 2})),
            Just(json!({"format": "date-time"})),
            Just(json!({"type": "string", "format": "date"})),
            Just(json!({"format": "time"})),
            Just(json!({"format": "uuid", "maxLength": 40})),
            Just(json!({"format": "ipv4"})),
            Just(json!({"format": "ipv6"})),
            Just(json!({"type": "string", "format": "int32"})),
        ]
    }

    #[cfg(feature = "json-schema-full")]
    /// Schemas built from the subset, nested; with `with_ref`, some refer to
    /// the root's definition `D`.
    fn nested(with_ref: bool) -> impl Strategy<Value = Value> {
        leaf(with_ref).prop_recursive(3, 24, 3, |inner| {
            prop_oneof![
                (
                    prop::collection::vec(inner.clone(), 0..3),
                    prop::collection::vec(prop::sample::select(vec!["a", "b", "c"]), 0..3),
                    prop_oneof![
                        Just(None),
                        Just(Some(json!(false))),
                        inner.clone().prop_map(Some)
                    ],
                )
                    .prop_map(|(props, required, additional)| {
                        let mut schema = json!({"type": "object", "required": []});
                        for (name, prop) in ["a", "b", "c"].iter().zip(props) {
                            schema["properties"][*name] = prop;
                        }
                        let mut required: Vec<&str> = required;
                        required.sort_unstable();
                        required.dedup();
                        schema["required"] = json!(required);
                        if let Some(additional) = additional {
                            schema["additionalProperties"] = additional;
                        }
                        schema
                    }),
                inner
                    .clone()
                    .prop_map(|items| json!({"type": "array", "items": items})),
                (inner.clone(), inner.clone())
                    .prop_map(|(a, b)| json!({"prefixItems": [a], "items": b})),
                prop::collection::vec(inner.clone(), 1..3).prop_map(|b| json!({"anyOf": b})),
                prop::collection::vec(inner.clone(), 1..3).prop_map(|b| json!({"oneOf": b})),
                prop::collection::vec(inner, 1..3).prop_map(|b| json!({"allOf": b})),
            ]
        })
    }

    #[cfg(feature = "json-schema-full")]
    /// A schema of the subset whose parts may refer to its definition.
    fn schema() -> impl Strategy<Value = Value> {
        (nested(true), nested(false)).prop_map(|(mut body, definition)| {
            match body.as_object_mut() {
                Some(body) => {
                    body.insert("$defs".into(), json!({"D": definition}));
                    Value::Object(body.clone())
                }
                None => json!({"$defs": {"D": definition}, "allOf": [body]}),
            }
        })
    }

    #[cfg(feature = "json-schema-full")]
    /// Numbers where decimal and binary readings of `multipleOf` part.
    const MULTIPLE_SAMPLES: &[f64] = &[
        0.3,
        0.7,
        19.99,
        1_070_468.14,
        1_070_468.145,
        505_661.899_999_999_97,
        5.35,
        0.0075,
        1e20,
        3e20,
        1e300,
        -1e-300,
        9_007_199_254_740_993.0,
        1e-5,
    ];

    #[cfg(feature = "json-schema-full")]
    /// Strings on both sides of each checked format's rules.
    const FORMAT_SAMPLES: &[&str] = &[
        "2024-02-29",
        "2023-02-29",
        "2024-13-01",
        "2024-04-31",
        "0000-02-29",
        "1900-02-29",
        "2024-1-01",
        "２024-01-01",
        "2024-01-01T10:20:30Z",
        "2024-01-01t10:20:30z",
        "2024-01-01T10:20:30.123+05:30",
        "2024-01-01T10:20:30.+05:30",
        "2024-01-01T10:20:30+5:30",
        "2024-01-01T10:20:30+24:00",
        "2024-01-01T10:20:30",
        "2024-01-01 10:20:30Z",
        "2024-01-01T23:59:60Z",
        "2024-01-01T23:58:60Z",
        "2024-01-01T15:59:60-08:00",
        "2024-01-01T00:29:60+00:30",
        "2024-01-01T24:00:00Z",
        "2024-01-01T10:20:30Zé",
        "2024-01-01T",
        "10:20:30Z",
        "10:20:30.5-00:00",
        "10:20Z",
        "23:59:60+00:00",
        "12:00:60Z",
        "550e8400-e29b-41d4-a716-446655440000",
        "550E8400-E29B-41D4-A716-44665544000G",
        "550e8400e29b41d4a716446655440000",
        "{550e8400-e29b-41d4-a716-446655440000}",
        "127.0.0.1",
        "256.0.0.1",
        "01.2.3.4",
        "1.2.3",
        "::1",
        "2001:db8::8a2e:370:7334",
        "::ffff:1.2.3.4",
        "fe80::1%eth0",
        "1::2::3",
    ];

    #[cfg(feature = "json-schema-full")]
    /// JSON values around the bounds of [`leaf`].
    fn value() -> impl Strategy<Value = Value> {
        let scalar = prop_oneof![
            Just(json!(null)),
            any::<bool>().prop_map(Value::from),
            (-3i64..5).prop_map(Value::from),
            prop::sample::select(vec![-1.5, 0.5, 1.0, 2.5, 3.0]).prop_map(Value::from),
            prop::sample::select(MULTIPLE_SAMPLES.to_vec()).prop_map(Value::from),
            Just(json!(u64::MAX)),
            Just(json!(i64::MIN)),
            prop::sample::select(vec!["", "a", "ab", "é😀", "abc"]).prop_map(Value::from),
            prop::sample::select(FORMAT_SAMPLES.to_vec()).prop_map(Value::from),
        ];
        scalar.prop_recursive(3, 16, 3, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(Value::from),
                prop::collection::btree_map(
                    prop::sample::select(vec!["a", "b", "c", "d"]).prop_map(String::from),
                    inner,
                    0..3
                )
                .prop_map(|map| Value::Object(map.into_iter().collect())),
            ]
        })
    }

    #[cfg(feature = "json-schema-full")]
    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]

        #[test]
        fn the_subset_validator_and_jsonschema_agree_on_every_value(
            schema in schema(),
            values in prop::collection::vec(value(), 1..6),
        ) {
            let ours = subset(&schema);
            let full = compile_bounded(&schema).unwrap();
            for value in &values {
                let verdict = full.is_valid(value);
                prop_assert_eq!(ours.is_valid(value), verdict, "{} against {}", value, schema);
                prop_assert_eq!(ours.problems(value).is_empty(), verdict, "{}", value);
            }
        }
    }

    #[test]
    fn a_keyword_outside_the_subset_is_refused_by_name_and_place() {
        let schema = json!({"type": "object",
            "properties": {"code": {"type": "string", "pattern": "^[a-z]+$"}}});
        let err = Subset::compile(&schema).unwrap_err();
        assert_eq!(
            err,
            SchemaError::Unsupported {
                keyword: "pattern".into(),
                pointer: "/properties/code/pattern".into(),
            }
        );
        assert!(
            err.to_string().contains("`json-schema-full` feature"),
            "{err}"
        );
        for keyword in ["if", "patternProperties", "dependentSchemas", "not"] {
            let schema = json!({"type": "object", keyword: {}});
            assert!(
                matches!(Subset::compile(&schema), Err(SchemaError::Unsupported { keyword: k, .. }) if k == keyword),
                "{keyword}"
            );
        }
    }

    #[test]
    fn the_formats_schemars_writes_are_checked() {
        let cases: &[(&str, &[&str], &[&str])] = &[
            (
                "date",
                &["2024-02-29", "0000-02-29", "1999-12-31"],
                &[
                    "2023-02-29",
                    "1900-02-29",
                    "2024-04-31",
                    "2024-1-01",
                    "２024-01-01",
                ],
            ),
            (
                "date-time",
                &[
                    "2024-01-01T10:20:30Z",
                    "2024-01-01t10:20:30.5z",
                    "2024-01-01T10:20:30.123+05:30",
                    "2024-01-01T23:59:60Z",
                    "2024-01-01T15:59:60-08:00",
                ],
                &[
                    "2024-01-01T10:20:30",
                    "2024-01-01 10:20:30Z",
                    "2024-01-01T10:20:30.+05:30",
                    "2024-01-01T24:00:00Z",
                    "2024-01-01T23:58:60Z",
                    "2024-01-01T10:20:30Zé",
                    "2024-02-30T10:20:30Z",
                ],
            ),
            (
                "time",
                &["10:20:30Z", "10:20:30.5-00:00", "23:59:60+00:00"],
                &["10:20Z", "12:00:60Z", "10:20:30+5:30", "10:20:30+24:00"],
            ),
            (
                "uuid",
                &[
                    "550e8400-e29b-41d4-a716-446655440000",
                    "550E8400-E29B-41D4-A716-446655440000",
                ],
                &[
                    "550e8400e29b41d4a716446655440000",
                    "{550e8400-e29b-41d4-a716-446655440000}",
                ],
            ),
            ("ipv4", &["127.0.0.1"], &["256.0.0.1", "01.2.3.4", "1.2.3"]),
            (
                "ipv6",
                &["::1", "::ffff:1.2.3.4"],
                &["1::2::3", "fe80::1%eth0"],
            ),
        ];
        for (format, good, bad) in cases {
            let schema = subset(&json!({"type": "string", "format": format}));
            for text in *good {
                assert!(schema.is_valid(&json!(text)), "{text} is a {format}");
            }
            for text in *bad {
                let value = json!(text);
                assert!(!schema.is_valid(&value), "{text} is not a {format}");
                let problems = schema.problems(&value);
                assert_eq!(problems.len(), 1, "{text}");
                assert_eq!(
                    problems[0].kind,
                    ProblemKind::Format {
                        format: format.to_string()
                    }
                );
            }
            // Only strings are judged by a format.
            assert!(subset(&json!({"format": format})).is_valid(&json!(5)));
        }
        // Formats JSON Schema does not define (schemars' integer widths,
        // `semver`, ...) are annotations.
        for format in ["int32", "uint8", "double", "semver", "partial-date-time"] {
            assert!(subset(&json!({"format": format})).is_valid(&json!("x")));
        }
    }

    #[test]
    fn a_format_the_validator_does_not_check_is_refused_by_name() {
        for format in super::UNCHECKED_FORMATS {
            let schema = json!({"type": "object",
                "properties": {"to": {"type": "string", "format": format}}});
            let err = Subset::compile(&schema).unwrap_err();
            assert_eq!(
                err,
                SchemaError::Unsupported {
                    keyword: format!("format: {format}"),
                    pointer: "/properties/to/format".into(),
                }
            );
            assert!(err.to_string().contains("`json-schema-full`"), "{err}");
        }
        assert!(matches!(
            Subset::compile(&json!({"format": 5})),
            Err(SchemaError::Invalid { .. })
        ));
    }

    #[cfg(feature = "json-schema-full")]
    #[test]
    fn jsonschema_checks_every_format_the_subset_refuses_and_no_other() {
        // If `jsonschema` stops checking a format, or starts checking one
        // more, the lists of the subset validator must follow.
        let not_of_any_format = json!("not of any format [");
        let checked = super::Format::ALL.map(super::Format::name);
        for format in super::UNCHECKED_FORMATS.iter().chain(&checked) {
            let full = compile_bounded(&json!({"format": format})).unwrap();
            assert!(
                !full.is_valid(&not_of_any_format),
                "jsonschema checks {format}"
            );
        }
        for format in [
            "int32",
            "semver",
            "idn-email",
            "idn-hostname",
            "partial-time",
        ] {
            let full = compile_bounded(&json!({"format": format})).unwrap();
            assert!(
                full.is_valid(&not_of_any_format),
                "jsonschema ignores {format}"
            );
        }
    }

    #[test]
    fn a_fractional_multiple_divides_the_decimals_as_written() {
        let cents = subset(&json!({"multipleOf": 0.01}));
        for yes in [
            json!(19.99),
            json!(1_070_468.14),
            json!(0),
            json!(-0.05),
            json!(3),
        ] {
            assert!(cents.is_valid(&yes), "{yes}");
        }
        for no in [json!(1_070_468.145), json!(0.001), json!(1e-300)] {
            assert!(!cents.is_valid(&no), "{no}");
        }
        assert!(subset(&json!({"multipleOf": 0.1})).is_valid(&json!(0.3)));
        assert!(subset(&json!({"multipleOf": 2.675})).is_valid(&json!(5.35)));
        // Decimals past 128 bits still divide exactly.
        assert!(cents.is_valid(&json!(1e300)));
        assert!(!subset(&json!({"multipleOf": 0.07})).is_valid(&json!(1e300)));
        let three = subset(&json!({"multipleOf": 3}));
        assert!(!three.is_valid(&json!(1e20)), "10^20 leaves 1");
        assert!(three.is_valid(&json!(3e20)));
        assert!(three.is_valid(&json!(u64::MAX)));
        assert!(!subset(&json!({"multipleOf": 2})).is_valid(&json!(2.5)));
    }

    #[cfg(feature = "json-schema-full")]
    #[test]
    fn every_multiple_sample_gets_jsonschema_s_answer() {
        let divisors = [
            json!(0.1),
            json!(0.01),
            json!(2.675),
            json!(3),
            json!(1e20),
            json!(0.5),
        ];
        let values = MULTIPLE_SAMPLES.iter().map(|&f| json!(f)).chain([
            json!(u64::MAX),
            json!(i64::MIN),
            json!(0),
            json!(7),
        ]);
        for value in values {
            for divisor in &divisors {
                let schema = json!({"multipleOf": divisor});
                assert_eq!(
                    subset(&schema).is_valid(&value),
                    compile_bounded(&schema).unwrap().is_valid(&value),
                    "{value} multipleOf {divisor}"
                );
            }
        }
    }

    #[test]
    fn a_reference_outside_the_schema_is_never_followed() {
        for reference in ["https://example.com/s.json", "#/$defs/Missing"] {
            let schema = json!({"type": "object", "$ref": reference});
            assert!(
                matches!(Subset::compile(&schema), Err(SchemaError::Reference { .. })),
                "{reference}"
            );
        }
        let deep = json!({"$ref": "#/properties/a", "properties": {"a": {}}});
        assert!(matches!(
            Subset::compile(&deep),
            Err(SchemaError::Unsupported { keyword, .. }) if keyword == "$ref"
        ));
    }

    #[test]
    fn a_malformed_keyword_is_refused_where_it_is() {
        let err = Subset::compile(&json!({"type": "object", "required": 7})).unwrap_err();
        assert!(matches!(err, SchemaError::Invalid { ref pointer, .. } if pointer == "/required"));
        let err = Subset::compile(&json!({"properties": {"q": {"type": "text"}}})).unwrap_err();
        assert!(
            matches!(err, SchemaError::Invalid { ref pointer, .. } if pointer == "/properties/q/type")
        );
        assert!(Subset::compile(&json!({"description": 5})).is_err());
        assert!(Subset::compile(&json!({"minLength": -1})).is_err());
    }

    #[test]
    fn string_lengths_count_unicode_scalar_values() {
        let schema = subset(&json!({"type": "string", "maxLength": 2}));
        assert!(
            schema.is_valid(&json!("é😀")),
            "two scalar values, six bytes"
        );
        assert!(!schema.is_valid(&json!("abc")));
    }

    #[test]
    fn a_recursive_reference_checks_every_level_and_a_cycle_stops() {
        let tree = subset(&json!({"$defs": {"Node": {"type": "object", "properties": {
            "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
            "n": {"type": "integer"}}}}, "$ref": "#/$defs/Node"}));
        assert!(tree.is_valid(&json!({"children": [{"children": [{"n": 1}]}]})));
        let bad = json!({"children": [{"children": [{"n": "x"}]}]});
        assert!(!tree.is_valid(&bad));
        let problems = tree.problems(&bad);
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].at, "/children/0/children/0/n");
        assert_eq!(*problems[0].instance, json!("x"));
        let cycle = subset(&json!({"$defs": {"A": {"$ref": "#/$defs/A"}}, "$ref": "#/$defs/A"}));
        let one = json!(1);
        let problems = cycle.problems(&one);
        assert!(problems.iter().any(|p| p.kind == ProblemKind::TooDeep));
    }

    #[test]
    fn problems_name_the_keyword_and_the_place() {
        let schema = subset(&json!({"type": "object", "additionalProperties": false,
            "required": ["a", "b"], "properties": {"a": {"type": "integer", "maximum": 3}}}));
        let value = json!({"a": 4, "x": 1, "y": 2});
        let kinds: Vec<(String, ProblemKind)> = schema
            .problems(&value)
            .into_iter()
            .map(|p| (p.at, p.kind))
            .collect();
        assert_eq!(
            kinds,
            vec![
                (
                    "".into(),
                    ProblemKind::Required {
                        property: "b".into()
                    }
                ),
                ("/a".into(), ProblemKind::Maximum { limit: json!(3) }),
                (
                    "".into(),
                    ProblemKind::AdditionalProperties {
                        unexpected: vec!["x".into(), "y".into()]
                    }
                ),
            ]
        );
    }

    #[cfg(feature = "json-schema-full")]
    #[test]
    fn what_schemars_derives_for_arguments_agrees_with_jsonschema() {
        #[allow(dead_code)]
        #[derive(schemars::JsonSchema)]
        enum Mode {
            /// Fast.
            Fast,
            /// Slow.
            Slow,
        }
        #[allow(dead_code)]
        #[derive(schemars::JsonSchema)]
        struct Args {
            pair: (u8, String),
            modes: Vec<Mode>,
            labels: std::collections::BTreeMap<String, f32>,
            limit: Option<u32>,
            nested: Option<Box<Args>>,
        }
        let schema = crate::spec::ToolSchema::for_input::<Args>();
        let compiled = subset(schema.as_value());
        let full = compile_bounded(schema.as_value()).unwrap();
        let value = json!({"pair": [1, "a"], "modes": ["Fast"], "labels": {"x": 1.5},
            "limit": null, "nested": {"pair": [300, "b"], "modes": [], "labels": {}}});
        assert_eq!(compiled.is_valid(&value), full.is_valid(&value));
    }
}
