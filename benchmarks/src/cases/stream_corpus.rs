//! The chunking-invariance corpus of `tests/stream/`, read by
//! `tool-parser` and by ours: for how many (output, chunking) cases does
//! the streamed read differ from the whole-text read?
//!
//! The corpus (`fixtures/stream/corpus.jsonl`) is every output the text
//! tests of `tests/stream/` read whole and in every chunking
//! (`everywhere`, `everywhere_with` with a plain reader), the proptest
//! outputs of one run of `text_invariance` included, recorded from a run of
//! those tests: one JSON object a line, `{"test", "format", "output"}`.
//! Only the formats `tool-parser` reads too are used. The chunkings are
//! `Chunking::matrix(16)` less the whole text: fixed pieces of 1 to 7 and
//! 16 characters, and 16 seeded random cuttings of 1 to 8 characters (ours
//! is also cut in bytes, anywhere; `tool-parser` takes `&str` pieces).

use serde_json::{Value, json};
use tinyagents_tools::stream::OutputReader;
use tinyagents_tools::stream::text::TextFormat;
use tinyagents_tools::testkit::{Chunking, chunk_bytes, chunk_text};

use crate::contenders::tool_parser::{COMMON_FORMATS, Parsed, TheirParser, tools};
use crate::report::Report;

/// One output of the corpus.
struct Entry {
    test: String,
    format: String,
    output: String,
}

fn corpus() -> Vec<Entry> {
    include_str!("../../fixtures/stream/corpus.jsonl")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("a corpus line");
            let field = |k: &str| v[k].as_str().expect("a string field").to_owned();
            Entry {
                test: field("test"),
                format: field("format"),
                output: field("output"),
            }
        })
        .collect()
}

/// Differences counted over one format's outputs.
#[derive(Default)]
struct Tally {
    outputs: usize,
    cases: usize,
    ours_differ: usize,
    calls_differ: usize,
    text_differ: usize,
    outputs_differ: usize,
    whole_calls_agree: usize,
    differing_tests: Vec<String>,
}

/// What the corpus part found, for the targets.
pub struct Corpus {
    /// Cases where our streamed read differs from our whole read.
    pub ours_differ: usize,
    /// Cases where `tool-parser`'s streamed calls differ from its whole
    /// read's.
    pub theirs_calls_differ: usize,
    /// Cases in all.
    pub cases: usize,
}

/// Runs the corpus part and records it.
pub fn run(report: &mut Report) -> Corpus {
    let specs = super::stream::specs();
    let their_tools = tools(&specs);
    let chunkings: Vec<Chunking> = Chunking::matrix(16)
        .into_iter()
        .filter(|c| *c != Chunking::Whole)
        .collect();
    let entries = corpus();
    let mut total = Tally::default();
    for (ours_name, their_name) in COMMON_FORMATS {
        let format = TextFormat::by_name(ours_name).expect("a format");
        let mut theirs = TheirParser::new(their_name, their_tools.clone());
        let mut tally = Tally::default();
        for entry in entries.iter().filter(|e| e.format == ours_name) {
            tally.outputs += 1;
            let ours_whole = format.parse(&specs, &entry.output);
            let their_whole = theirs.whole(&entry.output);
            if Parsed::ours(&ours_whole).calls == their_whole.calls {
                tally.whole_calls_agree += 1;
            }
            let mut differs = false;
            for &chunking in &chunkings {
                tally.cases += 1;
                let pieces = chunk_text(&entry.output, chunking);
                let by_chars = format
                    .reader(&specs)
                    .read_all(pieces.iter().map(|p| p.as_bytes()));
                let by_bytes = format
                    .reader(&specs)
                    .read_all(chunk_bytes(entry.output.as_bytes(), chunking));
                if by_chars != ours_whole || by_bytes != ours_whole {
                    tally.ours_differ += 1;
                }
                let streamed = theirs.streamed(pieces.iter().copied());
                let calls = streamed.calls != their_whole.calls;
                let text = streamed.text != their_whole.text;
                tally.calls_differ += usize::from(calls);
                tally.text_differ += usize::from(text);
                differs |= calls || text;
            }
            if differs {
                tally.outputs_differ += 1;
                tally.differing_tests.push(entry.test.clone());
            }
        }
        record(report, ours_name, their_name, &tally);
        total.outputs += tally.outputs;
        total.cases += tally.cases;
        total.ours_differ += tally.ours_differ;
        total.calls_differ += tally.calls_differ;
        total.text_differ += tally.text_differ;
        total.outputs_differ += tally.outputs_differ;
        total.whole_calls_agree += tally.whole_calls_agree;
    }
    record(report, "all", "all", &total);
    Corpus {
        ours_differ: total.ours_differ,
        theirs_calls_differ: total.calls_differ,
        cases: total.cases,
    }
}

fn record(report: &mut Report, ours: &str, theirs: &str, t: &Tally) {
    report.value(
        "stream_corpus",
        ours,
        &format!(
            "{ours} / {theirs}: outputs, cases; ours differ; theirs: calls, text, outputs differ; whole calls agree"
        ),
        json!({
            "outputs": t.outputs,
            "cases": t.cases,
            "ours_streamed_differs": t.ours_differ,
            "theirs_calls_differ": t.calls_differ,
            "theirs_text_differs": t.text_differ,
            "theirs_outputs_with_a_difference": t.outputs_differ,
            "whole_calls_agree_with_ours": t.whole_calls_agree,
            "theirs_differing_tests": t.differing_tests,
        }),
    );
}
