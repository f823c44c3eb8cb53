//! What the grammar tests share: llguidance's matcher over a byte-level
//! token environment (every byte one token); the outputs each format's
//! reader reads as valid calls of the text-format tests' tools (one call,
//! parallel calls, after free text and reasoning) and calls whose
//! arguments those tools' schemas refuse; and the random-walk check.

use std::sync::{Arc, OnceLock};

use llguidance::api::TopLevelGrammar;
use llguidance::toktrie::{ApproximateTokEnv, TokEnv};
use llguidance::{Matcher, ParserFactory};
use serde_json::{Value, json};
use tinyagents_tools::ToolCall;
use tinyagents_tools::call::RawArguments;
use tinyagents_tools::stream::text::{Family, Join, RunStart, TextFormat};

use super::text_support::{arguments, bare_call, calls, tools};

fn env() -> &'static (TokEnv, Arc<ParserFactory>) {
    static ENV: OnceLock<(TokEnv, Arc<ParserFactory>)> = OnceLock::new();
    ENV.get_or_init(|| {
        let env = ApproximateTokEnv::single_byte_env();
        let mut factory = ParserFactory::new_simple(&env).expect("a parser factory");
        factory.set_stderr_log_level(0);
        (env, Arc::new(factory))
    })
}

/// A matcher of a Lark grammar; panics when llguidance refuses the grammar.
pub fn matcher(lark: &str) -> Matcher {
    let (_, factory) = env();
    let parser = factory.create_parser(TopLevelGrammar::from_lark(lark.to_owned()));
    let m = Matcher::new(parser);
    assert!(
        !m.is_error(),
        "llguidance refused the grammar: {:?}\n{lark}",
        m.get_error()
    );
    m
}

/// Where the grammar refuses `text`: `None` when it accepts the whole text
/// and may stop there, `Some(byte offset)` of the first byte it refuses
/// (the text's length when it accepts every byte but may not stop).
pub fn refusal(lark: &str, text: &str) -> Option<usize> {
    let (env, _) = env();
    let mut m = matcher(lark);
    let tokens = env.tokenize_bytes(text.as_bytes());
    let n = m.try_consume_tokens(&tokens).unwrap_or(0);
    if n < tokens.len() {
        return Some(n);
    }
    if m.is_accepting().unwrap_or(false) {
        None
    } else {
        Some(text.len())
    }
}

/// Asserts the grammar accepts `text` whole.
#[track_caller]
pub fn assert_accepts(lark: &str, text: &str) {
    if let Some(at) = refusal(lark, text) {
        panic!(
            "the grammar refuses {text:?} at byte {at} ({:?} ^ {:?})\n{lark}",
            &text[..floor(text, at)],
            &text[floor(text, at)..]
        );
    }
}

/// Asserts the grammar refuses `text` (`what` is wrong with it).
#[track_caller]
pub fn assert_refuses(lark: &str, what: &str, text: &str) {
    assert!(
        refusal(lark, text).is_some(),
        "{what}: the grammar accepts {text:?}\n{lark}"
    );
}

fn floor(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// A random walk over the grammar: from the start, one allowed byte at a
/// time (whitespace and long free text made unlikely), until it stops or
/// `max` bytes. `None` when it did not stop in time.
pub fn walk(lark: &str, prefix: &str, seed: u64, max: usize) -> Option<Vec<u8>> {
    let (env, _) = env();
    let trie = env.tok_trie();
    let eos = trie.eos_token();
    let mut m = matcher(lark);
    let mut rng = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407)
        | 1;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut out = prefix.as_bytes().to_vec();
    m.consume_tokens(&env.tokenize_bytes(prefix.as_bytes()))
        .ok()?;
    while out.len() < max {
        let mask = m.compute_mask().ok()?;
        let mut allowed: Vec<u32> = Vec::new();
        mask.iter_set_entries(|t| allowed.push(t as u32));
        if allowed.is_empty() {
            return None;
        }
        let can_stop = allowed.contains(&eos);
        if can_stop && next() % 4 == 0 {
            return Some(out);
        }
        let bytes: Vec<u32> = allowed.iter().copied().filter(|t| *t < 256).collect();
        if bytes.is_empty() {
            return can_stop.then_some(out);
        }
        // Prefer the grammar's structure: characters that are not plain
        // letters are picked more often, whitespace rarely.
        let weight = |t: u32| -> u64 {
            let b = t as u8;
            if b.is_ascii_whitespace() {
                1
            } else if b.is_ascii_alphanumeric() {
                2
            } else if b >= 0x80 {
                1
            } else {
                6
            }
        };
        let total: u64 = bytes.iter().map(|t| weight(*t)).sum();
        let mut pick = next() % total;
        let mut chosen = bytes[0];
        for t in &bytes {
            let w = weight(*t);
            if pick < w {
                chosen = *t;
                break;
            }
            pick -= w;
        }
        m.consume_token(chosen).ok()?;
        out.push(chosen as u8);
    }
    None
}

