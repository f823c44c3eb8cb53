//! What the grammar tests share: llguidance's matcher over a byte-level
//! token environment (every byte one token), and the calls each format
//! writes for the text-format tests' tools.

use std::sync::{Arc, OnceLock};

use llguidance::api::TopLevelGrammar;
use llguidance::toktrie::{ApproximateTokEnv, TokEnv};
use llguidance::{Matcher, ParserFactory};
use serde_json::{Value, json};
use tinyagents_tools::ToolCall;
use tinyagents_tools::stream::text::{Family, TextFormat};

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
    assert!(!m.is_error(), "llguidance refused the grammar: {:?}\n{lark}", m.get_error());
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

/// Asserts the grammar refuses `text`.
#[track_caller]
pub fn assert_refuses(lark: &str, text: &str) {
    assert!(refusal(lark, text).is_some(), "the grammar accepts {text:?}\n{lark}");
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
    let mut rng = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407) | 1;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut out = prefix.as_bytes().to_vec();
    m.consume_tokens(&env.tokenize_bytes(prefix.as_bytes())).ok()?;
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
    names.iter().map(|n| TextFormat::by_name(n).unwrap()).collect()
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
            json!({"path": "/tmp/x", "content": "a\nb", "append": true, "lines": ["x", "y"]}).to_string(),
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

/// A call of `name` with these arguments.
pub fn call(name: &str, arguments: Value) -> ToolCall {
    ToolCall::new("functions.x:9", name, arguments.to_string())
}
