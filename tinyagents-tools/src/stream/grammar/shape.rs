//! What an output in a format may look like, read from the format's
//! description: where free text goes, which markers start a run of calls
//! or reasoning, and each run's calls as a [`G`] with schema leaves. The
//! renderers turn one shape into Lark, GBNF or a structural tag.
//!
//! The shape follows the reader: markup is written as the reader reads it
//! (whitespace where it skips whitespace, one call per tool of the turn),
//! never a form it would read otherwise.

use serde_json::Value;

use super::cfg::{Class, G, Leaf, Rules, alt, lit, members_of, opt, plus, seq, star};
use super::{Grammar, GrammarError, Tool};
use crate::spec::schema::escape_pointer;
use crate::stream::text::typing::python_scalars;
use crate::stream::text::{
    CallBody, CallRun, HarmonyMarkers, Join, KeyValuePairs, NameForm, RunStart, TextFormat,
    XmlParameters,
};

/// One output shape.
#[derive(Debug)]
pub(crate) struct Shape {
    pub grammar: Grammar,
    /// The format's name.
    pub format: String,
    /// Every marker of the format (what a tokenizer must keep).
    pub markers: Vec<String>,
    /// Whether the markers are special tokens.
    pub special_tokens: bool,
    /// Rules the calls refer to.
    pub rules: Rules,
    pub kind: Kind,
}

#[derive(Debug)]
pub(crate) enum Kind {
    /// Free text with marked regions (reasoning, runs of calls) and, for
    /// some formats, a bare run at the output start.
    Runs(Runs),
    /// A whole output of messages (harmony).
    Whole(G),
}

#[derive(Debug)]
pub(crate) struct Runs {
    /// The regions a marker in the free text starts.
    pub marked: Vec<Marked>,
    /// Runs read at the output start without a marker (after whitespace).
    pub bare: Vec<G>,
    /// What a bare run begins with: free text at the output start may not
    /// begin (after whitespace) with one.
    pub openers: Vec<String>,
    /// Free text after a run may not begin (after whitespace) with these
    /// (they would continue the run).
    pub after_not: Vec<String>,
    /// The markers free text may not hold.
    pub excludes: Vec<String>,
}

/// A region of the output a marker starts.
#[derive(Debug)]
pub(crate) struct Marked {
    pub marker: String,
    /// What follows the marker, up to (not including) `end`.
    pub body: G,
    /// The marker that closes the region, when it has one.
    pub end: Option<String>,
    /// The region is reasoning (free text up to `end`).
    pub reasoning: bool,
}

type R<T> = Result<T, GrammarError>;

impl Shape {
    pub fn build(grammar: Grammar, format: &TextFormat, tools: &[Tool]) -> R<Shape> {
        let mut b = Builder {
            grammar,
            format,
            tools,
            rules: Rules::default(),
        };
        let kind = match &format.body {
            CallBody::Harmony(h) => Kind::Whole(b.harmony(h)?),
            _ => Kind::Runs(b.runs()?),
        };
        Ok(Shape {
            grammar,
            format: format.name.clone(),
            markers: format.markers().into_iter().map(str::to_owned).collect(),
            special_tokens: format.special_tokens,
            rules: b.rules,
            kind,
        })
    }
}

struct Builder<'a> {
    grammar: Grammar,
    format: &'a TextFormat,
    tools: &'a [Tool],
    rules: Rules,
}

fn digit() -> G {
    G::Class(Class::of(&[('0', '9')]))
}