/// Every format: the built-in ones and a tag pair.
pub fn formats() -> Vec<TextFormat> {
    let mut names: Vec<String> = tinyagents_tools::stream::text::FORMAT_NAMES
        .iter()
        .map(|n| n.to_string())
        .collect();
    names.push("tags:[TOOL_CALL],[/TOOL_CALL]".into());
    names
        .iter()
        .map(|n| TextFormat::by_name(n).unwrap())
        .collect()
}

/// Calls valid for the text-format tests' tools, their arguments written
/// in the schemas' property order.
pub fn valid_calls() -> Vec<ToolCall> {
    vec![
        ToolCall::new(
            "functions.get_weather:0",
            "get_weather",
            json!({"city": "Paris é \"q\"", "days": 3, "unit": "celsius"}).to_string(),
        ),
        ToolCall::new(
            "functions.write_file:1",
            "write_file",
            json!({"path": "/tmp/x", "content": "a\nb", "append": true, "lines": ["x", "y"]})
                .to_string(),
        ),
        ToolCall::new("functions.get_location:2", "get_location", "{}"),
    ]
}

/// `calls` as the format writes them, where free text may come before
/// them (Llama's and pythonic bare calls are read only at the output
/// start; elsewhere they need their marker).
pub fn written(format: &TextFormat, calls: &[ToolCall]) -> String {
    let body = format.render_calls(calls);
    match format.family {
        Family::Llama3Json => format!("<|python_tag|>{body}"),
        Family::Pythonic => format!("<|tool_call_start|>{body}<|tool_call_end|>"),
        _ => body,
    }
}

/// `call` as a format with a [`RunStart::BodyOpening`] run may write it:
/// from the body's opening marker on, without the run's end marker or (with
/// `closer`) with it on the next line; `None` for the other formats.
pub fn bare_written(format: &TextFormat, call: &ToolCall, closer: bool) -> Option<String> {
    let wrapped = written(format, std::slice::from_ref(call));
    let (bare, end) = bare_call(format, &wrapped)?;
    Some(if closer {
        format!("{bare}\n{end}")
    } else {
        bare.to_owned()
    })
}

/// A call of `name` with these arguments.
pub fn call(name: &str, arguments: Value) -> ToolCall {
    ToolCall::new("functions.x:9", name, arguments.to_string())
}

/// Free text before the calls, and (where the format has it) reasoning.
fn with_text(format: &TextFormat, body: &str) -> Vec<String> {
    let mut out = vec![body.to_owned()];
    match format.family {
        Family::Harmony => {
            out.push(format!(
                "<|channel|>analysis<|message|>Need the weather <tool_call>.<|end|><|start|>assistant\
                 <|channel|>commentary<|message|>Checking [now].<|end|>{body}"
            ));
        }
        _ => {
            out.push(format!("Let me check {{the}} [weather] é.\n{body}"));
            out.push(format!("{body}\nDone."));
            if let Some(r) = &format.reasoning {
                out.push(format!(
                    "{}The user wants <b>{{Paris}}</b>.{}\n\nChecking.\n{body}",
                    r.start, r.end
                ));
            }
        }
    }
    out
}

fn expected(calls_: &[ToolCall]) -> Vec<(String, Value)> {
    calls_
        .iter()
        .map(|c| (c.name.as_str().to_owned(), arguments(&c.arguments)))
        .collect()
}

