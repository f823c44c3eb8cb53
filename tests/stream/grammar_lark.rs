//! The llguidance check of the Lark grammar: for every format, the calls
//! the reader reads (one, several in parallel, after free text and
//! reasoning) are accepted, arguments the schema refuses are refused, and
//! what a random walk over the grammar writes reads back as valid calls.

use serde_json::{Value, json};
use tinyagents_tools::stream::grammar;
use tinyagents_tools::stream::text::{Family, TextFormat};
use tinyagents_tools::ToolCall;

use super::grammar_support::{assert_accepts, assert_refuses, call, formats, valid_calls, walk, written};
use super::text_support::{calls, tools};

fn lark(format: &TextFormat) -> String {
    grammar::lark(format, &tools()).unwrap_or_else(|e| panic!("{}: {e}", format.name))
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
        .map(|c| (c.name.as_str().to_owned(), super::text_support::arguments(&c.arguments)))
        .collect()
}

#[test]
fn every_format_s_grammar_accepts_the_calls_the_reader_reads() {
    let mut checked = 0;
    for format in formats() {
        let g = lark(&format);
        let all = valid_calls();
        let mut cases: Vec<Vec<ToolCall>> = all.iter().map(|c| vec![c.clone()]).collect();
        cases.push(all.clone());
        for case in cases {
            let body = if format.family == Family::Harmony || case.len() == 1 {
                written(&format, &case)
            } else {
                match format.family {
                    // One call per run: several runs.
                    Family::Hermes | Family::Qwen3Coder | Family::Glm45 | Family::Tags => case
                        .iter()
                        .map(|c| written(&format, std::slice::from_ref(c)))
                        .collect::<Vec<_>>()
                        .join("\n"),
                    _ => written(&format, &case),
                }
            };
            for text in with_text(&format, &body) {
                let out = format.parse(&tools(), &text);
                assert_eq!(calls(&out), expected(&case), "{}: the reader on {text:?}", format.name);
                assert_eq!(out.failed().count() + out.truncated().count(), 0);
                assert_accepts(&g, &text);
                checked += 1;
            }
        }
        // Text alone, and no output at all.
        assert_accepts(&g, "");
        let plain = if format.family == Family::Harmony {
            "<|channel|>final<|message|>No call needed.<|return|>"
        } else {
            "No call needed."
        };
        assert_accepts(&g, plain);
    }
    assert!(checked >= 12 * 4 * 3, "{checked} outputs checked");
}

/// Arguments every tool's schema refuses, with what is wrong.
fn violations() -> Vec<(&'static str, ToolCall)> {
    vec![
        ("wrong type", call("get_weather", json!({"city": "Paris", "days": "three"}))),
        ("wrong type (boolean)", call("write_file", json!({"path": "/a", "content": "b", "append": "yes"}))),
        ("missing required", call("get_weather", json!({"days": 3}))),
        ("missing required", call("write_file", json!({"path": "/a"}))),
        ("extra key on a closed object", call("get_weather", json!({"city": "Paris", "country": "FR"}))),
        ("out of enum", call("get_weather", json!({"city": "Paris", "unit": "kelvin"}))),
        ("array item of the wrong type", call("write_file", json!({"path": "/a", "content": "b", "lines": [1]}))),
        ("unknown tool", call("delete_everything", json!({}))),
    ]
}

#[test]
fn arguments_the_schema_refuses_are_refused_by_every_format_s_grammar() {
    let validators: Vec<(String, jsonschema::Validator)> = tools()
        .iter()
        .map(|t| (t.name.as_str().to_owned(), jsonschema::validator_for(t.input_schema.as_value()).unwrap()))
        .collect();
    for format in formats() {
        let g = lark(&format);
        for (what, bad) in violations() {
            // The schema (or the tool list) refuses it: an outside fact.
            let args = super::text_support::arguments(&bad.arguments);
            let valid = validators
                .iter()
                .find(|(n, _)| n == bad.name.as_str())
                .is_some_and(|(_, v)| v.is_valid(&args));
            assert!(!valid, "{what}: {args} is valid");
            let text = written(&format, std::slice::from_ref(&bad));
            assert_refuses(&g, &text);
            assert_refuses(&g, &format!("Sure.\n{text}"));
        }
    }
}

#[test]
fn outputs_a_random_walk_writes_read_back_as_valid_calls() {
    let validators: Vec<(String, jsonschema::Validator)> = tools()
        .iter()
        .map(|t| (t.name.as_str().to_owned(), jsonschema::validator_for(t.input_schema.as_value()).unwrap()))
        .collect();
    let mut with_calls = 0;
    let mut total = 0;
    for format in formats() {
        let g = lark(&format);
        // Walks that start where a call starts (after some text, at each
        // marker and bare opening), and walks from nothing.
        let mut prefixes: Vec<String> = vec![String::new()];
        if format.family == Family::Harmony {
            prefixes.push("<|channel|>commentary to=functions.".into());
            prefixes.push(" to=functions.".into());
        }
        for run in &format.runs {
            match &run.start {
                tinyagents_tools::stream::text::RunStart::Marker(m) => prefixes.push(format!("Hi. {m}")),
                tinyagents_tools::stream::text::RunStart::OutputStart => prefixes.push(match &run.join {
                    tinyagents_tools::stream::text::Join::List { open, .. } => open.clone(),
                    _ => "{".into(),
                }),
            }
        }
        for seed in 0..32u64 {
            let prefix = &prefixes[seed as usize % prefixes.len()];
            let Some(bytes) = walk(&g, prefix, seed * 7919 + 1, 3000) else { continue };
            let Ok(text) = String::from_utf8(bytes) else {
                panic!("{}: the walk wrote invalid UTF-8", format.name)
            };
            total += 1;
            let out = format.parse(&tools(), &text);
            assert_eq!(out.failed().count(), 0, "{}: {text:?} -> {:?}", format.name, out.parts);
            assert_eq!(out.truncated().count(), 0, "{}: {text:?} -> {:?}", format.name, out.parts);
            for (name, args) in calls(&out) {
                let v = &validators.iter().find(|(n, _)| *n == name).unwrap_or_else(|| panic!("{}: unknown tool {name} in {text:?}", format.name)).1;
                assert!(v.is_valid(&args), "{}: {name} {args} in {text:?}", format.name);
                with_calls += 1;
            }
        }
    }
    assert!(total > 100, "{total} walks finished");
    assert!(with_calls > 50, "{with_calls} calls written");
}

#[test]
#[ignore = "prints the grammars of GRAMMAR_FORMAT for reading"]
fn print_the_grammars() {
    let name = std::env::var("GRAMMAR_FORMAT").unwrap_or_else(|_| "hermes".into());
    let format = TextFormat::by_name(&name).unwrap();
    for kind in grammar::Grammar::ALL {
        println!("==== {kind}\n{}", kind.text(&format, &tools()).unwrap());
    }
}