impl Builder<'_> {
    fn name_error(&self, tool: &str, name: &str) -> GrammarError {
        GrammarError::Name {
            grammar: self.grammar,
            format: self.format.name.clone(),
            tool: tool.to_owned(),
            name: name.to_owned(),
        }
    }

    fn unsupported(&self, tool: &str, pointer: &str, keyword: &str, detail: &str) -> GrammarError {
        GrammarError::Unsupported {
            grammar: self.grammar,
            tool: tool.to_owned(),
            pointer: pointer.to_owned(),
            keyword: keyword.to_owned(),
            detail: detail.to_owned(),
        }
    }

    /// A name written as text must hold no marker and no whitespace (the
    /// reader trims and splits there).
    fn plain_name(&self, tool: &str, name: &str) -> R<()> {
        let markers = self.format.markers();
        if name.is_empty()
            || name.chars().any(char::is_whitespace)
            || markers.iter().any(|m| name.contains(m))
        {
            return Err(self.name_error(tool, name));
        }
        Ok(())
    }

    fn json_args(&self, tool: &Tool) -> G {
        G::Json(Leaf {
            schema: tool.schema.clone(),
            tool: tool.name.clone(),
            pointer: String::new(),
        })
    }

    fn runs(&mut self) -> R<Runs> {
        let format = self.format;
        let mut marked = Vec::new();
        let mut excludes = Vec::new();
        if let Some(r) = &format.reasoning {
            excludes.push(r.start.clone());
            marked.push(Marked {
                marker: r.start.clone(),
                body: G::Until {
                    excludes: vec![r.end.clone()],
                    end: r.end.clone(),
                },
                end: None,
                reasoning: true,
            });
        }
        let mut bare = Vec::new();
        let mut openers = Vec::new();
        let mut after_not = Vec::new();
        for run in &format.runs {
            match (&run.start, format.body.opening()) {
                (RunStart::Marker(m), _) => excludes.push(m.clone()),
                (RunStart::BodyOpening, Some(m)) => excludes.push(m.to_owned()),
                _ => {}
            }
            if let RunStart::OutputStart = &run.start {
                openers.push(match &run.join {
                    Join::List { open, .. } => open.clone(),
                    _ => "{".to_owned(),
                });
            }
            if self.tools.is_empty() {
                // No tool: no call can be written, and no run may begin.
                continue;
            }
            let calls = self.run_calls(run)?;
            if let Join::Separator(sep) = &run.join
                && run.end.is_none()
            {
                after_not.push(sep.trim().to_owned());
            }
            match &run.start {
                RunStart::Marker(m) => {
                    let head = if matches!(run.join, Join::List { .. }) || run.call_start.is_some()
                    {
                        G::Ws
                    } else {
                        match format.body {
                            CallBody::JsonObject { .. } | CallBody::XmlParameters(_) => G::Ws,
                            _ => G::Seq(Vec::new()),
                        }
                    };
                    let (body, end) = match &run.end {
                        // GLM's key-value calls end at the run's end marker.
                        Some(e) => (seq([head, calls, G::Ws]), Some(e.clone())),
                        None => (seq([head, calls]), None),
                    };
                    marked.push(Marked {
                        marker: m.clone(),
                        body,
                        end,
                        reasoning: false,
                    });
                }
                RunStart::OutputStart => bare.push(calls),
                RunStart::BodyOpening => {
                    // The call's opening marker starts the region (the
                    // call is written after it), and the run's end marker
                    // may follow the call. Free text after such a call
                    // that begins (after whitespace) with that end marker
                    // is read as the marker: the grammars allow it, as an
                    // `after_not` entry would refuse every text after any
                    // region that begins with its first character.
                    let Some(m) = format.body.opening() else {
                        continue;
                    };
                    let body = match &run.end {
                        Some(e) => seq([calls, opt(seq([G::Ws, lit(e)]))]),
                        None => calls,
                    };
                    marked.push(Marked {
                        marker: m.to_owned(),
                        body,
                        end: None,
                        reasoning: false,
                    });
                }
            }
        }
        Ok(Runs {
            marked,
            bare,
            openers,
            after_not,
            excludes,
        })
    }

    /// The calls of one run, after its start marker and before its end
    /// marker (or, for runs without one, up to the last call).
    fn run_calls(&mut self, run: &CallRun) -> R<G> {
        let one = self.one_call(run)?;
        let one = match (&run.call_start, &run.call_end) {
            (Some(s), Some(e)) => seq([lit(s), one, G::Ws, lit(e)]),
            (Some(s), None) => seq([lit(s), one]),
            _ => one,
        };
        Ok(match &run.join {
            Join::Single => one,
            Join::Adjacent => {
                if run.end.is_some() || run.call_start.is_some() {
                    seq([one.clone(), star(seq([G::Ws, one]))])
                } else {
                    one
                }
            }
            Join::Separator(sep) => {
                let sep = sep.trim();
                seq([one.clone(), star(seq([G::Ws, lit(sep), G::Ws, one]))])
            }
            Join::List {
                open,
                separator,
                close,
            } => seq([
                lit(open),
                G::Ws,
                one.clone(),
                star(seq([G::Ws, lit(separator), G::Ws, one])),
                G::Ws,
                lit(close),
            ]),
        })
    }

    /// One call of any of the turn's tools.
    fn one_call(&mut self, run: &CallRun) -> R<G> {
        let mut alts = Vec::new();
        for tool in self.tools {
            alts.push(self.call(run, tool)?);
        }
        if alts.is_empty() {
            // No tool: no call can be written; the run cannot begin.
            return Ok(G::Alt(Vec::new()));
        }
        let g = alt(alts);
        Ok(self.rules.add("call", g))
    }

    fn call(&mut self, run: &CallRun, tool: &Tool) -> R<G> {
        let format = self.format;
        match &format.body {
            CallBody::JsonObject {
                name_key,
                argument_keys,
                id_key,
            } => {
                let key = |k: &str| lit(&serde_json::to_string(k).unwrap_or_default());
                let member = |k: &str, v: G| seq([key(k), G::Ws, lit(":"), G::Ws, v]);
                let args_key = argument_keys
                    .first()
                    .map(String::as_str)
                    .unwrap_or("arguments");
                let mut parts = vec![
                    lit("{"),
                    G::Ws,
                    member(
                        name_key,
                        lit(&serde_json::to_string(&tool.name).unwrap_or_default()),
                    ),
                    G::Ws,
                    lit(","),
                    G::Ws,
                    member(args_key, self.json_args(tool)),
                ];
                if let Some(id) = id_key {
                    let id_value = G::Json(Leaf {
                        schema: serde_json::json!({"type": "string", "minLength": 1}),
                        tool: tool.name.clone(),
                        pointer: String::new(),
                    });
                    parts.push(opt(seq([G::Ws, lit(","), G::Ws, member(id, id_value)])));
                }
                parts.extend([G::Ws, lit("}")]);
                Ok(seq(parts))
            }
            CallBody::NameThenJson {
                name_prefix,
                id_marker,
                arguments_marker,
                fence,
                name,
            } => {
                self.plain_name(&tool.name, &tool.name)?;
                let mut parts = Vec::new();
                if let Some(p) = name_prefix {
                    parts.push(lit(p));
                }
                match name {
                    NameForm::Plain => parts.push(lit(&tool.name)),
                    NameForm::IdWithName {
                        prefix,
                        index_separator,
                    } => {
                        parts.push(lit(&format!("{prefix}{}{index_separator}", tool.name)));
                        parts.push(plus(digit()));
                    }
                }
                if let Some(m) = id_marker {
                    let id_char = G::Class(Class::of(&[('a', 'z'), ('A', 'Z'), ('0', '9')]));
                    parts.push(opt(seq([lit(m), super::cfg::repeat(id_char, 9, Some(9))])));
                }
                parts.push(lit(arguments_marker));
                match fence {
                    Some(f) => parts.extend([
                        lit(&f.start),
                        G::Ws,
                        self.json_args(tool),
                        G::Ws,
                        lit(&f.end),
                    ]),
                    None => parts.extend([G::Ws, self.json_args(tool)]),
                }
                Ok(seq(parts))
            }
            CallBody::XmlParameters(x) => self.xml_call(run, x, tool),
            CallBody::KeyValue(kv) => self.kv_call(run, kv, tool),
            CallBody::Pythonic => self.python_call(tool),
            CallBody::Harmony(_) => Ok(G::Alt(Vec::new())),
        }
    }

    /// The properties of a tool's input schema, in order, with whether
    /// each is required; refuses keywords beside them that raw parameters
    /// cannot honour.
    fn properties(&self, tool: &Tool) -> R<Vec<(String, Value, bool)>> {
        let obj = tool.schema.as_object().cloned().unwrap_or_default();
        for key in obj.keys() {
            if !matches!(
                key.as_str(),
                "type"
                    | "properties"
                    | "required"
                    | "additionalProperties"
                    | "description"
                    | "title"
                    | "default"
                    | "examples"
                    | "$comment"
            ) && !key.starts_with("x-")
            {
                return Err(self.unsupported(
                    &tool.name,
                    "",
                    key,
                    "beside the parameters of a call written as text",
                ));
            }
        }
        let required = super::cfg::required_of(&obj);
        let props = obj
            .get("properties")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        if let Some(missing) = required.iter().find(|r| !props.contains_key(*r)) {
            return Err(self.unsupported(
                &tool.name,
                "/required",
                "required",
                &format!("`{missing}` is not in properties"),
            ));
        }
        Ok(props
            .into_iter()
            .map(|(k, v)| {
                let req = required.contains(&k);
                (k, v, req)
            })
            .collect())
    }

    /// A raw parameter value up to `end` (which the value may not hold, nor
    /// any of `stops`), typed as the reader types it.
    fn raw_value(
        &self,
        tool: &Tool,
        key: &str,
        schema: &Value,
        stops: &[String],
        end: &str,
        newlines: bool,
    ) -> R<G> {
        let pointer = format!("/properties/{}", escape_pointer(key));
        let string_kind = string_allowed(schema);
        match string_kind {
            StringKind::No => {
                let json = G::Json(Leaf {
                    schema: schema.clone(),
                    tool: tool.name.clone(),
                    pointer,
                });
                // The reader also reads Python's `True`/`False`/`None`
                // where the schema allows the value.
                let python = python_scalars(&tool.schema, schema);
                let value = alt(std::iter::once(json)
                    .chain(python.iter().map(|(spelling, _)| lit(spelling)))
                    .collect());
                Ok(seq([G::Ws, value, G::Ws, lit(end)]))
            }
            StringKind::Any => {
                let mut excludes = stops.to_vec();
                if !excludes.iter().any(|e| e == end) {
                    excludes.push(end.to_owned());
                }
                Ok(G::Until {
                    excludes,
                    end: end.to_owned(),
                })
            }
            StringKind::Literals(values) => {
                if let Some(bad) = values
                    .iter()
                    .find(|v| stops.iter().any(|s| v.contains(s.as_str())) || v.contains(end))
                {
                    return Err(self.unsupported(
                        &tool.name,
                        &pointer,
                        "enum",
                        &format!("the value {bad:?} holds a marker"),
                    ));
                }
                let choice = alt(values.iter().map(|v| lit(v)).collect());
                Ok(if newlines {
                    seq([opt(lit("\n")), choice, opt(lit("\n")), lit(end)])
                } else {
                    seq([choice, lit(end)])
                })
            }
            StringKind::Constrained(keyword) => Err(self.unsupported(
                &tool.name,
                &pointer,
                &keyword,
                "a string constraint on a raw parameter value",
            )),
        }
    }

    fn xml_call(&mut self, run: &CallRun, x: &XmlParameters, tool: &Tool) -> R<G> {
        self.plain_name(&tool.name, &tool.name)?;
        let mut stops = vec![x.parameter_end.clone(), x.function_end.clone()];
        stops.extend(run.end.clone());
        let mut pairs = Vec::new();
        for (key, schema, required) in self.properties(tool)? {
            self.plain_name(&tool.name, &key)?;
            if key.contains(&x.name_end) {
                return Err(self.name_error(&tool.name, &key));
            }
            let value = self.raw_value(tool, &key, &schema, &stops, &x.parameter_end, true)?;
            pairs.push((
                seq([
                    lit(&format!("{}{key}{}", x.parameter_start, x.name_end)),
                    value,
                ]),
                required,
            ));
        }
        let params = members_of(&mut self.rules, pairs, G::Ws, None);
        // A run begun at the opening marker has it as its region's marker.
        let opening = match run.start {
            RunStart::BodyOpening => "",
            _ => x.function_start.as_str(),
        };
        let mut parts = vec![lit(&format!("{opening}{}{}", tool.name, x.name_end)), G::Ws];
        if let Some(p) = params {
            parts.extend([p, G::Ws]);
        }
        parts.push(lit(&x.function_end));
        Ok(seq(parts))
    }

    fn kv_call(&mut self, _run: &CallRun, kv: &KeyValuePairs, tool: &Tool) -> R<G> {
        self.plain_name(&tool.name, &tool.name)?;
        let stops = vec![kv.value_end.clone()];
        let mut pairs = Vec::new();
        for (key, schema, required) in self.properties(tool)? {
            if key.contains(&kv.key_end) || key.trim() != key || key.is_empty() {
                return Err(self.name_error(&tool.name, &key));
            }
            let value = self.raw_value(tool, &key, &schema, &stops, &kv.value_end, false)?;
            pairs.push((
                seq([
                    lit(&format!("{}{key}{}", kv.key_start, kv.key_end)),
                    G::Ws,
                    lit(&kv.value_start),
                    value,
                ]),
                required,
            ));
        }
        let params = members_of(&mut self.rules, pairs, G::Ws, None);
        let mut parts = vec![lit(&tool.name)];
        if let Some(p) = params {
            parts.extend([G::Ws, p]);
        }
        Ok(seq(parts))
    }

    fn python_call(&mut self, tool: &Tool) -> R<G> {
        let ident = |s: &str| {
            let mut chars = s.chars();
            chars
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        };
        if !ident(&tool.name) {
            return Err(self.name_error(&tool.name, &tool.name));
        }
        let props = self.properties(tool)?;
        let mut pairs = Vec::new();
        for (key, schema, required) in props {
            if !ident(&key) {
                return Err(self.name_error(&tool.name, &key));
            }
            let value = G::Python(Leaf {
                schema,
                tool: tool.name.clone(),
                pointer: format!("/properties/{}", escape_pointer(&key)),
            });
            pairs.push((seq([lit(&key), G::Ws, lit("="), G::Ws, value]), required));
        }
        let sep = seq([G::Ws, lit(","), G::Ws]);
        let args = members_of(&mut self.rules, pairs, sep, None);
        let mut parts = vec![lit(&tool.name), lit("("), G::Ws];
        if let Some(a) = args {
            parts.extend([a, G::Ws]);
        }
        parts.push(lit(")"));
        Ok(seq(parts))
    }

    fn harmony(&mut self, h: &HarmonyMarkers) -> R<G> {
        let excludes: Vec<String> = [
            &h.start,
            &h.channel,
            &h.message,
            &h.constrain,
            &h.end,
            &h.call,
            &h.return_,
        ]
        .iter()
        .map(|s| (*s).clone())
        .collect();
        let text = |end: &str| G::Until {
            excludes: excludes.clone(),
            end: end.to_owned(),
        };
        let channel = |name: &str| lit(&format!("{}{name}{}", h.channel, h.message));
        let mut messages = vec![
            seq([channel(&h.reasoning_channel), text(&h.end)]),
            seq([channel("final"), alt(vec![text(&h.return_), text(&h.end)])]),
            seq([channel("commentary"), text(&h.end)]),
        ];
        for tool in self.tools {
            self.plain_name(&tool.name, &tool.name)?;
            let recipient = format!(" to={}{}", h.recipient_prefix, tool.name);
            let constrain = alt(vec![
                lit(&format!("{}json", h.constrain)),
                lit(&format!(" {}json", h.constrain)),
            ]);
            let content = seq([
                lit(&h.message),
                G::Ws,
                self.json_args(tool),
                G::Ws,
                lit(&h.call),
            ]);
            // The recipient after the channel, or in the role part (before it).
            messages.push(seq([
                lit(&format!("{}commentary{recipient}", h.channel)),
                alt(vec![constrain.clone(), lit(" json")]),
                content.clone(),
            ]));
            messages.push(seq([
                lit(&format!("{recipient}{}commentary", h.channel)),
                alt(vec![lit(&format!(" {}json", h.constrain)), lit(" json")]),
                content,
            ]));
        }
        let message = self.rules.add("message", alt(messages));
        let next = lit(&format!("{}assistant", h.start));
        // An empty output (the model stops at once) reads as no message.
        Ok(opt(seq([
            opt(next.clone()),
            message.clone(),
            star(seq([next, message])),
        ])))
    }
}