/// Outputs the format's reader reads as valid calls of [`tools`]: each
/// call alone and the three in parallel (several runs where a run holds
/// one call), each bare, after free text, followed by text and after
/// reasoning. Asserts the reader reads each as those calls, nothing
/// failed nor truncated.
pub fn accepted_outputs(format: &TextFormat) -> Vec<String> {
    let all = valid_calls();
    let mut cases: Vec<Vec<ToolCall>> = all.iter().map(|c| vec![c.clone()]).collect();
    cases.push(all.clone());
    let mut out = Vec::new();
    for case in cases {
        let body = if format.family == Family::Harmony || case.len() == 1 {
            written(format, &case)
        } else {
            match format.family {
                // One call per run: several runs.
                Family::Hermes | Family::Qwen3Coder | Family::Glm45 | Family::Tags => case
                    .iter()
                    .map(|c| written(format, std::slice::from_ref(c)))
                    .collect::<Vec<_>>()
                    .join("\n"),
                _ => written(format, &case),
            }
        };
        out.extend(read_as(format, &body, &case));
    }
    if matches!(format.family, Family::Qwen3Coder | Family::Glm45) {
        // Python's `True`, as Qwen3-Coder's template writes a boolean
        // argument: read as `true`, so the grammars take it too.
        let case = vec![all[1].clone()];
        let json_form = written(format, &case);
        let python_form = json_form
            .replace(">\ntrue\n<", ">\nTrue\n<")
            .replace(">true<", ">True<");
        assert_ne!(python_form, json_form, "{}: no `true` written", format.name);
        out.extend(read_as(format, &python_form, &case));
    }
    if bare_written(format, &all[0], false).is_some() {
        // Qwen3-Coder's calls without their `<tool_call>`: each bare, with
        // and without the orphan closer, and the three in a row.
        let bare = |c: &ToolCall, closer| bare_written(format, c, closer).unwrap();
        for c in &all {
            for closer in [false, true] {
                out.extend(read_as(format, &bare(c, closer), std::slice::from_ref(c)));
            }
        }
        let row: Vec<String> = all
            .iter()
            .zip([false, true, false])
            .map(|(c, closer)| bare(c, closer))
            .collect();
        out.extend(read_as(format, &row.join("\n"), &all));
    }
    out
}

/// `body` with free text and reasoning about it, each asserted to read as
/// `case`, nothing failed nor truncated.
fn read_as(format: &TextFormat, body: &str, case: &[ToolCall]) -> Vec<String> {
    let mut out = Vec::new();
    for text in with_text(format, body) {
        let read = format.parse(&tools(), &text);
        assert_eq!(
            calls(&read),
            expected(case),
            "{}: the reader on {text:?}",
            format.name
        );
        assert_eq!(
            read.failed().count() + read.truncated().count(),
            0,
            "{}: {text:?}",
            format.name
        );
        out.push(text);
    }
    out
}

/// Outputs without a call: nothing at all, and text alone.
pub fn plain_outputs(format: &TextFormat) -> Vec<&'static str> {
    if format.family == Family::Harmony {
        vec!["", "<|channel|>final<|message|>No call needed.<|return|>"]
    } else {
        vec!["", "No call needed."]
    }
}

/// Calls whose arguments the text-format tests' tools refuse, with what
/// is wrong; asserts that the tool's schema (checked by the `jsonschema`
/// crate), or the tool list, refuses each.
pub fn violations() -> Vec<(&'static str, ToolCall)> {
    let cases = vec![
        (
            "wrong type",
            call("get_weather", json!({"city": "Paris", "days": "three"})),
        ),
        (
            "wrong type (boolean)",
            call(
                "write_file",
                json!({"path": "/a", "content": "b", "append": "yes"}),
            ),
        ),
        (
            "Python's True for an integer",
            call("get_weather", json!({"city": "Paris", "days": "True"})),
        ),
        (
            "Python's None for a boolean",
            call(
                "write_file",
                json!({"path": "/a", "content": "b", "append": "None"}),
            ),
        ),
        ("missing required", call("get_weather", json!({"days": 3}))),
        (
            "missing required",
            call("write_file", json!({"path": "/a"})),
        ),
        (
            "extra key on a closed object",
            call("get_weather", json!({"city": "Paris", "country": "FR"})),
        ),
        (
            "out of enum",
            call("get_weather", json!({"city": "Paris", "unit": "kelvin"})),
        ),
        (
            "array item of the wrong type",
            call(
                "write_file",
                json!({"path": "/a", "content": "b", "lines": [1]}),
            ),
        ),
        ("unknown tool", call("delete_everything", json!({}))),
    ];
    let validators = validators();
    for (what, bad) in &cases {
        let args = arguments(&bad.arguments);
        let valid = validators
            .iter()
            .find(|(n, _)| n == bad.name.as_str())
            .is_some_and(|(_, v)| v.is_valid(&args));
        assert!(!valid, "{what}: {args} is valid");
    }
    cases
}

