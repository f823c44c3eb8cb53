//! The llguidance check of the GBNF grammar, translated node for node into
//! llguidance Lark: for every format, the whole-output grammar and the
//! lazy grammar (applied, as llama.cpp does, from the first trigger that
//! fires) accept the calls the reader reads and refuse arguments the
//! schema refuses, and random sentences of the grammar read back as valid
//! calls.

use regex::Regex;
use tinyagents_tools::stream::CallProblem;
use tinyagents_tools::stream::grammar::{self, LazyGbnf, TriggerKind};
use tinyagents_tools::stream::text::{Family, TextFormat};

use super::grammar_convert::{gbnf_sample, gbnf_to_lark};
use super::grammar_support::{
    accepted_outputs, assert_accepts, assert_refuses, formats, plain_outputs, refusal,
    refused_outputs, validators,
};
use super::text_support::{arguments, tools};

fn gbnf(format: &TextFormat) -> LazyGbnf {
    grammar::gbnf(format, &tools()).unwrap_or_else(|e| panic!("{}: {e}", format.name))
}

/// Where llama.cpp starts the lazy grammar in `text`: at the trigger that
/// fires first as the output grows (a word once it is complete, a full
/// pattern once the output so far matches it), from the word or the
/// pattern's first capture. `None` when no trigger fires.
fn lazy_start(g: &LazyGbnf, text: &str) -> Option<usize> {
    let mut best: Option<(usize, usize)> = None;
    for t in &g.triggers {
        let fired = match t.kind {
            TriggerKind::Word => text.find(&t.value).map(|i| (i + t.value.len(), i)),
            TriggerKind::PatternFull => {
                let re = Regex::new(&format!("^(?:{})$", t.value)).expect("a trigger pattern");
                (1..=text.len())
                    .filter(|k| text.is_char_boundary(*k))
                    .find_map(|k| {
                        re.captures(&text[..k])
                            .map(|c| (k, c.get(1).expect("a capture").start()))
                    })
            }
            other => panic!("a trigger kind the check does not know: {other:?}"),
        };
        if let Some(f) = fired
            && best.is_none_or(|b| f.0 < b.0)
        {
            best = Some(f);
        }
    }
    best.map(|(_, start)| start)
}

/// Where the lazy grammar refuses `text` (the text before the first
/// trigger is free; without a trigger everything is).
fn lazy_refusal(g: &LazyGbnf, lark: &str, text: &str) -> Option<usize> {
    if !g.lazy {
        return refusal(lark, text);
    }
    let start = lazy_start(g, text)?;
    refusal(lark, &text[start..]).map(|at| start + at)
}

#[test]
fn every_format_s_gbnf_accepts_the_calls_the_reader_reads() {
    let mut checked = 0;
    for format in formats() {
        let g = gbnf(&format);
        let whole = gbnf_to_lark(&g.whole_output);
        let lazy = gbnf_to_lark(&g.grammar);
        // The text llama.cpp is given parses the same.
        assert_eq!(gbnf_to_lark(&g.text()), lazy, "{}", format.name);
        for text in accepted_outputs(&format) {
            assert_accepts(&whole, &text);
            if g.lazy {
                assert!(
                    lazy_start(&g, &text).is_some(),
                    "{}: no trigger fires in {text:?}",
                    format.name
                );
            }
            assert_eq!(
                lazy_refusal(&g, &lazy, &text),
                None,
                "{}: the lazy grammar on {text:?}\n{lazy}",
                format.name
            );
            checked += 1;
        }
        for text in plain_outputs(&format) {
            assert_accepts(&whole, text);
            assert_eq!(
                lazy_refusal(&g, &lazy, text),
                None,
                "{}: {text:?}",
                format.name
            );
        }
    }
    assert!(checked >= 12 * 4 * 3, "{checked} outputs checked");
}

#[test]
fn arguments_the_schema_refuses_are_refused_by_every_format_s_gbnf() {
    for format in formats() {
        let g = gbnf(&format);
        let whole = gbnf_to_lark(&g.whole_output);
        let lazy = gbnf_to_lark(&g.grammar);
        for (what, text) in refused_outputs(&format) {
            assert_refuses(&whole, what, &text);
            assert!(
                lazy_refusal(&g, &lazy, &text).is_some(),
                "{}: {what}: the lazy grammar accepts {text:?}",
                format.name
            );
        }
    }
}

/// Random sentences of the GBNF grammar (expanded from its rules, not
/// walked with llguidance: a character-level grammar costs its matcher
/// too much per byte for long walks) read back as valid calls, and are
/// accepted by the translated grammar.
#[test]
fn random_sentences_of_the_gbnf_read_back_as_valid_calls() {
    let validators = validators();
    let (mut sentences, mut with_calls, mut reused) = (0, 0, 0);
    for format in formats() {
        let g = gbnf(&format);
        let lark = gbnf_to_lark(&g.whole_output);
        for seed in 0..200u64 {
            let Some(text) = gbnf_sample(&g.whole_output, seed * 7919 + 1, 2000) else {
                continue;
            };
            sentences += 1;
            let out = format.parse(&tools(), &text);
            // A model-written id that repeats an earlier one is the one
            // thing no grammar holds back (documented): refused, fail closed.
            reused += out
                .failed()
                .filter(|f| f.kind == CallProblem::ReusedId)
                .count();
            assert!(
                out.failed().all(|f| f.kind == CallProblem::ReusedId),
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
                let (_, v) = validators
                    .iter()
                    .find(|(n, _)| n == name)
                    .unwrap_or_else(|| panic!("{}: unknown tool {name} in {text:?}", format.name));
                let args = arguments(&c.arguments);
                assert!(
                    v.is_valid(&args),
                    "{}: {name} {args} in {text:?}",
                    format.name
                );
                with_calls += 1;
            }
            if seed % 20 == 0 {
                assert_accepts(&lark, &text);
            }
        }
    }
    assert!(sentences > 1000, "{sentences} sentences");
    assert!(with_calls > 300, "{with_calls} calls written");
    assert!(reused * 10 < with_calls, "{reused} reused ids");
}

#[test]
fn llama_cpp_s_request_fields_carry_the_lazy_grammar() {
    let hermes = gbnf(&TextFormat::hermes());
    let fields = hermes.request_fields();
    // llama.cpp's `common_grammar_trigger_type`: 1 is a word, 3 a full pattern.
    assert_eq!(fields["grammar_lazy"], true);
    assert_eq!(
        fields["grammar_triggers"],
        serde_json::json!([{"type": 1, "value": "<think>"}, {"type": 1, "value": "<tool_call>"}])
    );
    assert_eq!(fields["grammar"], hermes.grammar.as_str());
    // A bare JSON call at the output start is a full-pattern trigger.
    let llama = gbnf(&TextFormat::by_name("llama3-json").unwrap());
    let pattern = llama
        .triggers
        .iter()
        .find(|t| t.kind == TriggerKind::PatternFull)
        .expect("a pattern trigger");
    assert_eq!(
        lazy_start(&llama, "  {\"name\""),
        Some(2),
        "{}",
        pattern.value
    );
    assert_eq!(lazy_start(&llama, "Hi {\"name\""), None);
    // Harmony's whole output is structured: not lazy.
    let harmony = gbnf(&TextFormat::by_name("harmony").unwrap());
    assert!(!harmony.lazy && harmony.triggers.is_empty());
    assert!(!harmony.preserved_tokens.is_empty());
    assert_eq!(
        TextFormat::by_name("harmony").unwrap().family,
        Family::Harmony
    );
}