/// Whether a raw parameter value is read as a string, and how the
/// schema constrains it.
enum StringKind {
    /// The schema allows no string: the value is JSON.
    No,
    /// Any string.
    Any,
    /// One of these strings.
    Literals(Vec<String>),
    /// A string constraint raw text cannot be held to.
    Constrained(String),
}

fn string_allowed(schema: &Value) -> StringKind {
    let Some(obj) = schema.as_object() else {
        return if schema == &Value::Bool(true) {
            StringKind::Any
        } else {
            StringKind::No
        };
    };
    let mut types: Vec<String> = Vec::new();
    match obj.get("type") {
        Some(Value::String(t)) => types.push(t.clone()),
        Some(Value::Array(ts)) => {
            types.extend(ts.iter().filter_map(|t| t.as_str().map(str::to_owned)))
        }
        _ => {}
    }
    let literals = match (obj.get("enum"), obj.get("const")) {
        (Some(Value::Array(vs)), _) => Some(vs.clone()),
        (_, Some(v)) => Some(vec![v.clone()]),
        _ => None,
    };
    if let Some(values) = &literals {
        if values.iter().any(Value::is_string) {
            if values.iter().all(|v| v.is_string() || v.is_null()) {
                return StringKind::Literals(
                    values
                        .iter()
                        .map(|v| v.as_str().unwrap_or("null").to_owned())
                        .collect(),
                );
            }
            return StringKind::Constrained("enum".into());
        }
        return StringKind::No;
    }
    for combinator in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = obj.get(combinator) {
            let kinds: Vec<StringKind> = branches.iter().map(string_allowed).collect();
            if kinds.iter().all(|k| matches!(k, StringKind::No)) {
                return StringKind::No;
            }
            return match kinds.into_iter().find(|k| !matches!(k, StringKind::No)) {
                Some(StringKind::Any) => StringKind::Any,
                _ => StringKind::Constrained(combinator.into()),
            };
        }
    }
    if obj.contains_key("allOf") {
        return StringKind::Constrained("allOf".into());
    }
    if types.is_empty()
        && !obj
            .keys()
            .any(|k| matches!(k.as_str(), "properties" | "items"))
    {
        // No type: the reader keeps raw text that is not JSON as a string.
        return StringKind::Constrained("type".into());
    }
    if !types.iter().any(|t| t == "string") {
        return StringKind::No;
    }
    for k in ["minLength", "maxLength", "pattern", "format"] {
        if obj.contains_key(k) {
            return StringKind::Constrained(k.into());
        }
    }
    StringKind::Any
}
