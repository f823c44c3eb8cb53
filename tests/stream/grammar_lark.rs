//! The llguidance check of the Lark grammar: for every format, the calls
//! the reader reads (one, several in parallel, after free text and
//! reasoning) are accepted, arguments the schema refuses are refused, and
//! what a random walk over the grammar writes reads back as valid calls.

use tinyagents_tools::stream::grammar;
use tinyagents_tools::stream::text::TextFormat;

use super::grammar_support::{
    accepted_outputs, assert_accepts, assert_refuses, formats, plain_outputs, refused_outputs,
    walks,
};
use super::text_support::tools;

fn lark(format: &TextFormat) -> String {
    grammar::lark(format, &tools()).unwrap_or_else(|e| panic!("{}: {e}", format.name))
}

#[test]
fn every_format_s_grammar_accepts_the_calls_the_reader_reads() {
    let mut checked = 0;
    for format in formats() {
        let g = lark(&format);
        for text in accepted_outputs(&format) {
            assert_accepts(&g, &text);
            checked += 1;
        }
        for text in plain_outputs(&format) {
            assert_accepts(&g, text);
        }
    }
    assert!(checked >= 12 * 4 * 3, "{checked} outputs checked");
}

#[test]
fn arguments_the_schema_refuses_are_refused_by_every_format_s_grammar() {
    for format in formats() {
        let g = lark(&format);
        for (what, text) in refused_outputs(&format) {
            assert_refuses(&g, what, &text);
        }
    }
}

#[test]
fn outputs_a_random_walk_writes_read_back_as_valid_calls() {
    let (mut finished, mut calls, mut beyond) = (0, 0, 0);
    for format in formats() {
        let w = walks(&format, &lark(&format), 3000);
        finished += w.finished;
        calls += w.calls;
        beyond += w.beyond_f64;
    }
    assert!(finished > 100, "{finished} walks finished");
    assert!(calls > 50, "{calls} calls written");
    // `%json` leaves numbers unbounded (documented): such arguments are
    // JSON the executor refuses, fail closed; they stay rare.
    assert!(
        beyond * 10 < calls,
        "{beyond} calls with numbers beyond f64"
    );
}