/// Each violation as the format writes it, alone and after free text.
pub fn refused_outputs(format: &TextFormat) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    for (what, bad) in violations() {
        let text = written(format, std::slice::from_ref(&bad));
        out.push((what, format!("Sure.\n{text}")));
        out.push((what, text));
        for closer in [false, true] {
            out.extend(
                bare_written(format, &bad, closer).map(|bare| (what, format!("Sure.\n{bare}"))),
            );
        }
    }
    out
}

/// The `jsonschema` validators of [`tools`]' input schemas.
pub fn validators() -> Vec<(String, jsonschema::Validator)> {
    tools()
        .iter()
        .map(|t| {
            (
                t.name.as_str().to_owned(),
                jsonschema::validator_for(t.input_schema.as_value()).unwrap(),
            )
        })
        .collect()
}

/// What random walks over a grammar wrote.
#[derive(Debug, Default)]
pub struct Walks {
    /// Walks that stopped within their budget.
    pub finished: usize,
    /// Calls they wrote, valid against their tool's schema.
    pub calls: usize,
    /// Calls whose arguments hold a number beyond `f64`.
    pub beyond_f64: usize,
}

/// Random walks over the Lark grammar `lark` of `format` (32 seeds, from
/// nothing and from each marker that starts a call, at most `max` bytes
/// each): asserts that each output reads back as valid calls of
/// [`tools`], nothing failed, nothing truncated.
pub fn walks(format: &TextFormat, lark: &str, max: usize) -> Walks {
    let validators = validators();
    let mut prefixes: Vec<String> = vec![String::new()];
    if format.family == Family::Harmony {
        prefixes.push("<|channel|>commentary to=functions.".into());
        prefixes.push(" to=functions.".into());
    }
    for run in &format.runs {
        match &run.start {
            RunStart::Marker(m) => prefixes.push(format!("Hi. {m}")),
            RunStart::BodyOpening => {
                prefixes.extend(format.body.opening().map(|m| format!("Hi. {m}")))
            }
            RunStart::OutputStart => prefixes.push(match &run.join {
                Join::List { open, .. } => open.clone(),
                _ => "{".into(),
            }),
        }
    }
    let mut w = Walks::default();
    for seed in 0..32u64 {
        let prefix = &prefixes[seed as usize % prefixes.len()];
        let Some(bytes) = walk(lark, prefix, seed * 7919 + 1, max) else {
            continue;
        };
        let Ok(text) = String::from_utf8(bytes) else {
            panic!("{}: the walk wrote invalid UTF-8", format.name)
        };
        w.finished += 1;
        let out = format.parse(&tools(), &text);
        assert_eq!(
            out.failed().count(),
            0,
            "{}: {text:?} -> {:?}",
            format.name,
            out.parts
        );
        assert_eq!(
            out.truncated().count(),
            0,
            "{}: {text:?} -> {:?}",
            format.name,
            out.parts
        );
        for c in out.calls() {
            let name = c.name.as_str();
            let v = &validators
                .iter()
                .find(|(n, _)| *n == name)
                .unwrap_or_else(|| panic!("{}: unknown tool {name} in {text:?}", format.name))
                .1;
            if beyond_f64(&c.arguments) {
                w.beyond_f64 += 1;
                continue;
            }
            let args = arguments(&c.arguments);
            assert!(
                v.is_valid(&args),
                "{}: {name} {args} in {text:?}",
                format.name
            );
            w.calls += 1;
        }
    }
    w
}

/// Whether the arguments are JSON text that only fails to read as a
/// value because a number is beyond `f64` (serde_json skips numbers
/// without converting them when it ignores a value).
fn beyond_f64(raw: &RawArguments) -> bool {
    match raw {
        RawArguments::Text(t) => {
            serde_json::from_str::<Value>(t).is_err()
                && serde_json::from_str::<serde::de::IgnoredAny>(t).is_ok()
        }
        RawArguments::Json(_) => false,
    }
}
